"""Compare a golden-model retirement trace with an RTL one.

Warps interleave differently in the model and the RTL, so records are compared per
(block, warp) in program order (``seq``) only. Lanes outside the model's active mask are
ignored in every per-lane field. A record that differs produces one message naming every
differing field, model side first::

    block 0 warp 1 #7 pc 12 `iadd r3, r1, r2`: [MODEL] values[2]=0x5 mask=0xff [RTL] values[2]=0x7 mask=0x7f

At most ``max_print`` messages are kept for printing; the number of matching records is always
reported, and ``write_report`` writes the whole result as JSON (atomically).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dualflow.common.atomic_write import atomic_write
from dualflow.isa import Kernel, format_instruction
from dualflow.models.trace import Trace, TraceRecord

#: Fields compared, in message order. ``block``, ``warp`` and ``seq`` identify a record.
COMPARED = ("pc", "op", "rp", "mask", "dst", "values", "addrs", "data", "hand")
LANE_FIELDS = ("values", "addrs", "data")


@dataclass
class Mismatch:
    """One record pair that differs (or a record only one side has)."""

    block: int
    warp: int
    seq: int
    pc: int
    fields: list[str]
    message: str


@dataclass
class CompareResult:
    """Outcome of one comparison.

    Attributes
    ----------
    kernel: kernel name. compared: record pairs compared. matched: pairs equal in every field.
    model_records, rtl_records: records on each side. warps: (block, warp) groups seen.
    mismatches: every differing pair, in (block, warp, seq) order. max_print: printing cap.
    stopped: both runs stopped at a fault; only records both retired were compared.
    """

    kernel: str
    compared: int = 0
    matched: int = 0
    model_records: int = 0
    rtl_records: int = 0
    warps: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    max_print: int = 10
    stopped: bool = False

    @property
    def ok(self) -> bool:
        return not self.mismatches and (self.stopped or self.model_records == self.rtl_records)

    def summary(self) -> str:
        """Human-readable result: the capped mismatch messages and the counts (always)."""
        lines = [m.message for m in self.mismatches[:self.max_print]]
        hidden = len(self.mismatches) - len(lines)
        if hidden > 0:
            lines.append(f"... and {hidden} more mismatching records (see the JSON report)")
        verdict = "PASS" if self.ok else "FAIL"
        lines.append(f"{verdict} {self.kernel}: {self.matched} of {self.model_records} model records matched "
                     f"({self.rtl_records} RTL records, {self.warps} warps, {len(self.mismatches)} mismatches"
                     f"{'; both stopped at a fault: records both retired compared' if self.stopped else ''})")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "ok": self.ok, "compared": self.compared, "matched": self.matched,
                "model_records": self.model_records, "rtl_records": self.rtl_records, "warps": self.warps,
                "stopped": self.stopped, "mismatch_count": len(self.mismatches),
                "mismatches": [asdict(m) for m in self.mismatches]}


def _hexes(values: tuple[int, ...] | None, lanes: list[int]) -> str:
    if values is None:
        return "None"
    return "[" + ",".join(f"{lane}:{values[lane]:#x}" if lane < len(values) else f"{lane}:-" for lane in lanes) + "]"


def _field_text(rec: TraceRecord, name: str, lanes: list[int] | None) -> str:
    value = getattr(rec, name)
    if name in LANE_FIELDS:
        return f"{name}={_hexes(value, lanes or [])}"
    if name == "mask":
        return f"mask={value:#x}"
    return f"{name}={value}"


def _diff(model: TraceRecord, rtl: TraceRecord, rp_mod: int | None) -> tuple[list[str], dict[str, list[int]]]:
    """Differing field names, and for per-lane fields the active lanes that differ."""
    names: list[str] = []
    lanes_by_field: dict[str, list[int]] = {}
    active = [lane for lane in range(max(model.mask.bit_length(), 1)) if model.mask >> lane & 1]
    for name in COMPARED:
        a, b = getattr(model, name), getattr(rtl, name)
        if name in LANE_FIELDS:
            if (a is None) != (b is None):
                names.append(name)
                lanes_by_field[name] = active
            elif a is not None:
                bad = [lane for lane in active if lane >= len(a) or lane >= len(b) or a[lane] != b[lane]]
                if bad:
                    names.append(name)
                    lanes_by_field[name] = bad
        elif name == "rp" and rp_mod and a is not None and b is not None:
            if (a - b) % rp_mod:
                names.append(name)
        elif a != b:
            names.append(name)
    return names, lanes_by_field


def compare_traces(model: Trace, rtl: Trace, *, kernel: Kernel | None = None, max_print: int = 10,
                   rp_bits: int | None = None, stopped: bool = False) -> CompareResult:
    """Compare ``rtl`` against ``model`` per (block, warp) in program order.

    Parameters
    ----------
    model, rtl: the two traces of one launch.
    kernel: the kernel, to disassemble the instruction at each mismatching pc.
    max_print: mismatch messages ``summary`` prints.
    rp_bits: the RTL keeps RP in this many bits; RPs are compared modulo 2**rp_bits.
    stopped: both runs stopped at a fault. Each side got to a different point (warps interleave
        differently, and an out-of-order core retires younger work past a faulting load), so
        only the records both retired are compared: one side's extra records are not mismatches.
    """
    result = CompareResult(kernel=model.kernel, max_print=max_print, model_records=len(model.records),
                           rtl_records=len(rtl.records), stopped=stopped)
    form = kernel.form if kernel is not None else None
    rp_mod = 1 << rp_bits if rp_bits else None

    def where(rec: TraceRecord) -> str:
        text = rec.op
        if kernel is not None and 0 <= rec.pc < len(kernel.code):
            text = format_instruction(kernel.code[rec.pc], form, kernel.labels, kernel.params)
        return f"block {rec.block} warp {rec.warp} #{rec.seq} pc {rec.pc} `{text}`"

    ours, theirs = model.by_warp(), rtl.by_warp()
    keys = sorted(set(ours) | set(theirs))
    result.warps = len(keys)
    for key in keys:
        a_recs, b_recs = ours.get(key, []), theirs.get(key, [])
        if stopped:  # pair by sequence number: either side may have gaps (stores still in flight)
            by_seq = {rec.seq: rec for rec in b_recs}
            pairs = [(a, by_seq[a.seq]) for a in a_recs if a.seq in by_seq]
        else:
            pairs = list(zip(a_recs, b_recs))
        for a, b in pairs:
            result.compared += 1
            names, lanes = _diff(a, b, rp_mod)
            if not names:
                result.matched += 1
                continue
            left = " ".join(_field_text(a, n, lanes.get(n)) for n in names)
            right = " ".join(_field_text(b, n, lanes.get(n)) for n in names)
            result.mismatches.append(Mismatch(a.block, a.warp, a.seq, a.pc, names,
                                              f"{where(a)}: [MODEL] {left} [RTL] {right}"))
        n = min(len(a_recs), len(b_recs))
        if stopped:
            continue
        for rec in a_recs[n:]:
            result.mismatches.append(Mismatch(rec.block, rec.warp, rec.seq, rec.pc, ["missing"],
                                              f"{where(rec)}: [MODEL] retired [RTL] never retired"))
        for rec in b_recs[n:]:
            result.mismatches.append(Mismatch(rec.block, rec.warp, rec.seq, rec.pc, ["extra"],
                                              f"{where(rec)}: [MODEL] no such record [RTL] retired"))
    result.mismatches.sort(key=lambda m: (m.block, m.warp, m.seq))
    return result


def write_report(result: CompareResult | None, path: str | Path, extra: dict | None = None) -> None:
    """Write the comparison (and any ``extra`` context, e.g. parameters and seed) as JSON, atomically;
    ``None``: no trace was compared (a core without the trace port), ``extra`` alone."""
    body = {} if result is None else result.to_json()
    if extra:
        body = {**extra, **body}
    atomic_write(path, json.dumps(body, indent=1) + "\n")
