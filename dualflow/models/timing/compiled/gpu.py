"""The whole GPU for one launch: the numba port of the loop in dualflow/models/timing/gpu.py ``Gpu.run``.

SMs advance in global cycle order (a heap of (next cycle, SM index): ties go to the lower SM);
blocks are placed in order, one per SM per pass at the start, then wherever a block finishes.
With a queued DRAM controller the memory system's events run first in their cycle; what they
make known reaches the SMs (``sm_waits.apply_notes``), which the loop schedules then.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .borrowed import borrow, borrowed_view, keep_alive
from .codes import STALL_IDLE
from .core import ERR_MEMORY_DEADLOCK, SV_FINISHED_CTAS, SV_LAST_CYCLE
from .counters import counter_arrays
from .memory_machine import advance, next_event
from .sm import tick
from .sm_waits import apply_notes, memory_waiting
from .warps import add_cta, fits


@njit(cache=True)
def _push(heap, n, cycle, sm):
    """heapq.heappush(heap, (cycle, sm)) on ``heap[:n]`` (n < len(heap): ``_room``)."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if heap[p, 0] < cycle or (heap[p, 0] == cycle and heap[p, 1] <= sm):
            break
        heap[i, 0], heap[i, 1] = heap[p, 0], heap[p, 1]
        i = p
    heap[i, 0], heap[i, 1] = cycle, sm


@njit(cache=True)
def _room(memory, n):
    """The SM heap's array ``memory`` with room for one more entry after ``n``: itself, or a
    copy twice as long."""
    if n < memory.shape[0]:
        return memory
    grown = np.zeros((2 * n, 2), dtype=np.int64)
    grown[:n] = memory
    return grown


@njit(cache=True)
def _pop(heap, n):
    """heapq.heappop on ``heap[:n]`` (n >= 1): the smallest (cycle, sm)."""
    cycle, sm = heap[0, 0], heap[0, 1]
    n -= 1
    if n > 0:
        l0, l1 = heap[n, 0], heap[n, 1]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and (heap[c + 1, 0] < heap[c, 0]
                              or (heap[c + 1, 0] == heap[c, 0] and heap[c + 1, 1] < heap[c, 1])):
                c += 1
            if l0 < heap[c, 0] or (l0 == heap[c, 0] and l1 <= heap[c, 1]):
                break
            heap[i, 0], heap[i, 1] = heap[c, 0], heap[c, 1]
            i = c
        heap[i, 0], heap[i, 1] = l0, l1
    return cycle, sm


@njit(cache=True)
def _schedule_woken(state, heap_memory, nheap, scheduled):
    """``schedule(sm, cycle)`` of every ``Sm.on_wake`` call recorded (``Heaps.woken``), in order:
    the SM heap's array and size after them."""
    heaps = state.heaps
    for k in range(heaps.woken_n):
        sm, cycle = heaps.woken[k, 0], heaps.woken[k, 1]
        if scheduled[sm] == -1 or cycle < scheduled[sm]:
            scheduled[sm] = cycle
            heap_memory = _room(heap_memory, nheap)
            _push(heap_memory, nheap, cycle, sm)
            nheap += 1
    heaps.woken_n = 0
    return heap_memory, nheap


@njit(cache=True)
def run_launch(state, s, code, streams, mem, start):
    """The block dispatch and event loop of ``Gpu.run`` from cycle ``start``: the last cycle
    simulated (``end``), or -1 on an error (``state.err``). Charges idle SMs to the end.
    The structrefs are borrowed for the launch (borrowed.py): the caller holds them."""
    return _run_launch(borrow(state), borrow(s), borrow(code), borrow(streams), borrow(mem), start)


@njit(cache=True)
def _run_launch(state, s, code, streams, mem, start):
    nsms = s.num_sms
    # the heap and ``scheduled`` as borrowed views (borrowed.py) of arrays these locals own
    heap_memory = np.zeros((max(16, 2 * nsms), 2), dtype=np.int64)
    heap = borrowed_view(heap_memory)
    nheap = 0
    scheduled_memory = np.full(nsms, -1, dtype=np.int64)  # -1: None
    scheduled = borrowed_view(scheduled_memory)
    next_block = 0
    # at the start, one block per SM per pass (round robin), as a block dispatcher does
    progress = True
    while progress and next_block < s.num_blocks:
        progress = False
        for sm in range(nsms):
            if next_block < s.num_blocks and fits(state, s, sm):
                add_cta(state, s, streams, sm, next_block, start + s.cta_launch_latency)  # place
                next_block += 1
                progress = True
                if scheduled[sm] == -1 or start < scheduled[sm]:  # schedule
                    scheduled[sm] = start
                    if nheap == heap.shape[0]:
                        heap_memory = _room(heap_memory, nheap)
                        heap = borrowed_view(heap_memory)
                    _push(heap, nheap, start, sm)
                    nheap += 1
    queued = mem.queued
    state.heaps.woken_n = 0
    end = start
    while nheap or (queued and memory_waiting(state, nsms)):
        if queued:  # the memory system's own events come first in their cycle
            event = next_event(mem)
            if event != -1 and (nheap == 0 or event <= heap[0, 0]):
                advance(mem, event)
                apply_notes(state, code, mem)
                heap_memory, nheap = _schedule_woken(state, heap_memory, nheap, scheduled)
                heap = borrowed_view(heap_memory)
                continue
            if nheap == 0:  # SMs wait for the memory system, which has nothing left to do
                state.err[0] = ERR_MEMORY_DEADLOCK
                return -1
        cycle, i = _pop(heap, nheap)
        nheap -= 1
        if scheduled[i] != cycle:
            continue
        scheduled[i] = -1
        nxt = tick(state, s, code, streams, mem, i, cycle)
        if state.err[0]:
            return -1
        if queued:  # the tick's on_wake calls schedule before its own next cycle does
            heap_memory, nheap = _schedule_woken(state, heap_memory, nheap, scheduled)
            heap = borrowed_view(heap_memory)
        end = max(end, cycle)
        if state.sv[i, SV_FINISHED_CTAS]:
            state.sv[i, SV_FINISHED_CTAS] = 0
            placed = False
            while next_block < s.num_blocks and fits(state, s, i):
                add_cta(state, s, streams, i, next_block, cycle + s.cta_launch_latency)
                next_block += 1
                placed = True
            if placed:
                nxt = cycle + 1 if nxt == -1 else min(nxt, cycle + 1)
        if nxt != -1 and (scheduled[i] == -1 or nxt < scheduled[i]):
            scheduled[i] = nxt
            if nheap == heap.shape[0]:
                heap_memory = _room(heap_memory, nheap)
                heap = borrowed_view(heap_memory)
            _push(heap, nheap, nxt, i)
            nheap += 1
    for sm in range(nsms):  # an SM that ran out of blocks early idles until the launch ends
        idle = end - max(state.sv[sm, SV_LAST_CYCLE], start - 1)
        state.stalls[sm, STALL_IDLE] += idle * s.schedulers
    keep_alive(heap_memory)
    keep_alive(scheduled_memory)
    return end


@njit(cache=True)
def launch_sums(state):
    """The launch's counters summed over the SMs, in one array: the arrays of ``layout.COUNTERS``,
    each summed over its first axis, one after the other (``counters.counter_views`` splits them)."""
    parts = counter_arrays(state)
    width = 0
    for a in parts:
        width += a.shape[1]
    out = np.zeros(width, dtype=np.int64)
    at = 0
    for a in parts:
        for sm in range(a.shape[0]):
            for k in range(a.shape[1]):
                out[at + k] += a[sm, k]
        at += a.shape[1]
    return out
