"""Random programs on the RTL core: the generator for the core (determinism, every construct, golden
runs), the programs that fault on purpose, a short campaign with its coverage, an injected
mismatch that must be caught, and the ``dualflow cosim --random`` command line."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dualflow.cli import main
from dualflow.common.errors import KernelFault
from dualflow.isa import Form, Instruction, Opcode, assemble
from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams
from dualflow.testbench.campaign import PARAM_SETS, core_params, fault_of, program_seed, run_campaign
from dualflow.testbench.cosim import CosimCase, run_cosim
from dualflow.testbench.coverage import EVENT_BINS, HANDS, Coverage
from dualflow.testbench.faults import golden_kind
from dualflow.testbench.randprog.core_programs import core_program, core_runs_fp
from dualflow.testbench.randprog.fault_programs import MAKERS, fault_kinds, fault_program, makers_for, unmade_kinds
from dualflow.testbench.randprog.generator import features, make_inputs, run

#: The core of the co-simulated tests: the 4 x 4 core of the other RTL tests (the same builds).
SMALL = dict(warp_size=4, warps=4)

#: Constructs every batch of 60 programs for a core must contain.
CONSTRUCTS = {
    "if/else", "if without else", "lane-dependent if", "uniform if", "divergent loop", "while loop",
    "uniform loop", "loop in loop", "loop in if", "if in loop", "exit", "exit in region", "early exit",
    "integer arithmetic", "global memory", "shared memory", "local memory", "fence", "barrier", "vote",
}


def _run(prog, kernel):
    p = prog.program
    return run(kernel, p.launch, p.n, p.slots, make_inputs(p.data_seed))


@pytest.mark.parametrize("name", list(PARAM_SETS))
def test_programs_fit_the_core_and_are_deterministic(name):
    for mode in ("base", "dflow"):
        params = core_params(name, mode)
        a, b = core_program(params, 11), core_program(params, 11)
        assert a.text == b.text and a.kernel.code == b.kernel.code
        assert core_program(params, 12).text != a.text
        assert a.kernel.form is params.mode.form
        launch = a.program.launch
        assert launch.warp_size == params.warp_size and launch.block <= params.warps * params.warp_size
    base = core_params(name, "base")
    for seed in range(20):
        regs = {int(r) for r in re.findall(r"\br(\d+)\b", core_program(base, seed).text)}
        assert max(regs) < base.regs


def test_every_construct_appears_and_fp_is_an_option():
    params = CoreParams(mode="base", **SMALL)
    found = set().union(*(features(core_program(params, seed).program) for seed in range(60)))
    assert CONSTRUCTS | {"unwritten register"} <= found, CONSTRUCTS - found
    assert not found & {"FP arithmetic", "SFU"}
    with_fp = set().union(*(features(core_program(params, seed, fp=True).program) for seed in range(30)))
    assert {"FP arithmetic", "SFU"} <= with_fp
    shapes = {(core_program(params, seed).program.launch.block, core_program(params, seed).program.launch.grid)
              for seed in range(30)}
    assert len({b for b, _ in shapes}) >= 3 and {g for _, g in shapes} == {1, 2, 3}


@pytest.mark.parametrize("fp", [False, True], ids=["int", "fp"])
def test_generated_programs_run_on_the_golden_model_in_both_forms(fp):
    """No fault, and the DFLOW conversion computes what the REG program does (FP included: the
    core's FP units are checked by the campaign once its decoder runs FP opcodes)."""
    base, dflow = CoreParams(mode="base", **SMALL), CoreParams(mode="dflow", **SMALL)
    for seed in range(12):
        reg, conv = core_program(base, seed, fp=fp), core_program(dflow, seed, fp=fp)
        assert reg.text == conv.text and conv.kernel.form is Form.DFLOW
        assert np.array_equal(_run(reg, reg.kernel), _run(conv, conv.kernel))


def test_fault_programs_meet_their_fault_on_the_golden_model():
    for mode in ("base", "dflow"):
        params = CoreParams(mode=mode, **SMALL)
        for cause in makers_for(params):
            met = 0
            for seed in range(6):
                prog = fault_program(params, seed, cause)
                try:
                    _run(prog, prog.kernel)
                except KernelFault as exc:
                    assert golden_kind(exc) == cause.name, (mode, cause, exc)
                    met += 1
            assert met >= 4, (mode, cause, met)


def test_fault_kinds_come_from_trapcause():
    assert fault_kinds() == [c for c in TrapCause if c is not TrapCause.NONE]
    assert set(MAKERS) | set(unmade_kinds()) == set(fault_kinds()) and not set(MAKERS) & set(unmade_kinds())
    cov = Coverage(["base"], 4)
    try:
        assert list(cov.bins("base")["trap kind"]) == [c.name for c in fault_kinds() if c is not TrapCause.DFLOW_READ]
        assert "ring-guard stall" not in cov.bins("base")["events"]
    finally:
        cov.close()
    for mode in ("base", "dflow"):
        params = CoreParams(mode=mode)
        faults = [fault_of(i, params) for i in range(200)]
        assert {f for f in faults if f is not None} == set(makers_for(params)) and faults.count(None) > 150
    assert set(MAKERS) - set(makers_for(CoreParams(mode="base"))) == {TrapCause.DFLOW_READ}
    assert program_seed(1, 3) == program_seed(1, 3) != program_seed(2, 3)


def test_coverage_bins_what_a_case_shows():
    """Each observation of a case lands in its bin (a synthetic result: no simulation)."""
    from dualflow.models.trace import Trace, TraceRecord
    from dualflow.testbench.cosim import CaseResult

    def rec(warp, seq):
        return TraceRecord(block=0, warp=warp, seq=seq, pc=seq, op="nop", rp=None, mask=1, dst=None, values=None,
                           addrs=None, data=None)

    quiet = CaseResult("a", 1, None, events={"bank_conflict": 0, "cu_full": 0, "stack_depth": {"0": 9}},
                       mem_stats={"reordered": 0})
    quiet.rtl = Trace("k", "reg", 4, {}, [rec(0, 0), rec(0, 1), rec(1, 0)])
    busy = CaseResult("b", 2, None, trap="BARRIER at pc 3 block 0 warp 1",
                      events={"bank_conflict": 2, "cu_full": 1, "ring_guard": 4, "barrier_wait": 3,
                              "stack_depth": {"0": 5, "2": 1, "3": 0}}, mem_stats={"reordered": 1})
    busy.rtl = Trace("k", "dflow", 4, {}, [rec(0, 1), rec(0, 0)])
    cov = Coverage(["base", "dflow"], 3)
    try:
        cov.sample("base", quiet)
        cov.sample("dflow", quiet)
        cov.sample("dflow", busy)
        base, dflow = cov.bins("base"), cov.bins("dflow")
        assert set(base["events"].values()) == {0} and base["SIMT-stack depth"] == {0: 1, 1: 0, 2: 0, 3: 0}
        assert all(n == 1 for n in dflow["events"].values()), dflow["events"]
        assert dflow["SIMT-stack depth"] == {0: 2, 1: 0, 2: 1, 3: 0}
        assert dflow["trap kind"]["BARRIER"] == 1 and sum(dflow["trap kind"].values()) == 1
        assert cov.never_hit("dflow")["SIMT-stack depth"] == [1, 3]
        assert "never hit: events register-bank conflict" in cov.report()
    finally:
        cov.close()


def test_fp_programs_follow_the_decoder():
    """Today's decoder traps FP opcodes, so the campaign runs integer programs (--fp auto)."""
    from dualflow.rtl.decode import DecodedLayout

    assert core_runs_fp(CoreParams(**SMALL)) is ("fp_trap" not in dict(DecodedLayout()))


def test_a_short_campaign_passes_with_coverage(capsys):
    camp = run_campaign(800, 7, param_sets=("default",), overrides=SMALL, batch=2)
    try:
        assert camp.ok, camp.report()
        for mode in ("base", "dflow"):
            assert camp.tallies[mode].compared >= 800
        report = camp.report()
        assert "never hit:" in report and "0 mismatched programs" in report
        events = camp.coverage.bins("dflow")["events"]
        assert list(events) == [label for label, _ in EVENT_BINS]
        # seen in every short run: the core's events port and the trace reach the coverage model
        for label in ("register-bank conflict", "collector units full", "younger retires before older"):
            assert events[label] > 0, report
        assert camp.coverage.bins("base")["SIMT-stack depth"][1] > 0
        assert "SIMT-stack depth 16" in report  # never reached by these programs: named as never hit
    finally:
        camp.coverage.close()


def test_an_injected_mismatch_is_caught_with_a_reproduction_command():
    camp = run_campaign(1, 3, modes=("base",), param_sets=("default",), overrides=SMALL, batch=2, inject=True)
    try:
        assert not camp.ok and len(camp.failures) == camp.tallies["base"].programs == 2
        f = camp.failures[0]
        assert f.seed == program_seed(3, 0) and "mismatch" in f.summary.lower()
        assert f.command == (f"dualflow cosim --random-program {f.seed} --mode base --params default "
                             f"--simulator icarus --warp-size 4 --warps 4")
        assert "MISMATCH base default program seed" in camp.report()
    finally:
        camp.coverage.close()


def test_random_program_command_reproduces_one_program(capsys):
    argv = ["cosim", "--random-program", str(program_seed(7, 0)), "--mode", "base", "--params", "default",
            "--warp-size", "4", "--warps", "4"]
    assert main(argv) == 0
    assert "MISMATCH" not in capsys.readouterr().out
    assert main(argv[:3] + ["--fault", "MISALIGNED"] + argv[3:]) == 0
    assert "the RTL trapped alike (MISALIGNED" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["cosim", "--random", "10", "--workload", "bfs"], "not --workload and --random"),
    (["cosim", "--random", "10", "--params", "huge"],
     "unknown parameter set 'huge' (have: default, narrow, wide, units, hands, uniform)"),
    (["cosim", "--random-program", "3", "--fault", "BOGUS", "--mode", "base", "--params", "default"],
     "--fault BOGUS: not a trap cause"),
    (["cosim", "--random-program", "3", "--fault", "PARAM", "--mode", "base", "--params", "default"],
     "no program can be made to meet trap PARAM on a base core"),
    (["cosim", "--random-program", "3", "--fault", "DFLOW_READ", "--mode", "base", "--params", "default"],
     "no program can be made to meet trap DFLOW_READ on a base core"),
    (["cosim", "--random-program", "3"], "give one --mode (base or dflow) and one --params set"),
    (["cosim", "--random", "10", "--fault", "MISALIGNED"], "--fault: an option of --random-program"),
    (["cosim", "x.s", "--mode", "both"], "--mode both, --params and --fault are options of --random"),
])
def test_random_bad_input_is_one_error_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_mode_both_is_for_cosim_only(capsys):
    with pytest.raises(SystemExit):
        main(["rtl", "generate", "--mode", "both", "-o", "x.v"])
    assert "invalid choice: 'both'" in capsys.readouterr().err


#: Lanes 0 and 1 write r9 (a masked first write of the row), then every lane stores r9: lanes 2 and
#: 3 must read 0 although the launch before left 7 in every lane of r9.
PARTIAL = """
.kernel partial
.form reg
.param out
    s2r r1, %tid.x
    isetp.ge r3, r1, 2
    ssy J
    brnz r3, J
    mov r9, 5
    sync
J:
    ishl r1, r1, 2
    ldc r2, out
    iadd r2, r2, r1
    stg [r2], r9
    exit
"""


@pytest.mark.parametrize("reader", ["reads", "partial"])
def test_a_never_written_register_reads_zero_on_the_core(reader: str):
    """A block starts with every register at 0 (the functional model's rule): neither what the
    launch before left nor a lane a masked first write skipped shows through (regfile.py)."""
    writes = assemble(".kernel writes\n.form reg\n.param out\n    mov r9, 7\n    exit\n").only
    reads = assemble(".kernel reads\n.form reg\n.param out\n    s2r r1, %tid.x\n    ishl r1, r1, 2\n"
                     "    ldc r2, out\n    iadd r2, r2, r1\n    stg [r2], r9\n    exit\n").only
    second = reads if reader == "reads" else assemble(PARTIAL).only
    params = CoreParams(mode="base", **SMALL)
    cases = [CosimCase(k.name, k, 4, lambda dev: [dev.alloc(16)]) for k in (writes, second)]
    results = run_cosim(params, cases)
    assert all(r.ok for r in results), results[1].summary()
    assert results[1].compare.matched == results[1].compare.model_records > 0


def test_instruction_patch_keeps_pcs():
    """The kernel patches of the converter-refused faults replace one instruction in place."""
    params = CoreParams(mode="dflow", **SMALL)
    clean = core_program(params, 5)
    for cause in (TrapCause.STACK_EMPTY, TrapCause.PC_RANGE):
        patched = fault_program(params, 5, cause).kernel
        assert len(patched.code) == len(clean.kernel.code)
        diff = [pc for pc, (x, y) in enumerate(zip(patched.code, clean.kernel.code)) if x != y]
        assert len(diff) == 1
        assert patched.code[diff[0]] in (Instruction(Opcode.SYNC), Instruction(Opcode.NOP))


@pytest.mark.slow
def test_a_campaign_under_verilator():
    """About 20,000 compared warp instructions per mode on the default parameter set under
    Verilator, FP programs as the decoder allows (the recorded 10^6 campaigns in docs/rtl.md, over
    the three sets, are the command line's)."""
    camp = run_campaign(20_000, 11, simulator="verilator", param_sets=("default",), batch=24,
                        fp=core_runs_fp(CoreParams()))
    try:
        assert camp.ok, camp.report()
        for mode in ("base", "dflow"):
            assert camp.tallies[mode].compared >= 20_000 and camp.tallies[mode].faults_met > 0
            hits = camp.coverage.bins(mode)["events"]
            assert all(n > 0 for label, n in hits.items() if label != "barrier with warps waiting"), hits
    finally:
        camp.coverage.close()


def test_campaigns_convert_only_with_the_variants_the_core_implements():
    """Odd seeds convert with every variant of ``rtl.decode.VARIANTS`` (reserved-ssy), never with
    uniform-operands on a core built without them: no generated kernel uses a uniform flag (a core
    built with them: tests/rtl/test_rtl_uniform.py)."""
    from dualflow.isa import Variant
    from dualflow.rtl.decode import VARIANTS
    from dualflow.testbench.randprog.core_programs import seed_variants

    params = CoreParams(mode="dflow", warp_size=4, warps=4, ring=32, dmax=31)
    assert seed_variants(1) == VARIANTS == frozenset({Variant.RESERVED_SSY}) and seed_variants(2) == frozenset()
    assert seed_variants(1, params) == VARIANTS and seed_variants(2, params) == frozenset()
    for seed in (1, 3, 5):
        kernel = core_program(params, seed).kernel
        assert Variant.UNIFORM_OPERANDS not in kernel.variants and not any(ins.uniform for ins in kernel.code)


def test_a_short_hands_campaign_passes_and_hits_every_hands_bin():
    """The ``hands`` parameter set (DFLOW, four hands of 16, 4, 16 and 2 entries): random hands
    programs (randprog/hands.py) on the 4 x 4 core, every record and its hand compared; one batch
    of two clean programs and four illegal reads (dualflow/testbench/hands_campaign.py) hits every bin of the
    hands cover point (dualflow/testbench/hands_coverage.py)."""
    from dualflow.testbench.hands_campaign import CORE, hands_coverage_campaign

    assert CORE == SMALL
    camp = hands_coverage_campaign(9)
    try:
        assert camp.ok, camp.report()
        assert camp.tallies["dflow"].compared >= 1500 and camp.tallies["dflow"].faults_met == 4
        hands = camp.coverage.bins("dflow")[HANDS]
        assert len(hands) == 35 and camp.coverage.never_hit("dflow")[HANDS] == [], camp.coverage.report()
    finally:
        camp.coverage.close()


def test_hands_campaigns_take_main_hands_and_illegal_read_hands_in_turn():
    """``hand_seed`` moves a seed within its run of ``hands`` seeds to the one whose remainder names
    a hand, and the DFLOW_READ program of that seed reads that hand illegally (a campaign moves
    the seeds of its DFLOW_READ programs so, and of its clean ones by the main hands, s and u)."""
    from dualflow.isa.opcodes import HAND_NAMES
    from dualflow.testbench.campaign import hand_seed
    from dualflow.testbench.randprog.core_programs import main_hands

    params = core_params("hands", "dflow", SMALL)
    assert main_hands(params) == [0, 2]
    for i in range(8):
        moved = hand_seed(program_seed(3, i), i % 4, 4)
        assert moved % 4 == i % 4 and abs(moved - program_seed(3, i)) < 4
        assert core_program(params, moved).kernel.hands
        prog = fault_program(params, moved, TrapCause.DFLOW_READ)
        with pytest.raises(KernelFault, match=rf"illegal DFLOW read of \|{HAND_NAMES[i % 4]}\d+\|"):
            _run(prog, prog.kernel)


def test_hands_programs_use_every_hand_and_run_on_the_golden_model():
    """Hands programs are legal by construction (the golden model runs them, the ones made to fault
    meet their fault) and name every hand in every selector position."""
    from dualflow.isa import Variant

    params = core_params("hands", "dflow", SMALL)
    seen = {name: set() for name in ("write", "a", "b", "c")}
    for seed in range(12):
        prog = core_program(params, seed)
        kernel = prog.kernel
        assert Variant.HANDS in kernel.variants and kernel.rings == params.ring_sizes
        conv = core_program(CoreParams(mode="base", **SMALL), seed)
        assert np.array_equal(_run(prog, kernel), _run(conv, conv.kernel))
        for ins in kernel.code:
            for name in seen:
                seen[name].add(ins.hand_of(name))
    assert all(seen[name] == {0, 1, 2, 3} for name in ("write", "a", "b")), seen
    for cause in makers_for(params):
        prog = fault_program(params, 3, cause)
        with pytest.raises(KernelFault):
            _run(prog, prog.kernel)
    assert core_params("hands", "base").rings is None


@pytest.mark.slow
def test_a_hands_campaign():
    """About 30,000 compared warp instructions of hands programs, faults included."""
    camp = run_campaign(30_000, 13, modes=("dflow",), param_sets=("hands",), overrides=SMALL, batch=8)
    try:
        assert camp.ok, camp.report()
        assert camp.tallies["dflow"].compared >= 30_000 and camp.tallies["dflow"].faults_met > 0
    finally:
        camp.coverage.close()


@pytest.mark.slow
def test_a_hands_campaign_under_verilator():
    """About 20,000 compared warp instructions of hands programs under Verilator (the figures of
    ``dualflow cosim --random 20000 --seed 17 --mode dflow --params hands --warp-size 4 --warps 4
    --batch 8 --simulator verilator`` are in docs/rtl.md)."""
    camp = run_campaign(20_000, 17, modes=("dflow",), param_sets=("hands",), overrides=SMALL, batch=8,
                        simulator="verilator")
    try:
        assert camp.ok, camp.report()
        assert camp.tallies["dflow"].compared >= 20_000 and camp.tallies["dflow"].faults_met > 0
        # every hands bin but the illegal reads (a DFLOW_READ program is one in 48 of the default schedule)
        missed = camp.coverage.never_hit("dflow")[HANDS]
        assert all(b.endswith("illegal read") for b in missed), camp.coverage.report()
    finally:
        camp.coverage.close()
