"""The ring budget chosen against spills (``ring_choice``): the smallest at which the converter
spills no more than at the most it may take, found by bisection and checked here by a scan."""

from dualflow.isa import Form
from dualflow.isa.convert import DEFAULT_VARIANTS, ConversionOptions, convert_module
from dualflow.isa.convert.ring_choice import spill_free_ring, spills
from dualflow.kernels.registry import get_workload

CONVERSION = ConversionOptions(DEFAULT_VARIANTS)


def _spills(module, ring):
    return spills(convert_module(module, dmax=min(31, ring - 1), ring=ring, variants=DEFAULT_VARIANTS)[1].values())


def test_spills_counts_spill_and_reload_instructions_in_and_out_of_loops():
    kmeans = get_workload("kmeans")().module(Form.REG)
    _, reports = convert_module(kmeans, dmax=31, ring=32, variants=DEFAULT_VARIANTS)
    in_loops, total = spills(reports.values())
    assert total == sum(c in ("spill", "reload") for r in reports.values() for c in r.causes)
    assert 0 < in_loops < total  # its cluster loop reloads one invariant; the rest is outside


def test_the_chosen_ring_is_the_smallest_that_spills_no_more_than_the_most():
    kmeans = get_workload("kmeans")().module(Form.REG)
    floor = _spills(kmeans, 64)
    chosen = spill_free_ring(kmeans, 32, 64, CONVERSION)
    n = _spills(kmeans, chosen)
    assert n[0] <= floor[0] and n[1] <= floor[1]
    for ring in range(32, chosen):  # every smaller budget spills more, inside loops or in all
        below = _spills(kmeans, ring)
        assert below[0] > floor[0] or below[1] > floor[1]


def test_a_module_that_spills_nothing_keeps_the_least_ring_at_one_conversion(monkeypatch):
    import dualflow.isa.convert.ring_choice as ring_choice

    calls = []
    real = ring_choice.convert_module

    def counted(*args, **kwargs):
        calls.append(kwargs["ring"])
        return real(*args, **kwargs)

    monkeypatch.setattr(ring_choice, "convert_module", counted)
    nn = get_workload("nn")().module(Form.REG)
    assert spill_free_ring(nn, 32, 64, CONVERSION) == 32
    assert calls == [32]
    assert spill_free_ring(nn, 40, 40, CONVERSION) == 40  # no choice: no conversion
    assert calls == [32]
