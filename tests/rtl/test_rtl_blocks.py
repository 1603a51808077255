# amaranth: UnusedElaboratable=no
"""Block-level RTL benches (cocotb on Icarus): each block against its Python model, plus one
expect-fail run per checker with an injected model error, proving the checker can fail."""

# Line 1 silences Amaranth's UnusedElaboratable warning for components created in this file: the
# parameter-error test creates components whose constructors raise, so they are never elaborated,
# and the warning (an error under filterwarnings) would fire whenever they are garbage-collected.

from __future__ import annotations

import gc
import shutil

import pytest

from dualflow.testbench.blocks.benches import run_block_bench

pytestmark = pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus Verilog (iverilog) is not installed")

DFLOW = {"mode": "dflow", "warp_size": 4, "warps": 4, "register_banks": 4, "collector_units": 4, "ring": 16, "dmax": 15}
# BASE: a register count that banks do not divide, two banks, fewer units.
BASE = {"mode": "base", "warp_size": 8, "warps": 2, "register_banks": 2, "collector_units": 3, "regs": 7}

PARAMS = {
    "regfile": [
        {"core": DFLOW, "write_ports": 1, "cycles": 800},
        {"core": BASE, "write_ports": 2, "cycles": 800},
    ],
    "collector": [
        {"core": DFLOW, "write_ports": 2, "units": 2, "payload_width": 12, "tag_width": 8, "cycles": 1200},
        {"core": BASE, "write_ports": 1, "units": 2, "payload_width": 12, "tag_width": 8, "cycles": 1200},
    ],
    "scoreboard": [
        {"core": DFLOW, "writeback_ports": 2, "cycles": 600},
        {"core": BASE, "writeback_ports": 1, "cycles": 600},
    ],
    "register_pointer": [
        {"core": DFLOW, "cycles": 400},
        {"core": {**DFLOW, "warps": 2, "ring": 256, "dmax": 200}, "cycles": 400},
    ],
    # one RegisterPointers per hand and hand_entry (tops.HandPointersTop): rings of other sizes per hand
    "hand_pointers": [
        {"core": {**DFLOW, "ring": 8, "rings": (8, 2, 2, 2), "dmax": 7}, "cycles": 500},
        {"core": {**DFLOW, "rings": (16, 8)}, "cycles": 500},
        {"core": {**DFLOW, "ring": 4, "rings": (4, 8, 2), "dmax": 7}, "cycles": 500},
    ],
    "simt_stack": [
        {"core": DFLOW, "depth": 4, "cycles": 1500},
        {"core": BASE, "depth": 3, "cycles": 1500},
        {"core": {**DFLOW, "ring": 8, "rings": (8, 2, 2, 2), "dmax": 7}, "depth": 4, "cycles": 1500},
        {"core": {**DFLOW, "ring": 4, "rings": (4, 8, 2), "dmax": 7}, "depth": 3, "cycles": 1500},
    ],
}
SEEDS = (1, 2)

CASES = [pytest.param(name, i, seed, id=f"{name}-{p['core']['mode']}{i}-seed{seed}")
         for name, sets in PARAMS.items() for i, p in enumerate(sets) for seed in SEEDS]


@pytest.mark.parametrize(("name", "index", "seed"), CASES)
def test_block_bench(name: str, index: int, seed: int) -> None:
    result = run_block_bench(name, PARAMS[name][index], seed=seed)
    assert result.ok, f"{name} bench failed ({result.failed} failed, {result.passed} passed); log: {result.log}"


@pytest.mark.parametrize("name", list(PARAMS))
def test_checker_catches_injected_error(name: str) -> None:
    """The bench's model carries a deliberate bug: the run must fail, and by a reported mismatch
    (``[MODEL] ... [RTL] ...``), not by a crash or a coverage shortfall."""
    result = run_block_bench(name, {**PARAMS[name][0], "cycles": 300}, seed=3, inject=True)
    assert result.failed > 0, f"{name} bench passed with an injected model error; log: {result.log}"
    assert "[MODEL]" in result.log.read_text(), f"{name} bench failed without a checker mismatch; log: {result.log}"


def test_simt_stack_hands_checker_catches_injected_error() -> None:
    """With hands the injected bug (sync replaces each hand's RP instead of keeping the later)
    must be caught hand by hand too."""
    result = run_block_bench("simt_stack", {**PARAMS["simt_stack"][2], "cycles": 300}, seed=3, inject=True)
    assert result.failed > 0 and "[MODEL]" in result.log.read_text(), f"log: {result.log}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 14))
@pytest.mark.parametrize("name", list(PARAMS))
def test_block_bench_sweep(name: str, seed: int) -> None:
    """Longer runs, more seeds, a third parameter set per block."""
    wide = {"mode": "dflow", "warp_size": 8, "warps": 8, "register_banks": 8, "collector_units": 6, "ring": 32,
            "dmax": 31}
    one_bank = {"mode": "base", "warp_size": 4, "warps": 4, "register_banks": 1, "collector_units": 2, "regs": 5}
    extra = {
        "regfile": {"core": one_bank, "write_ports": 1, "cycles": 3000},
        "collector": {"core": wide, "write_ports": 2, "units": 3, "payload_width": 20, "tag_width": 8,
                      "cycles": 4000},
        "scoreboard": {"core": wide, "writeback_ports": 3, "cycles": 3000},
        "register_pointer": {"core": wide, "cycles": 2000},
        "hand_pointers": {"core": {**wide, "ring": 32, "rings": (32, 16, 4, 2)}, "cycles": 3000},
        "simt_stack": {"core": wide, "depth": 8, "cycles": 5000},
    }[name]
    for params in (*PARAMS[name], extra):
        params = {**params, "cycles": max(params["cycles"], 2000)}
        result = run_block_bench(name, params, seed=seed)
        assert result.ok, f"{name} bench failed with {params}; log: {result.log}"


def test_bad_block_parameters_are_config_errors() -> None:
    """Constructor arguments are checked up front with a message naming the argument."""
    from dualflow.common.errors import ConfigError
    from dualflow.rtl.collector import OperandCollector
    from dualflow.rtl.params import CoreParams
    from dualflow.rtl.regfile import BankedRegisterFile, RegisterBank
    from dualflow.rtl.register_pointer import RegisterPointers
    from dualflow.rtl.scoreboard import Scoreboard
    from dualflow.rtl.simt_stack import SimtStack

    dflow, base = CoreParams(**DFLOW), CoreParams(**BASE)
    cases = [
        (lambda: BankedRegisterFile(dflow, write_ports=0), "write_ports"),
        (lambda: BankedRegisterFile(dflow, read_ports=0), "read_ports"),
        (lambda: RegisterBank(depth=0, lanes=4), "depth"),
        (lambda: OperandCollector(dflow, units=0), "units"),
        (lambda: OperandCollector(dflow, requesters=3), "requesters"),
        (lambda: Scoreboard(dflow, writeback_ports=9), "writeback_ports"),
        (lambda: RegisterPointers(base), "ring register file"),
        (lambda: SimtStack(dflow, depth=0), "depth"),
        (lambda: SimtStack({"mode": "dflow"}), "CoreParams"),
    ]
    for make, word in cases:
        with pytest.raises(ConfigError, match=word):
            make()
    gc.collect()  # the half-built components go now, inside this test (silenced by line 1)


def test_port_descriptions_round_trip() -> None:
    """The benches' pack/unpack agree with Amaranth's layout of a nested payload."""
    from amaranth.lib import data

    from dualflow.testbench.sim import describe_shape, pack, unpack

    layout = data.StructLayout({"a": 3, "b": data.ArrayLayout(data.StructLayout({"x": 1, "y": 5}), 3), "c": 7})
    desc = describe_shape(layout)
    value = {"a": 5, "b": [{"x": 1, "y": 17}, {"x": 0, "y": 31}, {"x": 1, "y": 0}], "c": 99}
    raw = pack(desc, value)
    assert unpack(desc, raw) == value
    const = data.Const(layout, raw)  # Amaranth reads the same bits back as the same fields
    assert (const.a, const.b[1].y, const.c) == (5, 31, 99)
