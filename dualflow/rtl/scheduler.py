"""Warp scheduler: picks one warp per cycle among those ready to issue.

Two policies (``CoreParams.scheduler``):

- ``gto`` (greedy then oldest, GPGPU-Sim's default): keep issuing from the warp that issued last
  while it is ready; otherwise take the oldest ready warp. All warps of the one block start
  together, so "oldest" is the lowest warp index.
- ``lrr`` (loose round robin): the first ready warp after the one that issued last, wrapping.

With ``two_level`` the scheduler has a second input, ``prefer`` (a subset of ``ready``): when any
preferred warp is ready the choice is made among the preferred ones only, else among all ready
ones, by the same policy and the same policy state (two priority levels, GTO/LRR order within
each). The DFLOW issue stage prefers warps whose instruction has its operands ready over warps
whose instruction would wait in a collector unit (docs/rtl.md, "Issue").

The choice is combinational from ``ready`` (and ``prefer``); the policy state moves only when
``issue`` says the granted warp really issued.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from dualflow.machine import SCHEDULERS

from ._checks import reject

__all__ = ["WarpScheduler", "lowest_set", "onehot_index"]


def lowest_set(m: Module, vector, n: int, name: str) -> Signal:
    """One-hot vector of the lowest set bit of ``vector`` (0 when none)."""
    out = Signal(n, name=name)
    m.d.comb += out.eq(vector & (~vector + 1))
    return out


def onehot_index(onehot, n: int):
    """Index of the set bit of a one-hot vector (0 when none), as an OR of bit columns."""
    bits = max((n - 1).bit_length(), 1)
    return Cat(Cat(onehot[i] for i in range(n) if i >> k & 1).any() if n > 1 << k else Const(0, 1)
               for k in range(bits))


class WarpScheduler(wiring.Component):
    """Greedy-then-oldest or loose-round-robin warp selection.

    Parameters
    ----------
    warps: number of warps.
    policy: ``"gto"`` or ``"lrr"``.
    two_level: add the ``prefer`` input (default False).

    Members
    -------
    ready: In(warps), bit w: warp w could issue this cycle.
    prefer: In(warps), ``two_level`` only: bit w: warp w is in the first priority level (only
        meaningful together with its ``ready`` bit).
    issue: In(1), the granted warp issued this cycle (updates the policy state).
    valid: Out(1), some warp is ready.
    grant: Out(warps), one-hot choice.
    warp: Out(range(warps)), index of the choice.
    """

    def __init__(self, *, warps: int, policy: str, two_level: bool = False):
        if not isinstance(warps, int) or warps < 1:
            raise reject(self, f"scheduler warps must be a positive integer, not {warps!r}")
        if policy not in SCHEDULERS:
            raise reject(self, f"scheduler policy must be one of {', '.join(SCHEDULERS)}, not {policy!r}")
        if not isinstance(two_level, bool):
            raise reject(self, f"scheduler two_level must be a bool, not {two_level!r}")
        self.warps, self.policy, self.two_level = warps, policy, two_level
        members = {"ready": In(warps), "issue": In(1), "valid": Out(1), "grant": Out(warps),
                   "warp": Out(range(warps))}
        if two_level:
            members["prefer"] = In(warps)
        super().__init__(members)

    def elaborate(self, platform) -> Module:
        m = Module()
        n = self.warps
        last = Signal(range(n))
        ready = self.ready
        if self.two_level:
            first = Signal(n)  # preferred and ready
            ready = Signal(n, name="candidates")
            m.d.comb += [first.eq(self.prefer & self.ready), ready.eq(Mux(first.any(), first, self.ready))]
        if self.policy == "gto":
            oldest = lowest_set(m, ready, n, "oldest")
            greedy = Signal(n)
            m.d.comb += greedy.eq(Mux(ready.bit_select(last, 1), Const(1, n) << last, 0))
            m.d.comb += self.grant.eq(Mux(greedy.any(), greedy, oldest))
        else:
            after = Signal(n)  # ready warps strictly after the last one
            m.d.comb += after.eq(Cat(ready[i] & (i > last) for i in range(n)))
            first_after = lowest_set(m, after, n, "first_after")
            first_any = lowest_set(m, ready, n, "first_any")
            m.d.comb += self.grant.eq(Mux(after.any(), first_after, first_any))
        m.d.comb += [self.valid.eq(self.ready.any()), self.warp.eq(onehot_index(self.grant, n))]
        with m.If(self.issue & self.valid):
            m.d.sync += last.eq(self.warp)
        return m
