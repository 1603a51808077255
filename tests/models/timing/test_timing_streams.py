"""Instruction streams (dualflow/models/timing/compiled/streams.py) against the reference timing engine.

The reference engine executes at issue; here it is instrumented (``Sm._execute`` and
``Sm._start``, the memory system's ``global_access``/``shared_access``) to log, per warp, what
it issued and what it sent to the memory system. A device that builds streams instead must give
the same records, the same memory afterwards and the same per-pc counts.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualflow.isa import Form, Kernel, Opcode, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.kernels import directed
from dualflow.kernels.registry import WORKLOADS
from dualflow.kernels.workload import run_workload
from dualflow.machine.config import GpuConfig
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import Mode
from dualflow.models.device import Device, LaunchResult
from dualflow.models.executor import Geometry
from dualflow.models.timing.compiled.streams import (
    ORDER_DEPTH,
    Executors,
    LaunchStreams,
    build_streams,
    coalesce_batch,
    conflict_degrees,
)
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.gpu import Gpu
from dualflow.models.timing.memory.coalescer import coalesce
from dualflow.models.timing.memory.shared_banks import conflict_degree
from dualflow.models.timing.memory.system import MemorySystem
from dualflow.models.timing.ordering import MemoryOrderViolation, check_reorder, must_keep_order
from dualflow.models.timing.program import decode_kernel
from dualflow.models.timing.sm import Sm


# ---------------------------------------------------------------------- the reference, logged
class ReferenceLog:
    """Per launch and warp (block, warp in block): the records the reference engine issued, as
    [pc, threads, rp, exit, transactions or degree or None], and the ordered accesses' operands."""

    def __init__(self):
        self.launches: list[dict] = []
        self.accesses: list[dict] = []  # per launch: warp -> [(StaticInstruction, addresses, mask)]
        self.issues: list[list] = []  # per launch: the engine's issue log
        self.by_cu: dict[tuple[int, int], list] = {}
        self.current: list | None = None

    def new_launch(self) -> None:
        self.launches.append(defaultdict(list))
        self.accesses.append(defaultdict(list))


@pytest.fixture
def reference_log(monkeypatch):
    log = ReferenceLog()
    execute, start = Sm._execute, Sm._start
    global_access, shared_access = MemorySystem.global_access, MemorySystem.shared_access

    def logged_execute(self, warp, ins, pc, t, needs_cu):
        ex, w = warp.ex, warp.w
        threads = int(np.count_nonzero(ex.active[w]))
        rp = int(ex.rp[w]) if self.ring_file else 0
        execute(self, warp, ins, pc, t, needs_cu)
        key = (warp.cta.block, int(ex.wid[w]))
        record = [pc, threads, rp, ins.op is Opcode.EXIT and warp.exited, None]
        log.launches[-1][key].append(record)
        if ins.is_mem and needs_cu:
            cu = self.collector.units[-1]
            log.by_cu[(self.index, cu.seq)] = record
            if ins.ordered:
                log.accesses[-1][key].append((ins, cu.addresses[0].copy(), cu.mask[0].copy()))

    def logged_start(self, cu, t, pipes, pipe):
        log.current = log.by_cu.pop((self.index, cu.seq), None)
        try:
            start(self, cu, t, pipes, pipe)
        finally:
            log.current = None

    def logged_global(self, cycle, sm, transactions, *, write):
        if log.current is not None:
            log.current[4] = [(tx.line, tx.sectors) for tx in transactions]
        return global_access(self, cycle, sm, transactions, write=write)

    def logged_shared(self, cycle, sm, degree):
        if log.current is not None:
            log.current[4] = degree
        return shared_access(self, cycle, sm, degree)

    monkeypatch.setattr(Sm, "_execute", logged_execute)
    monkeypatch.setattr(Sm, "_start", logged_start)
    monkeypatch.setattr(MemorySystem, "global_access", logged_global)
    monkeypatch.setattr(MemorySystem, "shared_access", logged_shared)
    return log


class LoggedTimingDevice(TimingDevice):
    """The reference engine, logged, with its issue log (cycle, block, warp, pc) split by launch."""

    def __init__(self, config: GpuConfig, functional: FunctionalConfig, log: ReferenceLog):
        super().__init__(config, functional, record_issue=True, engine="reference")
        self.log = log

    def launch(self, kernel, grid, block, params=(), *, trace=None):
        self.log.new_launch()
        start = len(self.gpu.issue_log)
        result = super().launch(kernel, grid, block, params, trace=trace)
        self.log.issues.append(self.gpu.issue_log[start:])
        return result


class StreamsDevice(Device):
    """Builds each launch's streams; a launch that falls back runs on a reference engine."""

    def __init__(self, config: GpuConfig, functional: FunctionalConfig):
        super().__init__(functional)
        self.gpu_config = config
        self.streams: list[LaunchStreams | None] = []
        self.geometries: list[Geometry] = []
        self.reasons: list[str] = []

    def launch(self, kernel, grid, block, params=(), *, trace=None):
        geo, words, warp_counts, thread_counts = self._begin_launch(kernel, grid, block, params)
        streams = build_streams(kernel, geo, words, self.memory, self.config, warp_counts, thread_counts,
                                **stream_settings(self.gpu_config, kernel), reasons=self.reasons)
        if streams is None:
            Gpu(self.gpu_config).run(kernel, geo, words, self.memory, self.config, warp_counts, thread_counts)
        self.streams.append(streams)
        self.geometries.append(geo)
        return LaunchResult(self._end_launch(kernel, geo, warp_counts, thread_counts), None)


def stream_settings(config: GpuConfig, kernel: Kernel) -> dict:
    l1 = config.memory.l1
    return dict(line_bytes=l1.line_bytes, sector_bytes=l1.sector_bytes, shared_cfg=config.memory.shared,
                warp_size=config.sm.warp_size, local_bytes=kernel.local_bytes)


def expected_order_bits(accesses: list) -> list[int]:
    """Per ordered access of one warp: the bits ``check_reorder`` gives against the earlier ones."""
    bits = []
    for i, (ins, addrs, mask) in enumerate(accesses):
        b = 0
        for j in range(min(i, ORDER_DEPTH)):
            older, o_addrs, o_mask = accesses[i - 1 - j]
            if must_keep_order(older, ins):
                continue
            try:
                check_reorder("k", "w", older, o_addrs, o_mask, ins, addrs, mask)
            except MemoryOrderViolation:
                b |= 1 << j
        bits.append(b)
    return bits


def compare_launch(streams: LaunchStreams, geo: Geometry, reference: dict, accesses: dict, issues: list,
                   dflow: bool) -> int:
    """Assert that one launch's streams equal the reference's log; returns the records compared."""
    wpb = geo.warps_per_block
    issued = defaultdict(list)
    for _, block, warp, pc in issues:
        issued[block * wpb + warp].append(pc)
    for g in range(len(streams.first)):  # the issue log in the engine's own words
        lo = int(streams.first[g])
        assert streams.pc[lo:lo + streams.count[g]].tolist() == issued.get(g, [])
    assert len(streams.first) == geo.num_blocks * wpb
    compared = 0
    for g in range(len(streams.first)):
        key = (g // wpb, g % wpb)
        want = reference.get(key, [])
        lo = int(streams.first[g])
        assert int(streams.count[g]) == len(want), f"warp {key}: record count"
        ordered = []
        for i, (pc, threads, rp, exits, memory) in enumerate(want):
            r = lo + i
            got = (int(streams.pc[r]), int(streams.threads[r]), int(streams.rp[r]), bool(streams.exits[r]))
            assert got == (pc, threads, rp, exits), f"warp {key} record {i}: {got} != {(pc, threads, rp, exits)}"
            a = int(streams.access[r])
            if memory is None:  # not a memory instruction (or ldc, which the memory system never sees)
                assert a == -1 or (streams.tx_count[a] == 0 and streams.degree[a] == 0)
                continue
            assert a >= 0
            if isinstance(memory, list):
                t0, n = int(streams.tx_first[a]), int(streams.tx_count[a])
                got_tx = list(zip(streams.tx_line[t0:t0 + n].tolist(), streams.tx_sectors[t0:t0 + n].tolist()))
                assert got_tx == memory, f"warp {key} record {i} (pc {pc}): transactions"
            else:
                assert int(streams.degree[a]) == memory, f"warp {key} record {i} (pc {pc}): degree"
            ordered.append(int(streams.order_conflict[a]))
            compared += 1
        if dflow:
            assert ordered == expected_order_bits(accesses.get(key, [])), f"warp {key}: order conflicts"
        else:
            assert not any(ordered)
    return compared


def check_workload(name: str, size: str, mode: Mode, log: ReferenceLog) -> list[str]:
    """Run ``name`` on the logged reference and on streams; compare everything. Returns fallback reasons."""
    config = GpuConfig(mode=mode)
    functional = FunctionalConfig(warp_size=config.sm.warp_size)
    reference = LoggedTimingDevice(config, functional, log)
    run_workload(WORKLOADS[name], size=size, form=mode.form, device=reference)
    device = StreamsDevice(config, functional)
    run_workload(WORKLOADS[name], size=size, form=mode.form, device=device)
    assert len(device.streams) == len(log.launches)
    top = reference.memory.top // 4
    assert np.array_equal(device.memory.words[:top], reference.memory.words[:top])
    for mine, theirs in zip(device.history, reference.history):
        assert mine == theirs
    for streams, geo, launch, accesses, issues in zip(device.streams, device.geometries, log.launches,
                                                      log.accesses, log.issues):
        if streams is not None:
            compare_launch(streams, geo, launch, accesses, issues, mode.form is Form.DFLOW)
    return device.reasons


TINY = [(name, "tiny", mode) for name in WORKLOADS for mode in Mode]
#: minutes on the reference engine: left to ``-m slow``
SMALL = [pytest.param(name, "small", mode, marks=pytest.mark.slow)
         for name, mode in (("pathfinder", Mode.DFLOW), ("hotspot", Mode.BASE))]


@pytest.mark.parametrize("name,size,mode", TINY + SMALL, ids=lambda v: str(v))
def test_streams_equal_reference(name, size, mode, reference_log):
    reasons = check_workload(name, size, mode, reference_log)
    assert not reasons, reasons


# ---------------------------------------------------------------------- directed and small kernels
def reg_kernel(source: str, mode: Mode) -> Kernel:
    k = assemble(source).only
    return convert_kernel(k)[0] if mode.form is Form.DFLOW else k


def compare_one_launch(k: Kernel, mode: Mode, grid, block, setup, log: ReferenceLog,
                       functional: FunctionalConfig | None = None) -> StreamsDevice:
    """One launch on the logged reference and on streams, compared; returns the streams device."""
    config = GpuConfig(mode=mode)
    functional = functional or FunctionalConfig(warp_size=config.sm.warp_size)
    reference = LoggedTimingDevice(config, functional, log)
    reference.launch(k, grid, block, setup(reference))
    device = StreamsDevice(config, functional)
    device.launch(k, grid, block, setup(device))
    top = reference.memory.top // 4
    assert np.array_equal(device.memory.words[:top], reference.memory.words[:top])
    assert device.history == reference.history
    streams = device.streams[0]
    if streams is not None:
        assert compare_launch(streams, device.geometries[0], log.launches[0], log.accesses[0], log.issues[0],
                              mode.form is Form.DFLOW) > 0
    return device


def pre_run(k: Kernel, mode: Mode, grid, block, setup, functional: FunctionalConfig | None = None):
    """``build_streams`` alone: (streams, reasons, memory words before, device, warp counts, thread counts)."""
    config = GpuConfig(mode=mode)
    device = Device(functional or FunctionalConfig(warp_size=config.sm.warp_size))
    params = setup(device)
    geo, words, warp_counts, thread_counts = device._begin_launch(k, grid, block, params)
    before = device.memory.words.copy()
    reasons: list[str] = []
    streams = build_streams(k, geo, words, device.memory, device.config, warp_counts, thread_counts,
                            **stream_settings(config, k), reasons=reasons)
    return streams, reasons, before, device, warp_counts, thread_counts


@pytest.mark.parametrize("mode", list(Mode))
def test_kept_executors_restart_as_new_ones(mode):
    """``Executors``: a later launch of a kernel restarts the executor the earlier one used and
    records what a new executor records; once the kernel's code changes, a new one is made."""
    prog = directed.program("alu")
    k = directed.kernel("alu", mode.form)
    config = GpuConfig(mode=mode)
    kept, fresh = Executors(), None
    devices = [Device(FunctionalConfig(warp_size=config.sm.warp_size)) for _ in range(2)]
    params = [prog.setup(d) for d in devices]
    made = []
    for launch in range(3):
        if launch == 2:  # an instruction replaced (by an equal one: what the kept executor compiled is not it)
            k.code[0] = dataclasses.replace(k.code[0])
        runs = []
        for device, words, pool in zip(devices, params, (kept, fresh)):
            geo, packed, warp_counts, thread_counts = device._begin_launch(k, prog.grid, prog.block, words)
            runs.append(build_streams(k, geo, packed, device.memory, device.config, warp_counts, thread_counts,
                                      **stream_settings(config, k), executors=pool))
        made.append(next(iter(kept._kept.values()))[1])
        for f in dataclasses.fields(LaunchStreams):
            assert np.array_equal(getattr(runs[0], f.name), getattr(runs[1], f.name)), (launch, f.name)
        assert np.array_equal(devices[0].memory.words, devices[1].memory.words)
    assert made[1] is made[0] and made[2] is not made[1]


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", list(directed.PROGRAMS))
def test_directed_programs(name, mode, reference_log):
    prog = directed.program(name)
    compare_one_launch(directed.kernel(name, mode.form), mode, prog.grid, prog.block, prog.setup, reference_log)


@pytest.mark.parametrize("field", ["pc", "threads", "exits", "tx_sectors", "degree"])
def test_the_comparison_catches_a_corrupted_stream(field, reference_log):
    """Expect-fail: one wrong value in the streams is found."""
    prog = directed.program("shared_conflict" if field == "degree" else "alu")
    k = directed.kernel("shared_conflict" if field == "degree" else "alu", Form.REG)
    device = compare_one_launch(k, Mode.BASE, prog.grid, prog.block, prog.setup, reference_log)
    streams = device.streams[0]
    values = getattr(streams, field)
    i = int(np.flatnonzero(values)[-1]) if field in ("exits", "degree") else len(values) // 2
    values[i] = not values[i] if field == "exits" else values[i] + 1
    with pytest.raises(AssertionError):
        compare_launch(streams, device.geometries[0], reference_log.launches[0], reference_log.accesses[0],
                       reference_log.issues[0], False)


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", list(directed.FAULT_PROGRAMS))
def test_faults_fall_back_with_memory_restored(name, mode):
    prog = directed.program(name)
    streams, reasons, before, device, warp_counts, thread_counts = pre_run(
        directed.kernel(name, mode.form), mode, prog.grid, prog.block, prog.setup)
    assert streams is None and reasons[0].startswith("kernel")
    assert prog.fault.kind in reasons[0]
    assert np.array_equal(device.memory.words, before)
    assert not warp_counts.any() and not thread_counts.any()


def test_out_of_bounds_store_after_stores_restores_memory():
    """global_bounds stores every thread's word, then faults: the first stores are undone."""
    prog = directed.program("global_bounds")
    streams, _, before, device, _, _ = pre_run(directed.kernel("global_bounds", Form.REG), Mode.BASE, 4, 32,
                                               prog.setup)
    assert streams is None
    assert np.array_equal(device.memory.words, before)


def test_budget_overflow_falls_back():
    functional = FunctionalConfig(max_warp_instructions=20)
    prog = directed.program("loop")
    streams, reasons, _, _, warp_counts, _ = pre_run(directed.kernel("loop", Form.REG), Mode.BASE, 1, 16,
                                                     prog.setup, functional)
    assert streams is None and "instruction budget exceeded" in reasons[0]
    assert not warp_counts.any()


def out_buffer(words: int):
    def setup(dev):
        return [dev.alloc(4 * words)]
    return setup


#: Every thread first stores its id to its own word 1 + tid (no race), then ``{body}``.
RACE = """
.kernel race
.param out
.shared 512
    s2r r0, %tid.x
    s2r r5, %ctaid.x
    s2r r6, %ntid.x
    imad r0, r5, r6, r0     ; global thread id
    ldc r1, out
    ishl r2, r0, 2
    iadd r3, r1, r2
    stg [r3+4], r0
{body}
    exit
"""

RACES = {
    "store_values": " stg [r1], r0",  # different values to one word
    "read_modify_write": " ldg r4, [r1]\n iadd r4, r4, 1\n stg [r1], r4",
    "store_then_load": " ssy J\n brnz r0, L\n stg [r1], r0\nL:\n sync\nJ:\n ldg r4, [r1]\n stg [r3+4], r4",
    # the stores are benign among themselves, but a read unordered with them is not
    "same_value_then_load": " mov r4, 7\n stg [r1], r4\n ldg r4, [r1]\n stg [r3+4], r4",
    "shared_no_bar": " s2r r7, %tid.x\n ishl r7, r7, 2\n sts [r7], r0\n ixor r7, r7, 128\n lds r4, [r7]\n"
                     " stg [r3+4], r4",
}
SAFE = {
    "same_value": " mov r4, 7\n stg [r1], r4",  # a benign race: every warp stores 7
    "shared_bar": " s2r r7, %tid.x\n ishl r7, r7, 2\n sts [r7], r0\n bar\n ixor r7, r7, 128\n lds r4, [r7]\n"
                  " stg [r3+4], r4",
}


@pytest.mark.parametrize("grid,block", [(1, 64), (2, 32)])
@pytest.mark.parametrize("name", list(RACES))
def test_races_fall_back_with_memory_restored(name, grid, block):
    if name == "shared_no_bar" and grid > 1:
        pytest.skip("shared memory is per block: one block of two warps")
    for mode in Mode:
        k = reg_kernel(RACE.format(body=RACES[name]), mode)
        streams, reasons, before, device, _, _ = pre_run(k, mode, grid, block, out_buffer(1 + grid * block))
        assert streams is None and "data race" in reasons[0], reasons
        assert np.array_equal(device.memory.words, before)


@pytest.mark.parametrize("grid,block", [(1, 64), (2, 32), (3, 64)])
@pytest.mark.parametrize("name", list(SAFE))
@pytest.mark.parametrize("mode", list(Mode))
def test_ordered_and_benign_accesses_keep_streams(name, mode, grid, block, reference_log):
    if name == "shared_bar" and block != 64:
        pytest.skip("the partner lane is in the other warp of a 64-thread block")
    k = reg_kernel(RACE.format(body=SAFE[name]), mode)
    device = compare_one_launch(k, mode, grid, block, out_buffer(1 + grid * block), reference_log)
    assert device.streams[0] is not None, device.reasons


#: Conflicting accesses the converter would color alike, recolored apart (c1..c4) so that the SM
#: would check them at dispatch: their order-conflict bits are known by hand.
MISCOLORED = """
.kernel miscolored
.param out
    s2r r0, %tid.x
    ishr r7, r0, 5
    iadd r8, r0, r7         ; each warp owns 33 words
    ldc r1, out
    ishl r2, r8, 2
    iadd r3, r1, r2
    imul r6, r7, 132
    iadd r6, r1, r6         ; the warp's first word
    stg [r3], r0            ; word t (the lane's)
    ldg r4, [r3]            ; word t: conflicts with the store (bit 0)
    ldg r5, [r6]            ; word 0, stored by lane 0 (bit 1: the store, behind the load)
    stg [r3+4], r4          ; word t + 1: lanes 1.. loaded those (bit 1) and stored them (bit 2)
    exit
"""


def test_order_conflicts_of_miscolored_accesses():
    k = convert_kernel(assemble(MISCOLORED).only)[0]
    memory_ops = [pc for pc, ins in enumerate(k.code) if ins.op in (Opcode.LDG, Opcode.STG)]
    code = list(k.code)
    for color, pc in enumerate(memory_ops, start=1):
        code[pc] = dataclasses.replace(code[pc], mod=color)
    k = dataclasses.replace(k, code=code)
    streams, reasons, _, _, _, _ = pre_run(k, Mode.DFLOW, 1, 64, out_buffer(66))
    assert streams is not None, reasons
    for g in range(2):
        rows = streams.access[streams.first[g]:streams.first[g] + streams.count[g]]
        bits = streams.order_conflict[rows[rows >= 0]].tolist()
        assert bits == [0, 0, 0b1, 0b10, 0b110]  # ldc, then the four accesses
    # and as check_reorder finds them from the functional model's trace
    dev = Device(trace=True)
    out = dev.alloc(4 * 66)
    trace = dev.launch(k, 1, 64, [out]).trace
    static = decode_kernel(k)
    for warp in range(2):
        records = [r for r in trace.records if r.warp == warp and static[r.pc].ordered]
        accesses = [(static[r.pc], np.array(r.addrs), (np.int64(r.mask) >> np.arange(32)) & 1 == 1)
                    for r in records]
        assert expected_order_bits(accesses) == [0, 0b1, 0b10, 0b110]


@pytest.mark.parametrize("mode", list(Mode))
def test_shared_reduction_over_warps_is_ordered_by_its_barriers(mode, reference_log):
    """Two blocks of 4 warps reduce through shared memory, a barrier between the steps."""
    device = compare_one_launch(directed.kernel("shared_reduce", mode.form), mode, 2, 128,
                                directed.Buffers(256, inputs=256), reference_log)
    assert device.streams[0] is not None, device.reasons


def test_stream_layout():
    """The contract's dtypes; records of a warp contiguous; access rows point one-to-one."""
    for mode in Mode:
        streams, reasons, _, _, _, _ = pre_run(directed.kernel("shared_reduce", mode.form), mode, 1, 64,
                                               directed.Buffers(64, inputs=64))
        assert streams is not None, reasons
        for field in dataclasses.fields(LaunchStreams):  # every array int64, as the compiled engine reads them
            if field.name != "faulted_over":
                assert getattr(streams, field.name).dtype == np.int64, field.name
        assert not streams.faulted_over
        assert np.array_equal(streams.first, np.cumsum(streams.count) - streams.count)
        rows = streams.access[streams.access >= 0]
        assert sorted(rows.tolist()) == list(range(len(streams.tx_count)))
        assert streams.exits.sum() == 2  # one exit per warp makes it done
        shared = streams.degree > 0
        assert shared.any() and not streams.tx_first[shared].any() and not streams.tx_count[shared].any()
        assert (streams.tx_first + streams.tx_count <= len(streams.tx_line)).all()


LOAD_BAR_STORE = " ldg r4, [r1]\n bar\n ssy J\n brnz r0, L\n stg [r1], r0\nL:\n sync\nJ:\n stg [r3+4], r4"


@pytest.mark.parametrize("mode", list(Mode))
def test_barrier_orders_loads_before_a_store_of_the_block_only(mode, reference_log):
    """Every thread loads word 0, then (after a barrier) thread 0 stores it: ordered within one
    block; the loads of a second block are not ordered with the store."""
    k = reg_kernel(RACE.format(body=LOAD_BAR_STORE), mode)
    assert compare_one_launch(k, mode, 1, 64, out_buffer(65), reference_log).streams[0] is not None
    streams, reasons, _, _, _, _ = pre_run(k, mode, 2, 32, out_buffer(65))
    assert streams is None and "data race" in reasons[0]


# ---------------------------------------------------------------------- vectorised timing inputs
def pow2(lo: int, hi: int):
    return st.integers(lo, hi).map(lambda e: 1 << e)


@st.composite
def warp_accesses(draw, aligned: bool):
    k = draw(st.integers(1, 6))
    lanes = draw(st.integers(1, 32))
    span = draw(st.sampled_from([64, 512, 1 << 14, 1 << 33]))
    base = draw(st.integers(0, 1 << 32))
    offsets = draw(st.lists(st.integers(0, span), min_size=k * lanes, max_size=k * lanes))
    addrs = np.array(offsets, dtype=np.int64).reshape(k, lanes) + base
    if aligned:
        addrs -= addrs % 4
    mask = np.array(draw(st.lists(st.booleans(), min_size=k * lanes, max_size=k * lanes))).reshape(k, lanes)
    return addrs, mask


@settings(max_examples=300, deadline=None)
@given(warp_accesses(aligned=False), pow2(0, 9), pow2(0, 9), st.booleans())
def test_coalesce_batch_equals_coalesce(access, line, sector, force_aligned):
    addrs, mask = access
    if force_aligned:
        addrs = addrs - addrs % 4
    sector = min(max(sector, line // 32), line)  # L1Config: at most 32 sectors per line
    counts, lines, sectors = coalesce_batch(addrs, mask, line, sector)
    at = 0
    for row in range(len(addrs)):
        want = [(tx.line, tx.sectors) for tx in coalesce(addrs[row], mask[row], line, sector)]
        got = list(zip(lines[at:at + counts[row]].tolist(), sectors[at:at + counts[row]].tolist()))
        assert got == want
        at += int(counts[row])
    assert at == len(lines) == len(sectors)


@settings(max_examples=300, deadline=None)
@given(warp_accesses(aligned=True), st.integers(1, 40), pow2(0, 4), st.integers(1, 4))
def test_conflict_degrees_equal_conflict_degree(access, banks, bank_bytes, parts):
    addrs, mask = access
    got = conflict_degrees(addrs, mask, banks, bank_bytes, parts)
    want = [conflict_degree(addrs[r], mask[r], banks, bank_bytes, parts) for r in range(len(addrs))]
    assert got.tolist() == want
