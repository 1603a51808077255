"""CoreParams: checked fields, the machine's names and Mode, ``from_sm`` (the timing model's SmConfig),
the register-bank rule, and the fields sized inside the RTL (stack depth, parameter words, requests in
flight, shared banks)."""

from __future__ import annotations

import dataclasses

import pytest

from dualflow.common.errors import ConfigError
from dualflow.rtl import configuration
from dualflow.rtl.params import CoreParams


def test_defaults_mirror_the_timing_model_and_the_old_constants():
    from dualflow.machine.config import SmConfig

    p = CoreParams()
    sm = SmConfig()
    # the core's window is the timing model's pool-limited one with its first per-warp limit (2);
    # the timing model's default window (reserve, 4 per warp) is not in the RTL (docs/rtl.md)
    assert (p.dflow_waiting_per_warp, p.dflow_waiting_per_sm) == (2, sm.dflow_waiting_per_sm)
    assert (p.stack_depth, p.param_words, p.requests_in_flight) == (16, 16, 8)
    # shared banks: one per lane, at most one per shared word (the value the LSU derived before)
    assert p.shared_banks == p.warp_size == 8
    assert CoreParams(warp_size=4).shared_banks == 4
    assert CoreParams(warp_size=32, shared_bytes=64).shared_banks == 16
    assert CoreParams(warp_size=4, shared_banks=16).shared_banks == 16


def test_configuration_addresses():
    """The bench writes parameters and initial masks at these addresses, and tid rows as its protocol says."""
    from dualflow.testbench.core.protocol import TID_ROWS

    p = CoreParams()
    assert configuration.TID_ROWS == TID_ROWS
    assert (configuration.CFG_PARAM_BASE, configuration.CFG_SHARED_LIMIT) == (16, 15)
    assert configuration.cfg_mask_base(p) == 32
    assert configuration.cfg_mask_base(CoreParams(param_words=17)) == 48
    assert configuration.cfg_mask_base(CoreParams(param_words=128, warps=64)) + 64 <= 256  # fits the 8-bit address


def test_waiting_limits_are_clamped_to_the_collector_units():
    p = CoreParams(collector_units=3)  # the default dflow_waiting_per_sm (4) exceeds it: all 3 may wait
    assert p.waiting_limit_sm == 3 and p.waiting_limit_warp == 2
    p = CoreParams(collector_units=8, dflow_waiting_per_sm=2, dflow_waiting_per_warp=5)
    assert p.waiting_limit_sm == 2 and p.waiting_limit_warp == 2
    assert CoreParams(mode="base", dflow_waiting_per_warp=1).waiting_limit_warp == 1


@pytest.mark.parametrize("field, value", [
    ("dflow_waiting_per_warp", 0), ("dflow_waiting_per_warp", 17), ("dflow_waiting_per_warp", 1.0),
    ("dflow_waiting_per_sm", 0), ("dflow_waiting_per_sm", -1), ("dflow_waiting_per_sm", True),
    ("stack_depth", 0), ("stack_depth", 65), ("stack_depth", "16"),
    ("param_words", 0), ("param_words", 129),
    ("requests_in_flight", 0), ("requests_in_flight", 65),
    ("shared_banks", 0), ("shared_banks", 3), ("shared_banks", 64), ("shared_banks", 2.0),
    ("read_check", 0), ("read_check", "no"),
])
def test_impossible_values_name_the_field(field: str, value):
    with pytest.raises(ConfigError, match=rf"core parameter {field} must be"):
        CoreParams(**{field: value})


def test_more_shared_banks_than_shared_words_is_rejected():
    with pytest.raises(ConfigError, match="shared_banks must be a power of two in 1..min.* = 16, not 32"):
        CoreParams(shared_bytes=64, shared_banks=32)


def test_round_trip_through_a_dict():
    p = CoreParams(mode="dflow", warp_size=4, collector_units=3, dflow_waiting_per_warp=1, stack_depth=4,
                   param_words=20, requests_in_flight=2, shared_banks=2)
    assert CoreParams(**p.to_dict()) == p
    assert dataclasses.replace(p, stack_depth=8).stack_depth == 8


def test_the_cli_takes_the_new_fields():
    import argparse

    from dualflow.cli.rtl import _add_param_options, _params

    parser = argparse.ArgumentParser()
    _add_param_options(parser)
    args = parser.parse_args(["--dflow-waiting-per-warp", "1", "--shared-banks", "2", "--param-words", "4"])
    p = _params(args)
    assert (p.dflow_waiting_per_warp, p.shared_banks, p.param_words) == (1, 2, 4)
    assert _params(parser.parse_args([])) == CoreParams()
    assert _params(parser.parse_args(["--no-read-check"])).read_check is False
    assert not CoreParams(read_check=False).checks_reads and not CoreParams(mode="base").checks_reads


def test_core_with_non_default_derived_parameters_matches_golden_model():
    """Co-simulation (Icarus) of a core built with small values of the fields that used to be
    constants: 2 shared banks (4 lanes: conflicts), 2 requests in flight, a 4-entry SIMT stack,
    4 parameter words; and a 1-entry stack overflows on the nested divergence (a trap)."""
    from dualflow.testbench.core.directed import directed_case
    from dualflow.testbench.cosim import run_cosim

    small = dict(mode="dflow", warp_size=4, warps=4, collector_units=4, shared_banks=2, requests_in_flight=2,
                 stack_depth=4, param_words=4)
    params = CoreParams(**small)
    results = run_cosim(params, [directed_case(n, params, seed=3) for n in ("diverge", "shared_conflict",
                                                                           "memory_order")])
    failed = [r for r in results if not r.ok]
    assert not failed, "\n\n".join(r.summary() for r in failed)
    params = CoreParams(**{**small, "stack_depth": 1})
    (result,) = run_cosim(params, [directed_case("diverge", params, seed=3)])
    assert result.trap is not None and result.trap.startswith("STACK_OVERFLOW"), result.summary()


def test_mode_is_the_machine_mode():
    from dualflow.machine import Mode

    p = CoreParams(mode="base")
    assert p.mode is Mode.BASE and p.mode == "base" and p.mode.form is Mode.BASE.form and not p.mode.ring
    assert CoreParams(mode=Mode.DFLOW).mode.ring
    assert CoreParams(**p.to_dict()) == p and p.to_dict()["mode"] == "base"
    with pytest.raises(ConfigError, match="core parameter mode must be one of base, dflow, not 'reg'"):
        CoreParams(mode="reg")


def test_from_sm_takes_the_shared_fields_from_the_timing_model():
    from dualflow.machine import SmConfig, UnitConfig
    from dualflow.rtl.params import RTL_ONLY, SM_FIELDS

    sm = SmConfig(warp_size=16, max_threads=1024, register_banks=2, collector_units=6, scheduler="lrr",
                  dflow_waiting_per_warp=1, dflow_waiting_per_sm=3, int_unit=UnitConfig(3, 1, 2))
    p = CoreParams.from_sm(sm, "base", warps=8, regs=20, shared_banks=4)
    assert (p.warp_size, p.register_banks, p.collector_units, p.scheduler, p.alu_latency) == (16, 2, 6, "lrr", 3)
    assert (p.dflow_waiting_per_warp, p.dflow_waiting_per_sm) == (1, 3)
    assert (p.mode, p.warps, p.regs, p.shared_banks, p.ring) == ("base", 8, 20, 4, CoreParams().ring)
    # every field comes from exactly one place
    assert set(SM_FIELDS) | set(RTL_ONLY) | {"mode"} == {f.name for f in dataclasses.fields(CoreParams)}
    assert not set(SM_FIELDS) & set(RTL_ONLY)


@pytest.mark.parametrize("kwargs, message", [
    (dict(warp_size=8), r"warp_size comes from the SmConfig \(sm.warp_size\)"),
    (dict(alu_latency=2), r"alu_latency comes from the SmConfig \(sm.int_unit.latency\)"),
    (dict(lanes=8), "CoreParams has no RTL-only field 'lanes'"),
    (dict(ring=24), "core parameter ring must be a power of two"),
])
def test_from_sm_rejects_misplaced_or_bad_fields(kwargs, message):
    from dualflow.machine import SmConfig, UnitConfig

    with pytest.raises(ConfigError, match=message):
        CoreParams.from_sm(SmConfig(int_unit=UnitConfig(2)), "dflow", warps=4, **kwargs)


def test_from_sm_rejects_what_the_rtl_cannot_build():
    from dualflow.machine import SmConfig, UnitConfig

    with pytest.raises(ConfigError, match="core parameter register_banks must be a power of two in 1..16, not 6"):
        CoreParams.from_sm(SmConfig(register_banks=6, int_unit=UnitConfig(2)), "dflow", warps=4)
    with pytest.raises(ConfigError, match="core parameter alu_latency must be an integer in 1..8, not 9"):
        CoreParams.from_sm(SmConfig(int_unit=UnitConfig(9)), "dflow", warps=4)


@pytest.mark.parametrize("mode, banks", [("dflow", 4), ("base", 1), ("base", 8)])
def test_register_file_signals_follow_the_machine_bank_rule(mode: str, banks: int):
    """``bank_of``/``row_of`` on signals (slices) give the machine's ``register_bank``/``bank_row``
    for every entry of every warp."""
    from amaranth import Module, Signal
    from amaranth.sim import Simulator

    from dualflow.machine import bank_row, register_bank
    from dualflow.rtl.regfile import bank_of, row_of

    p = CoreParams(mode=mode, warps=4, register_banks=banks, regs=7, ring=8, dmax=7)
    warp, index = Signal(range(p.warps)), Signal(range(p.entries_per_warp))
    bank, row = Signal(8), Signal(16)
    m = Module()
    m.d.comb += [bank.eq(bank_of(p, warp, index)), row.eq(row_of(p, warp, index))]
    sim = Simulator(m)

    async def bench(ctx):
        for w in range(p.warps):
            for e in range(p.entries_per_warp):
                ctx.set(warp, w)
                ctx.set(index, e)
                want = (register_bank(e, w, banks), bank_row(e, w, p.entries_per_warp, banks))
                assert (ctx.get(bank), ctx.get(row)) == want
                assert (bank_of(p, w, e), row_of(p, w, e)) == want

    sim.add_testbench(bench)
    sim.run()


def test_a_mode_the_rtl_does_not_build_is_refused():
    """Not generated as a BASE or D-FLOW core (tests/dummy_mode.py)."""
    from dummy_mode import DUMMY, refused

    from dualflow.machine.config import SmConfig

    with pytest.raises(ConfigError, match=refused("the RTL core")):
        CoreParams(mode=DUMMY)
    with pytest.raises(ConfigError, match=refused("the RTL core")):
        CoreParams.from_sm(SmConfig(), DUMMY, warps=4)
