"""Functional coverage of the DFLOW ``hands`` variant in co-simulation: which per-hand events one
case exercised, read from the kernel and the core's retirement trace (``CaseResult.rtl``), which
``coverage.Coverage`` bins as its ``hands`` cover point.

Bins, per hand h (named s, t, u, v) of the core's rings, then one for the whole kernel:

- ``h write``: a retired record writes hand h;
- ``h read d=1``, ``h read mid``, ``h read max``: one reads hand h at distance 1, between 1 and the
  largest legal distance, at the largest one ``min(ring_h - 1, dmax)`` (bins that coincide with
  d=1 are left out: ``mid`` needs a largest distance above 2, ``max`` above 1);
- ``h RP wrap``: one writes hand h at a position >= ring_h (the hand's slots have wrapped round);
- ``h rpinc``: one is ``rpinc k -> h``; ``h ssy reserve``: one is ``ssy L, k -> h`` with k > 0;
- ``h join differs``: one reconverges (its mask a strict superset of the warp's previous
  record's) lanes whose paths left hand h's RP at different values (the stack's per-hand max
  decides);
- ``h illegal read``: the golden model faulted on an illegal read of hand h and the core trapped
  alike (``DFLOW_READ``);
- ``sources on different hands``: one reads two sources of one instruction on different hands.

Per-path RPs are tracked per lane: a record on hand h that advances it (a write by 1, ``rpinc``
by k) sets its active lanes' RP_h to the record's RP plus the advance; at a reconvergence the
joined lanes' RP_h values are compared, then all set to their largest, as the stack joins them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dualflow.isa import Kernel, Opcode
from dualflow.isa.opcodes import HAND_NAMES

from .cosim import CaseResult

__all__ = ["DIFFERENT_HANDS", "HAND_EVENTS", "hand_bins", "hands_hit", "largest_distance"]

#: The per-hand events, in report order (``hand_bins`` leaves out the read bins a ring makes moot).
HAND_EVENTS = ("write", "read d=1", "read mid", "read max", "RP wrap", "rpinc", "ssy reserve", "join differs",
               "illegal read")
DIFFERENT_HANDS = "sources on different hands"
_ILLEGAL = re.compile(r"illegal DFLOW read of \|([a-z]?)\d+\|")


def largest_distance(rings: Sequence[int], dmax: int, hand: int) -> int:
    """The largest distance a source of ``hand`` may have: below its ring and at most Dmax."""
    return min(rings[hand] - 1, dmax)


def _distance_bin(d: int, far: int) -> str:
    return "read d=1" if d == 1 else "read max" if d == far else "read mid"


def hand_bins(rings: Sequence[int], dmax: int) -> list[str]:
    """Every bin of a core with ``rings`` and ``dmax``, in report order."""
    out = []
    for h, name in enumerate(HAND_NAMES[:len(rings)]):
        far = largest_distance(rings, dmax, h)
        moot = ({"read mid"} if far <= 2 else set()) | ({"read max"} if far <= 1 else set())
        out += [f"{name} {event}" for event in HAND_EVENTS if event not in moot]
    return out + [DIFFERENT_HANDS]


def _advance(kernel: Kernel, rec) -> int:
    ins = kernel.code[rec.pc]
    if rec.dst is not None:
        return 1
    return ins.imm if ins.op is Opcode.RPINC else 0


def _warp_hits(kernel: Kernel, records: list, lanes: int) -> set[str]:
    """The bins one warp's records (in program order) hit."""
    rings, hit = kernel.rings, set()
    lane_rp = [[0] * lanes for _ in rings]
    previous = None
    for rec in records:
        ins = kernel.code[rec.pc]
        mask = rec.mask
        if previous is not None and mask != previous and (mask & previous) == previous:  # a reconvergence
            joined = [i for i in range(lanes) if mask >> i & 1]
            for h, rps in enumerate(lane_rp):
                values = {rps[i] for i in joined}
                if len(values) > 1:
                    hit.add(f"{HAND_NAMES[h]} join differs")
                for i in joined:
                    rps[i] = max(values)
        previous = mask
        name = HAND_NAMES[rec.hand]
        if rec.dst is not None:
            hit.add(f"{name} write")
            if rec.rp >= rings[rec.hand]:
                hit.add(f"{name} RP wrap")
        if ins.op is Opcode.RPINC:
            hit.add(f"{name} rpinc")
        if ins.op is Opcode.SSY and ins.a:
            hit.add(f"{name} ssy reserve")
        advance = _advance(kernel, rec)
        if advance:
            for i in range(lanes):
                if mask >> i & 1:
                    lane_rp[rec.hand][i] = rec.rp + advance
        sources = ins.hand_sources()
        for h, d in sources:
            hit.add(f"{HAND_NAMES[h]} {_distance_bin(d, largest_distance(rings, kernel.dmax, h))}")
        if len({h for h, _ in sources}) > 1:
            hit.add(DIFFERENT_HANDS)
    return hit


def hands_hit(kernel: Kernel, result: CaseResult) -> set[str]:
    """The bins one co-simulated case of a hands ``kernel`` hit (none for another kernel)."""
    if not kernel.hands or result.rtl is None:
        return set()
    hit = set()
    for records in result.rtl.by_warp().values():
        hit |= _warp_hits(kernel, sorted(records, key=lambda r: r.seq), result.rtl.warp_size)
    fault = result.golden_fault
    if fault is not None and result.fault is not None and result.fault.agree and result.trap \
            and result.trap.startswith("DFLOW_READ"):
        found = _ILLEGAL.search(fault.message)
        if found:
            hit.add(f"{found.group(1) or HAND_NAMES[0]} illegal read")
    return hit
