"""The RTL core's parameter sets the directed programs co-simulate on (tests/rtl/test_rtl_core.py, and
the RTL level of tests/kernels/test_directed_programs.py)."""

#: Parameter sets: (name, CoreParams fields). Programs run 16 threads (ooo: 8).
PARAM_SETS = {
    "l4w4": dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2, scheduler="gto"),
    "l8w2": dict(warp_size=8, warps=2, register_banks=2, collector_units=3, alu_latency=1, scheduler="lrr"),
    "l4w8": dict(warp_size=4, warps=8, register_banks=8, collector_units=6, alu_latency=3, scheduler="gto",
                 ring=64, regs=24, param_words=32, stack_depth=8, requests_in_flight=4, shared_banks=2),
}
