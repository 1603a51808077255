# amaranth: UnusedElaboratable=no
"""The FP32 unit and the SFU (dualflow/rtl/fp/) against dualflow/models/fp32.py on the shared FP vectors
(dualflow/testbench/fp_vectors.py).

Default suite: Icarus, four lanes, a sample of the directed corners and a few hundred random
vectors per opcode at two or three timings, and per unit the expect-fail run (a DUT built with the
rounding block's injected bug, round toward zero, must be caught). ``slow``: Verilator, 32 lanes,
every directed vector and 10^5 random vectors per opcode.
"""

from __future__ import annotations

import shutil

import pytest

from dualflow.testbench.blocks.benches import run_block_bench

needs_icarus = pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus Verilog (iverilog) is not installed")

FPU_SMALL = [
    {"core": {"warp_size": 4, "fp_latency": 1, "fp_interval": 1}, "random": 300, "directed": 300},
    {"core": {"warp_size": 4, "fp_latency": 4, "fp_interval": 3}, "random": 200, "directed": 200, "issue_rate": 0.9},
]


SFU_SMALL = [
    # GT200-like default timing (21, 8): four recurrence steps per cycle; the output sometimes waits.
    {"core": {"warp_size": 4, "sfu_latency": 21, "sfu_interval": 8}, "random": 300, "directed": 300},
    # The fastest the unit allows: the whole recurrence in one cycle, the output waits half the time.
    {"core": {"warp_size": 4, "sfu_latency": 3, "sfu_interval": 2}, "random": 200, "directed": 200,
     "ready_rate": 0.5},
    # One step per cycle (27 cycles of recurrence), never waiting: every latency is checked.
    {"core": {"warp_size": 4, "sfu_latency": 30, "sfu_interval": 28}, "random": 100, "directed": 100,
     "ready_rate": 1.0},
]
BENCHES = {"fpu": FPU_SMALL, "sfu": SFU_SMALL}
CASES = [pytest.param(name, i, id=f"{name}{i}") for name, sets in BENCHES.items() for i in range(len(sets))]


@needs_icarus
@pytest.mark.parametrize(("name", "index"), CASES)
def test_fp_bench(name: str, index: int) -> None:
    result = run_block_bench(name, BENCHES[name][index], seed=index + 1)
    assert result.ok, f"{name} bench failed; log: {result.log}"


@needs_icarus
@pytest.mark.parametrize("name", list(BENCHES))
def test_fp_bench_catches_a_rounding_bug(name: str) -> None:
    """The rounding block built to truncate (``Rounding.TOWARD_ZERO``): the bench must report
    value mismatches."""
    params = {**BENCHES[name][0], "rounding": "toward_zero", "random": 100, "directed": 100}
    result = run_block_bench(name, params, seed=3)
    assert result.failed > 0, f"{name} bench passed a truncating unit; log: {result.log}"
    assert "[MODEL]" in result.log.read_text(), f"{name} bench failed without a value mismatch; log: {result.log}"


@pytest.mark.slow
@pytest.mark.parametrize(("name", "core"), [
    ("fpu", {"warp_size": 32, "fp_latency": 4, "fp_interval": 1}),
    ("sfu", {"warp_size": 32, "sfu_latency": 21, "sfu_interval": 8}),
])
def test_fp_bench_full_verilator(name: str, core: dict) -> None:
    """Every directed vector and 10^5 random vectors per opcode, 32 lanes, Verilator."""
    params = {"core": core, "random": 100_000, "directed": None}
    result = run_block_bench(name, params, seed=17, simulator="verilator")
    assert result.ok, f"{name} bench failed; log: {result.log}"


def test_fp_parameters_are_checked() -> None:
    """Bad FP unit parameters are ConfigErrors naming the parameter."""
    import gc

    from dualflow.common.errors import ConfigError
    from dualflow.rtl.fp.pipeline import FpPipeline
    from dualflow.rtl.fp.round_pack import RoundPack
    from dualflow.rtl.fp.sfu import SfuLane
    from dualflow.rtl.params import CoreParams

    with pytest.raises(ConfigError, match="fp_latency"):
        CoreParams(fp_latency=0)
    with pytest.raises(ConfigError, match="fp_interval"):
        CoreParams(fp_interval=17)
    with pytest.raises(ConfigError, match="tag width"):
        FpPipeline(CoreParams(), tag_width=0)
    with pytest.raises(ConfigError, match="rounding"):
        RoundPack(24, rounding="nearest")
    with pytest.raises(ConfigError, match="sfu_interval"):
        CoreParams(sfu_interval=1)
    with pytest.raises(ConfigError, match=r"sfu_latency must be an integer in sfu_interval\+1..64 = 8\+1"):
        CoreParams(sfu_latency=8, sfu_interval=8)
    with pytest.raises(ConfigError, match="steps"):
        SfuLane(steps=26, per_cycle=1)
    gc.collect()


def test_sfu_timing_fits_its_interval() -> None:
    """For every interval, loading plus the recurrence fit in it, with the fewest steps per cycle."""
    from dualflow.rtl.fp.sfu import STEPS, sfu_bits_per_cycle, sfu_iterations

    for interval in range(2, 29):
        k, cycles = sfu_bits_per_cycle(interval), sfu_iterations(interval)
        assert 1 + cycles <= interval and k * cycles >= STEPS
        assert k == 1 or -(-STEPS // (k - 1)) > interval - 1, f"interval {interval}: {k - 1} steps would do"
