"""CUDA C twins of the ten hand-written workloads, compiled by the front end.

Each twin re-expresses one hand-written workload (Rodinia's seven in ``kernels/rodinia/`` and the
three samples) as the CUDA C an ordinary CUDA programmer would write for it: the same kernel
names, the same parameters in the same order, so the original's host driver, sizes, numpy
reference and check run unchanged on the compiled kernels. Comparing a twin with its original
measures what the front end costs (or saves) against hand-written assembly
(``benchmarks/frontend_twins.py``).

FP contraction: the originals' checks are bit-exact. Where the hand-written kernel has no fused
multiply-add (hotspot, the samples), the twin is compiled with ``-ffp-contract=off``; where it
fuses ``x -= a*b`` as nvcc does (gaussian, lud, nn), the twin keeps clang's default contraction,
which fuses the same operations. The integer workloads (pathfinder, bfs, nw) need no flag; they
are given ``-ffp-contract=off`` too, so no FP question arises.
"""

from __future__ import annotations

from pathlib import Path

from ...compiled import CompiledWorkload
from ...rodinia import Bfs, Gaussian, Hotspot, Lud, Nn, Nw, Pathfinder
from ...samples import Divloop, Reduce, Vadd
from ...workload import Workload

HERE = Path(__file__).parent
#: No fused multiply-add: the check follows the source's operations one rounding each.
NO_CONTRACTION = ("-ffp-contract=off",)
#: clang's default for CUDA (contraction across a*b+c, as nvcc): the check expects the FMAs.
NVCC_CONTRACTION = ()


class GaussianCu(CompiledWorkload, Gaussian):
    name = "gaussian-cu"
    suite = "rodinia"
    description = "gaussian in CUDA C: Fan1 (a divide per row) and Fan2 (FMA update), compiled"
    cuda_source = HERE / "gaussian.cu"
    cuda_flags = NVCC_CONTRACTION


class LudCu(CompiledWorkload, Lud):
    name = "lud-cu"
    suite = "rodinia"
    description = "lud in CUDA C: diagonal, perimeter and internal 16x16-tile kernels, compiled"
    cuda_source = HERE / "lud.cu"
    cuda_flags = NVCC_CONTRACTION


class PathfinderCu(CompiledWorkload, Pathfinder):
    name = "pathfinder-cu"
    suite = "rodinia"
    description = "pathfinder in CUDA C: pyramid-blocked min-cost DP in shared memory, compiled"
    cuda_source = HERE / "pathfinder.cu"
    cuda_flags = NO_CONTRACTION


class NnCu(CompiledWorkload, Nn):
    name = "nn-cu"
    suite = "rodinia"
    description = "nn in CUDA C: a thread per record computes its distance (sub, mul, fma, sqrt), compiled"
    cuda_source = HERE / "nn.cu"
    cuda_flags = NVCC_CONTRACTION


class BfsCu(CompiledWorkload, Bfs):
    name = "bfs-cu"
    suite = "rodinia"
    description = "bfs in CUDA C: frontier expansion and next-frontier kernels over a CSR graph, compiled"
    cuda_source = HERE / "bfs.cu"
    cuda_flags = NO_CONTRACTION


class HotspotCu(CompiledWorkload, Hotspot):
    name = "hotspot-cu"
    suite = "rodinia"
    description = "hotspot in CUDA C: pyramid-blocked FP32 thermal stencil on 16x16 shared tiles, compiled"
    cuda_source = HERE / "hotspot.cu"
    cuda_flags = NO_CONTRACTION


class NwCu(CompiledWorkload, Nw):
    name = "nw-cu"
    suite = "rodinia"
    description = "nw in CUDA C: Needleman-Wunsch anti-diagonal wavefronts in 16x16 shared tiles, compiled"
    cuda_source = HERE / "nw.cu"
    cuda_flags = NO_CONTRACTION


class VaddCu(CompiledWorkload, Vadd):
    name = "vadd-cu"
    suite = "samples"
    description = "vadd in CUDA C: vector add, one thread per element, compiled"
    cuda_source = HERE / "vadd.cu"
    cuda_flags = NO_CONTRACTION
    dflow_source = None  # the DFLOW form comes from the converter


class ReduceCu(CompiledWorkload, Reduce):
    name = "reduce-cu"
    suite = "samples"
    description = "reduce in CUDA C: per-block tree reduction in shared memory, compiled"
    cuda_source = HERE / "reduce.cu"
    cuda_flags = NO_CONTRACTION
    dflow_source = None


class DivloopCu(CompiledWorkload, Divloop):
    name = "divloop-cu"
    suite = "samples"
    description = "divloop in CUDA C: a loop whose trip count differs between lanes, compiled"
    cuda_source = HERE / "divloop.cu"
    # clang would replace the loop by a closed form in 64-bit arithmetic (see divloop.cu)
    cuda_flags = NO_CONTRACTION + ("-mllvm", "-replexitval=never")
    dflow_source = None


#: twin name -> class, in the order of the hand-written workloads.
TWINS: dict[str, type[Workload]] = {w.name: w for w in (GaussianCu, LudCu, PathfinderCu, NnCu, BfsCu, HotspotCu,
                                                        NwCu, VaddCu, ReduceCu, DivloopCu)}
#: twin name -> the hand-written workload it re-expresses (each twin's second base class).
ORIGINALS: dict[str, type[Workload]] = {name: w.__bases__[1] for name, w in TWINS.items()}
