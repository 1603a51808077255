"""The compiled timing engine (dualflow/models/timing/compiled/) against the reference engine
(dualflow/models/timing/gpu.py), which is its specification: every launch's full ``TimingStats`` (stall
reasons, counters, per-bank register-file traffic, memory statistics), the cycle the next launch
starts at, the issue log (cycle, block, warp, pc of every issue) and the memory results must be
equal. The behaviour lock (tests/project/test_behaviour_lock.py) holds the compiled engine to the same
pinned fingerprints as the reference.

Runs: every workload at size tiny in both modes on three presets (GTO and LRR schedulers, 68/46/15
SMs); the directed programs (faulting ones fall back to the reference engine, which raises); a
launch sequence whose middle launch has a data race (it falls back, and the state carries across in
both directions); the D-FLOW memory-ordering violation; a few workloads at size small (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from engines import ENGINES, assert_same, devices, run_both
from test_timing import _ordering_kernel

from dualflow.common.errors import KernelFault
from dualflow.isa import Form, Kernel, Opcode, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.kernels.directed import FAULT_PROGRAMS, PROGRAMS, program
from dualflow.kernels.directed import kernel as directed_kernel
from dualflow.kernels.registry import COMPILED, HAND_WRITTEN, get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.banks import register_bank
from dualflow.machine.config import GpuConfig
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset
from dualflow.models.timing.compiled.collector import register_bank as compiled_register_bank
from dualflow.models.timing.compiled.core import Code, code_ref
from dualflow.models.timing.compiled.engine import encode_code, encode_hands, hand_rings
from dualflow.models.timing.compiled.layout import CARRIED_ARRAYS as CARRIED
from dualflow.models.timing.compiled.layout import NOT_RESET_ARRAYS as NOT_RESET
from dualflow.models.timing.compiled.layout import (
    RESET_ROWS,
    RESET_WHOLE,
    SV_CARRIED,
    SmState,
    make_sm_state,
    sm_state_ref,
)
from dualflow.models.timing.compiled.sm import must_keep_order
from dualflow.models.timing.compiled.sm_state import SmStates, reset_state
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.ordering import MemoryOrderViolation
from dualflow.models.timing.ordering import must_keep_order as reference_must_keep_order
from dualflow.models.timing.program import decode_kernel, decoded

SV_CARRIED_COLUMNS = [column for column, _ in SV_CARRIED]
PRESETS = ("paper-rtx3080", "ampere-rtx3070", "fermi-gtx480")


def test_register_bank_rule_is_the_machines():
    for banks, groups in ((1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (8, 4), (8, 2), (4, 4), (16, 4)):
        for slot in range(0, 64, 3):
            for entry in range(0, 300, 7):
                got = compiled_register_bank(entry, slot, banks, groups)
                assert got == register_bank(entry, slot, banks, groups)
                assert got // (banks // groups) == slot % groups  # a sub-core's warps use its own banks


def test_memory_order_rule_is_the_isas():
    k = directed_kernel("memory_order", Form.DFLOW)
    static = decode_kernel(k)
    code = code_ref(Code(table=encode_code(static), units=np.zeros((5, 3), dtype=np.int64), rings=hand_rings(k),
                         hands=encode_hands(static)))
    mem = [ins for ins in static if ins.ordered]
    assert len(mem) >= 2
    for a in mem:
        for b in mem:
            assert bool(must_keep_order(code, a.pc, b.pc)) == reference_must_keep_order(a, b)


# ------------------------------------------------------------------ workloads
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
@pytest.mark.parametrize("preset_name", PRESETS)
def test_workload_tiny(preset_name: str, name: str, mode: Mode):
    run_both(name, preset(preset_name).replace(mode=mode.value))


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_suite_tiny(name: str, mode: Mode):
    """The compiled suite (CUDA C through the front end) on the paper's GPU: both engines agree."""
    run_both(name, preset("paper-rtx3080").replace(mode=mode.value))


#: The SM structures the presets do not all use: fetch that stops at branches, one warp's fetch
#: a cycle, one access per register bank (the project's first model), and SM86's front end and
#: register file (fetch past branches, four fetches a cycle, two accesses per bank).
STRUCTURES = {
    "stop-at-branches": {"sm.fetch_past_branches": False, "sm.fetch_warps": 1, "sm.register_bank_ports": 1,
                         "sm.writeback_ports": 4},
    "sm86": {"sm.fetch_past_branches": True, "sm.fetch_warps": 4, "sm.register_bank_ports": 2,
             "sm.writeback_ports": 8},
    # the D-FLOW window's other policies: sub-cores (their own collector units, pipelines and
    # banks per scheduler), a per-warp window, oldest-first issue
    "sub-cores": {"sm.collector_partition": "scheduler"},
    "per-warp-oldest-first": {"sm.dflow_window": "per-warp", "sm.dflow_waiting_per_warp": 3,
                              "sm.dflow_issue_order": "oldest-first"},
    "sub-cores-per-warp": {"sm.collector_partition": "scheduler", "sm.dflow_window": "per-warp"},
    "reserve-scheduler-banks": {"sm.dflow_window": "reserve", "sm.register_bank_map": "scheduler"},
    "sub-cores-reserve-loads": {"sm.collector_partition": "scheduler", "sm.dflow_window": "reserve",
                                "sm.dflow_reserve": 1, "sm.dflow_send_ahead": "loads"},
}


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", ["bfs", "divloop", "gaussian", "hotspot", "lud", "nw", "pathfinder"])
@pytest.mark.parametrize("structure", sorted(STRUCTURES))
def test_sm_structures(structure: str, name: str, mode: Mode):
    run_both(name, preset("paper-rtx3080").replace(mode=mode.value, **STRUCTURES[structure]))


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", ["pathfinder", "reduce", "hotspot", "bfs", "nw"])
def test_workload_small(name: str, mode: Mode):
    run_both(name, preset("paper-rtx3080").replace(mode=mode.value), size="small")


# ------------------------------------------------------------------ directed programs
@pytest.mark.parametrize("warp_size", [4, 32])
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", [*PROGRAMS, *FAULT_PROGRAMS])
def test_directed_program(name: str, mode: Mode, warp_size: int):
    config = preset("paper-rtx3080").replace(mode=mode.value, num_sms=2, **{"sm.warp_size": warp_size})
    devs = devices(config)
    prog = program(name)
    k = directed_kernel(name, mode.form)
    outcome = {}
    for engine, dev in devs.items():
        params = prog.setup(dev)
        try:
            dev.launch(k, grid=prog.grid, block=prog.block, params=params)
            outcome[engine] = None
        except KernelFault as fault:  # a fault falls back to the reference engine, which raises it
            outcome[engine] = str(fault)
    assert outcome["compiled"] == outcome["reference"]
    assert (outcome["reference"] is not None) == (name in FAULT_PROGRAMS)
    if outcome["reference"] is None:
        assert_same(devs["reference"], devs["compiled"])


# ------------------------------------------------------------------ fallback
def _kernel(name: str, body: str) -> Kernel:
    return assemble(f".kernel {name}\n.form reg\n.param out\n{body}").only


#: Every thread adds its index into out[i]: no two threads touch one word.
_PRIVATE = _kernel("private", " s2r r0, %tid.x\n s2r r1, %ctaid.x\n s2r r2, %ntid.x\n imad r0, r1, r2, r0\n"
                   " ldc r3, out\n ishl r4, r0, 2\n iadd r3, r3, r4\n ldg r5, [r3]\n iadd r5, r5, r0\n"
                   " stg [r3], r5\n exit\n")
#: Every thread of every block stores its index into out[0]: a data race between warps, whose
#: outcome depends on the order warps run in, so the compiled engine hands it to the reference.
_RACY = _kernel("racy", " s2r r0, %tid.x\n s2r r1, %ctaid.x\n s2r r2, %ntid.x\n imad r0, r1, r2, r0\n"
                " ldc r3, out\n stg [r3], r0\n exit\n")


@pytest.mark.parametrize("mode", list(Mode))
def test_racy_launch_falls_back_and_state_carries(mode: Mode):
    """Launches before and after a racy one, on both engines: every launch's timing, the memory
    system's state (the next launch's statistics and times depend on it), the cycle and the
    issue log carry across the fallback exactly."""
    config = preset("paper-rtx3080").replace(mode=mode.value, num_sms=4)
    devs = devices(config)
    kernels = [convert_kernel(k)[0] if mode.form is Form.DFLOW else k for k in (_PRIVATE, _RACY, _PRIVATE)]
    for dev in devs.values():
        out = dev.upload(np.zeros(4096, dtype=np.uint32))
        for k in (*kernels, kernels[1], kernels[0]):
            dev.launch(k, grid=8, block=96, params=[out])
    assert_same(devs["reference"], devs["compiled"])
    assert devs["compiled"].gpu._reference is not None  # the racy launches did fall back


def test_dram_log_carries_across_a_fallback():
    """``record_dram``: the compiled engine's log goes to the reference engine for a racy launch
    and back, and ends equal to the reference engine's own."""
    config = preset("paper-rtx3080").replace(mode="base", num_sms=4)
    logs = {}
    for engine in ENGINES:
        dev = TimingDevice(config, record_dram=True, engine=engine)
        out = dev.upload(np.zeros(1 << 16, dtype=np.uint32))
        for k in (_PRIVATE, _RACY, _PRIVATE):
            dev.launch(k, grid=64, block=256, params=[out])
        logs[engine] = dev.gpu.memory.dram_requests()
    assert dev.gpu._reference is not None  # the compiled engine did fall back
    assert logs["compiled"] == logs["reference"] and len(logs["reference"]) > 0


# ------------------------------------------------------------------ errors
def test_memory_order_violation_raises_the_reference_error():
    config = GpuConfig(mode="dflow").replace(num_sms=1, **{"sm.cta_launch_latency": 0})
    messages = []
    for dev in devices(config).values():
        buf = dev.upload(np.arange(1024, dtype=np.uint32))
        with pytest.raises(MemoryOrderViolation) as info:
            dev.launch(_ordering_kernel(2), grid=1, block=32, params=[buf])
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "touch the same word" in messages[0]


def test_same_color_keeps_order_on_both_engines():
    config = GpuConfig(mode="dflow").replace(num_sms=1, **{"sm.cta_launch_latency": 0})
    devs = devices(config)
    for dev in devs.values():
        buf = dev.upload(np.arange(1024, dtype=np.uint32))
        dev.launch(_ordering_kernel(1), grid=1, block=32, params=[buf])
    assert_same(devs["reference"], devs["compiled"])


def test_unknown_engine_is_refused():
    from dualflow.common.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown timing engine"):
        TimingDevice(preset("paper-rtx3080"), engine="fast")


def _assert_fresh(state: SmState, made: SmState) -> None:
    """``state`` equals the new state ``made`` but for what a launch writes before reading it
    (``NOT_RESET``) and what carries to the next launch (``CARRIED``, ``SV_CARRIED_COLUMNS``)."""
    for name in SmState._fields:
        if name not in NOT_RESET + CARRIED:
            got, want = getattr(state, name), getattr(made, name)
            if name == "sv":
                keep = [c for c in range(got.shape[1]) if c not in SV_CARRIED_COLUMNS]
                got, want = got[:, keep], want[:, keep]
            assert np.array_equal(got, want), name


def test_reused_sm_state_is_fresh(monkeypatch):
    """A launch leaves the kept SM state dirty; the next launch gets it back equal, array by
    array, to a newly made one but for what carries across launches (``SmStates``)."""
    calls = []
    fresh = SmStates.fresh
    monkeypatch.setattr(SmStates, "fresh", lambda self, s, pipes: calls.append((s, pipes)) or fresh(self, s, pipes))
    config = preset("paper-rtx3080").replace(mode="dflow")
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size))
    run_workload(get_workload("gaussian"), size="tiny", form=Form.DFLOW, device=device)
    states = device.gpu._states
    used = states.state
    settings, pipes = calls[-1]
    made = make_sm_state(settings, pipes)
    with pytest.raises(AssertionError):
        _assert_fresh(used, made)
    carried = {name: getattr(used, name).copy() for name in CARRIED}
    sv_carried = used.sv[:, SV_CARRIED_COLUMNS].copy()
    assert any(a.any() for a in carried.values()) and sv_carried.any()
    again, _ = states.fresh(settings, pipes)
    assert again is used
    _assert_fresh(again, made)
    for name, value in carried.items():
        assert np.array_equal(getattr(again, name), value), name
    assert np.array_equal(again.sv[:, SV_CARRIED_COLUMNS], sv_carried)


def test_reset_state_resets_every_array_but_those_written_first(monkeypatch):
    """``reset_state`` names each array it resets: every one outside ``NOT_RESET`` and the
    carried values is back to a new state's after a launch wrote all of them (every SM's rows,
    every slot used); the carried values are kept."""
    assert sorted(RESET_WHOLE + RESET_ROWS + NOT_RESET + CARRIED) == sorted(SmState._fields)
    calls = []
    fresh = SmStates.fresh
    monkeypatch.setattr(SmStates, "fresh", lambda self, s, pipes: calls.append(s) or fresh(self, s, pipes))
    run_workload(get_workload("nn"), size="tiny", form=Form.REG, device=TimingDevice(preset("paper-rtx3080")))
    settings = calls[0]._replace(num_sms=3)
    state = make_sm_state(settings, 4)
    for name in SmState._fields:
        if name not in NOT_RESET:
            getattr(state, name)[...] = 7
    reset_state(sm_state_ref(state), sm_state_ref(make_sm_state(settings._replace(num_sms=1), 4)))
    _assert_fresh(state, make_sm_state(settings, 4))
    for name in CARRIED:
        assert (getattr(state, name) == 7).all(), name
    assert (state.sv[:, SV_CARRIED_COLUMNS] == 7).all()


def test_sm_state_widens_its_board_keeping_the_carried_values(monkeypatch):
    """A launch needing more register entries per warp than the kept state's ``board`` holds
    gets a new state, fresh but for the values the last launch carried."""
    calls = []
    fresh = SmStates.fresh
    monkeypatch.setattr(SmStates, "fresh", lambda self, s, pipes: calls.append(s) or fresh(self, s, pipes))
    run_workload(get_workload("nn"), size="tiny", form=Form.REG, device=TimingDevice(preset("paper-rtx3080")))
    settings = calls[0]._replace(num_sms=3)
    states = SmStates()
    state, _ = states.fresh(settings, 4)
    state.pipes[...], state.bank_busy[...], state.sv[:, SV_CARRIED_COLUMNS] = 5, 6, 7
    state.wv[...] = 8  # a launch's leftovers
    wider, _ = states.fresh(settings._replace(entries=state.board.shape[2] + 1), 4)
    assert wider is not state and wider.board.shape[2] == state.board.shape[2] + 1
    _assert_fresh(wider, make_sm_state(settings, 4))
    assert (wider.pipes == 5).all() and (wider.bank_busy == 6).all() and (wider.sv[:, SV_CARRIED_COLUMNS] == 7).all()
    again, _ = states.fresh(settings, 4)  # narrower launches keep the wider state
    assert again is wider


def test_decoded_facts_follow_a_mutated_kernel():
    """``PerKernel`` keeps decoded facts per kernel object, but not past a change of its code."""
    kernel = assemble(".kernel k\n.form reg\n.regs 2\nmov r1, 1\nexit\n").kernels["k"]
    first = decoded(kernel)
    assert decoded(kernel) is first
    kernel.code[0] = kernel.code[1]
    assert decoded(kernel) is not first and decoded(kernel)[0].op is Opcode.EXIT
