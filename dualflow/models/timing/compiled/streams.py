"""Instruction streams: one launch run functionally ahead of timing, recording what timing needs.

The reference engine (``gpu.py``/``sm.py``) executes each warp instruction in the functional
model when it issues. A warp's instructions, their active lanes and addresses do not depend on
when they issue, unless warps communicate through memory in a way the barriers do not order (a
data race). So a launch can be run first, in the functional model's own batched order (blocks
in chunks of ``FunctionalConfig.batch_warps``, lowest pc first, ``BatchExecutor.next_step``),
recording per warp the stream a timing engine consumes:

- per issued instruction (a *record*, in issue order): pc, active lanes, RP at issue (D-FLOW;
  every hand's with ``Variant.HANDS``), and whether an ``exit`` made the warp done;
- per memory instruction (an *access*, ldc included): the transactions of a global or local
  access (``coalesce`` of the lanes' addresses, local ones through ``local_addresses``), the
  bank-conflict degree of a shared access (``conflict_degree``), and, D-FLOW, the order
  conflicts: bit j set when ``check_reorder`` would raise for this access and the (j+1)-th
  previous global/shared/local access of the warp (j < 63), for the pairs ``must_keep_order``
  leaves unordered (the only pairs the SM checks). BASE dispatches in order: no bits.

Memory and the per-pc counts end as the reference engine leaves them.

Fallback. ``build_streams`` returns None, with global memory and the count arrays as they were,
when the launch must run on the reference engine: a ``DualflowError`` (kernel fault, budget
exceeded, deadlock, ...) or a data race. Undo is a journal of the old values of the global
words each store overwrites, replayed backwards (stores never change the allocation map).

Race rule. Two accesses to one 32-bit word (global memory, or one block's shared memory) by
different warps race when at least one is a store and no barrier orders them: warps of
different blocks are never ordered; warps of one block are ordered when the accesses fall in
different barrier episodes (episode = ``bar`` instructions the warp has executed; all live warps
of a block are in the same episode, so episodes never decrease in execution order). A race-free
launch ends the same whatever the interleaving, so the batched order stands for the engine's.
One race is allowed: stores of the same value to a word by unordered warps (bfs marks a node
from several frontier nodes), provided no read of the word is unordered with any of them; the
word then ends with that value in every order.

Detection is per batch step (compiled: ``compiled/race_summaries.py``; a step's entries are
grouped by word, the last entry of each word standing for the step), with two summaries per
word: a code (nobody, one warp, several warps of one block, several blocks; see
``_RaceMonitor``) and an episode:

- the last writer and its episode. In a race-free history every write is ordered after the
  writer summary, so a new access is ordered after all earlier writes iff it is ordered after
  the summary (same warp, or same block and a later episode); an unordered store of the
  word's current value merges into the summary (several writers of one episode or of several
  blocks), which then orders nothing but later episodes of its block;
- the readers: their block (or several blocks), their latest episode, and who read in it.
  Readers are never forgotten; a store is race-free iff every reader is its own warp or in its
  block at an earlier episode, which the summary decides exactly (readers of other blocks or
  of several blocks: a race; else only readers of the latest episode can be unordered).

Within one step, several warps storing one word are unordered: allowed only when every lane's
value is the same. Warps of one block in one step share their episode.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import is_

import numpy as np

from dualflow.common.errors import DualflowError
from dualflow.isa import Form, Kernel, Opcode
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.memory import SharedMemoryConfig
from dualflow.models.executor import BatchExecutor, Geometry
from dualflow.models.memory import GlobalMemory

from ..memory.coalescer import local_addresses
from ..ordering import must_keep_order
from ..program import PerKernel, StaticInstruction, decoded
from .race_summaries import NOBODY, SEVERAL_BLOCKS, watch_step
from .step_access import coalesce_rows, conflict_degree_rows
from .stream_records import group_records

#: Previous accesses of a warp whose order conflicts an access records (bits of an int64).
ORDER_DEPTH = 63
_MAX_WARPS = 2**30 - 1  # race summaries name warp w by the int32 code 2w (see _RaceMonitor)
_NO_DATA = np.zeros((0, 0), dtype=np.uint32)  # watch_step's data of a load
_EXIT, _BAR, _MEM = 1, 2, 4  # what the pre-run records for an instruction besides its record


@dataclass
class LaunchStreams:
    """What each warp of a launch issues, for a timing engine that does not execute.

    Warps are in launch order ``g = block * warps_per_block + warp_in_block``; records are
    grouped by warp, in issue order; see the module docstring for the meaning of each field.
    Every array is int64, as the compiled engine reads them (no copies to convert).
    """

    first: np.ndarray  # int64[nwarps] first record of each warp
    count: np.ndarray  # int64[nwarps] records of each warp
    pc: np.ndarray  # int64[N]
    threads: np.ndarray  # int64[N] active lanes at issue
    rp: np.ndarray  # int64[N] D-FLOW: RP at issue; BASE: 0. Variant.HANDS: int64[N * hands], every
    # hand's RP at issue (record r's hand h at r * hands + h)
    exits: np.ndarray  # int64[N] 1: this exit made the warp done
    access: np.ndarray  # int64[N] row of the access table, or -1
    tx_first: np.ndarray  # int64[M] global/local: first transaction; else 0
    tx_count: np.ndarray  # int64[M] transactions (0: no active lane, or not global/local)
    degree: np.ndarray  # int64[M] shared: conflict degree; else 0
    order_conflict: np.ndarray  # int64[M] bit j: conflicts with the (j+1)-th previous ordered access
    tx_line: np.ndarray  # int64[T] line byte address, in coalesce order
    tx_sectors: np.ndarray  # int64[T] sector mask
    faulted_over: bool = False  # never True in a returned object (faults and races fall back)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(getattr(self, f.name).nbytes for f in fields(self) if f.name != "faulted_over")


class DataRace(DualflowError):
    """Two warps access a word unordered by barriers, at least one storing (see the module docstring)."""


# ---------------------------------------------------------------------- vectorised timing inputs
def coalesce_batch(addresses: np.ndarray, mask: np.ndarray, line_bytes: int, sector_bytes: int,
                   access_bytes: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``coalesce`` of k warp accesses at once.

    Parameters
    ----------
    addresses : np.ndarray
        ``[k, lanes]`` byte addresses.
    mask : np.ndarray of bool
        ``[k, lanes]`` active lanes.
    line_bytes, sector_bytes, access_bytes : int
        As for ``coalesce`` (line and sector sizes powers of two).

    Returns
    -------
    counts, lines, sectors : np.ndarray of int64
        Transactions per access (``[k]``), and the transactions' lines and sector masks, access
        after access, each access's in ``coalesce`` order (ascending line).

    Compiled (``compiled/step_access.py``): numpy's per-call overhead outweighed a few warps' work.
    """
    return coalesce_rows(_int64_rows(addresses), _bool_rows(mask), line_bytes, sector_bytes, access_bytes)


def conflict_degrees(addresses: np.ndarray, mask: np.ndarray, banks: int, bank_bytes: int,
                     warp_parts: int = 1) -> np.ndarray:
    """``conflict_degree`` of k warp accesses at once (``[k, lanes]`` addresses and mask): int64[k]."""
    return conflict_degree_rows(_int64_rows(addresses), _bool_rows(mask), banks, bank_bytes, warp_parts)


def _int64_rows(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)  # one compiled signature, whatever the caller passes


def _bool_rows(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=bool)


# ---------------------------------------------------------------------- order conflicts
def _conflicts(space: str, older: np.ndarray, older_mask: np.ndarray, younger: np.ndarray,
               younger_mask: np.ndarray) -> np.ndarray:
    """``ordering.conflicts`` of P pairs of accesses (``[P, lanes]`` words and masks): bool[P]."""
    if space == "local":
        return ((older == younger) & older_mask & younger_mask).any(axis=1)
    same = (older[:, :, None] == younger[:, None, :]) & older_mask[:, :, None] & younger_mask[:, None, :]
    return same.any(axis=(1, 2))


def _checked_pairs(static: list[StaticInstruction]) -> np.ndarray:
    """[older pc, younger pc]: the SM calls ``check_reorder`` when the younger passes the older
    (``must_keep_order`` leaves them free) and it can raise (same space, a store involved)."""
    ordered = [ins for ins in static if ins.ordered]
    checked = np.zeros((len(static), len(static)), dtype=bool)
    for o in ordered:
        for y in ordered:
            if o.space == y.space and (o.is_store or y.is_store) and not must_keep_order(o, y):
                checked[o.pc, y.pc] = True
    return checked


def _derive_facts(kernel: Kernel) -> tuple[list[StaticInstruction], np.ndarray | None, list[int]]:
    """The kernel's decoded instructions; when D-FLOW order conflicts need tracking, its
    ``_checked_pairs``; and per pc what the pre-run records besides the record (``_EXIT``,
    ``_BAR``, ``_MEM`` bits)."""
    static = decoded(kernel)
    checked = _checked_pairs(static) if kernel.form is Form.DFLOW else None
    kinds = [(_EXIT if ins.op is Opcode.EXIT else _BAR if ins.op is Opcode.BAR else 0) | (_MEM if ins.is_mem else 0)
             for ins in static]
    return static, (checked if checked is not None and checked.any() else None), kinds


_kernel_facts = PerKernel(_derive_facts)


class _OrderHistory:
    """D-FLOW: each warp's last ``ORDER_DEPTH`` global/shared/local accesses, to find the pairs
    ``check_reorder`` would reject among those ``must_keep_order`` leaves free."""

    def __init__(self, checked: np.ndarray, warps: int, lanes: int):
        n = len(checked)
        self.checked = np.zeros((n + 1, n), dtype=bool)  # ``_checked_pairs``; row n: no access
        self.checked[:n] = checked
        self.as_younger = self.checked.any(axis=0)
        self.as_older = self.checked[:n].any(axis=1)
        self.pc = np.full((ORDER_DEPTH, warps), n, dtype=np.int32)
        self.words = np.zeros((ORDER_DEPTH, warps, lanes), dtype=np.int32)
        self.mask = np.zeros((ORDER_DEPTH, warps, lanes), dtype=bool)
        self.seen = np.zeros(warps, dtype=np.int64)
        self.depths = np.arange(ORDER_DEPTH)[:, None]

    def record(self, ins: StaticInstruction, g: np.ndarray, addresses: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Bits of the accesses of warps ``g`` (batch-local) at ``ins``; remember them."""
        bits = np.zeros(len(g), dtype=np.int64)
        words = (addresses >> 2).astype(np.int32)  # addresses are 32-bit: words fit
        seen = self.seen[g]
        slots = (seen[None, :] - 1 - self.depths) % ORDER_DEPTH  # [depth, k]: j-th previous access
        if self.as_younger[ins.pc]:
            older = self.pc[slots, g[None, :]]
            depth, row = np.nonzero(self.checked[older, ins.pc])
            if len(depth):
                slot, warp = slots[depth, row], g[row]
                hit = _conflicts(ins.space, self.words[slot, warp], self.mask[slot, warp], words[row], mask[row])
                np.bitwise_or.at(bits, row[hit], np.int64(1) << depth[hit])
        slot = seen % ORDER_DEPTH
        self.pc[slot, g] = ins.pc
        if self.as_older[ins.pc]:
            self.words[slot, g] = words
            self.mask[slot, g] = mask
        self.seen[g] = seen + 1
        return bits


# ---------------------------------------------------------------------- races and undo
class _Summaries:
    """Per word: writer and reader summaries (codes as in the module docstring) and episodes."""

    def __init__(self, words: int):
        self.writer = np.full(words, NOBODY, dtype=np.int32)
        self.writer_episode = np.zeros(words, dtype=np.int32)
        self.reader = np.full(words, NOBODY, dtype=np.int32)
        self.reader_episode = np.zeros(words, dtype=np.int32)
        self.scratch = np.zeros(words, dtype=np.int32)  # grouping the entries of one step by word (watch_step)


class _RaceMonitor:
    """Watches a launch's global and shared accesses (``BatchExecutor.watch``): journals global
    stores, raises ``DataRace`` on a race.

    Summary codes (int32): ``NOBODY``; ``2 w`` warp w of the launch; ``2 b W + 1`` several
    warps of block b (W warps per block); ``SEVERAL_BLOCKS``. So the block of a code is
    ``code // 2W`` (-1 for the two negative codes, never a block)."""

    def __init__(self, memory: GlobalMemory, warps: int, warps_per_block: int, kernel: str):
        self.memory, self.wpb, self.kernel = memory, warps_per_block, kernel
        self.span = 2 * warps_per_block  # codes per block
        self.global_words = _Summaries(memory.top // 4)  # accesses beyond fault before they are watched
        self.episode = np.zeros(warps, dtype=np.int32)  # bar instructions each warp executed
        self.journal: list[tuple[np.ndarray, np.ndarray]] = []  # (words, old values) per global store
        self.ex: BatchExecutor | None = None
        self.base = 0
        self.shared_words: _Summaries | None = None

    def begin_batch(self, ex: BatchExecutor, base: int) -> None:
        self.ex, self.base = ex, base
        self.shared_words = _Summaries(ex.shared.size)
        ex.watch = self.watch

    def undo(self) -> None:
        words = self.memory.words
        for index, old in reversed(self.journal):
            words[index] = old
        self.journal.clear()

    def watch(self, space: str, g: np.ndarray, mask: np.ndarray, words: np.ndarray, data: np.ndarray | None) -> None:
        if space == "global":
            state, values = self.global_words, self.memory.words
        else:
            state, values = self.shared_words, self.ex.shared.reshape(-1)
        if data is not None and space == "global":
            word = words[mask]
            if not len(word):
                return
            self.journal.append((word, values[word]))
        race, other, code = watch_step(
            state.writer, state.writer_episode, state.reader, state.reader_episode, state.scratch, values,
            self.episode, np.ascontiguousarray(g, dtype=np.int64), np.ascontiguousarray(mask, dtype=bool),
            np.ascontiguousarray(words, dtype=np.int64),
            _NO_DATA if data is None else np.ascontiguousarray(data, dtype=np.uint32), data is not None,
            self.base, self.span)
        if race >= 0:
            raise DataRace(f"kernel {self.kernel!r}: data race on {space} word {int(words[mask][race])}: "
                           f"{'a load' if data is None else 'a store'} by {self._who(code)} is unordered with an "
                           f"access by {self._who(other)}")

    def _who(self, code: int) -> str:
        if code == NOBODY:  # no earlier access: the step's own warps stored different values
            return "another warp of the same instruction storing another value"
        if code == SEVERAL_BLOCKS:
            return "warps of several blocks"
        if code % 2:
            return f"several warps of block {code // self.span}"
        return f"warp {code // 2 % self.wpb} of block {code // self.span}"


# ---------------------------------------------------------------------- the pre-run
class Executors:
    """Batch executors kept from one launch to the next: a later launch of the same kernel on
    the same blocks (same geometry, memory and configuration) restarts one
    (``BatchExecutor.restart``) instead of compiling its handlers again, which is most of a
    small batch's set-up (gaussian: 30 launches of two kernels, one batch each). Only batches of
    at most ``MAX_WARPS`` warps are kept: a large batch's set-up is small beside its run, and
    its arrays are large. The compiled engine keeps one per GPU."""

    MAX_WARPS = 256
    KEEP = 8  # batches kept at once

    def __init__(self):
        self._kept: dict[tuple, tuple[tuple, BatchExecutor]] = {}  # key -> (kernel's code and shape, executor)

    @staticmethod
    def _key(kernel: Kernel, geo: Geometry, blocks: range, memory: GlobalMemory, fconfig: FunctionalConfig) -> tuple:
        return id(kernel), geo, blocks.start, blocks.stop, id(memory), fconfig

    @staticmethod
    def _shape(kernel: Kernel) -> tuple:
        """What the handlers and arrays were made from (instructions are frozen: the same objects
        are the same code)."""
        return (kernel.form, kernel.ring, kernel.rings, kernel.variants, kernel.regs, kernel.shared_bytes,
                kernel.local_bytes, *kernel.code)

    def start(self, kernel: Kernel, geo: Geometry, blocks: range, params: np.ndarray, memory: GlobalMemory,
              fconfig: FunctionalConfig, warp_counts: np.ndarray, thread_counts: np.ndarray,
              budget: list[int]) -> BatchExecutor:
        """An executor of these blocks at the start of this launch: a kept one restarted, or a new one."""
        kept = self._kept.pop(self._key(kernel, geo, blocks, memory, fconfig), None)
        if kept is not None:
            shape, ex = kept
            now = self._shape(kernel)
            if ex.kernel is kernel and ex.mem is memory and len(now) == len(shape) and all(map(is_, now, shape)):
                ex.restart(params, warp_counts, thread_counts, budget)
                return ex
            ex.release()
        return BatchExecutor(kernel, geo, blocks, params, memory, fconfig, warp_counts, thread_counts, budget, None)

    def finish(self, ex: BatchExecutor) -> None:
        """``ex`` has run its batch: keep it for a later launch, or release it."""
        ex.watch = None
        if ex.nw > self.MAX_WARPS:
            ex.release()
            return
        self._kept[self._key(ex.kernel, ex.geo, ex.blocks, ex.mem, ex.config)] = self._shape(ex.kernel), ex
        if len(self._kept) > self.KEEP:
            _, oldest = self._kept.pop(next(iter(self._kept)))
            oldest.release()


class _PreRun:
    """Runs one launch batch by batch and records its streams."""

    def __init__(self, kernel: Kernel, geo: Geometry, params: np.ndarray, memory: GlobalMemory,
                 fconfig: FunctionalConfig, warp_counts: np.ndarray, thread_counts: np.ndarray, *,
                 line_bytes: int, sector_bytes: int, shared_cfg: SharedMemoryConfig, local_bytes: int,
                 executors: Executors | None):
        self.kernel, self.geo, self.params, self.memory, self.fconfig = kernel, geo, params, memory, fconfig
        self.executors = executors
        self.warp_counts, self.thread_counts = warp_counts, thread_counts
        self.line_bytes, self.sector_bytes, self.shared_cfg, self.local_bytes = \
            line_bytes, sector_bytes, shared_cfg, local_bytes
        self.static, self.checked, self.kinds = _kernel_facts(kernel)
        self.distance_operands = kernel.form is Form.DFLOW
        self.hands = len(kernel.rings) if self.distance_operands and kernel.hands else 0  # HANDS: RPs per record
        self.warps = geo.num_blocks * geo.warps_per_block
        self.monitor = _RaceMonitor(memory, self.warps, geo.warps_per_block, kernel.name)
        # per batch step, in execution order
        self.step_warps: list[np.ndarray] = []
        self.step_pc: list[int] = []
        self.step_threads: list[np.ndarray] = []
        self.step_rp: list[np.ndarray] = []
        self.exit_at: list[tuple[int, np.ndarray]] = []  # (first record of the step, done after it)
        self.access_at: list[int] = []  # first record of each memory step
        self.access_rows: list[int] = []
        self.tx_counts: list[np.ndarray] = []
        self.tx_lines: list[np.ndarray] = []
        self.tx_sectors: list[np.ndarray] = []
        self.degrees: list[np.ndarray] = []
        self.orders: list[np.ndarray] = []
        self.any_degree = self.any_order = False  # else ``degrees``/``orders`` hold only zeros
        self._zeros: dict[int, np.ndarray] = {}  # per access size, the zeros of what it does not have
        self.records = 0

    def run(self) -> None:
        geo = self.geo
        wpb = geo.warps_per_block
        per_batch = max(1, self.fconfig.batch_warps // wpb)
        budget = [0]
        for start in range(0, geo.num_blocks, per_batch):
            blocks = range(start, min(start + per_batch, geo.num_blocks))
            if self.executors is None:
                ex = BatchExecutor(self.kernel, geo, blocks, self.params, self.memory, self.fconfig,
                                   self.warp_counts, self.thread_counts, budget, None)
            else:
                ex = self.executors.start(self.kernel, geo, blocks, self.params, self.memory, self.fconfig,
                                          self.warp_counts, self.thread_counts, budget)
            self._run_batch(ex, start * wpb)
            if self.executors is None:
                ex.release()  # its handlers and our watch: cycles through the executor (``release``)
            else:
                self.executors.finish(ex)

    def _run_batch(self, ex: BatchExecutor, base: int) -> None:
        self.monitor.begin_batch(ex, base)
        history = _OrderHistory(self.checked, ex.nw, ex.L) if self.checked is not None else None
        static, handlers, episode, kinds = self.static, ex.handlers, self.monitor.episode, self.kinds
        # bound methods and locals: the loop runs once per batch step, a few us each
        add_warps, add_pc, add_threads = self.step_warps.append, self.step_pc.append, self.step_threads.append
        add_rp = self.step_rp.append if self.distance_operands else None
        next_step, rp = ex.next_step, ex.rp if self.distance_operands else None
        if self.hands:
            rp = ex.rps.T  # [warp, hand]: every hand's RP
        count_rows = np.add.reduce  # active lanes per warp: a third of np.count_nonzero(axis=1)'s cost
        last_mask = threads = None
        records = self.records
        while (step := next_step()) is not None:
            pc, g, mask = step
            warps = g + base if base else g  # g: the executor's array (maybe the last step's), never changed
            add_warps(warps)
            add_pc(pc)
            if mask is not last_mask:  # next_step hands on the same mask for the same warps and lanes
                last_mask, threads = mask, count_rows(mask, 1, np.int64)
            add_threads(threads)
            if add_rp is not None:
                add_rp(rp[g])
            handlers[pc](g, mask)
            kind = kinds[pc]
            if kind:
                if kind & _EXIT:
                    self.exit_at.append((records, ex.done[g]))
                elif kind & _BAR:
                    episode[warps] += 1
                if kind & _MEM:
                    self._access(static[pc], ex, g, warps, mask, history, records)
            records += len(g)
        self.records = records

    def _access(self, ins: StaticInstruction, ex: BatchExecutor, g: np.ndarray, warps: np.ndarray,
                mask: np.ndarray, history: _OrderHistory | None, record: int) -> None:
        """Record the access of the step whose first record is ``record``."""
        n = len(g)
        self.access_at.append(record)
        self.access_rows.append(n)
        zeros = self._zeros.get(n)
        if zeros is None:  # never written: the arrays are concatenated at the end
            zeros = self._zeros[n] = np.zeros(n, dtype=np.int64)
        counts = degrees = orders = zeros
        if ins.ordered:
            addresses = ex.last_access[0]
            if ins.space == "shared":
                cfg = self.shared_cfg
                degrees = conflict_degrees(addresses, mask, cfg.banks, cfg.bank_bytes, cfg.warp_parts)
                self.any_degree = True
            else:
                where = addresses
                if ins.space == "local":
                    where = local_addresses(warps[:, None], ex.L, addresses, self.local_bytes)
                counts, lines, sectors = coalesce_batch(where, mask, self.line_bytes, self.sector_bytes)
                self.tx_lines.append(lines)
                self.tx_sectors.append(sectors)
            if history is not None:
                orders = history.record(ins, g, addresses, mask)
                self.any_order = True
        self.tx_counts.append(counts)
        self.degrees.append(degrees)
        self.orders.append(orders)

    def streams(self) -> LaunchStreams:
        """The records, grouped by warp (``compiled/stream_records.py``)."""
        def cat(parts: list[np.ndarray], dtype=np.int64) -> np.ndarray:
            return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

        exit_len = [len(done) for _, done in self.exit_at]
        warps = cat(self.step_warps)
        first, count, pc, threads, rp, exits, access = group_records(
            self.warps, warps, np.array([len(w) for w in self.step_warps], dtype=np.int64),
            np.array(self.step_pc, dtype=np.int64), cat(self.step_threads),
            np.zeros(0, np.int64) if self.hands else cat(self.step_rp),
            np.array([at for at, _ in self.exit_at], dtype=np.int64), np.array(exit_len, dtype=np.int64),
            cat([done for _, done in self.exit_at], bool), np.array(self.access_at, dtype=np.int64),
            np.array(self.access_rows, dtype=np.int64))
        if self.hands:  # grouped as group_records groups: a stable sort by warp
            rps = np.concatenate(self.step_rp) if self.step_rp else np.zeros((0, self.hands), np.int64)
            rp = np.ascontiguousarray(rps[np.argsort(warps, kind="stable")], dtype=np.int64).reshape(-1)
        tx_count = cat(self.tx_counts)
        tx_first = np.cumsum(tx_count) - tx_count
        tx_first[tx_count == 0] = 0  # shared, param, no active lane
        degree = cat(self.degrees) if self.any_degree else np.zeros(len(tx_count), np.int64)
        order_conflict = cat(self.orders) if self.any_order else np.zeros(len(tx_count), np.int64)
        return LaunchStreams(
            first=first, count=count, pc=pc, threads=threads, rp=rp, exits=exits, access=access,
            tx_first=tx_first, tx_count=tx_count, degree=degree, order_conflict=order_conflict,
            tx_line=cat(self.tx_lines), tx_sectors=cat(self.tx_sectors))


def build_streams(kernel: Kernel, geo: Geometry, params: np.ndarray, memory: GlobalMemory,
                  fconfig: FunctionalConfig, warp_counts: np.ndarray, thread_counts: np.ndarray, *,
                  line_bytes: int, sector_bytes: int, shared_cfg: SharedMemoryConfig, warp_size: int,
                  local_bytes: int, reasons: list[str] | None = None,
                  executors: Executors | None = None) -> LaunchStreams | None:
    """Run one launch functionally and record its streams (see the module docstring).

    Parameters
    ----------
    kernel, geo, params, memory, fconfig, warp_counts, thread_counts
        As ``Gpu.run`` takes them; memory and the per-pc counts are updated as the reference
        engine updates them.
    line_bytes, sector_bytes : int
        L1 line and sector sizes (coalescing).
    shared_cfg : SharedMemoryConfig
        Banks, bank width and warp parts (conflict degrees).
    warp_size, local_bytes : int
        Lanes per warp (must be ``geo.warp_size``) and local memory per thread (local addresses).
    reasons : list of str, optional
        On fallback, why is appended here.
    executors : Executors, optional
        Batch executors kept across launches (new ones each launch without).

    Returns
    -------
    LaunchStreams or None
        None when the launch must run on the reference engine (fault, budget exceeded, data
        race); memory and the counts are then as before the call.
    """
    if warp_size != geo.warp_size:
        raise ValueError(f"build_streams: warp size {warp_size} differs from the launch's {geo.warp_size}")
    if geo.num_blocks * geo.warps_per_block >= _MAX_WARPS:
        if reasons is not None:
            reasons.append(f"more than {_MAX_WARPS} warps: beyond the race summaries' int32 codes")
        return None
    counts_before = warp_counts.copy(), thread_counts.copy()
    run = _PreRun(kernel, geo, params, memory, fconfig, warp_counts, thread_counts, line_bytes=line_bytes,
                  sector_bytes=sector_bytes, shared_cfg=shared_cfg, local_bytes=local_bytes, executors=executors)
    try:
        run.run()
    except DualflowError as error:
        run.monitor.undo()
        warp_counts[:], thread_counts[:] = counts_before
        if reasons is not None:
            reasons.append(str(error))
        return None
    return run.streams()
