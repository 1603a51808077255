"""Random co-simulation campaigns: generated programs on the RTL core until a number of warp
instructions has been compared with the golden model, with functional coverage.

Program ``i`` of a campaign with seed ``S`` has the program seed ``program_seed(S, i)``; every
``FAULT_EVERY``-th program faults on purpose (``fault_of(i, params)``: the kinds of
``fault_programs.makers_for`` in turn; another schedule may be given). On a core with hands the
DFLOW_READ programs read the hands illegally in turn, and the others take the main hands in
turn (their seeds moved by ``hand_seed``). A mode's programs run in batches of ``batch`` (one
simulator process each), the batches taking the core parameter sets in turn (``PARAM_SETS``); the
REG program of a seed is the same in both modes (a DFLOW core runs its conversion). A mode stops once ``target`` warp
instructions (trace records equal in both runs) have been compared. Everything follows from
the seed: the programs, their inputs, the memory model's latencies.

A case that does not pass (``CaseResult.ok``: a mismatch, or a fault the core did not meet
alike) is a ``Failure`` that names the program seed and a command that runs that program alone
(``reproduce``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from dualflow.common.errors import ConfigError
from dualflow.isa import Kernel
from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams

from .cosim import CaseResult, run_cosim
from .coverage import Coverage
from .randprog.core_programs import CoreProgram, core_program, main_hands
from .randprog.fault_programs import fault_program, makers_for

__all__ = ["PARAM_SETS", "Campaign", "Failure", "fault_of", "hand_seed", "hands_of", "program_for", "program_seed",
           "run_campaign"]

#: Core parameter sets of a campaign (``CoreParams`` fields beside the mode), by name.
PARAM_SETS: dict[str, dict] = {
    # 8 lanes x 4 warps, 4 banks, 4 CUs, ALU latency 2, GTO, ring 32 (the defaults)
    "default": {},
    # many narrow warps, few banks and CUs, a long ALU, LRR, a larger ring, few requests in flight
    "narrow": {"warp_size": 4, "warps": 8, "register_banks": 2, "collector_units": 2, "alu_latency": 3,
               "scheduler": "lrr", "ring": 64, "dmax": 40, "requests_in_flight": 4, "shared_banks": 2},
    # wide warps, many banks and CUs, a one-cycle ALU, a deeper DFLOW waiting policy
    "wide": {"warp_size": 16, "warps": 4, "register_banks": 8, "collector_units": 6, "alu_latency": 1,
             "dflow_waiting_per_warp": 3, "dflow_waiting_per_sm": 5, "requests_in_flight": 16},
    # two FP32 pipelines and two SFUs, each taking a warp over several cycles (interval > 1)
    "units": {"fp_latency": 6, "fp_interval": 2, "fp_count": 2, "sfu_latency": 12, "sfu_interval": 4,
              "sfu_count": 2},
    # DFLOW: four hands (.variant hands) of 16, 4, 16 and 2 entries (38 a warp), hands programs
    # (randprog/hands.py); a BASE core of this set is the default one
    "hands": {"rings": (16, 4, 16, 2), "dmax": 15},
    # DFLOW: uniform operands (CoreParams.uniform_operands), every program converted with them
    # (core_programs.seed_variants); a BASE core of this set is the default one
    "uniform": {"uniform_operands": True},
}
#: Every FAULT_EVERY-th program faults on purpose.
FAULT_EVERY = 8


def program_seed(seed: int, index: int) -> int:
    """The generator seed of program ``index`` of a campaign with ``seed``."""
    return random.Random(f"campaign {seed} program {index}").randrange(1 << 31)


def hand_seed(seed: int, hand: int, hands: int) -> int:
    """``seed`` moved to the one of its run of ``hands`` seeds whose remainder is ``hand``: on a
    core with hands a DFLOW_READ program reads hand ``seed % hands`` illegally
    (``fault_programs.illegal_hand``), any other takes main hand ``seed % len(main_hands)``
    (``core_programs.main_hands``)."""
    return seed - seed % hands + hand


def fault_of(index: int, params: CoreParams) -> TrapCause | None:
    """The trap program ``index`` is made to meet on a core of ``params``'s mode, or None."""
    if index % FAULT_EVERY != FAULT_EVERY - 1:
        return None
    kinds = makers_for(params)
    return kinds[(index // FAULT_EVERY) % len(kinds)]


def program_for(params: CoreParams, seed: int, fault: TrapCause | None, *, fp: bool = False) -> CoreProgram:
    """The program of a seed for a core (faulting on purpose when ``fault`` is given)."""
    if fault is None:
        return core_program(params, seed, fp=fp)
    return fault_program(params, seed, fault, fp=fp)


def core_params(name: str, mode: str, overrides: dict | None = None) -> CoreParams:
    """Parameter set ``name`` for a ``mode`` core, with ``overrides`` (CoreParams fields) on top."""
    if name not in PARAM_SETS:
        raise ConfigError(f"unknown parameter set {name!r} (have: {', '.join(PARAM_SETS)})")
    fields = {**PARAM_SETS[name], **(overrides or {})}
    if mode != "dflow":  # hands and uniform operands are of the DFLOW form
        fields.pop("rings", None)
        fields.pop("uniform_operands", None)
    return CoreParams(mode=mode, **fields)


@dataclass
class Failure:
    """A program whose co-simulation did not pass."""

    mode: str
    param_set: str
    seed: int
    fault: TrapCause | None
    summary: str
    command: str


@dataclass
class ModeTally:
    programs: int = 0
    compared: int = 0
    faults_met: int = 0  #: fault programs whose golden run faulted (and the core alike, unless a Failure)
    cycles: int = 0
    seconds: float = 0.0


@dataclass
class Campaign:
    """What a campaign did: per mode, programs, compared instructions, cycles and wall time; the
    failures; the coverage."""

    seed: int
    target: int
    simulator: str
    param_sets: tuple[str, ...]
    coverage: Coverage
    tallies: dict[str, ModeTally] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def report(self) -> str:
        lines = []
        for mode, t in self.tallies.items():
            lines.append(f"{mode}: {t.compared:,} warp instructions compared, "
                         f"{sum(f.mode == mode for f in self.failures)} mismatched programs, "
                         f"{t.programs} programs ({t.faults_met} met their fault), {t.cycles:,} core cycles, "
                         f"{t.seconds:.0f} s wall ({', '.join(self.param_sets)}; {self.simulator}, seed {self.seed})")
        for f in self.failures:
            lines.append(f"MISMATCH {f.mode} {f.param_set} program seed {f.seed}"
                         f"{' fault ' + f.fault.name if f.fault else ''}:\n{f.summary}\nreproduce: {f.command}")
        lines.append(self.coverage.report())
        return "\n".join(lines)


def reproduce(mode: str, param_set: str, seed: int, fault: TrapCause | None, simulator: str,
              overrides: dict | None) -> str:
    """The command that co-simulates one campaign program alone."""
    extra = "".join(f" --{k.replace('_', '-')} {v}" for k, v in sorted((overrides or {}).items()))
    return (f"dualflow cosim --random-program {seed}{' --fault ' + fault.name if fault else ''} --mode {mode} "
            f"--params {param_set} --simulator {simulator}{extra}")


def run_campaign(target: int, seed: int, *, modes: Sequence[str] = ("base", "dflow"),
                 param_sets: Sequence[str] = tuple(PARAM_SETS), simulator: str = "icarus",
                 overrides: dict | None = None, fp: bool = False, batch: int = 16, inject: bool = False,
                 progress: Callable[[str, int, int], None] | None = None,
                 faults: Callable[[int, CoreParams], TrapCause | None] = fault_of) -> Campaign:
    """Co-simulate generated programs until ``target`` warp instructions have been compared, per
    mode. ``progress(mode, compared, target)`` is called after each batch. ``inject``: the bench
    corrupts one value of every case (expect-fail: every program must fail). ``faults(index,
    params)``: the trap program ``index`` is made to meet (default ``fault_of``); on a core with
    hands the DFLOW_READ programs take the hands in turn (``hand_seed``)."""
    if target < 1 or batch < 1:
        raise ConfigError("a campaign needs a positive instruction count and batch size")
    cores = {(mode, name): core_params(name, mode, overrides) for mode in modes for name in param_sets}
    coverage = Coverage(modes, max(p.stack_depth for p in cores.values()), hands_of(cores.values()))
    camp = Campaign(seed, target, simulator, tuple(param_sets), coverage)
    for mode in modes:
        tally = camp.tallies.setdefault(mode, ModeTally())
        started = time.monotonic()
        index, round_, illegal, turn = 0, 0, 0, 0
        if progress is not None:
            progress(mode, 0, target)
        while tally.compared < target:
            name = param_sets[round_ % len(param_sets)]
            params = cores[(mode, name)]
            progs = []
            for i in range(index, index + batch):
                fault, s = faults(i, params), program_seed(seed, i)
                if fault is TrapCause.DFLOW_READ and params.hands > 1:
                    s, illegal = hand_seed(s, illegal % params.hands, params.hands), illegal + 1
                elif params.mode.ring and params.hands > 1:
                    mains = len(main_hands(params))
                    s, turn = hand_seed(s, turn % mains, mains), turn + 1
                progs.append((s, fault))
            cases = [program_for(params, s, f, fp=fp).case() for s, f in progs]
            results = run_cosim(params, cases, simulator=simulator, inject=inject, max_print=5)
            for (s, fault), case, res in zip(progs, cases, results):
                _tally(camp, tally, coverage, mode, name, s, fault, case.kernel, res, overrides)
            index += batch
            round_ += 1
            if progress is not None:
                progress(mode, tally.compared, target)
        tally.seconds = time.monotonic() - started
    return camp


def hands_of(cores: Iterable[CoreParams]) -> tuple[tuple[int, ...], int] | None:
    """``(rings, dmax)`` of the campaign's DFLOW core with hands (its coverage's ``hands`` bins),
    or None; several such cores must share their rings, and the bins take the largest dmax."""
    hands = {p.ring_sizes for p in cores if p.mode.ring and p.hands > 1}
    if len(hands) > 1:
        raise ConfigError(f"a campaign's hands coverage needs one set of rings, not {sorted(hands)}")
    if not hands:
        return None
    return hands.pop(), max(p.dmax for p in cores if p.mode.ring and p.hands > 1)


def _tally(camp: Campaign, tally: ModeTally, coverage: Coverage, mode: str, name: str, seed: int,
           fault: TrapCause | None, kernel: Kernel, res: CaseResult, overrides: dict | None) -> None:
    tally.programs += 1
    tally.compared += res.compare.matched if res.compare is not None else 0
    tally.cycles += res.cycles
    tally.faults_met += res.golden_fault is not None
    coverage.sample(mode, res, kernel)
    if not res.ok:
        camp.failures.append(Failure(mode, name, seed, fault, res.summary(),
                                     reproduce(mode, name, seed, fault, camp.simulator, overrides)))
