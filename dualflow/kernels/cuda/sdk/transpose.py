"""CUDA SDK transpose ("no bank conflicts"): a 32x8 block moves a 32x32 tile through shared memory
padded to 33 columns, reading and writing rows (coalesced) on both sides of one barrier."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from .compare import bit_exact

TILE = 32  # tile side (transpose.cu)
BLOCK_ROWS = 8  # thread rows per block: each thread moves TILE / BLOCK_ROWS words


class Transpose(CompiledWorkload):
    suite = "sdk"
    name = "transpose"
    description = ("matrix transpose through a shared 32x33 tile (the SDK's transposeNoBankConflicts): coalesced "
                   "row reads and writes around one barrier, column reads of the padded tile")
    cuda_source = Path(__file__).with_name("transpose.cu")
    cuda_flags = ()
    sizes = {
        # 3 x 2 blocks, ragged in both directions (edge guards)
        "tiny": {"width": 70, "height": 40},
        # 16 x 12 blocks
        "small": {"width": 512, "height": 384},
        # the SDK's default 1024 x 1024: 32 x 32 blocks, 262,144 threads
        "paper": {"width": 1024, "height": 1024},
    }
    tolerance = "exact: every word moved unchanged"

    def generate(self, rng, width, height):
        return {"in": rng.standard_normal((height, width)).astype(np.float32)}

    def execute(self, dev, module, inputs, width, height):
        d_in, d_out = dev.upload(inputs["in"]), dev.alloc(4 * width * height)
        dev.launch(module["transpose"], grid=(-(-width // TILE), -(-height // TILE)), block=(TILE, BLOCK_ROWS),
                   params=[d_out, d_in, width, height])
        return {"out": dev.copy_out(d_out, width * height, np.float32).reshape(width, height)}

    def reference(self, inputs, width, height):
        return {"out": np.ascontiguousarray(inputs["in"].T)}

    def check(self, outputs, expected, width, height):
        count = bit_exact(self.name, "elements of the transpose", outputs["out"], expected["out"])
        return f"{count} elements of the {width} x {height} transpose exact"
