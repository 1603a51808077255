"""The retirement trace: one structured record per retired warp instruction.

This is the contract between the golden model and the RTL: the RTL bench builds the same
records from the core's trace port and compares them per warp, in program order. Warps
interleave differently in the two, so order is only meaningful within one (block, warp).

File format (JSON lines): the first line is the header, a JSON object naming the format,
version, the record fields in order and the configuration; every further line is one record
as a JSON array in that field order. Per-lane lists always have ``warp_size`` entries; lanes
outside the active mask hold 0 and must be ignored by a comparator.

A kernel of the DFLOW ``hands`` variant (several rings, one RP each) has records with a field
``hand`` after the others (``HandTraceRecord``, ``HAND_FIELDS``): their ``rp`` and ``dst`` are
the RP and the slot of that hand. Records and trace files of every other kernel have no such field
(they are as before).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from dualflow.common.atomic_write import atomic_write
from dualflow.common.errors import DualflowError

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
    rp: DFLOW: the warp's register pointer when the instruction issued (``hands``: RP of ``hand``); REG: None.
    mask: active mask, bit i = lane i.
    dst: REG: destination register; DFLOW: ring slot written (rp mod ring; ``hands``: the slot of
        ``hand``'s ring); None if nothing is written.
    values: per-lane values written (uint32 bit patterns), or None.
    addrs: per-lane byte addresses of a load or store, or None.
    data: per-lane store data, or None.
    hand: None here (not a field); ``HandTraceRecord``'s field.
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

    hand = None  # not a field: the records of a kernel of the hands variant are HandTraceRecords


@dataclass(frozen=True)
class HandTraceRecord(TraceRecord):
    """A retired warp instruction of a kernel of the DFLOW ``hands`` variant: a ``TraceRecord``
    whose ``rp`` and ``dst`` are those of hand ``hand``.

    Attributes
    ----------
    hand: the hand the instruction writes (a producer) or advances (``rpinc``, a reserving
        ``ssy``): its written-hand selector, 0 (hand s) for every other instruction.
    """

    hand: int = 0


FIELDS = tuple(f.name for f in fields(TraceRecord))
#: The fields of a ``HandTraceRecord`` (``FIELDS`` and ``hand``): a trace of a hands kernel (``Trace.fields``).
HAND_FIELDS = tuple(f.name for f in fields(HandTraceRecord))


class TraceFileError(DualflowError):
    """A trace file that cannot be read: missing, not UTF-8, or damaged (names the file and line)."""


@dataclass
class Trace:
    """Records of one launch with the header that names their context."""

    kernel: str
    form: str
    warp_size: int
    config: dict = field(default_factory=dict)
    records: list[TraceRecord] = field(default_factory=list)

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of its records in a file: ``HAND_FIELDS`` when they name hands."""
        return HAND_FIELDS if any(isinstance(rec, HandTraceRecord) for rec in self.records) else FIELDS

    def header(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "fields": list(self.fields), "kernel": self.kernel,
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
        names = self.fields
        lines = (json.dumps([getattr(rec, f) for f in names], separators=(",", ":")) + "\n" for rec in self.records)
        atomic_write(path, itertools.chain([json.dumps(self.header()) + "\n"], lines))

    @classmethod
    def read(cls, path: str | Path) -> Trace:
        """Read a trace file; a file that cannot be read or is damaged is a ``TraceFileError``
        naming the file and line."""
        try:
            with open(path, encoding="utf-8") as src:
                return cls._read(src, str(path))
        except OSError as exc:
            raise TraceFileError(f"cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise TraceFileError(f"{path}: not UTF-8 text ({exc.reason})") from None

    @classmethod
    def _read(cls, src, path: str) -> Trace:
        def bad(lineno: int, what: str) -> TraceFileError:
            return TraceFileError(f"{path}:{lineno}: {what}")

        def parse(lineno: int, line: str):
            try:
                return json.loads(line)
            except (ValueError, RecursionError):
                raise bad(lineno, "not a JSON line") from None

        header = parse(1, src.readline())
        if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION:
            raise bad(1, f"not a {FORMAT} v{VERSION} file")
        if header.get("fields") not in (list(FIELDS), list(HAND_FIELDS)):
            raise bad(1, f"record fields {header.get('fields')!r:.80} are not {list(FIELDS)}")
        names = tuple(header["fields"])
        kernel, form, warp_size, config = (header.get(k) for k in ("kernel", "form", "warp_size", "config"))
        if not (isinstance(kernel, str) and isinstance(form, str) and type(warp_size) is int
                and isinstance(config, dict)):
            raise bad(1, "header needs a kernel name, a form, an integer warp_size and a config object")
        records = []
        for lineno, line in enumerate(src, 2):
            row = parse(lineno, line)
            if not isinstance(row, list) or len(row) != len(names):
                raise bad(lineno, f"a record is a list of the {len(names)} fields {', '.join(names)}")
            rec = dict(zip(names, row))
            ints = [rec[k] for k in ("block", "warp", "seq", "pc", "mask")] + [rec[k] for k in ("rp", "dst", "hand")
                                                                               if rec.get(k) is not None]
            lanes = [rec[k] for k in ("values", "addrs", "data") if rec[k] is not None]
            if (any(type(v) is not int for v in ints) or not isinstance(rec["op"], str)
                    or any(not isinstance(v, list) or any(type(x) is not int for x in v) for v in lanes)):
                raise bad(lineno, "record fields of the wrong type")
            for key in ("values", "addrs", "data"):
                if rec[key] is not None:
                    rec[key] = tuple(rec[key])
            records.append(HandTraceRecord(**rec) if "hand" in rec else TraceRecord(**rec))
        return cls(kernel, form, warp_size, config, records)
