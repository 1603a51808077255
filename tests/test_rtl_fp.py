# amaranth: UnusedElaboratable=no
"""The FP32 unit (rtl/fp/) against models/fp32.py on the shared FP vectors (testbench/fp_vectors.py).

Default suite: Icarus, four lanes, a sample of the directed corners and a few hundred random
vectors per opcode at two timings, and the expect-fail run (a DUT built with the rounding block's
injected bug, round toward zero, must be caught). ``slow``: Verilator, 32 lanes, every directed
vector and 10^5 random vectors per opcode.
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


@needs_icarus
@pytest.mark.parametrize("index", range(len(FPU_SMALL)))
def test_fpu_bench(index: int) -> None:
    result = run_block_bench("fpu", FPU_SMALL[index], seed=index + 1)
    assert result.ok, f"fpu bench failed; log: {result.log}"


@needs_icarus
def test_fpu_bench_catches_a_rounding_bug() -> None:
    """The rounding block built to truncate (``Rounding.TOWARD_ZERO``): the bench must report
    value mismatches."""
    params = {**FPU_SMALL[0], "rounding": "toward_zero", "random": 100, "directed": 100}
    result = run_block_bench("fpu", params, seed=3)
    assert result.failed > 0, f"fpu bench passed a truncating FP unit; log: {result.log}"
    assert "[MODEL]" in result.log.read_text(), f"fpu bench failed without a value mismatch; log: {result.log}"


@pytest.mark.slow
def test_fpu_bench_full_verilator() -> None:
    """Every directed vector and 10^5 random vectors per FP-class opcode, 32 lanes, Verilator."""
    params = {"core": {"warp_size": 32, "fp_latency": 4, "fp_interval": 1}, "random": 100_000, "directed": None}
    result = run_block_bench("fpu", params, seed=17, simulator="verilator")
    assert result.ok, f"fpu bench failed; log: {result.log}"


def test_fp_parameters_are_checked() -> None:
    """Bad FP unit parameters are ConfigErrors naming the parameter."""
    import gc

    from dualflow.errors import ConfigError
    from dualflow.rtl.fp.pipeline import FpPipeline
    from dualflow.rtl.fp.round_pack import RoundPack
    from dualflow.rtl.params import CoreParams

    with pytest.raises(ConfigError, match="fp_latency"):
        CoreParams(fp_latency=0)
    with pytest.raises(ConfigError, match="fp_interval"):
        CoreParams(fp_interval=17)
    with pytest.raises(ConfigError, match="tag width"):
        FpPipeline(CoreParams(), tag_width=0)
    with pytest.raises(ConfigError, match="rounding"):
        RoundPack(24, rounding="nearest")
    gc.collect()
