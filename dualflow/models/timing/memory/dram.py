"""DRAM channels with banks, open rows and device timing, timed by reservation.

Address mapping (``DramConfig``): line ``L`` is in channel ``L mod channels``; with
``l = L div channels``, in bank ``l mod banks`` and row ``l div (banks x lines per row)``.

A request (an L2 read miss or a dirty L2 eviction) made at core cycle ``t`` reaches its channel's
controller at ``a = t + latency`` (GPGPU-Sim's ``-dram_latency``, core cycles). Its bank then
issues the column command (read or write) at ``cas``:

- **row hit** (the bank's open row): ``cas = max(a, the bank's previous column command + tCCD)``;
- **row miss** (another row open, a *conflict*, or none yet): precharge at
  ``p = max(a, tRAS after the activate, tRTP after the last read, tWR after the last write's
  data)``, activate at ``max(p + tRP, previous activate + tRC)`` (or ``max(a, ...)`` with no row
  open) in the first gap of the channel's activate timeline (activates at least tRRD apart),
  ``cas`` = activate + tRCD.

The data takes the first gap of ``bytes / bytes_per_cycle`` DRAM cycles on the channel's data
bus from ``cas + tCL`` (reads) or ``cas + tWL`` (writes); a busy bus delays the column command
with it. A read's data is back when its burst ends (rounded up to a core cycle). Rows stay open
(open-page policy). All times are core cycles, kept fractional so that the configured
bandwidth and timing are exact.

Scheduling. The memory system answers each request when it is made, with its completion, so a
bank serves requests in the order they are made (``fcfs``): a request never delays one already
answered. ``frfcfs`` adds what first-ready first-come-first-served can do without delaying an
answered request: a request to the row a bank had open before its latest activate is served
as a row hit in the time before that row's committed precharge, if its column command (at or
after its arrival and tCCD after that row's last column command), its burst and its recovery
(tRTP, or the write's data + tWR) all fit before the precharge. A real FR-FCFS queue would also
move a row hit ahead of an older miss and delay the miss's precharge; that cannot be modelled
here, where the miss's completion was returned already. docs/memory-system.md, "DRAM", has the
details and what is not modelled (bank groups' tCCDL across banks, tFAW, refresh, read/write
turnaround, the 64-entry queue).
"""

from __future__ import annotations

import math

from dualflow.machine.memory import DramConfig, dram_place

from .timeline import Timeline

#: A bank's times before its first activate (and a previous row's close when there is none).
NEVER = float("-inf")


def row_hit_latency(latency: int, tcl: float, nbytes: int, cycles_per_byte: float) -> int:
    """Core cycles from an L2 miss to the last of ``nbytes`` back, for an unloaded row hit
    (``tcl``, ``cycles_per_byte`` in core cycles)."""
    return math.ceil(latency + tcl + nbytes * cycles_per_byte - 1e-9)


class Dram:
    """All channels of device memory: banks, data buses, activate timelines, counters.

    Parameters
    ----------
    config : DramConfig
    core_clock_mhz : float
        The clock every returned cycle is counted in.
    line_bytes : int
        The L2 line size (the unit of the address mapping).

    Members (per bank ``channel * banks + bank``)
    -------
    open_row, prev_row : list[int]
        The open row (-1: none yet) and the one open before it (-1: none).
    col_ready : list[float]
        Earliest next column command to the open row (tCCD after the last).
    activated, pre_ready : list[float]
        The open row's activate; earliest precharge of it (tRAS, tRTP, tWR).
    prev_col_ready, prev_close : list[float]
        The previous row's earliest next column command and its committed precharge
        (``frfcfs`` serves hits to it before that).
    log : list[tuple[int, int, int, int, int, int]] or None
        If not None, every request as it was made: (cycle, line index, bytes, 1 for a write,
        ``floor``, the cycle a read's data is back or -1 for a write).
    """

    __slots__ = ("channels", "banks", "lines_per_row", "row_interleaved", "latency", "cycles_per_byte", "frfcfs",
                 "tcl", "twl", "trcd", "trp", "tras", "trc", "trrd", "trtp", "twr", "tccd", "line_latency", "buses",
                 "activates", "open_row", "prev_row", "col_ready", "activated", "pre_ready", "prev_col_ready",
                 "prev_close", "reads", "writes", "read_bytes", "write_bytes", "row_hits", "row_misses",
                 "row_conflicts", "reordered_hits", "busy_cycles", "wait_cycles", "log")

    def __init__(self, config: DramConfig, core_clock_mhz: float, line_bytes: int = 128):
        ratio = core_clock_mhz / config.clock_mhz  # core cycles per DRAM cycle
        self.channels, self.banks = config.channels, config.banks
        self.lines_per_row = config.row_bytes // line_bytes
        self.row_interleaved = config.row_interleaved
        self.latency = config.latency  # core cycles, as GPGPU-Sim's -dram_latency
        self.cycles_per_byte = ratio / config.bytes_per_cycle
        self.frfcfs = config.scheduler == "frfcfs"
        self.tcl, self.twl, self.trcd, self.trp = (config.tcl * ratio, config.twl * ratio, config.trcd * ratio,
                                                   config.trp * ratio)
        self.tras, self.trc, self.trrd, self.trtp = (config.tras * ratio, config.trc * ratio, config.trrd * ratio,
                                                     config.trtp * ratio)
        self.twr, self.tccd = config.twr * ratio, config.tccd * ratio
        #: unloaded row-hit latency of a whole line, core cycles (``MemorySystem.dram_latency``)
        self.line_latency = row_hit_latency(self.latency, self.tcl, line_bytes, self.cycles_per_byte)
        self.buses = [Timeline() for _ in range(config.channels)]
        self.activates = [Timeline() for _ in range(config.channels)]
        n = config.channels * config.banks
        self.open_row, self.prev_row = [-1] * n, [-1] * n
        self.col_ready, self.activated, self.pre_ready = [NEVER] * n, [NEVER] * n, [NEVER] * n
        self.prev_col_ready, self.prev_close = [NEVER] * n, [NEVER] * n
        self.reads = self.writes = self.read_bytes = self.write_bytes = 0
        self.row_hits = self.row_misses = self.row_conflicts = self.reordered_hits = 0
        self.busy_cycles = self.wait_cycles = 0.0
        self.log: list[tuple[int, int, int, int, int, int]] | None = None

    def read(self, cycle: int, line_index: int, nbytes: int, floor: int) -> int:
        """Read ``nbytes`` of line ``line_index``, the L2 miss leaving its slice at ``cycle``; the
        cycle all of it is back.

        ``floor``: no later call will ask for a cycle before it (the memory system's current cycle).
        """
        done = self.account(nbytes, False, self.serve(cycle + self.latency, line_index, nbytes, floor, False))
        if self.log is not None:
            self.log.append((cycle, line_index, nbytes, 0, floor, done))
        return done

    def write(self, cycle: int, line_index: int, nbytes: int, floor: int) -> None:
        """Write ``nbytes`` of line ``line_index`` leaving the L2 at ``cycle`` (occupies the bank and
        the channel; nobody waits for it)."""
        self.account(nbytes, True, self.serve(cycle + self.latency, line_index, nbytes, floor, True))
        if self.log is not None:
            self.log.append((cycle, line_index, nbytes, 1, floor, -1))

    def account(self, nbytes: int, write: bool, end: float) -> int:
        """Count a request served, its burst ending at ``end``; the cycle its data is back (a read)."""
        if write:
            self.writes += 1
            self.write_bytes += nbytes
        else:
            self.reads += 1
            self.read_bytes += nbytes
        return math.ceil(end - 1e-9)

    def place(self, line_index: int) -> tuple[int, int, int]:
        """The address mapping: line ``line_index``'s channel, bank (``channel * banks + bank``) and row."""
        return dram_place(line_index, self.channels, self.banks, self.lines_per_row, self.row_interleaved)

    def serve(self, arrive: float, line_index: int, nbytes: int, floor: float, write: bool) -> float:
        """Schedule one request reaching its controller at ``arrive`` after every request already
        scheduled on its bank (and, with ``frfcfs``, before a committed precharge where it fits);
        the (fractional) end of its burst. Counts neither reads nor writes (``read``, ``write`` do)."""
        channel, b, row = self.place(line_index)
        occupancy = nbytes * self.cycles_per_byte
        lat = self.twl if write else self.tcl
        if row == self.open_row[b]:
            self.row_hits += 1
            cas = max(self.col_ready[b], arrive)
        else:
            if self.frfcfs and row == self.prev_row[b] and arrive < self.prev_close[b]:
                end = self._earlier_hit(b, channel, arrive, occupancy, lat, write, floor)
                if end >= 0:
                    return end
            self.row_misses += 1
            if self.open_row[b] < 0:
                act = max(self.activated[b] + self.trc, arrive)
                self.prev_row[b], self.prev_close[b] = -1, NEVER
            else:
                self.row_conflicts += 1
                pre = max(self.pre_ready[b], arrive)
                act = max(pre + self.trp, self.activated[b] + self.trc)
                self.prev_row[b], self.prev_col_ready[b], self.prev_close[b] = self.open_row[b], self.col_ready[b], pre
            act = self.activates[channel].reserve(act, self.trrd, floor)
            self.open_row[b] = row
            self.activated[b] = act
            self.pre_ready[b] = act + self.tras
            cas = act + self.trcd
        want = cas + lat
        start = self.buses[channel].reserve(want, occupancy, floor)
        self.wait_cycles += start - want
        self.busy_cycles += occupancy
        issued = start - lat  # a busy bus delays the column command with it
        end = start + occupancy
        self.col_ready[b] = issued + self.tccd
        done = end + self.twr if write else issued + self.trtp
        self.pre_ready[b] = max(self.pre_ready[b], done)
        return end

    def _earlier_hit(self, b: int, channel: int, arrive: int, occupancy: float, lat: float, write: bool,
                     floor: int) -> float:
        """``frfcfs``: serve a request to bank ``b``'s previous row before that row's committed
        precharge if all of it fits there; the end of its burst, or -1.0 (it does not fit)."""
        cas = max(self.prev_col_ready[b], arrive)
        want = cas + lat
        bus = self.buses[channel]
        start = bus.first_fit(want, occupancy)
        issued = start - lat
        end = start + occupancy
        done = end + self.twr if write else issued + self.trtp
        if done > self.prev_close[b]:
            return -1.0
        bus.reserve(start, occupancy, floor)  # the gap just found: books exactly there
        self.row_hits += 1
        self.reordered_hits += 1
        self.wait_cycles += start - want
        self.busy_cycles += occupancy
        self.prev_col_ready[b] = issued + self.tccd
        return end
