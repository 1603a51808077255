"""The hands coverage bins (dualflow/testbench/hands_coverage.py) on golden-model traces of hand-written
hands kernels: which bins a kernel hits and which it must not, the bins a core's rings have, and
the hands cover point of ``Coverage``."""

from __future__ import annotations

import pytest
from programs import hands_divergent, hands_loop, hands_source

from dualflow.common.errors import ConfigError
from dualflow.isa import assemble
from dualflow.machine.functional import FunctionalConfig
from dualflow.models.device import Device
from dualflow.rtl.params import CoreParams
from dualflow.testbench.campaign import hands_of
from dualflow.testbench.cosim import CaseResult
from dualflow.testbench.coverage import HANDS, Coverage
from dualflow.testbench.hands_coverage import DIFFERENT_HANDS, hand_bins, hands_hit


def _hits(source: str, threads: int = 8) -> set[str]:
    """The bins the golden model's trace of ``source`` hits (as if the core retired it alike)."""
    kernel = assemble(source).only
    dev = Device(FunctionalConfig(warp_size=4))
    out = dev.alloc(4 * threads)
    trace = dev.launch(kernel, grid=(1, 1, 1), block=(threads, 1, 1), params=[out], trace=True).trace
    return hands_hit(kernel, CaseResult("k", 1, None, rtl=trace))


def test_bins_follow_the_rings():
    """A read bin is left out where it is the d=1 one: ring 2 has only d=1, ring 4 no mid for dmax 2."""
    bins = hand_bins((16, 4, 16, 2), 15)
    assert len(bins) == 9 + 9 + 9 + 7 + 1 and bins[-1] == DIFFERENT_HANDS
    assert {"t read max", "t read mid", "u read max"} <= set(bins)
    assert not {"v read mid", "v read max"} & set(bins)
    assert "t read mid" not in hand_bins((16, 4), 2) and "t read max" in hand_bins((16, 4), 2)


def test_divergent_paths_of_unequal_hands_join_differing():
    """Path A writes hand s twice and t once, path B s once and t three times: both hands differ
    at the join."""
    split = _hits(hands_source("divergent", "16 8", 8, hands_divergent("iand |2|, 1")))
    assert {"s join differs", "t join differs", DIFFERENT_HANDS, "s write", "t write", "s read d=1",
            "s read mid", "t read mid"} <= split, split
    assert not {b for b in split if "wrap" in b or "rpinc" in b or "illegal" in b}


def test_a_loop_wraps_its_hand_and_reads_far():
    """``hands_loop``: hand s (ring 8) written 5 times an iteration wraps; v is read at 1, its largest."""
    hits = _hits(hands_source("loop", "8 2 2 2", 7, hands_loop(12)))
    assert {"s RP wrap", "s write", "u write", "v write", "v read d=1", DIFFERENT_HANDS} <= hits, hits
    assert "u RP wrap" not in hits and "v RP wrap" not in hits
    assert not {b for b in hits if "join differs" in b}, hits  # a uniform loop: no lane waits for another


def test_rpinc_and_reservations_are_binned_per_hand():
    source = hands_source("reserved", "16 8", 7, """    mov 7 -> t
    s2r %tid.x
    ssy JOIN, 2 -> t
    iand |1|, 1
    brnz |1|, A
    sync
A:  mov 1 -> t
    mov 2 -> t
    sync
JOIN:
    rpinc 4 -> t
    rpinc 1
    iadd |t7|, |t7| -> t
    exit
""", "hands reserved-ssy")
    hits = _hits(source)
    assert {"t ssy reserve", "t rpinc", "s rpinc", "t join differs", "t read max"} <= hits, hits
    assert "s ssy reserve" not in hits and "s join differs" not in hits


def test_the_cover_point_exists_on_dflow_cores_with_hands_only():
    cores = [CoreParams(mode="dflow", rings=(16, 4, 16, 2), dmax=15), CoreParams(mode="base")]
    cov = Coverage(("base", "dflow"), 4, hands_of(cores))
    try:
        assert HANDS in cov.bins("dflow") and HANDS not in cov.bins("base")
        assert list(cov.bins("dflow")[HANDS]) == hand_bins((16, 4, 16, 2), 15)
        assert "hands s illegal read" in cov.report()
    finally:
        cov.close()
    assert hands_of([CoreParams(mode="dflow")]) is None
    with pytest.raises(ConfigError, match="one set of rings"):
        hands_of([CoreParams(mode="dflow", rings=(16, 4), dmax=15), CoreParams(mode="dflow", rings=(16, 8), dmax=15)])
