"""The block benches by name: how to build each DUT from a parameter dict, and which cocotb module runs it.

A parameter dict holds ``core`` (CoreParams fields) plus the block's own constructor arguments
and the bench's cycle count; ``run_block_bench`` hands it to ``testbench.sim.run_bench``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amaranth.lib import wiring

from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import BenchResult, run_bench


@dataclass(frozen=True)
class BlockBench:
    name: str
    module: str
    build: Callable[[dict[str, Any]], wiring.Component]


def _regfile(params: dict[str, Any]) -> wiring.Component:
    from dualflow.rtl.regfile import BankedRegisterFile

    return BankedRegisterFile(CoreParams(**params["core"]), write_ports=params.get("write_ports", 1))


def _collector(params: dict[str, Any]) -> wiring.Component:
    from .tops import CollectorTop

    return CollectorTop(CoreParams(**params["core"]), payload_width=params.get("payload_width", 16),
                        tag_width=params.get("tag_width", 8), units=params.get("units", 1),
                        write_ports=params.get("write_ports", 1))


def _scoreboard(params: dict[str, Any]) -> wiring.Component:
    from dualflow.rtl.scoreboard import Scoreboard

    return Scoreboard(CoreParams(**params["core"]), writeback_ports=params.get("writeback_ports", 1))


def _register_pointer(params: dict[str, Any]) -> wiring.Component:
    from dualflow.rtl.register_pointer import RegisterPointers

    return RegisterPointers(CoreParams(**params["core"]))


def _hand_pointers(params: dict[str, Any]) -> wiring.Component:
    from .tops import HandPointersTop

    return HandPointersTop(CoreParams(**params["core"]))


def _simt_stack(params: dict[str, Any]) -> wiring.Component:
    from dualflow.rtl.simt_stack import SimtStack

    return SimtStack(CoreParams(**params["core"]), depth=params.get("depth", 8))


def _fpu(params: dict[str, Any]) -> wiring.Component:
    from dualflow.rtl.fp.pipeline import FpPipeline
    from dualflow.rtl.fp.round_pack import Rounding

    return FpPipeline(CoreParams(**params["core"]), tag_width=params.get("tag_width", 4),
                      rounding=Rounding(params.get("rounding", "nearest_even")))


def _sfu(params: dict[str, Any]) -> wiring.Component:
    from dualflow.rtl.fp.round_pack import Rounding
    from dualflow.rtl.fp.sfu import SpecialFunctionUnit

    return SpecialFunctionUnit(CoreParams(**params["core"]), tag_width=params.get("tag_width", 4),
                               rounding=Rounding(params.get("rounding", "nearest_even")))


_RTL = Path(__file__).resolve().parent.parent.parent / "rtl"
#: The files the block designs are built from (other RTL modules changing does not regenerate them).
SOURCES = tuple(_RTL / f for f in ("params.py", "regfile.py", "collector.py", "scoreboard.py", "register_pointer.py",
                                   "simt_stack.py", "fp", "alu.py", "decode.py", "interfaces.py", "result_stages.py")
                ) + (Path(__file__).resolve().parent / "tops.py",)

BENCHES: dict[str, BlockBench] = {b.name: b for b in (
    BlockBench("regfile", "dualflow.testbench.blocks.regfile_tb", _regfile),
    BlockBench("collector", "dualflow.testbench.blocks.collector_tb", _collector),
    BlockBench("scoreboard", "dualflow.testbench.blocks.scoreboard_tb", _scoreboard),
    BlockBench("register_pointer", "dualflow.testbench.blocks.register_pointer_tb", _register_pointer),
    BlockBench("hand_pointers", "dualflow.testbench.blocks.hand_pointers_tb", _hand_pointers),
    BlockBench("simt_stack", "dualflow.testbench.blocks.simt_stack_tb", _simt_stack),
    BlockBench("fpu", "dualflow.testbench.blocks.fpu_tb", _fpu),
    BlockBench("sfu", "dualflow.testbench.blocks.sfu_tb", _sfu),
)}


#: Parameters of the stimulus only (they do not change the design, so no rebuild).
BENCH_ONLY = frozenset({"cycles", "random", "directed", "issue_rate", "ready_rate"})


def run_block_bench(name: str, params: dict[str, Any], *, seed: int, inject: bool = False,
                    simulator: str = "icarus") -> BenchResult:
    """Build (once per parameter set) and run one block bench."""
    bench = BENCHES[name]
    design = {k: v for k, v in params.items() if k not in BENCH_ONLY}
    return run_bench(name=name, make_component=lambda: bench.build(params), params=params, test_module=bench.module,
                     seed=seed, inject=inject, design=design, sources=SOURCES, simulator=simulator)
