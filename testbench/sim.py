"""Shared runner of the cocotb benches: Amaranth component -> Verilog -> Icarus, from pytest.

``run_bench`` converts a ``wiring.Component`` to Verilog (its ports are the ones its signature
declares, plus ``clk`` and ``rst`` of the ``sync`` domain), writes it into a build directory
``build/rtl/<name>-<hash>/`` whose hash covers the name and the parameters, compiles it once with
Icarus (guarded by a file lock, so parallel pytest workers can share one build), runs one cocotb
test module on it with the parameters and a seed in environment variables, and returns the pass
and fail counts read from the results XML.

Benches read their parameters with ``bench_env()`` and pack or unpack the flat Verilog vectors of
Amaranth layouts (a stream payload is one vector) with ``pack`` and ``unpack``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amaranth.back import verilog
from amaranth.lib import data, wiring

#: Root of every generated build directory (git-ignored).
BUILD_ROOT = Path(__file__).resolve().parent.parent / "build" / "rtl"
#: Environment variable carrying the bench parameters as JSON.
PARAMS_ENV = "DUALFLOW_BENCH_PARAMS"
#: Environment variable carrying the bench seed.
SEED_ENV = "DUALFLOW_BENCH_SEED"
#: Environment variable that switches on a bench's injected error (expect-fail tests).
INJECT_ENV = "DUALFLOW_BENCH_INJECT"


@dataclass(frozen=True)
class BenchResult:
    """Outcome of one cocotb run: test counts and where its log and results live."""

    passed: int
    failed: int
    results_xml: Path
    log: Path

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0


def build_dir_for(name: str, params: Mapping[str, Any]) -> Path:
    """The build directory of one component and parameter set."""
    key = json.dumps({"name": name, "params": dict(params)}, sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return BUILD_ROOT / f"{name}-{digest}"


# Yosys' Verilog gives every module a register initialised to 0 that each ``always @*`` block
# reads, so that every combinational block runs once at time 0. Under ``iverilog -g2012`` (as the
# cocotb runner calls it) a declaration initialiser is no event, so a block whose real inputs
# never change (an FSM output decoded from a state that stays in reset) stays X. Flipping the
# register once at time 0 gives the intended first evaluation.
_KICK = re.compile(r"^(\s*)reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+ ) = 0;$", re.M)


def icarus_friendly(text: str) -> str:
    """Make Yosys-written Verilog evaluate its combinational blocks at time 0 under Icarus."""
    return _KICK.sub(lambda mt: f"{mt.group(0)}\n{mt.group(1)}initial #0 {mt.group(2)}= 1;", text)


def _write_if_changed(path: Path, text: str) -> None:
    # Keeping the old file (and its mtime) lets Icarus skip recompiling an unchanged design.
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def run_bench(*, name: str, make_component: Callable[[], wiring.Component], params: Mapping[str, Any],
              test_module: str, seed: int, inject: bool = False, extra_env: Mapping[str, str] | None = None,
              run_name: str | None = None, design: Mapping[str, Any] | None = None) -> BenchResult:
    """Generate, build and run one bench; return its pass and fail counts.

    Parameters
    ----------
    name : Verilog top-level module name and build-directory prefix.
    make_component : builds the component to convert (called under the build lock).
    params : everything that determines the design; hashed into the build directory and passed
        to the bench as JSON in ``DUALFLOW_BENCH_PARAMS``.
    test_module : importable cocotb test module, e.g. ``dualflow.testbench.blocks.regfile_tb``.
    seed : cocotb random seed; also given to the bench in ``DUALFLOW_BENCH_SEED``.
    inject : set ``DUALFLOW_BENCH_INJECT=1`` (the bench corrupts its expectation; the run must fail).
    extra_env : further environment variables for the bench.
    run_name : subdirectory of the run (defaults to seed and inject flag).
    design : the part of ``params`` that determines the design (hashed into the build
        directory); defaults to all of ``params``. Bench-only settings such as cycle counts
        belong outside it, so they do not cause a rebuild.
    """
    from cocotb_tools.runner import get_results, get_runner

    build_dir = build_dir_for(name, params if design is None else design)
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / f"{name}.v"
    runner = get_runner("icarus")
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            text = icarus_friendly(verilog.convert(make_component(), name=name, emit_src=False))
            _write_if_changed(source, text)
            runner.build(sources=[source], hdl_toplevel=name, build_dir=build_dir, timescale=("1ns", "1ps"),
                         log_file=build_dir / "build.log")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    run_dir = build_dir / (run_name or f"seed{seed}{'-inject' if inject else ''}")
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {PARAMS_ENV: json.dumps(dict(params), default=str), SEED_ENV: str(seed), INJECT_ENV: "1" if inject else "0"}
    env.update(extra_env or {})
    results = run_dir / "results.xml"
    if results.exists():
        results.unlink()
    log = run_dir / "sim.log"
    runner.test(test_module=test_module, hdl_toplevel=name, build_dir=build_dir, test_dir=run_dir, seed=seed,
                extra_env=env, results_xml=str(results), timescale=("1ns", "1ps"), log_file=log)
    if not results.exists():  # the simulator died before cocotb wrote anything: count as one failure
        return BenchResult(0, 1, results, log)
    total, failed = get_results(results)
    return BenchResult(total - failed, failed, results, log)


def bench_env() -> tuple[dict[str, Any], int, bool]:
    """Inside a bench: (parameters, seed, inject flag) as set by ``run_bench``."""
    params = json.loads(os.environ.get(PARAMS_ENV, "{}"))
    seed = int(os.environ.get(SEED_ENV, "1"))
    inject = os.environ.get(INJECT_ENV, "0") == "1"
    return params, seed, inject


# ---------------------------------------------------------------- layouts as flat integers
def pack(layout: data.Layout | int, value: Any) -> int:
    """Pack a nested dict / list / int into the integer a Verilog port of ``layout`` holds.

    Struct layouts take a dict (missing fields are 0), array layouts a list, plain shapes an int.
    """
    if isinstance(layout, int):
        return int(value) & ((1 << layout) - 1)
    layout = data.Layout.cast(layout)
    if isinstance(layout, data.ArrayLayout):
        w = _width(layout.elem_shape)
        out = 0
        for i, item in enumerate(value):
            out |= pack(_sub(layout.elem_shape), item) << (i * w)
        return out
    if isinstance(layout, data.StructLayout | data.UnionLayout):
        out = 0
        for fname, field in layout:
            if fname in value:
                out |= pack(_sub(field.shape), value[fname]) << field.offset
        return out
    raise TypeError(f"cannot pack layout {layout!r}")


def unpack(layout: data.Layout | int, raw: int) -> Any:
    """Inverse of ``pack``: dicts for structs, lists for arrays, ints for plain shapes."""
    raw = int(raw)
    if isinstance(layout, int):
        return raw & ((1 << layout) - 1)
    layout = data.Layout.cast(layout)
    if isinstance(layout, data.ArrayLayout):
        w = _width(layout.elem_shape)
        return [unpack(_sub(layout.elem_shape), raw >> (i * w)) for i in range(layout.length)]
    if isinstance(layout, data.StructLayout | data.UnionLayout):
        return {fname: unpack(_sub(field.shape), raw >> field.offset) for fname, field in layout}
    raise TypeError(f"cannot unpack layout {layout!r}")


def _width(shape: Any) -> int:
    if isinstance(shape, data.Layout):
        return shape.size
    from amaranth.hdl import Shape

    return Shape.cast(shape).width


def _sub(shape: Any) -> data.Layout | int:
    return shape if isinstance(shape, data.Layout) else _width(shape)
