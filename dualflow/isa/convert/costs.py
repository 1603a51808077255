"""What the converter's choices cost: the loop-weighted count of the instructions a conversion
adds, local-memory ones weighed by their latency. The driver keeps the cheapest of its trials by
this cost; the hands variant (``hands.py``) values a register by what leaving it on hand s would
cost. ``benchmarks/converter_costs.py`` sets the local-memory weights to measure others, so code
reads them from this module when it runs (``costs.LOCAL_LOAD_COST``), never from a copy.
"""

from __future__ import annotations

from .cfg import Cfg, natural_loops
from .codegen import CodeGen

#: Weight of an instruction per loop level it sits in, for choosing between rounds.
LOOP_WEIGHT = 16
#: What a local-memory load in a loop adds, in relays (a relay ``mov``, a recomputation and an
#: ``rpinc`` count 1), in the cost that chooses between conversions (outside loops every added
#: instruction counts 1: it runs once, no iteration waits for it). A reload sits on the path to its use: an L1
#: hit costs about 40 cycles where a relay costs about 6 (paper-rtx3080: L1 latency 39, integer
#: latency 4 plus the pipeline), so where a warp waits for it a reload is worth about seven
#: relays; where other warps hide it, one. Chosen by measurement: the cycles of every workload
#: converted with 1, 2, 4 and 7 (benchmarks/converter_costs.py --load-cost; docs/converter.md,
#: "Latency").
LOCAL_LOAD_COST = 4.0
#: What a local-memory store adds, in relays: off every value's path (nothing waits for it), but
#: it takes the memory unit and, in a loop, forms a loop-carried path with the reload after it.
LOCAL_STORE_COST = 2.0


def loop_weights(cfg: Cfg, unrolled: dict[int, int] | None = None) -> dict[int, float]:
    """How often each block runs, relative to the others: LOOP_WEIGHT per loop level it sits in,
    divided by the copies of an unrolled loop (``unrolled``: header pc -> copies; each copy runs
    every n-th iteration). Blocks outside loops are absent (weight 1)."""
    unrolled = unrolled or {}
    weight: dict[int, float] = {}
    for header, body in natural_loops(cfg).items():
        first = cfg.blocks[header].first_pc
        factor = LOOP_WEIGHT / unrolled.get(first, 1)
        for n in body:
            weight[n] = weight.get(n, 1) * factor
    return weight


def cause_cost(cause: str) -> float:
    """What one added instruction of this cause costs in a loop, in relays (local memory by its
    latency)."""
    return LOCAL_LOAD_COST if cause == "reload" else LOCAL_STORE_COST if cause == "spill" else 1.0


def loop_weighted_cost(gen: CodeGen, weight: dict[int, float], origin: list[int | None]) -> float:
    """Loop-weighted cost of the instructions the conversion adds (``origin``: the source pc of
    each pc of the code generated, None for a branch unrolling added); in loops, local-memory ones
    by their latency (outside loops they run once: no iteration waits for them)."""
    total = 0.0
    for bid, bc in gen.codes.items():
        w = weight.get(bid, 1)
        added = sum(cause_cost(e.cause) if w > 1 else 1.0 for e in bc.body + bc.tail + bc.term
                    if e.cause != "orig" or (e.pc is not None and origin[e.pc] is None))
        total += w * added
    return total
