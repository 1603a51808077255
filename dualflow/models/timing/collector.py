"""Operand collector: collector units and the arbitrator over the banked register file.

An issued instruction takes a free collector unit, which holds one entry per source operand:
its register-file bank, the cycle from which its value can be read, and whether it has been
read. Each cycle the arbitrator grants every bank at most ``ports`` accesses; writebacks take
their bank first, then reads are granted to the oldest collector units. A unit whose operands are all
read may dispatch to an execution unit from the next cycle on (BASE: in program order per warp;
D-FLOW: any ready unit, oldest first, subject to the memory-ordering rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .program import StaticInstruction


@dataclass(slots=True)
class Operand:
    bank: int
    key: int  # BASE: register; D-FLOW: ring position (slot = position mod ring)
    read: bool = False


@dataclass(slots=True, eq=False)
class CollectorUnit:
    """One issued instruction waiting for operands and an execution unit."""

    seq: int  # SM-wide issue order: lower is older
    warp: object  # the Warp it belongs to
    ins: StaticInstruction
    operands: list[Operand]
    dest: int  # BASE: register, D-FLOW: slot, -1: none
    unread: int  # operands not yet read
    ready_at: int = 0  # first cycle it may dispatch (after its last operand read)
    addresses: np.ndarray | None = field(default=None, repr=False)  # memory: per-lane byte addresses
    mask: np.ndarray | None = field(default=None, repr=False)  # active lanes at issue
    waiting: bool = False  # D-FLOW: issued before an operand was written back


class OperandCollector:
    """The collector units of one SM and their register-file bank arbitration (how many units a
    warp may take is the SM's rule: its pool's share, ``Sm.pool_capacity``)."""

    def __init__(self, banks: int, ports: int = 1):
        self.banks = banks
        self.ports = ports
        self.units: list[CollectorUnit] = []  # occupied, oldest first (issue order)
        self.reads = [0] * banks
        self.writes = [0] * banks
        self.conflicts = 0  # read requests that lost their bank to another access that cycle
        self._bank_cycle = [-1] * banks  # cycle in which each bank was last granted
        self._bank_uses = [0] * banks  # ... and how many accesses it granted in that cycle
        self.on_wait_end = lambda cu: None  # the SM counts collector units whose operands were in flight

    def add(self, cu: CollectorUnit) -> None:
        self.units.append(cu)  # issue order is age order, so the list stays sorted

    def remove(self, cu: CollectorUnit) -> None:
        self.units.remove(cu)

    def claim_write(self, bank: int, cycle: int) -> bool:
        """Take a port of ``bank`` for a writeback this cycle; False if its ports are taken."""
        if not self._claim(bank, cycle):
            return False
        self.writes[bank] += 1
        return True

    def _claim(self, bank: int, cycle: int) -> bool:
        if self._bank_cycle[bank] != cycle:
            self._bank_cycle[bank], self._bank_uses[bank] = cycle, 0
        if self._bank_uses[bank] == self.ports:
            return False
        self._bank_uses[bank] += 1
        return True

    def read_operands(self, cycle: int, readable) -> bool:
        """Grant operand reads for this cycle; ``readable(cu, operand)`` says whether the value
        exists yet. Returns whether any read was granted."""
        granted = False
        for cu in self.units:
            if not cu.unread:
                continue
            for op in cu.operands:
                if op.read or not readable(cu, op, cycle):
                    continue
                if not self._claim(op.bank, cycle):
                    self.conflicts += 1
                    continue
                self.reads[op.bank] += 1
                op.read = True
                cu.unread -= 1
                granted = True
                cu.warp.operand_read(op)
                if not cu.unread:
                    cu.ready_at = cycle + 1
                    if cu.waiting:
                        cu.waiting = False
                        cu.warp.waiting_cus -= 1
                        self.on_wait_end(cu)
        return granted
