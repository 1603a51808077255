"""Borrowed state (dualflow/models/timing/compiled/borrowed.py): structrefs built from borrowed views keep
their owners alive, njit code reads and writes them through ``borrow``, and a field replaced in
njit code (a heap that grows) owns its new array while Python still reads the right values.
Also: the engine's numba cache goes to the user's cache folder whatever was imported first."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
from numba import njit

from dualflow.models.timing.compiled.borrowed import borrow
from dualflow.models.timing.compiled.core import (
    SV_NCOMP,
    Streams,
    completion_pop,
    completion_push,
    log_issue,
    streams_ref,
)
from dualflow.models.timing.compiled.layout import Settings, make_sm_state, settings_ref, sm_state_ref


@njit
def _push_pop(state_ref, sm, done):
    """Push completions due at ``done`` (in that order) on SM ``sm``, then pop them all: the
    cycles in pop order. Through ``borrow``, as the engine reads the state."""
    state = borrow(state_ref)
    for k in range(done.shape[0]):
        completion_push(state, sm, done[k], k, 0, 0, 0, 0)
    out = np.empty(done.shape[0], np.int64)
    for k in range(done.shape[0]):
        out[k] = completion_pop(state, sm)[0]
    return out


@njit
def _log(state_ref, n):
    state = borrow(state_ref)
    for k in range(n):
        log_issue(state, k, 1, 2, 3)


@njit
def _sum_threads(streams_ref_):
    streams = borrow(streams_ref_)
    total = 0
    for k in range(streams.threads.shape[0]):
        total += streams.threads[k]
    return total


@njit
def _settings_sum(settings_ref_):
    s = borrow(settings_ref_)
    return s.num_sms + s.warp_size + s.ring


def _settings() -> Settings:
    return Settings(**{name: 1 for name in Settings._fields})._replace(num_sms=2, max_warps=4, ibuffer_entries=2,
                                                                        collector_units=2, banks=2, max_ctas=2,
                                                                        record_issue=1, warp_size=32, ring=7)


def test_heap_grows_through_borrow_and_keeps_its_order():
    state = make_sm_state(_settings(), 2, heap_capacity=2)
    ref = sm_state_ref(state)
    done = np.array([9, 3, 7, 1, 8, 2, 6, 5, 4, 0], np.int64)
    assert _push_pop(ref, 1, done).tolist() == sorted(done.tolist())
    assert int(state.sv[1, SV_NCOMP]) == 0
    assert _push_pop(ref, 0, done[:3]).tolist() == [3, 7, 9]  # the grown heap serves every SM


def test_issue_log_grows_and_reads_from_python():
    state = make_sm_state(_settings(), 2)
    ref = sm_state_ref(state)
    _log(ref, 3000)  # the log starts at 1024 rows: grown twice in njit code
    log = state.heaps.log
    assert log.shape[0] >= 3000
    assert log[:3000, 0].tolist() == list(range(3000))
    assert (log[:3000, 1:] == [1, 2, 3]).all()


def test_a_structref_of_borrowed_views_keeps_their_owners():
    n = 1000
    fields = {name: np.zeros(1, np.int64) for name in Streams._fields}
    fields["threads"] = np.arange(n, dtype=np.int64)
    ref = streams_ref(Streams(**fields))  # the named tuple and its arrays: referenced by ``ref`` alone
    del fields
    gc.collect()
    np.ones(4 * n, np.int64)  # memory freed too early would likely be reused here
    assert _sum_threads(ref) == n * (n - 1) // 2


def test_settings_are_read_by_name():
    assert _settings_sum(settings_ref(_settings())) == 2 + 32 + 7


def test_numba_imported_first_still_caches_outside_the_sources(tmp_path):
    """numba reads NUMBA_CACHE_DIR when it is imported; the compiled package sets it, and makes
    numba read it again when numba came first (as in this module), so no cache lands next to
    the sources."""
    code = ("import numba, numba.core.config as c; import dualflow.models.timing.compiled; "
            "print(c.CACHE_DIR)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith(str(tmp_path / "dualflow" / "numba"))
