"""Block-level cocotb benches of the RTL core's blocks, each against a small Python model."""
