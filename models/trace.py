"""The retirement trace: one structured record per retired warp instruction.

This is the contract between the golden model and the RTL: the RTL bench builds the same
records from the core's trace port and compares them per warp, in program order. Warps
interleave differently in the two, so order is only meaningful within one (block, warp).

File format (JSON lines): the first line is the header, a JSON object naming the format,
version, the record fields in order and the configuration; every further line is one record
as a JSON array in that field order. Per-lane lists always have ``warp_size`` entries; lanes
outside the active mask hold 0 and must be ignored by a comparator.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from dualflow.atomic_write import atomic_write

FORMAT = "dualflow-trace"
VERSION = 1


@dataclass(frozen=True)
class TraceRecord:
    """One retired warp instruction.

    Attributes
    ----------
    block: linear block index (x fastest).
    warp: warp index within the block.
    seq: retirement index within this warp (0, 1, 2, ...).
    pc: instruction index.
    op: opcode mnemonic (with its .mod suffix, as disassembled).
    rp: DFLOW: the warp's register pointer when the instruction issued; REG: None.
    mask: active mask, bit i = lane i.
    dst: REG: destination register; DFLOW: ring slot written (rp mod ring); None if nothing is written.
    values: per-lane values written (uint32 bit patterns), or None.
    addrs: per-lane byte addresses of a load or store, or None.
    data: per-lane store data, or None.
    """

    block: int
    warp: int
    seq: int
    pc: int
    op: str
    rp: int | None
    mask: int
    dst: int | None
    values: tuple[int, ...] | None
    addrs: tuple[int, ...] | None
    data: tuple[int, ...] | None


FIELDS = tuple(f.name for f in fields(TraceRecord))


@dataclass
class Trace:
    """Records of one launch with the header that names their context."""

    kernel: str
    form: str
    warp_size: int
    config: dict = field(default_factory=dict)
    records: list[TraceRecord] = field(default_factory=list)

    def header(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "fields": list(FIELDS), "kernel": self.kernel,
                "form": self.form, "warp_size": self.warp_size, "config": self.config}

    def by_warp(self) -> dict[tuple[int, int], list[TraceRecord]]:
        """Records grouped per (block, warp), each list in retirement order."""
        out: dict[tuple[int, int], list[TraceRecord]] = {}
        for rec in self.records:
            out.setdefault((rec.block, rec.warp), []).append(rec)
        for recs in out.values():
            recs.sort(key=lambda r: r.seq)
        return out

    def write(self, path: str | Path) -> None:
        """Write as JSON lines, atomically."""
        lines = (json.dumps([getattr(rec, f) for f in FIELDS], separators=(",", ":")) + "\n" for rec in self.records)
        atomic_write(path, itertools.chain([json.dumps(self.header()) + "\n"], lines))

    @classmethod
    def read(cls, path: str | Path) -> Trace:
        with open(path) as src:
            header = json.loads(src.readline())
            if header.get("format") != FORMAT or header.get("version") != VERSION:
                raise ValueError(f"{path}: not a {FORMAT} v{VERSION} file")
            names = header["fields"]
            records = []
            for line in src:
                row = dict(zip(names, json.loads(line)))
                for key in ("values", "addrs", "data"):
                    if row[key] is not None:
                        row[key] = tuple(row[key])
                records.append(TraceRecord(**row))
        return cls(header["kernel"], header["form"], header["warp_size"], header["config"], records)
