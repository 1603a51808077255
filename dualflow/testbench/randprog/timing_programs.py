"""Random programs on the D-FLOW timing model: the search for deadlocks (and wrong results) over
the window's configurations, in both engines.

One check draws a structured program (``generator.generate``: lane-dependent loops, early exits,
some to a shared exit tail, shared-memory phases behind barriers, FP32/SFU values), converts it to
DFLOW form (odd seeds with the default variants, even ones in the paper's original form; the
converter spills to local memory where the ring runs out, exit paths included), runs the REG
program on the functional model for the reference, then the DFLOW program on the timing model in
D-FLOW mode with each engine on one configuration: a preset cut to one SM, a collector-unit count
(2..16), a window policy, a send-ahead rule and an issue order, drawn from the seed. The outcome
is ``ok``, ``deadlock`` (either engine stopped with ``TimingDeadlock``), ``mismatch`` (``out``
differs from the functional model's), ``engines differ`` (cycles or ``out`` differ between the
engines) or ``error`` (anything else the converter or the models raised).

``benchmarks/timing_search.py`` runs campaigns and prints the counts per configuration;
``tests/models/timing/test_timing_search.py`` runs a short one (and the slow suite a long one).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from dualflow.common.errors import DualflowError, TimingDeadlock
from dualflow.isa import Variant, assemble
from dualflow.isa.convert import DEFAULT_VARIANTS, convert_kernel
from dualflow.machine.presets import preset
from dualflow.machine.window import CollectorPartition, DflowWindow, IssueOrder, SendAhead
from dualflow.models.timing.device import ENGINES, TimingDevice

from .generator import RUN_BUDGET, GenConfig, Launch, RandomSource, generate, make_inputs, run, upload

#: The presets the search cuts to one SM (their memory systems and SM shapes differ).
PRESETS = ("paper-rtx3080", "ampere-rtx3070", "fermi-gtx480")
#: Collector units per SM the search tries (the window's size; ``unit_counts``: those a preset allows).
COLLECTOR_UNITS = (2, 3, 4, 6, 8, 12, 16)
#: Launch shapes: warps of 32 lanes (the presets'), blocks of one or two warps (the generator's
#: shared-memory phases have a word for 64 threads), one to three blocks.
LAUNCHES = (Launch(32, 32, 1), Launch(32, 64, 1), Launch(32, 48, 2), Launch(32, 64, 2), Launch(32, 32, 3))
#: The generator for the search: deeper nesting, more exits (half of them to the shared tail) and
#: more barrier phases than the converter's tests draw, since those are what stress the window.
GEN = GenConfig(max_depth=4, exit_percent=12, shared_exit_percent=50, shared_phase_percent=6, launches=LAUNCHES)
OUTCOMES = ("ok", "deadlock", "mismatch", "engines differ", "error")


@dataclass(frozen=True)
class WindowConfig:
    """One D-FLOW configuration of the search."""

    preset: str
    collector_units: int
    window: DflowWindow
    send_ahead: SendAhead
    issue_order: IssueOrder

    def config(self, warp_size: int = 32):
        """The preset cut to one SM in D-FLOW mode with this window."""
        return preset(self.preset).replace(**{
            "mode": "dflow", "num_sms": 1, "sm.warp_size": warp_size,
            "sm.collector_units": self.collector_units, "sm.dflow_window": self.window.value,
            "sm.dflow_send_ahead": self.send_ahead.value, "sm.dflow_issue_order": self.issue_order.value})

    @property
    def name(self) -> str:
        return (f"{self.preset} cu={self.collector_units} {self.window.value} ahead={self.send_ahead.value} "
                f"{self.issue_order.value}")


def unit_counts(preset_name: str) -> tuple[int, ...]:
    """The collector-unit counts of ``COLLECTOR_UNITS`` a preset can have (with sub-cores, a
    multiple of its schedulers)."""
    sm = preset(preset_name).sm
    per = sm.schedulers if sm.collector_partition is CollectorPartition.SCHEDULER else 1
    return tuple(u for u in COLLECTOR_UNITS if u % per == 0)


def window_config(seed: int) -> WindowConfig:
    """The configuration a seed runs on: every field drawn independently, so a campaign of a few
    thousand seeds covers every value of each and most pairs."""
    rng = random.Random(f"window {seed}")
    name = rng.choice(PRESETS)
    return WindowConfig(name, rng.choice(unit_counts(name)), rng.choice(list(DflowWindow)),
                        rng.choice(list(SendAhead)), rng.choice(list(IssueOrder)))


def seed_variants(seed: int) -> frozenset[Variant]:
    """The default variants for odd seeds, the original form for even ones."""
    return DEFAULT_VARIANTS if seed % 2 else frozenset()


@dataclass
class SearchResult:
    seed: int
    config: WindowConfig
    outcome: str
    message: str = ""
    cycles: int = 0
    instructions: int = 0  # REG instructions of the program

    def summary(self) -> str:
        text = f"seed {self.seed} [{self.config.name}]: {self.outcome}"
        return f"{text}: {self.message}" if self.message else text


def _timing_run(kernel, launch: Launch, n: int, slots: int, inputs: np.ndarray, config, engine: str):
    from dualflow.machine.functional import FunctionalConfig

    dev = TimingDevice(config, FunctionalConfig(warp_size=launch.warp_size, max_warp_instructions=RUN_BUDGET),
                       engine=engine)
    params = upload(dev, inputs, launch, n, slots)
    dev.launch(kernel, grid=launch.grid, block=launch.block, params=params)
    return dev.gpu.cycle, dev.copy_out(params[1], launch.threads * slots, np.uint32)


def check_seed(seed: int, config: WindowConfig | None = None, engines: tuple[str, ...] = ENGINES) -> SearchResult:
    """Draw program ``seed``, convert it, and run it on the D-FLOW timing model (``config``, else
    the seed's ``window_config``) with each of ``engines`` against the functional model."""
    config = config if config is not None else window_config(seed)
    prog = generate(RandomSource(seed), GEN)
    reg = assemble(prog.text, f"<search {seed}>").only
    result = SearchResult(seed, config, "ok", instructions=len(reg.code))
    inputs = make_inputs(prog.data_seed)
    want = run(reg, prog.launch, prog.n, prog.slots, inputs)
    try:
        kernel, _ = convert_kernel(reg, variants=seed_variants(seed))
    except DualflowError as exc:  # a converter defect the search found: recorded, the campaign goes on
        result.outcome, result.message = "error", f"converter: {exc}"
        return result
    got = {}
    for engine in engines:
        try:
            got[engine] = _timing_run(kernel, prog.launch, prog.n, prog.slots, inputs,
                                      config.config(prog.launch.warp_size), engine)
        except TimingDeadlock as exc:
            result.outcome, result.message = "deadlock", f"{engine}: {exc}".split("; state:")[0]
            return result
        except DualflowError as exc:
            result.outcome, result.message = "error", f"{engine}: {exc}"
            return result
        cycles, out = got[engine]
        if not np.array_equal(out, want):
            wrong = np.flatnonzero(out != want)
            result.outcome = "mismatch"
            result.message = f"{engine}: {wrong.size} words of out differ from the functional model's, first {wrong[0]}"
            return result
    first = got[engines[0]]
    differ = [e for e in engines[1:] if got[e][0] != first[0]]
    if differ:
        result.outcome = "engines differ"
        result.message = ", ".join(f"{e} {got[e][0]:,} cycles" for e in (engines[0], *differ))
    result.cycles = first[0]
    return result


@dataclass
class SearchTally:
    """A campaign's outcomes: in all, and per value of each configuration field."""

    total: int = 0
    outcomes: dict[str, int] | None = None
    by_field: dict[str, dict[str, dict[str, int]]] | None = None  # field -> value -> outcome -> count
    failures: list[SearchResult] | None = None

    def __post_init__(self) -> None:
        self.outcomes = self.outcomes or dict.fromkeys(OUTCOMES, 0)
        self.by_field = self.by_field or {}
        self.failures = self.failures or []

    def add(self, r: SearchResult) -> None:
        self.total += 1
        self.outcomes[r.outcome] += 1
        c = r.config
        for name, value in (("preset", c.preset), ("collector_units", str(c.collector_units)),
                            ("window", c.window.value), ("send_ahead", c.send_ahead.value),
                            ("issue_order", c.issue_order.value),
                            ("form", "variants" if seed_variants(r.seed) else "original")):
            counts = self.by_field.setdefault(name, {}).setdefault(value, dict.fromkeys(OUTCOMES, 0))
            counts[r.outcome] += 1
        if r.outcome != "ok":
            self.failures.append(r)

    def report(self) -> str:
        lines = [f"programs: {self.total}; " + ", ".join(f"{k} {v}" for k, v in self.outcomes.items())]
        for name, values in self.by_field.items():
            lines.append(f"  {name}:")
            for value, counts in sorted(values.items(), key=lambda kv: (len(kv[0]), kv[0])):
                bad = {k: v for k, v in counts.items() if k != "ok" and v}
                lines.append(f"    {value:<16} {sum(counts.values()):>6} programs"
                             + ("" if not bad else "; " + ", ".join(f"{k} {v}" for k, v in bad.items())))
        return "\n".join(lines)


def run_search(seeds, jobs: int = 1, engines: tuple[str, ...] = ENGINES, progress=None) -> SearchTally:
    """``check_seed`` over ``seeds`` in ``jobs`` worker processes (1: in this one); ``progress``:
    called with each result as it arrives."""
    tally = SearchTally()
    seeds = list(seeds)
    if jobs <= 1:
        results = (check_seed(s, engines=engines) for s in seeds)
        for r in results:
            tally.add(r)
            if progress:
                progress(r)
        return tally
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs) as pool:
        for r in pool.map(check_seed, seeds, [None] * len(seeds), [engines] * len(seeds), chunksize=8):
            tally.add(r)
            if progress:
                progress(r)
    return tally
