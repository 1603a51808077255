"""CUDA SDK reduction: an FP32 array summed by grid-striding threads, a shared-memory tree with
sequential addressing and a warp-synchronous last warp ("reduce6"), relaunched on the partial sums."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.common.errors import ConfigError
from dualflow.kernels.compiled import CompiledWorkload

from .compare import bit_exact

BLOCK = 256  # threads per block, the template's block_size (reduction.cu)
WARP = 32  # the warp-synchronous steps assume 32 lanes in lockstep, as the SDK's sample does


def plan(n: int, max_blocks: int) -> int:
    """Blocks of a launch over n values, as the SDK's getNumBlocksAndThreads for kernel 6 at
    BLOCK threads: each thread takes two values per grid stride, at most max_blocks blocks."""
    return min(max_blocks, -(-n // (2 * BLOCK)))


def block_sums(x: np.ndarray, blocks: int) -> np.ndarray:
    """The kernel's partial sums in its exact FP32 order: per thread a running sum over the grid
    strides (its value, then the one a block later), then the tree: halves folded onto the front
    from 128 apart down to 1 apart. Padding adds +0, which leaves a non-negative-zero sum as is."""
    stride = 2 * BLOCK * blocks
    sweeps = -(-x.size // stride)
    padded = np.zeros(sweeps * stride, np.float32)
    padded[:x.size] = x
    values = padded.reshape(sweeps, blocks, 2, BLOCK)
    sums = np.zeros((blocks, BLOCK), np.float32)
    for sweep in values:
        sums = sums + sweep[:, 0, :]
        sums = sums + sweep[:, 1, :]
    half = BLOCK // 2
    while half:
        sums = sums[:, :half] + sums[:, half:2 * half]
        half //= 2
    return sums[:, 0]


class Reduction(CompiledWorkload):
    suite = "sdk"
    name = "reduction"
    description = ("FP32 sum (the SDK's reduce6): grid-stride loads, shared-memory tree with sequential addressing "
                   "and a barrier per level, last warp unrolled without barriers (volatile, lockstep); relaunched "
                   "on the partial sums")
    cuda_source = Path(__file__).with_name("reduction.cu")
    cuda_flags = ()  # additions only: nothing to contract
    sizes = {
        # 4 blocks striding 3 times (the last sweep ragged), then one block over the 4 partial sums
        "tiny": {"n": 5000, "max_blocks": 4},
        # 64 blocks, 16 values per thread, then one block
        "small": {"n": 1 << 18, "max_blocks": 64},
        # the SDK's default 2^24 values; 1024 blocks (262,144 threads), 64 values per thread, then two blocks,
        # then one
        "paper": {"n": 1 << 24, "max_blocks": 1024},
    }
    tolerance = "bit-exact against numpy FP32 additions in the kernel's order (per thread, then the tree)"

    def generate(self, rng, n, max_blocks):
        return {"x": rng.random(n, dtype=np.float32)}

    def execute(self, dev, module, inputs, n, max_blocks):
        if dev.config.warp_size < WARP:
            # a narrower warp would split the barrier-free last steps over warps that need not keep pace
            raise ConfigError(f"reduction: the last warp's steps run without barriers and need threads 0..{WARP - 1} "
                              f"in one warp (warp size {WARP}), not warps of {dev.config.warp_size}")
        kernel = module["reduction"]
        blocks = plan(n, max_blocks)
        d_in, d_partial = dev.upload(inputs["x"]), dev.alloc(4 * blocks)
        dev.launch(kernel, grid=blocks, block=BLOCK, params=[d_in, d_partial, n])
        partial = dev.copy_out(d_partial, blocks, np.float32)
        # the SDK relaunches in place on d_odata until one value is left; ping-pong buffers here, so
        # that no block overwrites a value another block has yet to read
        src, left = d_partial, blocks
        while left > 1:
            out_blocks = plan(left, max_blocks)
            dst = dev.alloc(4 * out_blocks)
            dev.launch(kernel, grid=out_blocks, block=BLOCK, params=[src, dst, left])
            src, left = dst, out_blocks
        return {"partial": partial, "sum": dev.copy_out(src, 1, np.float32)}

    def reference(self, inputs, n, max_blocks):
        partial = block_sums(inputs["x"], plan(n, max_blocks))
        total = partial
        while total.size > 1:
            total = block_sums(total, plan(total.size, max_blocks))
        return {"partial": partial, "sum": total}

    def check(self, outputs, expected, n, max_blocks):
        blocks = bit_exact(self.name, "partial sums", outputs["partial"], expected["partial"])
        bit_exact(self.name, "sums", outputs["sum"], expected["sum"])
        return f"sum of {n} values and {blocks} partial sums bit-exact ({float(expected['sum'][0]):.6g})"
