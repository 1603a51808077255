"""The SM state of one engine, kept from launch to launch (``SmStates``), and its reset in place
(``reset_state``), generated from ``layout.SM_STATE``'s ``reset`` of each array.

``reset_state(state, pristine)`` resets ``state`` to a fresh state but what carries across
launches (CARRIED arrays, ``layout.SV_CARRIED``), from ``pristine``, a fresh state of one SM:
EVERY_SM and WHOLE arrays whole, USED_SMS arrays in the SMs the last launch gave a block,
USED_SLOTS arrays there in the slots below the highest it used. Each placed warp leaves its slot
resident, or finished (``retire_warp``); nothing else marks a slot, ``add_cta`` is the first to
write an SM, and it takes the lowest free slot, so the slots used are those below the highest
marked one, and no per-SM list (``warps``, ``sched_warps``, ``scratch``'s issue order) grew longer
than them. One compiled call: the same copies from Python cost a small launch about 0.3 ms of
numpy calls. ``tests/models/timing/test_timing_compiled.py`` holds its result to
``make_sm_state``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dualflow.isa.encoding import MAX_REGS

from .core import W_FINISHED, W_RESIDENT
from .declare import EVERY_SM, USED_SLOTS, USED_SMS, WHOLE, generated_njit
from .layout import (
    CARRIED_ARRAYS,
    SM_STATE,
    SV_CARRIED,
    Settings,
    SmState,
    SmStateRef,
    make_sm_state,
    sm_state_ref,
    state_shape,
)


@njit(cache=True)
def _used_slots(wv, sm):
    """One past the highest slot of SM ``sm`` that holds, or held, a warp this launch."""
    used = 0
    for slot in range(wv.shape[1]):
        if wv[sm, slot, W_RESIDENT] or wv[sm, slot, W_FINISHED]:
            used = slot + 1
    return used


@njit(cache=True)
def _per_sm(a, pristine, sm):
    a[sm] = pristine[0]


@njit(cache=True)
def _per_sm_keeping(a, pristine, sm, keeps):
    for c in range(a.shape[1]):
        kept = False
        for k in keeps:
            kept = kept or k == c
        if not kept:
            a[sm, c] = pristine[0, c]


@njit(cache=True)
def _slots(a, pristine, sm, used):
    for k in range(used):
        a[sm, k] = pristine[0, k]


@njit(cache=True)
def _slots_inner(a, pristine, sm, used):
    """``_slots`` of an array whose slot axis is its third (per scheduler, per slot)."""
    for i in range(a.shape[1]):
        for k in range(used):
            a[sm, i, k] = pristine[0, i, k]


def _reset_source() -> str:
    every, rows, whole = [], [], []
    for a in SM_STATE:
        pair = f"state.{a.name}, pristine.{a.name}"
        if a.reset == EVERY_SM:
            every.append(f"_per_sm_keeping({pair}, sm, {a.keeps!r})" if a.keeps else f"_per_sm({pair}, sm)")
        elif a.reset == USED_SLOTS:
            rows.append(f"{'_slots' if a.slot_axis == 1 else '_slots_inner'}({pair}, sm, used)")
        elif a.reset == USED_SMS:
            rows.append(f"_per_sm({pair}, sm)")
        elif a.reset == WHOLE:
            whole.append(f"state.{a.name}[:] = pristine.{a.name}")
    lines = ["def reset_state(state, pristine):",
             "    for sm in range(state.wv.shape[0]):",
             "        used = _used_slots(state.wv, sm)",
             *(f"        {line}" for line in every),
             "        if not used:",
             "            continue",
             *(f"        {line}" for line in rows),
             *(f"    {line}" for line in whole)]
    return "\n".join(lines) + "\n"


reset_state = generated_njit("reset_state", _reset_source(), globals())


class SmStates:
    """The SM state of one engine, kept from launch to launch and reset in place
    (``reset_state``) from a pristine state of one SM. Building a state and its ``SmStateRef``
    costs about 1.5 ms (4.8 MB of arrays at 68 SMs), much of a small launch. One state serves
    every launch shape: ``cta_slots`` holds the widest block; ``board`` the registers of any
    REG-form kernel or the most entries per warp a launch has needed (a larger D-FLOW ring),
    and a launch that needs more gets a new state with the old one's carried values
    (CARRIED arrays, ``layout.SV_CARRIED``). ``add_cta`` clears only the entries a launch uses.

    Members
    -------
    state : SmState or None
        The state (None before the first launch).
    """

    def __init__(self):
        self.state: SmState | None = None
        self._kept: tuple[tuple, SmStateRef, SmStateRef] | None = None  # (shape, pristine, ref)

    def fresh(self, s: Settings, pipe_count: int) -> tuple[SmState, SmStateRef]:
        """A state equal to ``make_sm_state(s, pipe_count)`` but for the carried values (the
        last launch's, or a new state's) and ``board``'s width, and its structref."""
        shape = state_shape(s, pipe_count)
        old = self.state
        if old is not None and self._kept[0] == shape and old.board.shape[2] >= s.entries:
            _, pristine, ref = self._kept
            reset_state(ref, pristine)
            return old, ref
        if old is not None and self._kept[0] != shape:
            raise ValueError("SmStates: a launch of another GPU configuration")
        entries = max(s.entries, old.board.shape[2] if old else MAX_REGS)  # a REG-form kernel never needs more
        state = self.state = make_sm_state(s._replace(entries=entries), pipe_count)
        if old is not None:
            for name in CARRIED_ARRAYS:
                np.copyto(getattr(state, name), getattr(old, name))
            columns = [c for c, _ in SV_CARRIED]
            state.sv[:, columns] = old.sv[:, columns]
        ref = sm_state_ref(state)
        pristine = sm_state_ref(make_sm_state(s._replace(num_sms=1), pipe_count))
        self._kept = shape, pristine, ref
        # resets nothing (no slot is used): loads reset_state from numba's cache now, with the
        # rest of the engine, not tens of milliseconds into a run at its second launch
        reset_state(ref, pristine)
        return state, ref
