"""Synthesis of the RTL core with Yosys: cells per block, register-file storage apart from logic."""
