"""The timing engines on ``Variant.HANDS`` kernels (docs/timing-model.md, "Hands"): one ring and
RP per hand, their slots numbered into one slot space per warp (hand h's slot k is entry
``base_h + k``, ``base_h`` the rings before it); a source (h, d) is position RP_h - d of hand h;
the ring guard is per hand; the register file holds every hand's ring (``Kernel.capacity``).

Both engines must give identical cycles, statistics, issue logs and memory, as on every other
kernel; a one-hand kernel declared with ``.variant hands`` times exactly like the same kernel
without it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from programs import hands_divergent, hands_loop, hands_source

from dualflow.isa import Form, Kernel, Variant, assemble
from dualflow.kernels.directed import FAULT_PROGRAMS, PROGRAMS, program
from dualflow.kernels.directed import kernel as directed_kernel
from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.config import GpuConfig
from dualflow.machine.presets import preset
from dualflow.models import Device
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.gpu import BlockDoesNotFit
from dualflow.models.timing.program import decode_kernel
from dualflow.models.timing.scoreboard import PENDING, HandsScoreboard
from dualflow.models.timing.sm import Sm

ENGINES = ("reference", "compiled")
HANDS = frozenset({Variant.HANDS})
#: One SM, blocks start at once.
SMALL = {"num_sms": 1, "sm.cta_launch_latency": 0}


def hands_kernel(body: str, rings: str, dmax: int, name: str = "k") -> Kernel:
    return assemble(f".kernel {name}\n.form dflow\n.param out\n.ring {rings}\n.dmax {dmax}\n.variant hands\n"
                    f"{body}").only


def with_hands(k: Kernel) -> Kernel:
    """``k`` (one ring) declared with ``.variant hands``: one hand, s, whose ring is ``k.ring``."""
    return dataclasses.replace(k, variants=k.variants | HANDS)


def run(k: Kernel, config: GpuConfig, engine: str, *, grid=1, block=32, words=1024,
        counting: bool = False) -> tuple[TimingDevice, int]:
    """One launch of ``k`` with an output buffer of zeros (``counting``: 0, 1, 2, ...); the
    device and the buffer's address."""
    dev = TimingDevice(config, record_issue=True, engine=engine)
    buf = dev.upload(np.arange(words, dtype=np.uint32) if counting else np.zeros(words, dtype=np.uint32))
    dev.launch(k, grid=grid, block=block, params=[buf])
    return dev, buf


def assert_same(a: TimingDevice, b: TimingDevice, *, names: bool = True) -> None:
    """Everything two devices leave behind is equal: every launch's statistics, the next
    launch's cycle, the issue log, memory."""
    assert len(a.timing) == len(b.timing)
    for i, (x, y) in enumerate(zip(a.timing, b.timing)):
        x, y = x.to_dict(), y.to_dict()
        if not names:
            x.pop("kernel"), y.pop("kernel")
        differ = [key for key in x if x[key] != y.get(key)]
        assert not differ, f"launch {i}: {differ} differ"
    assert a.gpu.cycle == b.gpu.cycle
    assert a.gpu.issue_log == b.gpu.issue_log
    assert np.array_equal(a.memory.words, b.memory.words)


def both(k: Kernel, config: GpuConfig, words: int = 1024, **launch) -> tuple[TimingDevice, np.ndarray]:
    """Run ``k`` on both engines, which must agree; the reference device and the output."""
    runs = {engine: run(k, config, engine, words=words, **launch) for engine in ENGINES}
    assert runs["compiled"][0].gpu._reference is None  # the compiled engine ran it itself
    assert_same(runs["reference"][0], runs["compiled"][0])
    dev, buf = runs["reference"]
    return dev, dev.copy_out(buf, words)


# ------------------------------------------------------------------ kernels
#: tid at u0, the invariant 3 at v0; the loop runs on hand s (ring 8, written 5 times an
#: iteration: it wraps 25 times) and reads the invariant on v every iteration.
LOOP = assemble(hands_source("loop", "8 2 2 2", 7, hands_loop(40))).only
LOOP_OUT = np.arange(32, dtype=np.uint32) + 3 * sum(range(40))

#: Paths of a divergent branch write different numbers of values on s and t; the join takes each
#: hand's largest RP.
DIVERGENT = assemble(hands_source("divergent", "16 16", 8, hands_divergent("isetp.lt |2|, 16"))).only


def guard_kernel(hand: str) -> Kernel:
    """A load into hand t (ring 2) whose reader waits for it in a collector unit, then two
    producers on ``hand`` (ring 2), which holds one older value. On t, the second overwrites
    the load's slot: its ring guard waits for the load and its reader. On u, it overwrites u's
    position 0, long written back and read, while t's position 0 (the load) is still unread:
    nothing holds it back."""
    return hands_kernel(f"""    s2r %tid.x                 ; s0: tid
    mov 4 -> {hand}                 ; {hand}0
    ishl |1|, 2                ; s1
    ldc out                    ; s2
    iadd |1|, |2|              ; s3: &out[tid]
    ldg [|1|] -> t             ; t0 (u) or t1 (t): the load
    iadd |t1|, 1               ; s4: its reader, waiting for it
    mov 5 -> {hand}
    mov 6 -> {hand}                 ; position 2 of {hand}: slot 0 (u) or the load's slot (t)
    iadd |{hand}1|, 5               ; s5: 11
    iadd |1|, |s2|             ; s6: 11 + the loaded word + 1
    stg [|4|], |1|
    exit
""", "8 2 2", 7, name=f"guard_{hand}")


# ------------------------------------------------------------------ results and engines
@pytest.mark.parametrize("k, grid, out", [(LOOP, 1, LOOP_OUT), (DIVERGENT, 1, np.full(32, 107, np.uint32))],
                         ids=["loop", "divergent"])
@pytest.mark.parametrize("preset_name", ["paper-rtx3080", "fermi-gtx480"])
def test_engines_agree_and_results_are_the_functional_models(k, grid, out, preset_name):
    config = preset(preset_name).replace(mode="dflow", num_sms=2)
    _, words = both(k, config, grid=grid)
    fdev = Device()
    buf = fdev.upload(np.zeros(1024, np.uint32))
    fdev.launch(k, grid=grid, block=32, params=[buf])
    assert np.array_equal(words[:32], out)
    assert np.array_equal(words, fdev.copy_out(buf, 1024))


def test_many_blocks_on_both_engines():
    """Several blocks of several warps per SM: every warp's rings and RPs are its own."""
    config = preset("paper-rtx3080").replace(mode="dflow", num_sms=2)
    both(LOOP, config, grid=12, block=96, words=4096)
    both(DIVERGENT, config, grid=12, block=32, words=4096)  # (written for warps that diverge)


def test_invariant_on_v_causes_no_guard_stall_while_s_wraps():
    """The loop writes hand s 200 times (ring 8: 25 wraps) and reads v's one value every
    iteration: no producer ever waits on the ring guard (v is never written again, s's
    guard concerns s's values only)."""
    dev, _ = both(LOOP, GpuConfig(mode="dflow").replace(**SMALL))
    stats = dev.timing[-1]
    assert stats.stalls["ring_guard"] == 0
    assert stats.stalls["issued"] > 0


def test_ring_guard_is_per_hand():
    """A producer on hand t (ring 2) overwriting the slot of a load still in flight, whose
    reader waits in a collector unit, waits on the ring guard until the load is back and read;
    the same producers on hand u, where the slot is as full but of another hand, do not."""
    config = GpuConfig(mode="dflow").replace(**SMALL)
    on_t, t_words = both(guard_kernel("t"), config)
    on_u, u_words = both(guard_kernel("u"), config)
    assert (t_words[:32] == 12).all() and (u_words[:32] == 12).all()
    t_stats, u_stats = on_t.timing[-1], on_u.timing[-1]
    assert t_stats.stalls["ring_guard"] > 100  # a DRAM latency
    assert u_stats.stalls["ring_guard"] == 0
    assert t_stats.cycles > u_stats.cycles
    # the second producer on t issues only after the load is back; on u right after the first
    pc = 8  # mov 6
    t_issue = [c for c, _, _, p in on_t.gpu.issue_log if p == pc]
    u_issue = [c for c, _, _, p in on_u.gpu.issue_log if p == pc]
    ldg = [c for c, _, _, p in on_u.gpu.issue_log if p == 5]
    assert u_issue[0] - ldg[0] < 10 < t_issue[0] - ldg[0]


def test_hands_scoreboard_keys_slots_and_guard():
    """The reference scoreboard's rules, directly: slot numbering, keys, the per-hand guard."""
    board = HandsScoreboard((8, 2, 2, 4))
    assert board.ring == 16 and board.bases == (0, 8, 10, 12)
    assert [board.slot(h, 9) for h in range(4)] == [1, 9, 11, 13]
    assert board.key(1, 9) % 16 == board.slot(1, 9) and board.key(1, 9) != board.key(2, 9)
    board.add_reader(board.key(1, 0))  # an unread reader of t's position 0 (slot 8)
    assert board.hand_guard_blocks(1, 2)  # t position 2 overwrites it
    assert not board.hand_guard_blocks(2, 2)  # u position 2: slot 10; u's position 0 has no reader
    assert not board.hand_guard_blocks(0, 8)  # s position 8: slot 0
    board.read_done(board.key(1, 0))
    assert not board.hand_guard_blocks(1, 2)
    slot = board.hand_issue(3, 5)
    assert slot == 13 and board.ready[13] == PENDING and board.hand_guard_blocks(3, 9)
    assert board.hand_waits([0, 0, 0, 6], (1,), (3,), 0) and not board.hand_waits([0, 0, 0, 6], (1,), (2,), 0)
    board.writeback(13, 40)  # readable from the next cycle
    assert not board.hand_waits([0, 0, 0, 6], (1,), (3,), 41) and board.hand_waits([0, 0, 0, 6], (1,), (3,), 40)


def test_decoded_sources_are_hand_distance_pairs():
    k = hands_kernel("""    mov 1
    mov 2 -> t
    iadd |1|, |t1|
    imad |s2|, |s2|, |t1| -> u
    exit
""", "8 4 4", 7)
    static = decode_kernel(k)
    assert (static[2].sources, static[2].source_hands) == ((1, 1), (0, 1))
    assert (static[2].unique_sources, static[2].unique_hands) == ((1, 1), (0, 1))  # two operands
    assert (static[3].unique_sources, static[3].unique_hands, static[3].dst_hand) == ((2, 1), (0, 1), 2)
    assert static[1].dst_hand == 1 and static[0].dst_hand == 0


# ------------------------------------------------------------------ occupancy
def test_register_file_holds_every_hands_ring(monkeypatch):
    """Warps per SM are limited by the register file at ``Kernel.capacity`` entries per warp: a
    kernel whose rings sum to twice the entries fits half the warps (both engines agree)."""
    body = """    s2r %tid.x
    s2r %ctaid.x
    ishl |1|, 5                ; blocks of 32 threads
    iadd |1|, |3|
    ishl |1|, 2
    ldc out
    iadd |1|, |2|
    ldg [|1|]
    iadd |1|, 1
    stg [|3|], |1|
    exit
"""
    small, big = hands_kernel(body, "16", 7, name="small"), hands_kernel(body, "16 16", 7, name="big")
    assert (small.capacity, big.capacity) == (16, 32)
    config = GpuConfig(mode="dflow").replace(**SMALL, **{"sm.registers": 8 * 16 * 32})  # 8 warps of 16
    peak = {}
    add = Sm.add_cta

    def counting(self, cta, executor, first, warps, start, entries):
        add(self, cta, executor, first, warps, start, entries)
        peak[self.kernel_name] = max(peak.get(self.kernel_name, 0), len(self.warps))

    monkeypatch.setattr(Sm, "add_cta", counting)
    for k in (small, big):
        both(k, config, grid=16, block=32, words=1024)
    assert peak == {"small": 8, "big": 4}
    with pytest.raises(BlockDoesNotFit, match="does not fit"):
        run(hands_kernel(body, "128 128", 7), config, "compiled", block=64)


# ------------------------------------------------------------------ one hand = the original form
@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in FAULT_PROGRAMS])
def test_one_hand_times_as_the_original_form_directed(name):
    config = preset("paper-rtx3080").replace(mode="dflow", num_sms=2)
    prog = program(name)
    plain = directed_kernel(name, Form.DFLOW)
    hands = with_hands(plain)
    assert hands.hands and hands.rings == (plain.ring,)
    for engine in ENGINES:
        devs = []
        for k in (plain, hands):
            dev = TimingDevice(config, record_issue=True, engine=engine)
            params = prog.setup(dev)
            dev.launch(k, grid=prog.grid, block=prog.block, params=params)
            devs.append(dev)
        assert_same(*devs)


@pytest.mark.parametrize("name", ["nn", "pathfinder", "hotspot"])
def test_one_hand_times_as_the_original_form_workload(name):
    """A workload's converted kernels, each declared with ``.variant hands`` (one hand): the same
    timing, on both engines."""
    config = preset("paper-rtx3080").replace(mode="dflow")
    totals = {}
    for engine in ENGINES:
        for hands in (False, True):
            dev = TimingDevice(config, record_issue=True, engine=engine)
            if hands:
                launch, copies = dev.launch, {}

                def hands_launch(k, *args, _launch=launch, _copies=copies, **kwargs):
                    if id(k) not in _copies:
                        _copies[id(k)] = (k, with_hands(k))
                    return _launch(_copies[id(k)][1], *args, **kwargs)

                dev.launch = hands_launch
            run_ = run_workload(get_workload(name), size="tiny", form=Form.DFLOW, seed=1, device=dev)
            totals[engine, hands] = dev, run_.total.to_dict()
    for engine in ENGINES:
        plain, hands = totals[engine, False], totals[engine, True]
        assert_same(plain[0], hands[0])
        assert plain[1] == hands[1]
    assert_same(totals["reference", True][0], totals["compiled", True][0])


# ------------------------------------------------------------------ generated programs
def random_hands_kernel(seed: int, length: int = 60) -> Kernel:
    """A straight-line program on three hands of random small rings (s t u; v holds the
    thread's output address, written once): each instruction writes a random hand and reads
    random legal (hand, distance) pairs, some of them loads (of the first words: no thread
    stores there, so no race sends the launch to the reference engine); the last value is
    stored at word 2048 + the thread's index."""
    rng = np.random.default_rng(seed)
    rings = [int(rng.integers(2, 9)) for _ in range(3)] + [2]
    dmax = max(rings) - 1
    written = [0, 0, 0, 0]
    names = "stuv"
    lines = ["    s2r %tid.x", "    ishl |1|, 2", "    ldc out", "    iadd |1|, |2| -> v", "    mov |s2|"]
    written[0], written[3] = 4, 1

    def source() -> str:
        while True:
            h = int(rng.integers(0, 3))
            top = min(written[h], rings[h] - 1, dmax)
            if top >= 1:
                return f"|{names[h]}{int(rng.integers(1, top + 1))}|"

    for _ in range(length):
        h = int(rng.integers(0, 3))
        kind = rng.integers(0, 6)
        if kind == 0:
            body = f"ldg [|v1|+{4 * int(rng.integers(0, 4))}]"
        elif kind == 1:
            body = f"imad {source()}, {source()}, {source()}"
        elif kind == 2:
            body = f"mov {source()}"
        elif kind == 3:
            body = f"iadd {source()}, {int(rng.integers(0, 100))}"
        else:
            body = f"iadd {source()}, {source()}"
        lines.append(f"    {body} -> {names[h]}")
        written[h] += 1
    lines += [f"    stg [|v1|+8192], {source()}", "    exit"]
    return hands_kernel("\n".join(lines) + "\n", " ".join(map(str, rings)), dmax, name=f"random{seed}")


@pytest.mark.parametrize("seed", range(8))
def test_generated_programs_agree_on_both_engines(seed):
    k = random_hands_kernel(seed)
    config = preset("paper-rtx3080").replace(mode="dflow", num_sms=2)
    _, words = both(k, config, grid=4, block=64, words=4096, counting=True)
    fdev = Device()
    buf = fdev.upload(np.arange(4096, dtype=np.uint32))
    fdev.launch(k, grid=4, block=64, params=[buf])
    assert np.array_equal(words, fdev.copy_out(buf, 4096))
    assert np.count_nonzero(words[2048:2048 + 256] != np.arange(2048, 2048 + 256))  # it stored
