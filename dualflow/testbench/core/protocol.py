"""What the host side (dualflow/testbench/cosim.py) and the core bench (core_tb.py) agree on, importable
from both without Amaranth or cocotb."""

#: Environment variable naming the JSON file of prepared launches.
JOBS_ENV = "DUALFLOW_COSIM_JOBS"
#: Environment variable naming the JSON file the bench writes its results to.
RESULTS_ENV = "DUALFLOW_COSIM_RESULTS"
#: Rows of the tid table per warp (tid.x, tid.y, tid.z, unused): ``tid_addr = warp * 4 + dim``.
TID_ROWS = 4
