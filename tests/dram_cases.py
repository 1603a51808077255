"""DRAM configurations shared by the DRAM device tests (tests/models/timing/test_dram.py) and the
DRAM-scheduling comparison (tests/experiments/test_dram_scheduling.py)."""

from dualflow.machine.memory import DramConfig

#: Core and DRAM clocks equal; latency 10; tCL 5, tRCD 6, tRP 7 (hand-computed cases read these).
CONFIG = DramConfig(clock_mhz=1000.0, latency=10, channels=1, bytes_per_cycle=32.0, banks=4, row_bytes=512,
                    tcl=5, twl=2, trcd=6, trp=7, tras=20, trc=30, trrd=3, trtp=2, twr=4, tccd=2, scheduler="frfcfs")
LINE = 128

#: A small L2 in front of 2 channels of 2 banks with 256 B rows: most L1 misses reach DRAM and
#: most DRAM requests change rows.
DRAM_HEAVY = {"memory.l2.slices": 2, "memory.l2.ways": 2, "memory.l2.size_bytes": 2 * 2 * 4 * 128,
               "memory.l2.slice_hash": "linear", "memory.dram.channels": 2, "memory.dram.banks": 2,
               "memory.dram.row_bytes": 256, "memory.dram.trrd": 9}
