"""Synthesis (Yosys) for area and power estimation. Built by the RTL issue; empty until then."""
