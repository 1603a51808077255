"""Dependency tracking of one warp in the compiled SM: the numba port of
dualflow/models/timing/scoreboard.py (``RingScoreboard`` for D-FLOW, ``HandsScoreboard`` with
``Variant.HANDS``, ``RegisterScoreboard`` for BASE), on ``SmState.board`` (per slot: ring slots'
readiness cycles, or registers' pending writes) and ``SmState.unread_pos``/``unread_count``
(``RingScoreboard.unread`` as a short list).

With ``Variant.HANDS`` (``s.hands`` > 0), ``s.ring`` is the slot space of every hand's ring
(``Kernel.capacity``), hand h's slot k its entry ``code.rings[h, 1] + k``; the streams hold every
hand's RP at each record (record r's hand h at ``r * s.hands + h``); a value at position p of
hand h is keyed ``p * s.ring + its entry`` (so a key mod ``s.ring`` is its entry, as a
position mod the ring is without hands, and the collector's reads and the writeback need no
hands of their own)."""

from __future__ import annotations

from numba import njit

from .core import (
    HT_DST,
    HT_SRC,
    PENDING,
    ST_DST,
    ST_NSRC,
    ST_SRC,
    W_NUNREAD,
)


# ``RingScoreboard.unread`` (position -> reads outstanding) as a short list of (position, count).
@njit(cache=True)
def _unread_index(state, sm, slot, position):
    for i in range(state.wv[sm, slot, W_NUNREAD]):
        if state.unread_pos[sm, slot, i] == position:
            return i
    return -1


@njit(cache=True)
def add_reader(state, sm, slot, position):
    """RingScoreboard.add_reader."""
    i = _unread_index(state, sm, slot, position)
    if i < 0:
        i = state.wv[sm, slot, W_NUNREAD]
        state.wv[sm, slot, W_NUNREAD] = i + 1
        state.unread_pos[sm, slot, i] = position
        state.unread_count[sm, slot, i] = 0
    state.unread_count[sm, slot, i] += 1


@njit(cache=True)
def read_done(state, sm, slot, position):
    """RingScoreboard.read_done."""
    i = _unread_index(state, sm, slot, position)
    state.unread_count[sm, slot, i] -= 1
    if not state.unread_count[sm, slot, i]:
        last = state.wv[sm, slot, W_NUNREAD] - 1
        state.unread_pos[sm, slot, i] = state.unread_pos[sm, slot, last]
        state.unread_count[sm, slot, i] = state.unread_count[sm, slot, last]
        state.wv[sm, slot, W_NUNREAD] = last


@njit(cache=True)
def slot_busy(state, s, sm, slot, entry):
    """RingScoreboard.slot_busy: ``entry`` pending, or a read of any position of it outstanding."""
    if state.board[sm, slot, entry] == PENDING:
        return True
    for i in range(state.wv[sm, slot, W_NUNREAD]):
        if state.unread_pos[sm, slot, i] % s.ring == entry:
            return True
    return False


@njit(cache=True)
def guard_blocks(state, s, sm, slot, position):
    """RingScoreboard.guard_blocks."""
    return slot_busy(state, s, sm, slot, position % s.ring)


@njit(cache=True)
def waits(state, s, code, sm, slot, rp, pc, cycle):
    """RingScoreboard.waits(rp, static[pc].sources, cycle)."""
    st = code.table
    for k in range(st[pc, ST_NSRC]):
        if state.board[sm, slot, (rp - st[pc, ST_SRC + k]) % s.ring] > cycle:
            return True
    return False


@njit(cache=True)
def base_blocked(state, code, sm, slot, pc):
    """RegisterScoreboard.blocked."""
    st = code.table
    dst = st[pc, ST_DST]
    if dst >= 0 and state.board[sm, slot, dst]:
        return True
    for k in range(st[pc, ST_NSRC]):
        if state.board[sm, slot, st[pc, ST_SRC + k]]:
            return True
    return False


# ``Variant.HANDS``: HandsScoreboard
@njit(cache=True)
def hand_entry(code, hand, position):
    """HandsScoreboard.slot: the entry of ``position`` of ``hand`` in the warp's slot space."""
    return code.rings[hand, 1] + position % code.rings[hand, 0]


@njit(cache=True)
def hand_rp(s, streams, rec, hand):
    """RP of ``hand`` at record ``rec``."""
    return streams.rp[rec * s.hands + hand]


@njit(cache=True)
def hand_guard_blocks(state, s, code, streams, sm, slot, rec, pc):
    """HandsScoreboard.hand_guard_blocks of the producer ``pc`` at record ``rec``: its hand's
    slot's value is in flight or unread (``slot_busy``; a key mod ``s.ring`` is its entry)."""
    hand = code.hands[pc, HT_DST]
    return slot_busy(state, s, sm, slot, hand_entry(code, hand, streams.rp[rec * s.hands + hand]))


@njit(cache=True)
def hand_waits(state, s, code, streams, sm, slot, rec, bump, pc, cycle):
    """HandsScoreboard.hand_waits(the RPs at record ``rec``, static[pc]'s sources, cycle), with
    hand ``bump``'s RP one further (-1: none)."""
    st = code.table
    for k in range(st[pc, ST_NSRC]):
        hand = code.hands[pc, HT_SRC + k]
        position = streams.rp[rec * s.hands + hand] - st[pc, ST_SRC + k]
        if hand == bump:
            position += 1
        if state.board[sm, slot, hand_entry(code, hand, position)] > cycle:
            return True
    return False
