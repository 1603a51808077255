"""The converter's ``hands`` variant (dualflow/isa/convert/hands.py): loop invariants defined outside every
loop live on hand t, at fixed positions, so a loop reads them with no relay; the rest of the
converter works on hand s as before. The converted code computes what the REG form computes."""

from __future__ import annotations

import numpy as np
import pytest
from programs import launch_out
from test_convert_reserve import _with

from dualflow.isa import Form, Opcode, Variant, assemble
from dualflow.isa.convert import VARIANTS, ConvertError, convert_kernel, convert_module
from dualflow.isa.convert.cfg import build_cfg
from dualflow.isa.convert.codegen import MIN_DMAX
from dualflow.isa.convert.hands import (
    INVARIANT_HAND,
    HandPlan,
    assign,
    copy_region_exits,
    invariant_candidates,
    split_webs,
)
from dualflow.isa.convert.liveness import defines
from dualflow.isa.convert.surgery import isolate_critical_edges
from dualflow.kernels.registry import HAND_WRITTEN, WORKLOADS
from dualflow.kernels.workload import run_workload
from dualflow.testbench.randprog.generator import Launch, make_inputs, run

HANDS = frozenset({Variant.HANDS})
ALL = HANDS | {Variant.RESERVED_SSY, Variant.UNIFORM_OPERANDS}

#: Each thread sums k * (tid + 3) + 5 for k = 0..n-1 in a loop whose body reads three invariants
#: (r3 = tid + 3, r4 = 5 and the address r9), computed before it; between them and the loop, a
#: run of values long enough to push them past a small Dmax on hand s.
LOOP = """.kernel k
.param out n
    s2r r0, %tid.x
    ishl r9, r0, 2
    ldc r8, out
    iadd r9, r9, r8
    iadd r3, r0, 3
    mov r4, 5
    ldc r5, n
    mov r6, 0
    mov r7, 0
    iadd r10, r0, 1
    iadd r11, r10, 1
    iadd r12, r11, 1
    iadd r13, r12, 1
    iadd r14, r13, 1
    iadd r15, r14, 1
    iadd r16, r15, 1
    iadd r17, r16, 1
    iadd r18, r17, 1
    iadd r19, r18, 1
    iadd r20, r19, 1
    iadd r21, r20, 1
    iadd r22, r21, 1
    iadd r7, r7, r22
LOOP:
    imad r1, r6, r3, r4
    iadd r7, r7, r1
    stg [r9], r7
    iadd r6, r6, 1
    isetp.lt r2, r6, r5
    brnz r2, LOOP
    exit
"""


def _reference(n: int) -> list[int]:
    return [sum(k * (t + 3) + 5 for k in range(n)) + t + 13 for t in range(32)]


def _cfg(src: str):
    cfg = build_cfg(assemble(src).only)
    isolate_critical_edges(cfg)
    return cfg


def test_the_loop_invariants_go_on_hand_t():
    cfg = _cfg(LOOP)
    assert split_webs(cfg) == 1  # the address r9 (written twice) gets a register of its own
    plan = assign(cfg, {}, 16)
    # r3, r4, the address and r5 (n, read in the loop too); the loop's own values stay on s
    assert {3, 4, 5} <= set(plan.hand) and len(plan.hand) == 4 and not {1, 2, 6, 7, 9} & set(plan.hand)
    assert set(plan.hand.values()) == {INVARIANT_HAND}
    assert plan.ring(INVARIANT_HAND) == plan.max_distance[INVARIANT_HAND] + 1


@pytest.mark.parametrize("dmax,ring,rings", [(31, 32, None), (12, 20, (13, 7)), (12, 15, (13, 2))])
def test_an_invariant_read_in_a_loop_needs_no_relay(dmax, ring, rings):
    reg = assemble(LOOP).only
    k, report = convert_kernel(reg, dmax=dmax, ring=ring, variants=HANDS, rings=rings)
    assert Variant.HANDS in k.variants and sum(k.rings) <= ring
    loop = [pc for pc, at in enumerate(report.loop_of) if at is not None]
    read = {hand for pc in loop for hand, _ in k.code[pc].hand_sources() if hand}
    written = {k.code[pc].dst_hand for pc in loop if k.code[pc].dst}
    assert read - written  # the loop reads its invariants on a hand it never writes
    if rings is None or rings[1] > 4:  # room for all of them: no relay, recomputation or reload in the loop
        assert [report.causes[pc] for pc in loop if report.causes[pc] != "orig"] == []
    for n in (1, 4, 7):
        got = launch_out(k, 1, 32, 32, extra_params=(n,))[2]
        assert got.tolist() == _reference(n)


def test_without_the_variant_no_hand_is_used():
    reg = assemble(LOOP).only
    k, _ = convert_kernel(reg)
    assert k.rings == (32,) and not any(ins.dst for ins in k.code)


#: r3 holds two values: the one defined before the loop is a loop invariant (split into a
#: register of its own), the one after the loop is not live into any loop. So does r9: the
#: address (live through the loop) is split too, the shifted index it is made from is not.
REUSED = """.kernel k
.param out n
    s2r r0, %tid.x
    ishl r9, r0, 2
    ldc r8, out
    iadd r9, r9, r8
    iadd r3, r0, 7
    ldc r5, n
    mov r6, 0
    mov r7, 0
LOOP:
    iadd r7, r7, r3
    iadd r6, r6, 1
    isetp.lt r2, r6, r5
    brnz r2, LOOP
    iadd r3, r7, 1
    stg [r9], r3
    exit
"""


def test_a_register_reused_for_another_value_is_split():
    cfg = _cfg(REUSED)
    assert split_webs(cfg) == 2
    cands = invariant_candidates(cfg, {})
    assert 3 not in cands and 9 not in cands and sum(1 for r in cands if r > 9) == 2
    reg = assemble(REUSED).only
    k, report = convert_kernel(reg, variants=HANDS)
    assert Variant.HANDS in k.variants
    assert all(c == "orig" for c, at in zip(report.causes, report.loop_of) if at is not None)
    got = launch_out(k, 1, 32, 32, extra_params=(5,))[2]
    assert got.tolist() == [5 * (t + 7) + 1 for t in range(32)]


#: Each thread sums n * (i + tid) over i = 0..n-1: the inner loop's invariant i + tid (r6) is
#: defined in the outer loop's body, so it goes on another hand than the outer loop's invariants
#: (tid, n and the address), which the outer loop must not write.
NESTED = """.kernel k
.param out n
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, out
    iadd r1, r1, r2
    ldc r3, n
    mov r4, 0
    mov r5, 0
OUTER:
    iadd r6, r4, r0
    mov r7, 0
INNER:
    iadd r5, r5, r6
    iadd r7, r7, 1
    isetp.lt r8, r7, r3
    brnz r8, INNER
    iadd r4, r4, 1
    isetp.lt r9, r4, r3
    brnz r9, OUTER
    stg [r1], r5
    exit
"""


def test_an_inner_loops_invariant_defined_in_the_outer_body_goes_on_a_hand_of_its_own():
    cfg = _cfg(NESTED)
    split_webs(cfg)
    plan = assign(cfg, {}, 16)
    outer = {plan.hand[r] for r in (0, 3)}
    assert len(outer) == 1 and plan.hand[6] not in outer and not {4, 5, 7} & set(plan.hand)
    # the outer loop's invariants (tid, the address, n) are all written before it, r6 in it
    header = next(b.id for b in cfg.blocks if b.label == "OUTER")
    t = outer.pop()
    assert plan.hand_in[header][t] == sum(1 for h in plan.hand.values() if h == t) == 3
    assert plan.hand_in[header][plan.hand[6]] == 0
    k, report = convert_kernel(assemble(NESTED).only, variants=HANDS)
    inner = [at for at in report.loop_of if at is not None]
    assert all(c == "orig" for c, at in zip(report.causes, report.loop_of) if at == max(inner))
    assert len(k.rings) >= 3  # (the inner loop's counter and sum may take hand t: carried.py)
    got = launch_out(k, 1, 32, 32, extra_params=(5,))[2]
    assert got.tolist() == [5 * (10 + 5 * t) for t in range(32)]


def test_rings_are_checked():
    reg = assemble(LOOP).only
    with pytest.raises(ConvertError, match="hands variant"):
        convert_kernel(reg, rings=(20, 12))
    with pytest.raises(ConvertError, match="must exceed"):
        convert_kernel(reg, variants=HANDS, rings=(10, 12))
    with pytest.raises(ConvertError, match="ring budget 4: no conversion fits"):
        convert_kernel(reg, variants=HANDS, ring=4)


def test_a_budget_below_hand_ss_planning_minimum_fits_when_the_code_reads_near():
    """Hand s plans with 13 entries at least; cut to what its code reads, a plan for more can fit
    a budget of 12 (and runs)."""
    k, _ = convert_kernel(assemble(LOOP).only, variants=HANDS, ring=12)
    assert sum(k.rings) == 12 and max(d for ins in k.code for _, d in ins.hand_sources()) == k.dmax < 12
    for n in (1, 4, 7):
        assert launch_out(k, 1, 32, 32, extra_params=(n,))[2].tolist() == _reference(n)


@pytest.mark.parametrize("variants", [HANDS, ALL], ids=["hands", "all"])
@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))  # the converter's training set
def test_every_workload_converts_and_checks_with_the_variant(name, variants):
    reg = WORKLOADS[name]().module(Form.REG)
    module, reports = convert_module(reg, variants=variants)
    assert run_workload(_with(name, module), "tiny", Form.DFLOW).verdict  # a wrong output raises
    for k in module:
        assert sum(k.rings) <= 32 and len(reports[k.name].causes) == len(k.code)
        hands = any(ins.dst for ins in k.code)
        assert hands == (Variant.HANDS in k.variants) == (len(k.rings) >= 2)
        rep = reports[k.name]  # the only rpinc on another hand is a pad
        assert all(not (ins.op is Opcode.RPINC and ins.dst_hand) or c == "pad" for ins, c in zip(k.code, rep.causes))


def test_the_command_line(tmp_path, capsys):
    """``dualflow convert --variant hands --rings S,T`` writes a hands kernel with those rings;
    ``dualflow overhead --variant hands`` prints each kernel's rings."""
    from dualflow.cli import main
    from dualflow.isa import assemble_file

    src = tmp_path / "loop.reg.s"
    src.write_text(LOOP)
    dst = tmp_path / "loop.dflow.s"
    assert main(["convert", str(src), "--variant", "hands", "--rings", "20,6", "-o", str(dst)]) == 0
    k = assemble_file(dst).only
    assert k.rings == (20, 6) and Variant.HANDS in k.variants and "-> t" in dst.read_text()
    capsys.readouterr()
    assert main(["overhead", "reduce", "--size", "tiny", "--variant", "hands"]) == 0
    out = capsys.readouterr().out
    assert "rings per kernel" in out and "reduce      reduce" in out


def test_a_lane_dependent_loops_result_crosses_its_join_on_a_hand_not_through_memory():
    """divloop: lanes leave the loop after different iterations; each group writes what the join
    reads on a hand the loop does not move, so every lane finds it at the same distance after the
    join. That write is the join's first reader of the sum (``i2f``), moved onto the exit path."""
    reg = WORKLOADS["divloop"]().module(Form.REG)
    module, reports = convert_module(reg, variants=HANDS)
    k = module.only
    assert not any(ins.op in (Opcode.STL, Opcode.LDL) for ins in k.code)
    exit_write = next(ins for ins, nxt in zip(k.code, k.code[1:]) if nxt.op is Opcode.SYNC)
    assert exit_write.op is Opcode.I2F and exit_write.dst_hand not in (0, 1)  # not the loop's hands
    assert "relay-join" not in reports[k.name].static_overhead()
    assert run_workload(_with("divloop", module), "tiny", Form.DFLOW).verdict


def test_divloop_at_bases_capacity_adds_nothing():
    """At BASE's 15 registers: the loop's sum and counter on hand t (written there by the
    preheader's own ``mov 0``s: no pad at the loop's entry), the index and the bound on a hand
    the loop does not move (no spill), hand s cut below the converter's planning minimum of 13 to
    what its code reads; the sum's copy per group of lanes leaving is the join's ``i2f`` itself
    (sink.py), so nothing is added: what is left of the floor is that ``i2f`` runs once per
    group instead of once per warp."""
    reg = WORKLOADS["divloop"]().module(Form.REG)
    module, reports = convert_module(reg, ring=15, dmax=14, variants=VARIANTS)
    k = module.only
    report = reports[k.name]
    assert sum(k.rings) <= 15 and k.rings[0] < MIN_DMAX + 1
    assert report.static_overhead() == {} and report.duplicated == 0
    assert sorted(pc for pc in report.source_pc if pc is not None) == sorted(
        set(range(len(reg.only.code))) - set(report.removed))  # every REG instruction once
    assert max(d for ins in k.code for _, d in ins.hand_sources()) == k.dmax
    assert run_workload(_with("divloop", module), "tiny", Form.DFLOW).verdict


def test_a_hand_the_loop_moves_cannot_carry_a_value_across_its_join():
    """The plan refuses a hand with a value live at a lane-dependent loop's join if the loop
    writes that hand: each group of lanes would find the value at another distance."""
    cfg = _cfg(WORKLOADS["divloop"].source.read_text())
    copies = copy_region_exits(cfg)
    split_webs(cfg)
    (b, k, _), = copies
    copy = cfg.blocks[b].code[k].dst - 1
    assert HandPlan.of(cfg, {copy: 1}) is not None
    in_loop = next(defines(ins) for blk in cfg.blocks if blk.label == "LOOP" for ins in blk.code
                   if ins.op is Opcode.ISETP)  # the loop's test: written every iteration, carried by none
    assert HandPlan.of(cfg, {copy: 1, in_loop: 1}) is None
    assert HandPlan.of(cfg, {copy: 1, in_loop: 2}) is not None


# Found by the slow property test (reduced): lanes with odd tid.x skip an inner region whose loop
# bound r11 the plan put on hand t, then every lane passes SKIP, where the loop's r45 is copied
# (``copy_region_exits``) and read after JOIN. SKIP is no reconvergence point: each group of
# lanes runs it with its own advance on the hands, and JOIN takes each hand's later RP. Putting
# the copy on t, which only one path writes, left the skipping lanes' copy one position short.
SKIPPED_INNER_REGION = """.kernel skipped_inner_region
.form reg
.param in out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ldc r5, out
    ishl r7, r3, 2
    iadd r5, r5, r7
    mov r45, 7
    mov r10, 0
    iand r8, r0, 1
    ssy JOIN
    brnz r8, SKIP
    iand r11, r3, 3
    ssy LJOIN
LOOP:
    imin r45, r10, -8
    iadd r10, r10, 1
    isetp.lt r9, r10, r11
    brnz r9, LOOP
    sync
LJOIN:
    iadd r45, r45, 100
SKIP:
    sync
JOIN:
    stg [r5], r45
    exit
"""


@pytest.mark.parametrize("dmax, ring", [(100, 128), (31, 32), (14, 15)])
@pytest.mark.parametrize("variants", [HANDS, ALL], ids=["hands", "all"])
def test_a_value_copied_after_a_skipped_region_sits_where_every_group_of_lanes_finds_it(variants, dmax, ring):
    """Every join inside an ssy region whose join reads a value of a hand is bound on that hand
    (``HandPlan.of``): both paths reach SKIP with the same advance, or the value goes elsewhere."""
    reg = assemble(SKIPPED_INNER_REGION).only
    out, _ = convert_kernel(reg, dmax=dmax, ring=ring, variants=variants)
    for launch in (Launch(32, 32, 2), Launch(8, 12, 2)):
        expected = run(reg, launch, launch.threads, 1, make_inputs(0))
        assert np.array_equal(run(out, launch, launch.threads, 1, make_inputs(0)), expected)


def test_a_loop_nests_invariants_are_not_shut_out_by_hotter_values_its_loops_write(monkeypatch):
    """bitonic's compare-and-swap nest: the most valuable candidates are defined in its loops, so
    taken first (``order="value"``) they make every other hand one a loop writes, and the nine
    values live through the whole nest (direction, thread index, the epilogue's addresses) go
    through local memory. Defined-outside-first places them on one hand; the driver converts with
    both orders and keeps the cheaper code, which still computes the sort. The nest as it is
    without coalescing the inner loop's latch copy (carried.py), which would otherwise leave the
    stride's new value no register of its own to place."""
    from dualflow.isa.convert import carried, driver
    from dualflow.isa.convert.hands import LONG_SPAN

    monkeypatch.setattr(carried, "_copied", lambda *args: None)
    reg = WORKLOADS["bitonic"]().module(Form.REG)
    kernel = reg["bitonic_sort"]
    plans = {order: driver._hand_plan(kernel, 31, 32, True, LONG_SPAN, order) for order in ("value", "outside-first")}
    assert len(plans["outside-first"].hand) >= len(plans["value"].hand) + 5
    module, reports = convert_module(reg, variants=ALL)
    monkeypatch.setattr(driver, "ORDERS", ("value",))
    _, value_only = convert_module(reg, variants=ALL)
    spills = {name: rep.causes.count("spill") + rep.causes.count("reload")
              for name, rep in (("both", reports["bitonic_sort"]), ("value", value_only["bitonic_sort"]))}
    assert spills["both"] * 3 < spills["value"]
    assert run_workload(_with("bitonic", module), "tiny", Form.DFLOW).verdict


def test_a_loop_free_kernels_far_values_in_reused_registers_get_a_hand():
    """srad_1 has no loop; clang reuses its registers, so the values read past hand s's reach
    across its two if/else regions share registers with others. They are split into webs of
    their own and go on hand t instead of through local memory (they were stored and reloaded)."""
    reg = WORKLOADS["srad"]().module(Form.REG)
    module, reports = convert_module(reg, variants=ALL)
    causes = reports["srad_1"].causes
    assert "spill" not in causes and "reload" not in causes and "relay-dmax" not in causes
    assert len(module["srad_1"].rings) >= 2
    assert run_workload(_with("srad", module), "tiny", Form.DFLOW).verdict
