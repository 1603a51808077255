"""``python -m dualflow.experiments.compile_engine``: compile the timing engine into numba's disk cache.

Numba compiles on first use (about a minute and a half of CPU from a fresh checkout) and then
loads from its cache in under a second. ``make run`` and ``make test`` run this first, so that
neither a user's first ``dualflow sim`` nor every test worker pays the compilation.
"""

import time

from dualflow.experiments.simulate import simulate
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset


def main() -> None:
    start = time.perf_counter()
    for mode in Mode:  # a tiny run reaches every compiled function of a launch
        simulate("nn", preset("paper-rtx3080").replace(mode=mode), size="tiny", engine="compiled")
    print(f"compiled timing engine ready ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
