"""How an SM's collector units are shared, and the D-FLOW out-of-order window's policies, by
name (the policies themselves live in the timing model; docs/timing-model.md, "The D-FLOW
window", compares them)."""

from __future__ import annotations

from .fields import Choice


class CollectorPartition(Choice):
    """Which schedulers' warps a collector unit, an execution pipeline and a register bank serve."""

    SHARED = "shared"  # every scheduler's: one pool per SM
    # each scheduler its own equal share (GPGPU-Sim's -gpgpu_sub_core_model 1, SM86's sub-cores)
    SCHEDULER = "scheduler"


class BankMap(Choice):
    """Which register-file banks a warp's entries spread over (``machine.banks.register_bank``)."""

    # all of them: entry e of warp slot w in bank (e + w) mod banks (GPGPU-Sim's register_bank)
    WARP = "warp"
    # its scheduler's banks / schedulers of them, (e + w) mod that: warps of different schedulers
    # never meet in a bank (the banks of GPGPU-Sim's sub-cores, without their other partitions);
    # gcd(banks, schedulers) groups when the banks do not divide among the schedulers
    SCHEDULER = "scheduler"


class DflowWindow(Choice):
    """D-FLOW: which collector units may hold an instruction whose operands are still in flight."""

    # at most dflow_waiting_per_warp per warp and dflow_waiting_per_sm per pool of collector units
    POOL_LIMITED = "pool-limited"
    # at most dflow_waiting_per_warp per warp (a per-warp window of k entries, as TURBULENCE-style
    # designs give each warp), however many the other warps hold
    PER_WARP = "per-warp"
    # at most dflow_waiting_per_warp per warp, and only while more units of the pool stay free
    # than dflow_reserve: a waiting instruction does not take the units ready instructions of the
    # next cycles need
    RESERVE = "reserve"


class SendAhead(Choice):
    """D-FLOW: for which next instruction a warp may send one whose operands are in flight ahead
    into a collector unit (the window's limits permitting). Either way the next instruction must
    neither read the sent one's result nor wait itself."""

    ANY = "any"  # any instruction
    # a load: what the window is for is starting memory accesses early; letting an ALU instruction
    # go a few cycles earlier gains little and holds a unit for the sent one's whole wait
    LOADS = "loads"


class IssueOrder(Choice):
    """D-FLOW: the order in which a scheduler tries its warps' next instructions."""

    # first the warps whose operands are ready, in the scheduler's order; only if none can issue,
    # one whose operands are not, into a collector unit to wait there
    READY_FIRST = "ready-first"
    # the scheduler's order alone: the first warp that can issue does, ready operands or not
    OLDEST_FIRST = "oldest-first"
