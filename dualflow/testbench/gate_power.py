"""``dualflow power``'s flow: a workload on the mapped core, gate level, to power per block (here,
beside the co-simulation it drives; the power calculation itself is ``dualflow/synth/power.py``).

1. The core that ``dualflow cosim --workload`` would build (``workload_cases``, ``core_for``) is
   mapped to the library with memories as macros (``synth.asic.map_core``); the netlist is kept
   in ``<build>/power/netlist-<mode>-<hash>/``, the hash covering the core's parameters, the
   library and the sources of the RTL and of the mapping, and reused while they do not change.
2. The workload's launches run on that netlist under the cocotb bench of the RTL co-simulation
   (``run_cosim(gate=...)``), every net dumped to a VCD; the retirement trace and final memory
   are compared with the golden model as for the RTL, so a run that matches is also an
   equivalence check of the mapped netlist.
3. The activity of the run window (each block from ``start`` to ``done``: not reset nor program
   loading) and the macros' enables at each clock edge (``dualflow/synth/activity.py``) give the energy
   per block (``dualflow/synth/power.py``).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from dualflow.common.build_dir import BUILD_BASE
from dualflow.common.errors import DualflowError
from dualflow.common.provenance import source_commit
from dualflow.synth.gate_sim import gate_level
from dualflow.synth.liberty import Library
from dualflow.synth.power import PowerReport, power_of_vcd

__all__ = ["POWER_BUILD", "DEFAULT_CLOCK_MHZ", "RunPower", "netlist_for", "workload_power"]

#: Where the flow keeps its netlists, simulations and VCDs.
POWER_BUILD = BUILD_BASE / "power"
#: Clock of the average power unless given: a round figure below the ~129 MHz the proof of concept's
#: static timing found for the 4-lane core (issue 14); energy per run does not depend on it, only
#: leakage energy and average power do.
DEFAULT_CLOCK_MHZ = 100.0

_SYNTH = Path(__file__).resolve().parent.parent / "synth"
#: Sources whose change makes a kept netlist stale.
_NETLIST_SOURCES = (_SYNTH.parent / "rtl", _SYNTH / "asic.py", _SYNTH / "macros.py", _SYNTH / "yosys.py")


def _digest(params: dict, library: Library) -> str:
    h = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode())
    h.update(library.path.read_bytes())
    for root in _NETLIST_SOURCES:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


def netlist_for(params, library: Library, *, node_nm: int | None = None, log=print) -> tuple[Path, str]:
    """(folder of the mapped netlist of ``SimtCore(params)``, its top module), mapped if not kept."""
    from dualflow.synth.asic import map_core

    top = f"core_{params.mode}"
    folder = POWER_BUILD / f"netlist-{params.mode}-{_digest(params.to_dict(), library)}"
    if not (folder / "mapped.v").is_file():
        start = time.monotonic()
        log(f"{params.mode}: mapping the core to {library.name} (a few minutes; kept in {folder})")
        tmp = folder.with_name(folder.name + ".tmp")
        map_core(params, library, node_nm=node_nm, out_dir=tmp)
        tmp.rename(folder)
        log(f"{params.mode}: mapped in {time.monotonic() - start:.0f} s")
    return folder, top


@dataclass
class RunPower:
    """One mode's run: the power report, whether the run matched the golden model, and timings."""

    mode: str
    report: PowerReport
    matched: bool
    summary: str
    bench_cycles: int
    sim_seconds: float
    vcd_bytes: int
    params: dict
    #: what ran: ``name``, ``size``, ``seed``, ``values`` (overrides of the size's parameters),
    #: ``max_block_threads`` (the device's largest block, None: the default), ``commit``
    workload: dict | None = None

    def to_dict(self) -> dict:
        """The run as ``dualflow power --json`` writes it (one mode's entry)."""
        return {"params": self.params, "workload": self.workload, "matched": self.matched,
                "bench_cycles": self.bench_cycles, "sim_seconds": self.sim_seconds, **self.report.to_dict()}


def workload_power(name: str, params, library: Library, *, node_nm: int, size: str = "tiny", seed: int = 1,
                   clock_mhz: float = DEFAULT_CLOCK_MHZ, netlist: Path | None = None, max_cycles: int = 100000,
                   values: dict | None = None, max_block_threads: int | None = None, log=print) -> RunPower:
    """Run workload ``name`` on the mapped core of ``params`` (grown as ``dualflow cosim`` grows it)
    at gate level and compute its power, the memories modelled at ``node_nm``. ``netlist``: use
    this mapped-netlist folder instead of the kept one (it must be the netlist of the same core).
    ``max_cycles``: the bench gives up on a block after this many cycles; ``values`` and
    ``max_block_threads``: as ``workload_cases`` takes them (a smaller run, a smaller block)."""
    from .cosim import run_cosim
    from .workload_cosim import core_for, summary, workload_cases

    commit = source_commit()  # the source the run starts from (the checkout may change while it runs)
    wc = workload_cases(name, params, size=size, seed=seed, max_cycles=max_cycles, values=values,
                        max_block_threads=max_block_threads)
    params = core_for(wc, params)
    if netlist is None:
        folder, top = netlist_for(params, library, node_nm=node_nm, log=log)
    else:
        folder, top = Path(netlist), f"core_{params.mode}"
    sim_dir = POWER_BUILD / f"sim-{folder.name}"
    gate = gate_level(folder, library, top, sim_dir)
    start = time.monotonic()
    results = run_cosim(params, wc.cases, gate=gate)
    seconds = time.monotonic() - start
    text = summary(wc, results)
    log(f"{params.mode}: gate-level run in {seconds:.0f} s\n{text}")
    if not gate.vcd.is_file():
        raise DualflowError(f"the gate-level run wrote no VCD ({gate.vcd}); see {sim_dir / 'sim.log'}")
    report = power_of_vcd(gate.vcd, gate.flat, library, root=top, node_nm=node_nm, clock_mhz=clock_mhz)
    workload = {"name": name, "size": size, "seed": seed, "values": values or {},
                "max_block_threads": max_block_threads, "commit": commit}
    return RunPower(str(params.mode), report, all(r.ok for r in results), text, sum(r.cycles for r in results),
                    seconds, gate.vcd.stat().st_size, params.to_dict(), workload)


def golden_event_counts(name: str, params, *, size: str = "tiny", seed: int = 1, values: dict | None = None,
                        max_block_threads: int | None = None) -> dict:
    """The events of a power run counted on the golden model: the launches ``workload_power`` runs
    (the same cases, the same core), each executed by the functional model at the core's warp size.
    A run whose trace matched retired exactly these records, so these are the RTL run's counts.
    Returns ``warp_instructions`` (all), ``by_class`` {unit class: {"warp": warp-instructions,
    "thread": active lanes}} and ``launches``."""
    from dualflow.machine.functional import FunctionalConfig
    from dualflow.models.device import Device

    from .cosim import dim3, golden_budget
    from .workload_cosim import core_for, workload_cases

    wc = workload_cases(name, params, size=size, seed=seed, values=values, max_block_threads=max_block_threads)
    params = core_for(wc, params)
    lanes = params.warp_size
    total = 0
    by_class: dict[str, dict[str, int]] = {}
    for case in wc.cases:
        dev = Device(FunctionalConfig(warp_size=lanes, max_warp_instructions=golden_budget(case, lanes)))
        launch_params = list(case.setup(dev)) if case.setup else []
        stats = dev.launch(case.kernel, grid=dim3(case.grid), block=dim3(case.block), params=launch_params).stats
        total += stats.warp_instructions
        for unit, c in stats.by_class.items():
            mine = by_class.setdefault(unit, {"warp": 0, "thread": 0})
            mine["warp"] += c["warp"]
            mine["thread"] += c["thread"]
    return {"warp_instructions": total, "by_class": dict(sorted(by_class.items())), "launches": len(wc.cases)}
