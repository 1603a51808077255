"""State of the compiled memory system's queued DRAM controllers (``memory.dram.scheduler``
``queued-*``): what the reference keeps in ``Pending`` objects, closures, an ``EventQueue``,
``DramQueues`` and the port and slice queues of ``MemorySystem``, as arrays.

numba has no closures in jitted data, so every object of the reference is a record (a row) of a
pool array, named by its row number, and every callback is a record with a kind code and
integer arguments:

- **pending cycles** (``pend``, ``Pending``): per record its state (``FREE``, ``UNRESOLVED``,
  ``RESOLVING`` while its waiters run, ``RESOLVED``), value, the first and last of its waiter
  list, the accumulator and count of a ``later`` it is the result of, a pin (held in a port
  job's list of waits, which reads it after it resolved) and the free-list link. A cycle
  returned by the queued calls is a *handle*: an int >= 0 is a known cycle, ``-1 - pid`` the
  pending cycle ``pid`` (``memory_pending.py``).
- **waiters** (``waiter``): kind (``K_*``, the closures of the reference), the next waiter of the
  same pending cycle (registration order is the reference's call order), five arguments.
- **events** (``events``, ``event_time``, ``EventQueue``): an array heap of (time, posting
  sequence, kind ``E_*``, two arguments), popped in (time, sequence) order as ``heapq`` pops
  the reference's tuples.
- **frames** (``frames``, ``frame_time``): the explicit call stack of what an event runs (numba
  cannot cache recursive functions): a resolution walking its waiters, a DRAM decision loop, a
  slice's input loop (``memory_machine.py``).
- **notes** (``notes``): resolved cycles for the caller (the SM pipeline, or Python), rows of
  (tag, value, four arguments of the ``K_NOTE`` waiter that made it).
- **DRAM requests** (``requests``, ``request_time``; ``DramQueues``' ``_Request``): queued per
  bank (``bank_queue``, doubly linked, oldest first) or waiting upstream per channel
  (``channel_queue``), with each bank's ``free`` time and each channel's count and posted
  decision (``channel_next``, ``inf`` for None).
- **port jobs** (``jobs``; ``_PortJob``): per SM a FIFO (``port_queue``); a job's transactions and
  its pending waits are its rows of ``job_line``, ``job_sectors`` and ``job_waits``.
- **slice jobs** (``slice_jobs``; ``_SliceJob``): per L2 slice a FIFO (``slice_queue``).
- **MSHR files** (``mshr_wait``): per level (0: L1, 1: L2) and file, the misses whose release is
  pending and the waiter (``MshrFile.waiter``: the cycle ``c`` it resumes from, or -1 for None).

Pools grow by doubling (a field then holds a new array: code reads pool fields anew after
anything that may allocate). With the reservation schedulers the state is a few empty rows.
"""

from __future__ import annotations

import numba
from numba.core import types
from numba.experimental import structref

from dualflow.models.timing.memory.pending import IN_FLIGHT

from .borrowed import borrowed_view, keep

_I1 = types.int64[::1]
_I2 = types.int64[:, ::1]
_I3 = types.int64[:, :, ::1]
_F1 = types.float64[::1]
_F2 = types.float64[:, ::1]

__all__ = ["IN_FLIGHT"]

#: ``pend`` columns and states.
P_STATE, P_VALUE, P_HEAD, P_TAIL, P_ACC, P_LEFT, P_PIN, P_NEXT, P_WIDTH = range(9)
FREE, UNRESOLVED, RESOLVING, RESOLVED = range(4)
#: A port or slice job's answer not given yet (``_PortJob.port_free is None``): no handle is this.
NO_HANDLE = -(1 << 62)

#: ``waiter`` columns (arguments ``W_ARG .. W_ARG + 4``) and kinds: the reference's callbacks.
W_KIND, W_NEXT, W_ARG, W_WIDTH = 0, 1, 2, 7
(K_FILLED,  # MemorySystem._fill_pending's ``filled``: (level, row, way, sectors)
 K_KNOWN,  # MshrFile._known: (level, file, entries)
 K_ONE,  # pending.later's ``one``: (result pid,)
 K_REPLY,  # _l2_lookup's then_map of Interconnect.reply: (result pid, slice, flits)
 K_FORWARD,  # ``x.then(other.resolve)``: (other pid,)
 K_RESUME_SLICE,  # _resume_slice(slice, cycle, False): (slice,)
 K_RESUME_PORT,  # _resume_port(sm, c, cycle, False): (sm, c)
 K_COUNT_LOAD,  # _count_load(cycle - job.cycle): (job cycle,)
 K_NOTE,  # a note for the caller: (tag, a, b, c, d)
 ) = range(9)

#: ``events`` columns and kinds.
E_SEQ, E_KIND, E_A, E_B, E_WIDTH = range(5)
E_DECIDE, E_MSHR_WAKE = 0, 1  # DramQueues._decide(channel, time); MshrFile._wake of (level, file)

#: ``frames`` columns (kind, three arguments) and kinds.
FR_KIND, FR_A, FR_B, FR_C, FR_WIDTH = range(5)
F_RESOLVE, F_DECIDE, F_SLICE = range(3)  # (pid, next waiter, value); (channel,) + time; (slice,)

#: ``notes`` columns.
N_TAG, N_VALUE, N_ARG, N_WIDTH = 0, 1, 2, 6

#: ``requests`` columns (``request_time``: arrive, entered).
(R_SEQ, R_BANK, R_ROW, R_LINE, R_BYTES, R_WRITE, R_DONE, R_LOG, R_PREV, R_NEXT, R_WIDTH) = range(11)
T_ARRIVE, T_ENTERED = 0, 1
#: ``channel_queue`` columns (requests queued, the upstream list's first and last).
C_COUNT, C_HEAD, C_TAIL = range(3)

#: ``jobs`` columns, and ``J_KIND``s.
(J_CYCLE, J_N, J_KIND, J_DEGREE, J_START, J_I, J_DELAY, J_READY, J_STALLED, J_PORT_FREE, J_DONE,
 J_WAITS, J_NEXT, J_WIDTH) = range(14)
JOB_LOAD, JOB_STORE, JOB_SHARED = range(3)
#: ``slice_jobs`` columns.
S_ARRIVE, S_INDEX, S_SECTORS, S_STALLED, S_RESULT, S_NEXT, S_WIDTH = range(7)
#: FIFO columns of ``port_queue`` and ``slice_queue``; of ``mshr_wait``.
Q_HEAD, Q_TAIL, Q_LEN = range(3)
M_PENDING, M_WAITER = range(2)
#: ``mshr_wait`` levels.
LEVEL_L1, LEVEL_L2 = 0, 1


@structref.register
class _QueueType(types.StructRef):
    pass


class QueueState(structref.StructRefProxy):
    """The queued controllers' state (see ``QUEUE_FIELDS`` and the module docstring)."""


QUEUE_FIELDS = (
    ("pend", _I2), ("pend_free", types.int64), ("pend_live", types.int64),
    ("waiter", _I2), ("waiter_free", types.int64), ("waiter_live", types.int64),
    ("events", _I2), ("event_time", _F1), ("event_n", types.int64), ("event_seq", types.int64),
    ("frames", _I2), ("frame_time", _F1), ("frame_n", types.int64),
    ("notes", _I2), ("notes_n", types.int64),
    ("requests", _I2), ("request_time", _F2), ("request_free", types.int64), ("request_seq", types.int64),
    ("bank_queue", _I2), ("bank_free", _F1), ("channel_queue", _I2), ("channel_next", _F1),
    ("entries", types.int64), ("frfcfs", types.boolean),
    ("jobs", _I2), ("job_line", _I2), ("job_sectors", _I2), ("job_waits", _I2), ("job_free", types.int64),
    ("port_queue", _I2),
    ("slice_jobs", _I2), ("slice_job_free", types.int64), ("slice_queue", _I2),
    ("mshr_wait", _I3),
)
queue_type = _QueueType(list(QUEUE_FIELDS))
structref.define_boxing(_QueueType, QueueState)


def _getter(name: str):
    def get(obj):
        return getattr(obj, name)
    return numba.njit(cache=True)(get)


for _name, _ in QUEUE_FIELDS:
    setattr(QueueState, _name, property(_getter(_name)))


@numba.njit(cache=True)
def _new_queue(pend, pend_free, pend_live, waiter, waiter_free, waiter_live, events, event_time, event_n, event_seq,
               frames, frame_time, frame_n, notes, notes_n, requests, request_time, request_free, request_seq,
               bank_queue, bank_free, channel_queue, channel_next, entries, frfcfs, jobs, job_line, job_sectors,
               job_waits, job_free, port_queue, slice_jobs, slice_job_free, slice_queue, mshr_wait):
    """A ``QueueState`` of the given members (in ``QUEUE_FIELDS`` order)."""
    q = structref.new(queue_type)
    b = borrowed_view
    q.pend, q.pend_free, q.pend_live = b(pend), pend_free, pend_live
    q.waiter, q.waiter_free, q.waiter_live = b(waiter), waiter_free, waiter_live
    q.events, q.event_time, q.event_n, q.event_seq = b(events), b(event_time), event_n, event_seq
    q.frames, q.frame_time, q.frame_n = b(frames), b(frame_time), frame_n
    q.notes, q.notes_n = b(notes), notes_n
    q.requests, q.request_time, q.request_free, q.request_seq = b(requests), b(request_time), request_free, request_seq
    q.bank_queue, q.bank_free, q.channel_queue, q.channel_next = (b(bank_queue), b(bank_free), b(channel_queue),
                                                                  b(channel_next))
    q.entries, q.frfcfs = entries, frfcfs
    q.jobs, q.job_line, q.job_sectors, q.job_waits = b(jobs), b(job_line), b(job_sectors), b(job_waits)
    q.job_free, q.port_queue = job_free, b(port_queue)
    q.slice_jobs, q.slice_job_free, q.slice_queue = b(slice_jobs), slice_job_free, b(slice_queue)
    q.mshr_wait = b(mshr_wait)
    return q


def new_queue(*members) -> QueueState:
    """A ``QueueState`` of the given members (in ``QUEUE_FIELDS`` order), keeping their arrays."""
    return keep(_new_queue(*members), members)
