"""The behaviour lock: fingerprints of every model's observable behaviour, pinned in
tests/data/behaviour_lock.json and compared by tests/project/test_behaviour_lock.py.

A refactoring that claims to preserve behaviour must leave every fingerprint unchanged:

The lock covers the hand-written workloads; the compiled suite's assembly comes from the machine's
clang, so its behaviour is checked against numpy (tests/kernels/test_compiled_suite.py) rather than
pinned here.

- functional model: every hand-written workload at size ``tiny`` in both forms: the retirement traces and the
  launch statistics;
- timing model: every hand-written workload at size ``tiny`` in both modes on three presets (GTO and LRR
  schedulers, 68/46/15 SMs): cycles, instruction counts and a digest of each section of the result
  (timing statistics, per-kernel statistics, functional statistics, configuration);
- RTL core: every directed program in both modes (one parameter set): cycles and a digest of the
  retirement records in the order the core retired them.

A deliberate change of behaviour regenerates the file and says so in its commit:

    .venv/bin/python tests/behaviour_lock.py --write [functional timing rtl]

Digests are over canonical JSON (sorted keys), so they do not depend on dict order. The timing
fingerprints are computed with the reference engine; ``--engine compiled`` (and
``timing_entry(..., engine="compiled")``) computes them with the compiled engine, which must give
the same ones (it is never used to write the file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

LOCK_FILE = Path(__file__).parent / "data" / "behaviour_lock.json"
SIZE = "tiny"
SEED = 1
PRESETS = ("paper-rtx3080", "ampere-rtx3070", "fermi-gtx480")
#: The RTL parameter set the directed programs run on (CoreParams fields; 4 lanes x 4 warps).
RTL_PARAMS = dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2, scheduler="gto")
RTL_SEED = 1


def digest(value: Any) -> str:
    """Short SHA-256 of ``value`` as canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def workload_names() -> list[str]:
    from dualflow.kernels.registry import HAND_WRITTEN

    return sorted(HAND_WRITTEN)


def _trace_rows(trace) -> list:
    from dataclasses import astuple

    return [trace.header(), [astuple(rec) for rec in trace.records]]


def functional_entry(workload: str, form: str) -> dict:
    from dualflow.isa import Form
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload

    run = run_workload(get_workload(workload), size=SIZE, form=Form(form), seed=SEED, trace=True)
    return {"warp_instructions": sum(len(t.records) for t in run.traces),
            "traces": digest([_trace_rows(t) for t in run.traces]),
            "stats": digest(run.to_dict())}


def timing_entry(workload: str, mode: str, preset_name: str, engine: str = "reference") -> dict:
    from dualflow.experiments.simulate import simulate
    from dualflow.machine import preset

    result = simulate(workload, preset(preset_name).replace(mode=mode), size=SIZE, seed=SEED,
                      engine=engine).to_dict()
    result.pop("wall_seconds")
    out = {"cycles": result["timing"]["cycles"]["value"],
           "warp_instructions": result["timing"]["warp_instructions"]["value"]}
    out.update({section: digest(result[section]) for section in ("timing", "kernels", "functional", "config")})
    out["rest"] = digest({k: v for k, v in result.items() if k not in ("timing", "kernels", "functional", "config")})
    return out


def rtl_program_names() -> list[str]:
    from dualflow.kernels.directed import FAULT_PROGRAMS, PROGRAMS

    return sorted(PROGRAMS) + sorted(FAULT_PROGRAMS)


def _make_params(mode: str):
    from dualflow.rtl.params import CoreParams

    return CoreParams(mode=mode, **RTL_PARAMS)


def rtl_entries(mode: str, names: list[str] | None = None) -> dict[str, dict]:
    """Each directed program on the RTL core in ``mode``, in one simulator run."""
    from dataclasses import astuple

    from dualflow.testbench.core.directed import directed_case
    from dualflow.testbench.cosim import run_cosim

    names = names or rtl_program_names()
    params = _make_params(mode)
    results = run_cosim(params, [directed_case(n, params, seed=RTL_SEED) for n in names])
    return {r.name: {"ok": r.ok, "cycles": r.cycles, "trap": r.trap, "records": len(r.rtl.records),
                     "retirement": digest([astuple(rec) for rec in r.rtl.records])} for r in results}


def key(*parts: str) -> str:
    return "/".join(parts)


def compute(parts: list[str], engine: str = "reference") -> dict[str, dict]:
    out: dict[str, dict] = {}
    if "functional" in parts:
        for w in workload_names():
            for form in ("reg", "dflow"):
                out.setdefault("functional", {})[key(w, form)] = functional_entry(w, form)
    if "timing" in parts:
        for p in PRESETS:
            for w in workload_names():
                for mode in ("base", "dflow"):
                    out.setdefault("timing", {})[key(p, w, mode)] = timing_entry(w, mode, p, engine)
    if "rtl" in parts:
        for mode in ("base", "dflow"):
            for name, entry in rtl_entries(mode).items():
                out.setdefault("rtl", {})[key(mode, name)] = entry
    return out


def load() -> dict[str, dict]:
    return json.loads(LOCK_FILE.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parts", nargs="*", default=["functional", "timing", "rtl"],
                    help="which models to fingerprint (default: all)")
    ap.add_argument("--write", action="store_true", help="store the new fingerprints in the lock file")
    ap.add_argument("--engine", choices=("reference", "compiled"), default="reference",
                    help="timing engine for the timing fingerprints (default: reference)")
    args = ap.parse_args(argv)
    if args.write and args.engine != "reference":
        ap.error("the lock file is written with the reference engine")
    new = compute(args.parts, args.engine)
    old = load() if LOCK_FILE.exists() else {}
    changed = 0
    for part, entries in new.items():
        for name, entry in entries.items():
            if old.get(part, {}).get(name) != entry:
                changed += 1
                print(f"{part} {name}: {old.get(part, {}).get(name)} -> {entry}")
    print(f"{sum(len(e) for e in new.values())} fingerprints, {changed} differ from {LOCK_FILE.name}")
    if args.write:
        merged = {**old, **new}
        LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        LOCK_FILE.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
        print(f"wrote {LOCK_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
