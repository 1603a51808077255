"""Blelloch's work-efficient exclusive scan per block (GPU Gems 3 ch. 39, the SDK's scan samples),
with the block totals scanned by the same kernel and added back: a whole-array prefix sum."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from .compare import bit_exact

BLOCK = 512  # threads per block (scan.cu)
ELEMS = 2 * BLOCK  # elements a block scans


def exclusive_scan(x: np.ndarray) -> np.ndarray:
    """Exclusive prefix sum of 32-bit unsigned words, wrapping mod 2^32 as the kernel's adds do."""
    out = np.zeros_like(x, dtype=np.uint32)
    np.cumsum(x[:-1], dtype=np.uint32, out=out[1:])
    return out


class Scan(CompiledWorkload):
    suite = "sdk"
    name = "scan"
    description = ("exclusive prefix sum: Blelloch up-sweep/down-sweep of 1024 elements per 512-thread block in "
                   "padded shared memory (a barrier per tree level, the active threads halving), block totals "
                   "scanned recursively and added back")
    cuda_source = Path(__file__).with_name("scan.cu")
    cuda_flags = ()
    sizes = {
        # 3 blocks (the last one ragged), then one block over the 3 totals, then the add
        "tiny": {"n": 3000},
        # 98 blocks, one block over their totals, the add
        "small": {"n": 100_000},
        # 512 blocks (262,144 threads), one block over the totals, the add
        "paper": {"n": 1 << 19},
    }
    tolerance = "exact (integer additions mod 2^32)"

    def generate(self, rng, n):
        return {"x": rng.integers(0, 1 << 16, size=n, dtype=np.uint32)}

    def _scan(self, dev, module, d_out, d_in, n) -> None:
        """Scan n words at d_in into d_out: scan each block, scan the block totals (recursively),
        add each block's scanned total to its elements."""
        blocks = -(-n // ELEMS)
        d_sums = dev.alloc(4 * blocks)
        dev.launch(module["scan_block"], grid=blocks, block=BLOCK, params=[d_out, d_in, d_sums, n])
        if blocks > 1:
            d_offsets = dev.alloc(4 * blocks)
            self._scan(dev, module, d_offsets, d_sums, blocks)
            dev.launch(module["add_offsets"], grid=blocks, block=BLOCK, params=[d_out, d_offsets, n])

    def execute(self, dev, module, inputs, n):
        d_in, d_out = dev.upload(inputs["x"]), dev.alloc(4 * n)
        self._scan(dev, module, d_out, d_in, n)
        return {"scan": dev.copy_out(d_out, n, np.uint32)}

    def reference(self, inputs, n):
        return {"scan": exclusive_scan(inputs["x"])}

    def check(self, outputs, expected, n):
        count = bit_exact(self.name, "prefix sums", outputs["scan"], expected["scan"])
        return f"{count} prefix sums exact (total before the last {int(expected['scan'][-1])})"
