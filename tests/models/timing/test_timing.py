"""The performance model against hand-computed cycle counts on small programs, and its contracts:
results equal the functional model's, determinism, the memory-ordering check, bad configurations."""

from __future__ import annotations

import numpy as np
import pytest

from dualflow.common.errors import ConfigError
from dualflow.isa import Form, Kernel, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.machine.config import GpuConfig, UnitConfig, describe
from dualflow.machine.mode import Mode
from dualflow.machine.presets import PRESETS, preset
from dualflow.models import Device
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.ordering import MemoryOrderViolation

#: One SM, blocks start at once: cycle counts below are computed by hand from these settings.
SMALL = {"num_sms": 1, "sm.cta_launch_latency": 0}


def kernel(body: str, params: str = "out") -> Kernel:
    return assemble(f".kernel t\n.form reg\n.param {params}\n{body}").only


def run(k: Kernel, mode: Mode | str, threads: int = 32, words: int = 1024, **settings):
    """Run ``k`` (REG form; converted for D-FLOW) as one block; returns (cycles, issue log, device, buffer)."""
    if Mode(mode).form is Form.DFLOW and k.form is Form.REG:
        k = convert_kernel(k)[0]
    config = GpuConfig(mode=mode).replace(**{**SMALL, **settings})
    dev = TimingDevice(config, record_issue=True)
    buf = dev.upload(np.arange(words, dtype=np.uint32))
    dev.launch(k, grid=1, block=threads, params=[buf] * len(k.params))
    return dev.timing[-1].cycles, dev.gpu.issue_log, dev, buf


def issue_cycles(log, pc=None) -> list[int]:
    return [c for c, _, _, p in log if pc is None or p == pc]


def chain(n: int) -> Kernel:
    return kernel(" mov r0, 1\n" + " iadd r0, r0, 1\n" * n + " ldc r1, out\n stg [r1], r0\n exit\n")


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("latency", [4, 9])
def test_dependent_chain(mode, latency):
    """Each link of a dependent chain costs: operand read (1) + dispatch (1) + unit latency; the
    writeback frees the dependant in the same cycle (BASE: scoreboard; D-FLOW: collector wake-up)."""
    unit = {"sm.int_unit": UnitConfig(latency, 1, 4)}
    cycles = [run(chain(n), mode, **unit)[0] for n in (2, 3, 7)]
    step = latency + 2
    assert cycles[1] - cycles[0] == step
    assert cycles[2] - cycles[1] == 4 * step


def test_dependent_chain_issue_times_base():
    """BASE issue cycles, by hand: fetch at 0 arrives at 1; mov (no register operand to read)
    issues at 1, dispatches at 2 and writes back at 2 + 4 = 6; the first iadd issues at 6, then one
    every 6 cycles (read 1 + dispatch 1 + latency 4)."""
    _, log, _, _ = run(chain(3), "base")
    assert issue_cycles(log)[:4] == [1, 6, 12, 18]


def test_independent_loads_overlap():
    """Independent loads issue back to back; their latencies overlap instead of adding up."""
    def loads(n: int) -> Kernel:
        addr = "".join(f" iadd r{10 + i}, r1, {128 * i}\n" for i in range(n))
        ld = "".join(f" ldg r{20 + i}, [r{10 + i}]\n" for i in range(n))
        acc = "".join(f" iadd r30, r30, r{20 + i}\n" for i in range(n))
        return kernel(" ldc r1, out\n mov r30, 0\n" + addr + ld + acc + " stg [r1], r30\n exit\n")

    one, log1, dev, _ = run(loads(1), "base")
    eight, log8, _, _ = run(loads(8), "base")
    k8 = loads(8)
    ldg_pcs = [pc for pc, ins in enumerate(k8.code) if ins.op.name == "LDG"]
    times = [c for c, _, _, pc in log8 if pc in ldg_pcs]
    assert times == list(range(times[0], times[0] + 8))  # one per cycle
    latency = dev.gpu.memory.dram_latency
    # seven more loads cost far less than seven more memory latencies
    assert eight - one < 7 * 40 < 7 * latency


@pytest.mark.parametrize("ports", [1, 2])
def test_register_bank_conflict(ports):
    """Two operands in one bank of one port need two read cycles: exactly one cycle and one
    conflict more; a bank with two ports serves both in one cycle."""
    banks = 8

    def prog(second: int) -> Kernel:
        return kernel(f" mov r0, 3\n mov r{second}, 4\n nop\n nop\n nop\n nop\n nop\n nop\n"
                      f" iadd r20, r0, r{second}\n ldc r1, out\n stg [r1], r20\n exit\n")

    settings = {"sm.register_banks": banks, "sm.register_bank_ports": ports}
    apart, _, dev_a, _ = run(prog(1), "base", **settings)
    clash, _, dev_c, _ = run(prog(banks), "base", **settings)  # r0 and r8: bank (r + warp) mod 8 equal
    assert dev_a.timing[-1].rf_bank_conflicts == 0
    assert dev_c.timing[-1].rf_bank_conflicts == (1 if ports == 1 else 0)
    assert clash - apart == (1 if ports == 1 else 0)


def test_false_dependency_stalls_base_only():
    """A write to the register a load is still filling (WAW) stalls BASE's issue for the whole load;
    D-FLOW names a fresh slot and goes on."""
    k = kernel(" ldc r1, out\n ldg r5, [r1]\n iadd r5, r1, 7\n stg [r1+4], r5\n exit\n")
    ldg = next(pc for pc, ins in enumerate(k.code) if ins.op.name == "LDG")
    waits = {}
    for mode in Mode:
        _, log, dev, _ = run(k, mode)
        t_ldg = issue_cycles(log, ldg)[0]
        t_next = min(c for c in issue_cycles(log) if c > t_ldg)
        waits[mode] = t_next - t_ldg
    assert waits["dflow"] == 1
    assert waits["base"] > 100  # the load's whole memory latency


def test_shared_memory_bank_conflict_costs_rounds():
    """A stride-2 shared access takes two bank rounds, a stride-32 one 32."""
    def prog(stride: int) -> Kernel:
        return assemble(f""".kernel t
.form reg
.param out
.shared 4096
 s2r r0, %tid.x
 imul r1, r0, {4 * stride}
 iand r1, r1, 4095
 lds r2, [r1]
 ldc r3, out
 ishl r4, r0, 2
 iadd r3, r3, r4
 stg [r3], r2
 exit
""").only

    c1, c2, c32 = (run(prog(s), "base")[0] for s in (1, 2, 32))
    assert c2 - c1 == 1
    assert c32 - c1 == 31


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", ["vadd", "reduce", "divloop", "gaussian", "nn", "pathfinder", "lud", "hotspot",
                                  "bfs", "nw"])
def test_results_equal_functional_model(name, mode):
    """Every workload's outputs and instruction counts on the timing model equal the functional model's."""
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload

    form = mode.form
    wl = get_workload(name)()
    ref = run_workload(wl, size="tiny", form=form)
    dev = TimingDevice(preset("paper-rtx3080").replace(mode=mode, num_sms=4))
    got = run_workload(wl, size="tiny", form=form, device=dev)
    assert got.outputs.keys() == ref.outputs.keys()
    for key in ref.outputs:
        np.testing.assert_array_equal(np.asarray(got.outputs[key]).view(np.uint8),
                                      np.asarray(ref.outputs[key]).view(np.uint8), err_msg=key)
    assert got.total.warp_instructions == ref.total.warp_instructions
    assert got.total.thread_instructions == ref.total.thread_instructions
    timing = dev.timing
    assert sum(t.total_warp_instructions for t in timing) == ref.total.warp_instructions
    assert all(t.cycles > 0 for t in timing)


@pytest.mark.parametrize("mode", list(Mode))
def test_deterministic(mode):
    from dualflow.experiments.simulate import simulate

    config = preset("paper-rtx3080").replace(mode=mode, num_sms=8)
    a = simulate("pathfinder", config, size="tiny")
    b = simulate("pathfinder", config, size="tiny")
    assert a.total.to_dict() == b.total.to_dict()
    assert a.cycles == b.cycles


def _ordering_kernel(load_color: int) -> Kernel:
    """A store whose data comes from a slow load, then a load of the stored word: the second load is
    ready long before the store. Same color: program order; different colors: the ISA lets D-FLOW
    reorder them, which here really conflicts."""
    return assemble(f""".kernel t
.form dflow
.param out
 ldc out
 ldg.c0 [|1|+64]
 stg.c1 [|2|], |1|
 ldg.c{load_color} [|2|]
 stg.c3 [|3|+4], |1|
 exit
""").only


def test_memory_order_same_color_keeps_program_order():
    _, _, dev, buf = run(_ordering_kernel(1), "dflow")
    got = dev.copy_out(buf, 2)
    assert got[0] == 16 and got[1] == 16  # out[0] = out[16] = 16, then out[1] = out[0]


def test_memory_order_violation_fails_loudly():
    with pytest.raises(MemoryOrderViolation, match="touch the same word"):
        run(_ordering_kernel(2), "dflow")


def test_functional_model_agrees_on_the_ordering_kernel():
    dev = Device()
    buf = dev.upload(np.arange(1024, dtype=np.uint32))
    dev.launch(_ordering_kernel(1), grid=1, block=32, params=[buf])
    assert list(dev.copy_out(buf, 2)) == [16, 16]


def test_presets_and_describe():
    for name in PRESETS:
        cfg = preset(name)
        assert cfg.name == name
        assert GpuConfig.from_dict(cfg.to_dict()) == cfg
    paper = preset("paper-rtx3080")
    assert (paper.num_sms, paper.core_clock_mhz, paper.sm.schedulers, paper.sm.scheduler) == (68, 1440.0, 4, "gto")
    assert (paper.sm.max_threads, paper.sm.registers, paper.sm.collector_units) == (2048, 65536, 8)
    assert paper.sm.shared_bytes == 128 * 1024
    assert (paper.memory.l1.size_bytes, paper.memory.l1.ways, paper.memory.l1.line_bytes) == (64 * 1024, 8, 128)
    assert (paper.memory.l2.size_bytes, paper.memory.l2.slices, paper.memory.l2.ways) == (4 << 20, 64, 16)
    assert (paper.memory.dram.latency, paper.memory.dram.clock_mhz) == (82, 1523.0)  # with tCL: 100 DRAM cycles
    doc = describe()
    assert doc["sm.collector_units"]["unit"] == "units"
    assert all(v.get("description") for v in doc.values())


@pytest.mark.parametrize("change, message", [
    ({"num_sms": 0}, "num_sms"),
    ({"mode": "ooo"}, "mode"),
    ({"sm.scheduler": "random"}, "scheduler"),
    ({"sm.max_threads": 100}, "multiple of the warp size"),
    ({"sm.nonsense": 1}, "no field 'nonsense'"),
])
def test_bad_configuration(change, message):
    with pytest.raises(ConfigError, match=message):
        GpuConfig().replace(**change)


def test_block_that_cannot_fit_is_refused():
    k = kernel(" exit\n")
    with pytest.raises(ConfigError, match="does not fit an SM"):
        run(k, "base", threads=1024, **{"sm.max_threads": 512})


def test_form_must_match_mode():
    dev = TimingDevice(GpuConfig(mode="dflow", num_sms=1))
    with pytest.raises(ConfigError, match="REG form"):
        dev.launch(kernel(" exit\n"), grid=1, block=32, params=[0])


@pytest.mark.parametrize("mode", list(Mode))
def test_kernel_launch_latency_is_part_of_every_launch(mode: Mode):
    """Each launch's blocks start ``kernel_launch_latency`` cycles after it begins: the launch
    takes that much longer (gaussian: the same blocks, each launch shifted whole), every SM's
    schedulers are idle through it, and both engines agree."""
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload

    base = preset("paper-rtx3080").replace(mode=mode)
    timing = {}
    for latency in (0, 500):
        config = base.replace(kernel_launch_latency=latency)
        for engine in ("reference", "compiled"):
            device = TimingDevice(config, engine=engine)
            run_workload(get_workload("gaussian"), size="tiny", form=mode.form, device=device)
            timing[latency, engine] = device.timing
    for engine in ("reference", "compiled"):
        without, with_latency = timing[0, engine], timing[500, engine]
        assert [t.cycles + 500 for t in without] == [t.cycles for t in with_latency]
        for t in with_latency:
            assert sum(t.stalls.values()) == t.cycles * base.num_sms * base.sm.schedulers
            assert t.stalls["idle"] >= 500 * base.num_sms * base.sm.schedulers
    assert [t.to_dict() for t in timing[500, "reference"]] == [t.to_dict() for t in timing[500, "compiled"]]


def test_blocks_placed_while_the_launch_runs_get_their_executors(monkeypatch):
    """A launch with more blocks than fit at its start makes the executors of the later blocks
    inside the launch loop (paper-size launches do, at ``EXECUTOR_WARPS`` warps per executor)."""
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload
    from dualflow.machine.functional import FunctionalConfig
    from dualflow.models.timing import gpu as gpu_module

    monkeypatch.setattr(gpu_module, "EXECUTOR_WARPS", 8)
    config = preset("paper-rtx3080").replace(num_sms=1)
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size), engine="reference")
    run_workload(get_workload("vadd"), size="small", form=config.mode.form, seed=1, device=device)
    launch = device.launches[0]
    assert launch.grid * launch.block > config.sm.max_threads  # so some were placed in the loop
