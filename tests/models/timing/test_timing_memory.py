"""The performance model's memory system: coalescing, bank conflicts, and hand-computed timing
through L1, interconnect, L2 and DRAM."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from dualflow.common.errors import ConfigError
from dualflow.machine.memory import (
    DramConfig,
    InterconnectConfig,
    L1Config,
    L2Config,
    MemoryConfig,
    SharedMemoryConfig,
)
from dualflow.models.timing.memory.coalescer import LOCAL_BASE, Transaction, coalesce, local_addresses
from dualflow.models.timing.memory.shared_banks import conflict_degree
from dualflow.models.timing.memory.statistics import derive
from dualflow.models.timing.memory.system import Access, MemorySystem
from dualflow.models.timing.memory.timeline import Timeline

LANES = np.arange(32, dtype=np.int64)
ALL = np.ones(32, dtype=bool)
LINE = 128


#: The DRAM device timing fields (DRAM cycles).
TIMINGS = ("tcl", "twl", "trcd", "trp", "tras", "trc", "trrd", "trtp", "twr", "tccd")


#: The reservation DRAM model, whose answers come at once: the by-hand timings below are its
#: (the presets' queued controller answers later, tests/models/timing/test_dram_queue.py).
RESERVATION = DramConfig(scheduler="frfcfs")


def small(l1: dict | None = None, l2: dict | None = None, dram: dict | None = None,
          icnt: dict | None = None, sms: int = 2) -> MemorySystem:
    """A memory system with round numbers, so timings can be computed by hand.

    Core and DRAM clocks equal (1000 MHz); L1 hit 5; interconnect 10 each way, 1 flit of 40 B
    per cycle per port, 8 B header; L2 hit 20, one slice, linear hash; DRAM latency 100, one
    channel of 32 B/cycle (a 128 B line takes 4 cycles), no device timing (every tXX 0: a row
    miss costs what a hit does; the DRAM tests below set them).
    """
    l1_cfg = L1Config(**{"hit_latency": 5, **(l1 or {})})
    l2_cfg = L2Config(**{"size_bytes": 64 * 1024, "slices": 1, "hit_latency": 20, "slice_hash": "linear",
                         **(l2 or {})})
    dram_cfg = DramConfig(**{"clock_mhz": 1000.0, "latency": 100, "channels": 1, "bytes_per_cycle": 32,
                             "scheduler": "frfcfs", **dict.fromkeys(TIMINGS, 0), **(dram or {})})
    icnt_cfg = InterconnectConfig(**{"latency": 10, **(icnt or {})})
    return MemorySystem(MemoryConfig(l1=l1_cfg, l2=l2_cfg, dram=dram_cfg, interconnect=icnt_cfg), sms, 1000.0)


def line_tx(line: int, sectors: int = 0b1111) -> list[Transaction]:
    return [Transaction(line * LINE, sectors, 32 * bin(sectors).count("1"))]


# ---------------------------------------------------------------- coalescing
def test_fully_coalesced_load_is_one_transaction_of_four_sectors():
    txs = coalesce((4096 + 4 * LANES).astype(np.uint32), ALL, 128, 32)
    assert txs == [Transaction(4096, 0b1111, 128)]


def test_stride_two_touches_two_lines():
    txs = coalesce(8 * LANES, ALL, 128, 32)
    assert txs == [Transaction(0, 0b1111, 64), Transaction(128, 0b1111, 64)]


def test_misaligned_unit_stride_needs_an_extra_line_with_one_sector():
    txs = coalesce(4 + 4 * LANES, ALL, 128, 32)
    assert txs == [Transaction(0, 0b1111, 124), Transaction(128, 0b0001, 4)]


def test_scattered_lanes_each_need_a_transaction():
    txs = coalesce(LANES * 4096 + 36, ALL, 128, 32)
    assert len(txs) == 32
    assert all(tx.sectors == 0b0010 and tx.bytes == 4 for tx in txs)


def test_order_and_repeats_within_a_line_coalesce():
    # GT200-and-later rule: permuted lanes still coalesce; equal addresses are served once.
    rng = np.random.default_rng(1)
    assert coalesce(rng.permutation(4 * LANES), ALL, 128, 32) == [Transaction(0, 0b1111, 128)]
    assert coalesce(np.full(32, 260), ALL, 128, 32) == [Transaction(256, 0b0001, 4)]


def test_masked_lanes_are_ignored():
    mask = LANES < 8
    addresses = np.where(mask, 4 * LANES, 1 << 20)  # inactive lanes point far away
    assert coalesce(addresses, mask, 128, 32) == [Transaction(0, 0b0001, 32)]
    assert coalesce(addresses, np.zeros(32, dtype=bool), 128, 32) == []


def test_wide_accesses_span_sectors_and_lines():
    # 16-byte accesses: 32 lanes x 16 B = 512 B = 4 full lines
    txs = coalesce(16 * LANES, ALL, 128, 32, access_bytes=16)
    assert txs == [Transaction(LINE * i, 0b1111, 128) for i in range(4)]
    # an 8-byte access at 124 straddles two lines
    assert coalesce(np.array([124]), np.array([True]), 128, 32, access_bytes=8) == [
        Transaction(0, 0b1000, 4), Transaction(128, 0b0001, 4)]
    # a 12-byte access at 24 is "aligned" to 12 but straddles sectors 0 and 1
    assert coalesce(np.array([24]), np.array([True]), 128, 32, access_bytes=12) == [Transaction(0, 0b0011, 12)]


def test_local_addresses_interleave_words_across_lanes():
    offsets = np.full(32, 8)  # every lane reads its word 2
    addresses = local_addresses(5, 32, offsets, 64)
    warp_bytes = 64 * 32
    assert addresses[0] == LOCAL_BASE + 5 * warp_bytes + 2 * 32 * 4
    assert (np.diff(addresses) == 4).all()
    assert coalesce(addresses, ALL, 128, 32) == [Transaction(int(addresses[0]), 0b1111, 128)]
    # distinct warps get disjoint ranges, all above 32-bit global memory
    other = local_addresses(6, 32, np.full(32, 60), 64)
    assert addresses.max() < LOCAL_BASE + 6 * warp_bytes <= other.min()
    assert addresses.min() >= LOCAL_BASE > 0xFFFFFFFF
    # different offsets per lane: word i of lane t at (i * 32 + t) * 4
    mixed = local_addresses(0, 32, 4 * (LANES % 3), 12)
    assert list(mixed[:4] - LOCAL_BASE) == [0, 32 * 4 + 4, 2 * 32 * 4 + 8, 12]


# ---------------------------------------------------------------- shared-memory banks
@pytest.mark.parametrize("stride, degree", [(1, 1), (2, 2), (3, 1), (4, 4), (32, 32), (33, 1)])
def test_bank_conflict_degree_of_strided_access(stride, degree):
    assert conflict_degree(4 * stride * LANES, ALL, 32, 4) == degree


def test_broadcast_and_volkov_examples():
    assert conflict_degree(np.full(32, 12), ALL, 32, 4) == 1
    assert conflict_degree(np.array([4, 4, 4, 8]), np.ones(4, bool), 4, 4) == 1  # (1,1,1,2)
    assert conflict_degree(np.array([4, 12, 20, 32]), np.ones(4, bool), 4, 4) == 2  # (1,3,5,8)
    # bytes of one word are one word
    assert conflict_degree(np.array([0, 1, 2, 3, 128]), np.ones(5, bool), 32, 4) == 2


def test_bank_conflicts_count_active_lanes_only():
    mask = LANES % 2 == 0
    assert conflict_degree(4 * 32 * LANES, mask, 32, 4) == 16
    assert conflict_degree(4 * LANES, np.zeros(32, bool), 32, 4) == 0


# ---------------------------------------------------------------- L1 / L2 / DRAM timing
def test_miss_then_hit_timing_by_hand():
    mem = small()
    first = mem.global_access(0, 0, line_tx(3), write=False)
    # port 0; icnt 0+10=10; L2 tag 10+20=30, miss; DRAM 128 B / 32 B/cycle = 4 -> 34, +100 = 134;
    # reply port free -> leaves 134, +10 = 144
    assert first == Access(port_free=1, done=144)
    assert mem.global_access(1000, 0, line_tx(3), write=False) == Access(1001, 1005)
    s = mem.stats()
    assert (s["l1"]["load_hits"]["value"], s["l1"]["load_misses"]["value"]) == (1, 1)
    assert (s["dram"]["reads"]["value"], s["dram"]["read_bytes"]["value"]) == (1, 128)
    assert s["loads"]["average_latency"]["value"] == (144 + 5) / 2


def test_default_config_miss_by_hand():
    mem = MemorySystem(MemoryConfig(dram=RESERVATION), 68, 1440.0)
    ratio = 1440 / 1523  # core cycles per DRAM cycle
    burst = 128 / 49.9 * ratio  # 2.43 core cycles
    # a row hit: 82 core cycles + tCL 11 DRAM cycles + the burst = 94.83 -> 95 core cycles = 100 DRAM cycles
    assert mem.dram_latency == math.ceil(82 + 11 * ratio + burst) == 95
    done = mem.global_access(0, 0, line_tx(1000), write=False).done
    # icnt 8 -> L2 8+187=195, miss; controller at 195+82=277; bank closed: activate, +tRCD 11 and
    # +tCL 11 DRAM cycles, burst -> 300.23 -> 301; reply +8 = 309
    assert done == math.ceil(195 + 82 + 22 * ratio + burst) + 8 == 309
    # line 1000 + 160: same channel (mod 10), bank ((L div 10) mod 16) and row (16 lines per 2 KB row):
    # a row hit, 95 after the L2
    done = mem.global_access(1000, 0, line_tx(1000 + 160), write=False).done
    assert done == 1000 + 8 + 187 + 95 + 8


def test_l2_hit_from_another_sm():
    mem = small()
    mem.global_access(0, 0, line_tx(7), write=False)
    # SM 1 misses its own L1 at 200 and hits L2: 200 + 10 + 20 + 10
    assert mem.global_access(200, 1, line_tx(7), write=False) == Access(201, 240)
    assert mem.stats()["l2"]["read_hits"]["value"] == 1


def test_two_misses_to_one_line_merge_in_the_mshr():
    mem = small()
    assert mem.global_access(0, 0, line_tx(9), write=False).done == 144
    assert mem.global_access(2, 0, line_tx(9, 0b0011), write=False) == Access(3, 144)
    s = mem.stats()
    assert s["l1"]["mshr_merges"]["value"] == 1
    assert s["l1"]["load_misses"]["value"] == 1
    assert s["l2"]["reads"]["value"] == 1


def test_l2_merges_misses_of_two_sms_to_one_line():
    mem = small()
    assert mem.global_access(0, 0, line_tx(5), write=False).done == 144
    # SM 1: the slice's request port is busy one cycle (SM 0's 1-flit request) -> L2 at 11 + 20 = 31,
    # where the line's fill is in flight (data at 134): merged; the reply port is busy with SM 0's
    # 4-flit reply until 138, then + 10
    assert mem.global_access(1, 1, line_tx(5), write=False).done == 148
    s = mem.stats()
    assert (s["l2"]["mshr_merges"]["value"], s["l2"]["read_misses"]["value"], s["dram"]["reads"]["value"]) == (1, 1, 1)


def test_full_l2_mshrs_block_the_slice_until_a_fill():
    mem = small(l2={"mshr_entries": 4})
    assert mem.global_access(0, 0, line_tx(1), write=False).done == 144
    # SM 1's miss reaches the tags at 31 but waits for line 1's fill (134); DRAM 134..138, data 238;
    # reply + 10
    assert mem.global_access(0, 1, line_tx(2), write=False).done == 248
    s = mem.stats()
    assert (s["l2"]["mshr_full_stalls"]["value"], s["l2"]["stall_cycles"]["value"]) == (1, 103)
    # meanwhile nothing behind it reaches the tags before 134: a request sent at 1 enters at
    # 134 - 20 = 114, hits line 1 at 134, and its reply fits in the reply port's gap between
    # line 1's reply (134..138) and line 2's (238..242): back at 138 + 10
    assert mem.global_access(1, 1, line_tx(1), write=False).done == 148


def test_an_l2_hit_does_not_queue_behind_an_earlier_miss():
    mem = small()
    mem.global_access(0, 0, line_tx(2), write=True)  # line 2 written into L2 at 30 (request port 10..14)
    assert mem.global_access(1, 0, line_tx(1), write=False).done == 148  # enters at 14; DRAM 34..38; 138 + 10
    # SM 1's read of line 2: request port free at 15 -> tags at 35, a hit; the reply port is booked
    # only 138..142, so the reply leaves at 35
    assert mem.global_access(2, 1, line_tx(2), write=False).done == 45


def test_timeline_fills_gaps_and_forgets_the_past():
    line = Timeline()
    assert line.reserve(100, 10, 0) == 100
    assert line.reserve(0, 5, 0) == 0  # before the first booking
    assert line.reserve(96, 5, 0) == 110  # [96, 101) overlaps [100, 110)
    assert line.reserve(5, 95, 0) == 5  # exactly fills [5, 100)
    assert (line.starts, line.ends) == ([0], [115])
    line.block(200, 210)
    assert line.reserve(112, 80, 0) == 115  # [115, 195)
    assert line.reserve(190, 6, 0) == 210 and line.reserve(190, 5, 0) == 195  # the gap [195, 200) fits 5
    assert not line.free_at(205) and line.free_at(300)
    assert line.reserve(400, 1.5, 300) == 400 and line.starts == [400]


def test_timeline_matches_a_cycle_by_cycle_occupancy_map():
    rng = random.Random(5)
    line, busy = Timeline(), set()
    for _ in range(400):
        earliest, length = rng.randrange(300), rng.randrange(0, 6)
        if rng.random() < 0.1:
            line.block(earliest, earliest + length)
            busy.update(range(earliest, earliest + length))
            continue
        start = earliest
        while any(c in busy for c in range(start, start + length)):
            start += 1
        assert line.reserve(earliest, length, 0) == start
        busy.update(range(start, start + length))
    assert all(s < e for s, e in zip(line.starts, line.ends))
    assert all(e < s for e, s in zip(line.ends, line.starts[1:]))  # disjoint and not touching: merged
    assert sum(e - s for s, e in zip(line.starts, line.ends)) == len(busy)


def test_merge_limit_stalls_the_port_until_the_fill():
    mem = small(l1={"max_merges": 1})
    mem.global_access(0, 0, line_tx(9), write=False)
    assert mem.global_access(1, 0, line_tx(9), write=False).done == 144  # merges
    # the entry is full: the port waits for the fill at 144, then it is a hit
    assert mem.global_access(2, 0, line_tx(9), write=False) == Access(145, 149)
    assert mem.stats()["l1"]["merge_limit_stall_cycles"]["value"] == 142


def test_sector_miss_fetches_only_missing_sectors():
    mem = small()
    mem.global_access(0, 0, line_tx(4, 0b0001), write=False)
    mem.global_access(500, 0, line_tx(4, 0b1111), write=False)
    s = mem.stats()
    assert s["l1"]["sector_misses"]["value"] == 1
    assert s["l1"]["missed_sectors"]["value"] == 4
    assert s["dram"]["read_bytes"]["value"] == 128


def test_mshr_exhaustion_delays_the_next_miss_until_the_earliest_frees():
    mem = small(l1={"mshr_entries": 4})
    assert mem.global_access(0, 0, line_tx(1), write=False).done == 144
    second = mem.global_access(1, 0, line_tx(2), write=False)
    # waits for line 1's fill (144); then 144+10+20 = 174, DRAM free -> 178 + 100 = 278, +10
    assert second == Access(port_free=145, done=288)
    s = mem.stats()
    assert s["l1"]["mshr_full_stalls"]["value"] == 1
    assert s["l1"]["mshr_stall_cycles"]["value"] == 143


def test_dram_bandwidth_serializes_lines_in_one_channel():
    mem = small(dram={"bytes_per_cycle": 8})  # 16 cycles per line
    a = mem.global_access(0, 0, line_tx(1), write=False).done
    b = mem.global_access(0, 1, line_tx(2), write=False).done
    # SM 0: L2 at 30, bus 30..46, data 146, back 156.
    # SM 1: request port busy 1 cycle -> L2 at 31, bus waits to 46..62, data 162, back 172.
    assert (a, b) == (156, 172)
    # with two channels (lines 1 and 2 in different channels) they overlap
    mem2 = small(dram={"bytes_per_cycle": 8, "channels": 2})
    assert mem2.global_access(0, 0, line_tx(1), write=False).done == 156
    # line 2: L2 at 31, its own bus 31..47, data 147; the slice's reply port is busy with line 1's
    # 4 flits 146..150, so it leaves at 150 and is back at 160
    assert mem2.global_access(0, 1, line_tx(2), write=False).done == 160


def test_port_holds_one_cycle_per_transaction():
    mem = small()
    txs = coalesce(LANES * 4096, ALL, 128, 32)
    access = mem.global_access(0, 0, txs, write=False)
    assert access.port_free == 32
    # the next access of this SM starts when the port frees
    assert mem.shared_access(5, 0, 1).port_free == 33


def test_lru_eviction_in_a_small_cache():
    mem = small(l1={"size_bytes": 256, "ways": 2})  # one set of two lines
    for cycle, line in ((0, 1), (200, 2), (400, 1), (600, 3)):  # line 1 reused, so 2 is the LRU victim
        mem.global_access(cycle, 0, line_tx(line), write=False)
    assert mem.l1_resident(0, 1 * LINE) and mem.l1_resident(0, 3 * LINE)
    assert not mem.l1_resident(0, 2 * LINE)
    assert mem.global_access(800, 0, line_tx(2), write=False).done == 800 + 10 + 20 + 10  # L2 hit
    assert mem.stats()["l1"]["load_hits"]["value"] == 1


def test_l2_lru_eviction_writes_dirty_lines_to_dram():
    mem = small(l2={"size_bytes": 256, "ways": 2})  # one set of two lines
    mem.global_access(0, 0, line_tx(1), write=True)  # write-allocate, dirty
    mem.global_access(100, 0, line_tx(2), write=False)
    mem.global_access(300, 0, line_tx(3), write=False)  # evicts dirty line 1
    s = mem.stats()
    assert s["l2"]["writebacks"]["value"] == 1
    assert (s["dram"]["writes"]["value"], s["dram"]["write_bytes"]["value"]) == (1, 128)
    assert not mem.l2_resident(LINE) and mem.l2_resident(3 * LINE)


def test_global_store_is_write_through_without_allocate():
    mem = small()
    store = mem.global_access(0, 0, line_tx(5), write=True)
    assert store == Access(1, 1)  # accepted by the L1; the warp does not wait for L2
    assert not mem.l1_resident(0, 5 * LINE)
    s = mem.stats()
    assert (s["l2"]["writes"]["value"], s["dram"]["reads"]["value"]) == (1, 0)
    # 8 B header + 128 B data = 4 flits of 40 B
    assert s["interconnect"]["request_flits"]["value"] == 4
    # the data is in L2 (written at 0+10+20 = 30; its request port is busy 4 cycles, until 14):
    # a load from SM 1 at 100 hits L2
    assert mem.global_access(100, 1, line_tx(5), write=False).done == 140


def test_local_memory_is_write_back_in_l1():
    mem = small(l1={"size_bytes": 256, "ways": 2})
    base = int(local_addresses(0, 32, np.zeros(32), 4)[0])
    local = [Transaction(base, 0b1111, 128)]
    assert mem.global_access(0, 0, local, write=True) == Access(1, 1)
    assert mem.global_access(10, 0, local, write=False) == Access(11, 15)  # spill reload hits
    assert mem.stats()["l2"]["writes"]["value"] == 0  # nothing left the SM
    mem.global_access(20, 0, line_tx(1), write=False)
    mem.global_access(200, 0, line_tx(2), write=False)  # evicts the dirty local line
    s = mem.stats()
    assert (s["l1"]["writebacks"]["value"], s["l2"]["writes"]["value"]) == (1, 1)


def test_flush_l1_writes_back_dirty_local_lines_and_invalidates():
    mem = small()
    base = int(local_addresses(0, 32, np.zeros(32), 4)[0])
    mem.global_access(0, 0, [Transaction(base, 0b0011, 64)], write=True)
    mem.global_access(1, 1, line_tx(2), write=False)
    mem.flush_l1(500)
    assert not mem.l1_resident(0, base) and not mem.l1_resident(1, 2 * LINE)
    s = mem.stats()
    assert (s["l1"]["writebacks"]["value"], s["l1"]["writeback_sectors"]["value"]) == (1, 2)
    assert s["l1"]["flushes"]["value"] == 1
    # the spilled data is now in L2: 600 + 10 + 20 + 10
    assert mem.global_access(600, 0, [Transaction(base, 0b0011, 64)], write=False).done == 640


def test_spaces_can_bypass_the_l1():
    mem = small(l1={"caches_global": False, "caches_local": False})
    assert mem.global_access(0, 0, line_tx(3), write=False).done == 144
    assert mem.global_access(500, 0, line_tx(3), write=False).done == 500 + 40  # L2 hit, never an L1 hit
    assert not mem.l1_resident(0, 3 * LINE)
    base = int(local_addresses(0, 32, np.zeros(32), 4)[0])
    mem.global_access(1000, 0, [Transaction(base, 0b1111, 128)], write=True)  # written through to L2
    assert mem.global_access(1100, 0, [Transaction(base, 0b1111, 128)], write=False).done == 1140
    s = mem.stats()
    assert (s["l1"]["bypassed"]["value"], s["l1"]["load_hits"]["value"], s["l2"]["writes"]["value"]) == (3, 0, 1)
    # caching only spills
    mem = small(l1={"caches_global": False})
    mem.global_access(0, 0, line_tx(3), write=False)
    mem.global_access(0, 0, [Transaction(base, 0b1111, 128)], write=True)
    assert mem.l1_resident(0, base) and not mem.l1_resident(0, 3 * LINE)


def test_shared_access_timing():
    mem = small(sms=1)
    latency = mem.config.shared.latency
    assert mem.shared_access(10, 0, 4) == Access(14, 13 + latency)
    assert mem.shared_access(11, 0, 1) == Access(15, 14 + latency)  # waited for the port
    assert mem.shared_access(20, 0, 0) == Access(20, 20)
    s = mem.stats()["shared"]
    assert (s["accesses"]["value"], s["bank_rounds"]["value"], s["conflict_rounds"]["value"]) == (2, 5, 3)


def test_fermi_and_gt200_shared_memory():
    # GT200: 16 banks, half-warps served one after another, a bank every 2 cycles (Volkov 2.6)
    assert conflict_degree(4 * LANES, ALL, 16, 4, warp_parts=2) == 2  # each half conflict-free
    assert conflict_degree(4 * LANES, LANES < 16, 16, 4, warp_parts=2) == 1  # one active half
    assert conflict_degree(8 * LANES, ALL, 16, 4, warp_parts=2) == 4  # stride 2: 2-way in each half
    assert conflict_degree(8 * LANES, ALL, 16, 4) == 4  # without halves: 32 words in 16 banks
    mem = MemorySystem(MemoryConfig(shared=SharedMemoryConfig(banks=16, bank_interval=2, warp_parts=2)), 1, 1296.0)
    latency = mem.config.shared.latency
    assert mem.shared_access(0, 0, 2) == Access(4, 3 + latency)
    assert mem.shared_access(10, 0, 4) == Access(18, 17 + latency)
    s = mem.stats()["shared"]
    assert (s["bank_rounds"]["value"], s["conflict_rounds"]["value"], s["port_cycles"]["value"]) == (6, 2, 12)


def test_requests_must_come_in_cycle_order():
    mem = small()
    mem.global_access(10, 0, line_tx(1), write=False)
    with pytest.raises(ValueError, match="cycle 9 after cycle 10"):
        mem.global_access(9, 1, line_tx(2), write=False)
    with pytest.raises(ValueError, match="cycle order"):
        mem.shared_access(3, 0, 1)


def test_ipoly_hash_spreads_a_power_of_two_stride():
    ipoly = MemorySystem(MemoryConfig(), 1, 1440.0)
    linear = MemorySystem(MemoryConfig(l2=L2Config(slice_hash="linear")), 1, 1440.0)
    lines = [64 * k for k in range(64)]  # stride of 64 lines: all in slice 0 under the linear hash
    assert {linear._slice(i) for i in lines} == {0}
    assert len({ipoly._slice(i) for i in lines}) == 64
    assert len({ipoly._slice(i) for i in range(64)}) == 64


# ---------------------------------------------------------------- statistics, determinism
def random_run(seed: int, n: int = 1200) -> tuple[list[Access], dict]:
    rng = random.Random(seed)
    mem = MemorySystem(MemoryConfig(l1=L1Config(size_bytes=4096, ways=4, mshr_entries=16),
                                    l2=L2Config(size_bytes=64 * 1024, slices=4), dram=RESERVATION), 4, 1440.0)
    out, cycle = [], 0
    for _ in range(n):
        cycle += rng.randrange(3)
        sm = rng.randrange(4)
        if rng.random() < 0.1:
            out.append(mem.shared_access(cycle, sm, rng.randrange(1, 5)))
            continue
        base = rng.randrange(1 << 16) * 4
        stride = rng.choice([4, 8, 128, 4096])
        txs = coalesce(base + stride * LANES, ALL if rng.random() < 0.9 else LANES < 7, 128, 32)
        out.append(mem.global_access(cycle, sm, txs, write=rng.random() < 0.2))
    return out, mem.stats()


def test_deterministic_and_json_ready_statistics():
    first, second = random_run(7), random_run(7)
    assert first == second
    stats = first[1]
    json.dumps(stats)

    def leaves(tree):
        for value in tree.values():
            if "value" in value:
                yield value
            else:
                yield from leaves(value)

    assert all(leaf["unit"] and leaf["description"] for leaf in leaves(stats))
    l1 = stats["l1"]
    assert l1["load_transactions"]["value"] == (l1["load_hits"]["value"] + l1["load_misses"]["value"]
                                                + l1["mshr_merges"]["value"])
    assert sum(v["transactions"]["value"] for v in l1["per_sm"].values()) == (
        l1["load_transactions"]["value"] + l1["store_transactions"]["value"])
    assert stats["l2"]["read_misses"]["value"] == stats["dram"]["reads"]["value"] > 0
    assert 0 < stats["l1"]["load_hit_rate"]["value"] < 1


def test_derive_recomputes_rates_after_adding_trees():
    _, stats = random_run(3, 400)
    doubled = json.loads(json.dumps(stats))
    for group in doubled.values():
        for leaf in group.values():
            if "value" in leaf:
                leaf["value"] *= 2
    derive(doubled)
    assert doubled["loads"]["average_latency"]["value"] == stats["loads"]["average_latency"]["value"]


# ---------------------------------------------------------------- configuration
def test_defaults_are_the_papers_rtx3080():
    cfg = MemoryConfig()
    assert (cfg.l1.size_bytes, cfg.l1.ways, cfg.l1.line_bytes, cfg.l1.sets) == (65536, 8, 128, 64)
    assert (cfg.l2.size_bytes, cfg.l2.slices, cfg.l2.ways, cfg.l2.sets_per_slice) == (4 << 20, 64, 16, 32)
    assert (cfg.dram.clock_mhz, cfg.dram.latency) == (1523.0, 82)
    assert round(cfg.dram.channels * cfg.dram.bytes_per_cycle * cfg.dram.clock_mhz / 1000) == 760  # GB/s
    described = MemoryConfig.describe()
    assert described["l1"]["default"]["ways"] == 8
    for cls in (L1Config, SharedMemoryConfig, InterconnectConfig, L2Config, DramConfig):
        assert all(entry["description"] for entry in cls.describe().values())
        assert all("unit" in entry for entry in cls.describe().values())
    assert MemoryConfig(**{k: type(getattr(cfg, k))(**v) for k, v in cfg.to_dict().items()}) == cfg


@pytest.mark.parametrize("make, message", [
    (lambda: L1Config(ways=3), r"L1Config: size_bytes \(65536\) must divide"),
    (lambda: L1Config(line_bytes=96), "L1Config.line_bytes must be a power of two, not 96"),
    (lambda: L1Config(sector_bytes=256), r"sector_bytes \(256\) must not exceed line_bytes \(128\)"),
    (lambda: L1Config(hit_latency=0), "L1Config.hit_latency must be a positive integer, not 0"),
    (lambda: L1Config(mshr_entries=2), r"mshr_entries \(2\) must hold at least one whole line"),
    (lambda: L1Config(ways=True), "L1Config.ways must be a positive integer, not True"),
    (lambda: L1Config(caches_local=1), "L1Config.caches_local must be True or False, not 1"),
    (lambda: SharedMemoryConfig(bank_bytes=3), "SharedMemoryConfig.bank_bytes must be a power of two"),
    (lambda: InterconnectConfig(latency=-1), "InterconnectConfig.latency must be a non-negative integer, not -1"),
    (lambda: L2Config(slice_hash="xor"), "L2Config.slice_hash must be one of linear, ipoly, not 'xor'"),
    (lambda: L2Config(slices=48, size_bytes=48 * 65536), "'ipoly' needs a power-of-two number of slices"),
    (lambda: L2Config(slices=3), r"size_bytes \(4194304\) must divide into 3 slice"),
    (lambda: DramConfig(clock_mhz=0), "DramConfig.clock_mhz must be a positive number, not 0"),
    (lambda: DramConfig(bytes_per_cycle="50"), "DramConfig.bytes_per_cycle must be a positive number"),
    (lambda: MemoryConfig(l2=L2Config(sector_bytes=64)), "L1 and L2 must have the same line and sector sizes"),
    (lambda: MemoryConfig(l1=L2Config()), "MemoryConfig.l1 must be a L1Config"),
    (lambda: MemorySystem(MemoryConfig(), 0, 1440.0), "num_sms must be a positive integer, not 0"),
])
def test_config_validation(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_linear_l2_with_any_slice_count():
    mem = MemorySystem(MemoryConfig(l2=L2Config(slices=48, size_bytes=48 * 65536, slice_hash="linear"),
                                    dram=RESERVATION), 1, 1440.0)
    assert mem.global_access(0, 0, line_tx(47), write=False).done > 0
    assert mem.l2_resident(47 * LINE)
