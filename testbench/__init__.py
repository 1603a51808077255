"""cocotb benches comparing the RTL retirement trace with the golden model's.

Built by the RTL issue; empty until then."""
