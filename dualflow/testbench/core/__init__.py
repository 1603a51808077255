"""Core-level cocotb benches: programs on the RTL core, retirement trace compared with the golden model."""
