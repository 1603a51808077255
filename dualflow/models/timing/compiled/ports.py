"""The port manifest: which reference function each function of the compiled engine implements.

The reference engine (``dualflow/models/timing/``, plain Python) is the specification; the compiled
engine (this package) is its hand port to numba. ``PORTS`` maps each compiled function that
implements reference behaviour to the reference function(s) it implements, or the parts of
them it implements. ``port_hashes.py`` records the hash of each of those reference functions as
it was when its ports were last checked, and ``tests/models/timing/test_compiled_ports.py`` fails
when a listed function no longer exists or a reference function changed since: its ports must
then be re-checked, and the hashes re-recorded (``port_check.py``, ``--record``).

Every top-level function of the modules in ``PORTED_MODULES`` is either a port (``PORTS``) or
declared compiled-only with the reason (``COMPILED_ONLY``), so a new compiled function has to
say which it is. The engine's settings and state layout (``core.py``, ``engine.py``), the state
transfers and the memory log are glue, not ports, and are not listed.

Names are ``module:qualname``; a compiled module is relative to ``COMPILED``, a reference module
to ``REFERENCE`` unless it starts with ``dualflow.``. Data only: the checks are port_check.py's.
"""

from __future__ import annotations

COMPILED = "dualflow.models.timing.compiled"
REFERENCE = "dualflow.models.timing"

#: compiled function -> the reference functions it implements (or implements part of)
PORTS: dict[str, tuple[str, ...]] = {
    # ------------------------------------------------------------------ the SM (sm.py, sm_waits.py)
    "sm:skip": ("stats:SmCounters.skip",),
    "sm:occupancy": ("stats:SmCounters.cycle", "stats:SmCounters._occupancy"),
    "sm:tick": ("sm:Sm.tick",),
    "sm:writeback": ("sm:Sm._writeback", "collector:OperandCollector.claim_write",
                     "scoreboard:RegisterScoreboard.writeback", "scoreboard:RingScoreboard.writeback"),
    "sm:complete": ("sm:Sm._complete",),
    "sm:must_keep_order": ("ordering:must_keep_order",),
    "sm:dispatch": ("sm:Sm._dispatch", "sm:Sm._pipe_range", "ordering:check_reorder", "ordering:conflicts"),
    "sm:start": ("sm:Sm._start", "sm:Sm._memory_access", "sm:Sm._post"),
    "sm:fetch": ("sm:Sm._fetch",),
    "sm_waits:wait_memory": ("sm:Sm._wait_memory",),
    "sm_waits:port_known": ("sm:Sm._wait_memory.<locals>.port_free",),
    "sm_waits:done_known": ("sm:Sm._wait_memory.<locals>.done", "sm:Sm._post"),
    "sm_waits:_woken": ("sm:Sm._woken",),
    # ------------------------------------------------------------------ issue (issue.py)
    "issue:issue": ("sm:Sm._issue", "warp_order:GreedyThenOldest.order", "warp_order:LooseRoundRobin.order"),
    "issue:stall": ("sm:Sm._stall",),
    "issue:try_issue": ("sm:Sm._try_issue",),
    "issue:hands_blocked": ("sm:Sm._try_issue_hands",),
    "issue:may_wait_hands": ("sm:Sm._try_issue_hands", "sm:Sm._window_full"),
    "issue:unblocks_next_hands": ("sm:Sm._unblocks_next_hands", "sm:Sm._next_to_send_ahead_of"),
    "issue:hands_operands": ("sm:Sm._execute", "scoreboard:HandsScoreboard.key",
                             "scoreboard:HandsScoreboard.hand_issue"),
    "issue:may_wait": ("sm:Sm._try_issue", "sm:Sm._window_full"),
    "issue:pool_count": ("sm:Sm._window_full", "sm:Sm._try_issue"),
    "issue:ready_first": ("sm:Sm.__init__", "sm:Sm._issue"),
    "issue:window_full": ("sm:Sm._window_full",),
    "issue:may_send_ahead_of": ("sm:Sm._next_to_send_ahead_of", "sm:Sm._unblocks_next"),
    "issue:issue_waiting": ("sm:Sm._try_issue", "sm:Sm._try_issue_hands"),
    "issue:unblocks_next": ("sm:Sm._unblocks_next", "sm:Sm._next_to_send_ahead_of"),
    "issue:check_barrier": ("dualflow.models.executor:BatchExecutor._check_barrier",
                            "dualflow.models.executor:BatchExecutor._control.<locals>.bar",
                            "dualflow.models.executor:BatchExecutor._control.<locals>.exit_"),
    "issue:unstall_block": ("sm:Sm._unstall_block",),
    "issue:execute": ("sm:Sm._execute", "stats:SmCounters.issued"),
    # ------------------------------------------------------------------ resident warps (warps.py)
    "warps:fits": ("sm:Sm.fits", "sm:Sm.used"),
    "warps:add_cta": ("sm:Sm.add_cta",),
    "warps:retire_warp": ("sm:Sm._retire_warp",),
    "warps:next_pc": ("warp:Warp.pc",),
    "warps:dirty": ("sm:Sm._dirty",),
    # ------------------------------------------------------------------ operand collector, scoreboards
    "collector:register_bank": ("dualflow.machine.banks:register_bank",),
    "collector:claim_bank": ("collector:OperandCollector._claim",),
    "collector:collector_remove": ("collector:OperandCollector.remove",),
    "collector:read_operands": ("collector:OperandCollector.read_operands", "sm:Sm._readable",
                                "sm:Sm._wait_ended", "warp:Warp.operand_read"),
    "scoreboard:add_reader": ("scoreboard:RingScoreboard.add_reader",),
    "scoreboard:read_done": ("scoreboard:RingScoreboard.read_done",),
    "scoreboard:slot_busy": ("scoreboard:RingScoreboard.slot_busy",),
    "scoreboard:guard_blocks": ("scoreboard:RingScoreboard.guard_blocks",),
    "scoreboard:waits": ("scoreboard:RingScoreboard.waits",),
    "scoreboard:base_blocked": ("scoreboard:RegisterScoreboard.blocked",),
    "scoreboard:hand_entry": ("scoreboard:HandsScoreboard.slot",),
    "scoreboard:hand_guard_blocks": ("scoreboard:HandsScoreboard.hand_guard_blocks",),
    "scoreboard:hand_waits": ("scoreboard:HandsScoreboard.hand_waits",),
    # ------------------------------------------------------------------ the GPU loop (gpu.py)
    "gpu:_schedule_woken": ("gpu:Gpu.run",),
    "gpu:_run_launch": ("gpu:Gpu.run",),
    # ------------------------------------------------------------------ memory accesses (memory*.py)
    "memory:global_access": ("memory.system:MemorySystem.global_access", "memory.system:MemorySystem._access",
                             "memory.system:MemorySystem._step"),
    "memory:shared_access": ("memory.system:MemorySystem.shared_access", "memory.system:MemorySystem._access",
                             "memory.system:MemorySystem._step"),
    "memory:_flush_l1": ("memory.system:MemorySystem.flush_l1",),
    "memory_hierarchy:check_order": ("memory.system:MemorySystem._check_order",),
    "memory_hierarchy:shared_port": ("memory.system:MemorySystem._step",),
    "memory_hierarchy:store_port": ("memory.system:MemorySystem._step",),
    "memory_hierarchy:icnt_request": ("memory.interconnect:Interconnect.request",),
    "memory_hierarchy:icnt_reply": ("memory.interconnect:Interconnect.reply",),
    "memory_hierarchy:in_flight": ("memory.system:MemorySystem._in_flight",),
    "memory_hierarchy:probe": ("memory.system:MemorySystem._probe",),
    "memory_hierarchy:try_merge": ("memory.system:MemorySystem._try_merge",),
    "memory_hierarchy:fill_sectors": ("memory.system:MemorySystem._fill",),
    "memory_hierarchy:_write_sectors": ("memory.system:MemorySystem._write_sectors",),
    "memory_hierarchy:l2_slice": ("memory.system:MemorySystem._slice",),
    "memory_hierarchy:l2_row": ("memory.system:MemorySystem._l2_set",),
    "memory_hierarchy:dram_write_request": ("memory.system:MemorySystem._dram_write",),
    "memory_hierarchy:l2_merge_stall": ("memory.system:MemorySystem._l2_lookup",),
    "memory_hierarchy:l2_miss": ("memory.system:MemorySystem._l2_lookup", "memory.system:MemorySystem._l2_allocate"),
    "memory_hierarchy:_l2_read": ("memory.system:MemorySystem._l2_read", "memory.system:MemorySystem._l2_lookup",
                                  "memory.system:MemorySystem._dram_read"),
    "memory_hierarchy:_l2_write": ("memory.system:MemorySystem._l2_write", "memory.system:MemorySystem._l2_allocate"),
    "memory_hierarchy:l1_write_back": ("memory.system:MemorySystem._l1_write_back",),
    "memory_hierarchy:l1_bypassed": ("memory.system:MemorySystem._l1_load",),
    "memory_hierarchy:l1_mshr_stall": ("memory.system:MemorySystem._l1_mshr_stall",),
    "memory_hierarchy:l1_counted_miss": ("memory.system:MemorySystem._l1_load",
                                         "memory.system:MemorySystem._l1_uncached_load"),
    "memory_hierarchy:l1_merge_stall": ("memory.system:MemorySystem._l1_load",),
    "memory_hierarchy:l1_allocate": ("memory.system:MemorySystem._l1_load", "memory.system:MemorySystem._l1_allocate"),
    "memory_hierarchy:_l1_uncached_load": ("memory.system:MemorySystem._l1_uncached_load",),
    "memory_hierarchy:l1_load": ("memory.system:MemorySystem._l1_load",),
    "memory_hierarchy:l1_store": ("memory.system:MemorySystem._l1_store", "memory.system:MemorySystem._l1_allocate"),
    # queued DRAM: the port, the slices, pending cycles and events
    "memory_queued:queued_global_access": ("memory.system:MemorySystem.global_access",
                                           "memory.system:MemorySystem._access"),
    "memory_queued:queued_shared_access": ("memory.system:MemorySystem.shared_access",
                                           "memory.system:MemorySystem._access"),
    "memory_queued:_port_access": ("memory.system:MemorySystem._port_access",),
    "memory_queued:run_port": ("memory.system:MemorySystem._run_port",),
    "memory_queued:resume_port": ("memory.system:MemorySystem._resume_port",),
    "memory_queued:_step": ("memory.system:MemorySystem._step", "memory.system:MemorySystem._count_load"),
    "memory_queued:_job_done": ("memory.system:MemorySystem._step", "memory.pending:later"),
    "memory_queued:_through": ("memory.system:MemorySystem._through",),
    "memory_queued:_l1_load": ("memory.system:MemorySystem._l1_load",),
    "memory_queued:_l1_uncached_load": ("memory.system:MemorySystem._l1_uncached_load",),
    "memory_queued_cache:fill_pending": ("memory.system:MemorySystem._fill_pending",),
    "memory_queued_cache:_filled": ("memory.system:MemorySystem._fill_pending.<locals>.filled",),
    "memory_queued_cache:probe_queued": ("memory.system:MemorySystem._probe", "memory.system:MemorySystem._in_flight"),
    "memory_queued_cache:pending_wait": ("memory.system:MemorySystem._pending_wait",),
    "memory_queued_cache:_first_fill": ("memory.system:MemorySystem._pending_wait",),
    "memory_queued_cache:mshr_issue": ("memory.system:MemorySystem._mshr_issue", "memory.cache:MshrFile.wait"),
    "memory_queued_cache:mshr_hold": ("memory.cache:MshrFile.allocate",),
    "memory_queued_cache:mshr_known": ("memory.cache:MshrFile._known", "memory.cache:MshrFile._wake"),
    "memory_queued_cache:begin_resolve": ("memory.pending:Pending.resolve",),
    "memory_queued_cache:end_resolve": ("memory.pending:Pending.resolve",),
    "memory_queued_cache:resolve_leaf": ("memory.pending:Pending.resolve",),
    "memory_queued_l2:l2_read": ("memory.system:MemorySystem._l2_read",),
    "memory_queued_l2:slice_step": ("memory.system:MemorySystem._run_slice",),
    "memory_queued_l2:resume_slice": ("memory.system:MemorySystem._resume_slice",),
    "memory_queued_l2:l2_lookup": ("memory.system:MemorySystem._l2_lookup",),
    "memory_queued_l2:then_reply": ("memory.system:MemorySystem._l2_lookup", "memory.pending:then_map"),
    "memory_machine:next_event": ("memory.system:MemorySystem.next_event", "memory.events:EventQueue.next_cycle"),
    "memory_machine:advance": ("memory.system:MemorySystem.advance", "memory.events:EventQueue.run_until"),
    "memory_machine:_resolve": ("memory.pending:Pending.resolve",),
    "memory_pending:new_pending": ("memory.pending:Pending.__init__",),
    "memory_pending:then": ("memory.pending:Pending.then",),
    "memory_pending:later_counts": ("memory.pending:later",),
    "memory_pending:later_start": ("memory.pending:later",),
    "memory_pending:later_add": ("memory.pending:later", "memory.pending:later.<locals>.one"),
    "memory_pending:latest": ("memory.system:_latest",),
    "memory_pending:post": ("memory.events:EventQueue.at",),
    "memory_pending:pop_event": ("memory.events:EventQueue.run_until",),
    "memory_pending:next_cycle": ("memory.events:EventQueue.next_cycle",),
    # ------------------------------------------------------------------ caches, MSHRs, timelines (memory_parts.py)
    "memory_parts:timeline_reserve": ("memory.timeline:Timeline.reserve", "memory.timeline:Timeline._gap"),
    "memory_parts:timeline_first_fit": ("memory.timeline:Timeline.first_fit", "memory.timeline:Timeline._gap"),
    "memory_parts:timeline_block": ("memory.timeline:Timeline.block",),
    "memory_parts:mshr_reserve": ("memory.cache:MshrFile.reserve", "memory.cache:MshrFile._forget"),
    "memory_parts:mshr_allocate": ("memory.cache:MshrFile.allocate",),
    "memory_parts:mshr_room": ("memory.cache:MshrFile.room", "memory.cache:MshrFile._forget"),
    "memory_parts:cache_lookup": ("memory.cache:SectorCache.lookup",),
    "memory_parts:cache_insert": ("memory.cache:SectorCache.insert",),
    # ------------------------------------------------------------------ DRAM (memory_dram*.py)
    "memory_dram:dram_place": ("memory.dram:Dram.place",),
    "memory_dram:_earlier_hit": ("memory.dram:Dram._earlier_hit",),
    "memory_dram:dram_serve": ("memory.dram:Dram.serve",),
    "memory_dram:dram_account": ("memory.dram:Dram.account",),
    "memory_dram:dram_log": ("memory.dram:Dram.read", "memory.dram:Dram.write"),
    "memory_dram:dram_read": ("memory.dram:Dram.read",),
    "memory_dram:dram_write": ("memory.dram:Dram.write",),
    "memory_dram_queue:_older": ("memory.dram_queue:_Request.__lt__",),
    "memory_dram_queue:_enter": ("memory.dram_queue:DramQueues._enter",),
    "memory_dram_queue:_next_decision": ("memory.dram_queue:DramQueues._next_decision",),
    "memory_dram_queue:post_decision": ("memory.dram_queue:DramQueues._post",),
    "memory_dram_queue:submit": ("memory.dram_queue:DramQueues.submit",),
    "memory_dram_queue:decide_begins": ("memory.dram_queue:DramQueues._decide",),
    "memory_dram_queue:decide_step": ("memory.dram_queue:DramQueues._decide",),
    # ------------------------------------------------------------------ an access's transactions (step_access.py)
    "step_access:coalesce_rows": ("memory.coalescer:coalesce",),
    "step_access:conflict_degree_rows": ("memory.shared_banks:conflict_degree",),
}

#: The modules whose every top-level function is declared here: a port, or compiled-only.
PORTED_MODULES: tuple[str, ...] = (
    "collector", "gpu", "issue", "memory", "memory_dram", "memory_dram_queue", "memory_hierarchy",
    "memory_machine", "memory_parts", "memory_pending", "memory_queued", "memory_queued_cache",
    "memory_queued_l2", "scoreboard", "sm", "sm_waits", "step_access", "warps")

#: Functions of ``PORTED_MODULES`` with no reference counterpart, by why they exist.
COMPILED_ONLY: dict[str, tuple[str, ...]] = {
    "array forms of Python's containers and builtins (heaps, lists, dicts, records, int.bit_count)": (
        "gpu:_push", "gpu:_room", "gpu:_pop", "warps:list_remove", "warps:is_member", "scoreboard:_unread_index",
        "memory_parts:_count_ends_before", "memory_parts:_insert_interval", "memory_parts:_delete_intervals",
        "memory_parts:_make_room", "memory_parts:mshr_insert", "memory_parts:cache_next_lru",
        "memory_parts:cache_clear", "memory_dram_queue:_insort", "memory_dram_queue:_unlink",
        "memory_pending:pool_take", "memory_pending:pool_rows", "memory_pending:_event_before",
        "memory_pending:_event_swap", "memory_queued:_new_job", "memory_queued:_wider",
        "memory_queued_l2:pop_slice_job", "memory_queued_cache:level_cache", "memory_queued_cache:level_mshrs",
        "memory_hierarchy:l1_row", "memory_parts:popcount"),
    "handles of pending cycles and the explicit stack of callbacks numba needs instead of closures": (
        "memory_pending:handle", "memory_pending:pid_of", "memory_pending:free_pending", "memory_pending:known",
        "memory_pending:value_of", "memory_pending:release", "memory_pending:free_waiter",
        "memory_pending:resolved_now", "memory_pending:push_frame", "memory_pending:note",
        "memory_machine:_run_frames", "memory_machine:_run_waiter", "memory_machine:take_notes",
        "memory_queued:then_note", "memory_queued_cache:run_leaf", "sm_waits:apply_notes"),
    "the stream records replace the functional model's answers": (
        "scoreboard:hand_rp",),
    "entry points and glue for Python callers": (
        "gpu:run_launch", "gpu:launch_sums", "memory:flush_l1", "memory:_queued_global", "memory:_queued_shared",
        "memory:_advance", "memory:_next_event", "memory:counters_tree", "memory:_snapshot_of",
        "sm_waits:memory_waiting", "memory_parts:timeline_intervals"),
}
