"""CUDA SDK sortingNetworks (bitonicSortShared): each block sorts its array of key/value pairs in
shared memory with a bitonic network, barriers inside two nested loops."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from .compare import bit_exact

MAX_LENGTH = 1024  # pairs a block can sort (bitonic.cu's shared arrays): the SDK's SHARED_SIZE_LIMIT
KEY_RANGE = 65536  # keys are rand() % numValues in the SDK's test, numValues = 65536


def network(keys: np.ndarray, values: np.ndarray, ascending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's network on every row at once, step for step: for merge size k and stride j,
    pair t is (lo, lo + j) with lo = 2t - (t mod j), put in order ascending iff bit k of lo is clear
    (reversed when sorting descending); ties stay where they are. Rows are the blocks' arrays."""
    keys, values = keys.copy(), values.copy()
    length = keys.shape[1]
    t = np.arange(length // 2)
    k = 2
    while k <= length:
        j = k // 2
        while j:
            lo = 2 * t - (t & (j - 1))
            hi = lo + j
            up = ((lo & k) == 0) == ascending
            ka, kb = keys[:, lo], keys[:, hi]
            swap = (ka > kb) == up
            va, vb = values[:, lo], values[:, hi]
            keys[:, lo], keys[:, hi] = np.where(swap, kb, ka), np.where(swap, ka, kb)
            values[:, lo], values[:, hi] = np.where(swap, vb, va), np.where(swap, va, vb)
            j //= 2
        k *= 2
    return keys, values


class Bitonic(CompiledWorkload):
    suite = "sdk"
    name = "bitonic"
    description = ("bitonic sort of each block's key/value pairs in shared memory (the SDK's bitonicSortShared): "
                   "a data-independent network of compare-exchanges, a barrier per step inside nested loops, "
                   "divergent swaps")
    cuda_source = Path(__file__).with_name("bitonic.cu")
    cuda_flags = ()
    sizes = {
        # 4 blocks of 128 threads sorting 256 pairs each (36 network steps)
        "tiny": {"length": 256, "batch": 4, "ascending": True},
        # 32 blocks of 512 threads sorting 1024 pairs each (55 steps), descending
        "small": {"length": 1024, "batch": 32, "ascending": False},
        # 576 blocks of 256 threads (147,456 threads), 512 pairs each (the SDK's blocks take 1024: half that keeps
        # the cycle model's run short)
        "paper": {"length": 512, "batch": 576, "ascending": True},
    }
    tolerance = ("exact: keys equal numpy's sort of each array; values equal a numpy replay of the network "
                 "(equal keys keep the network's order)")

    def generate(self, rng, length, batch, ascending):
        if length < 2 or length > MAX_LENGTH or length & (length - 1):
            raise ValueError(f"bitonic: length must be a power of two in 2..{MAX_LENGTH}, not {length}")
        # the SDK's test: random keys below numValues, values the keys' positions
        keys = rng.integers(0, KEY_RANGE, size=(batch, length), dtype=np.uint32)
        values = np.arange(batch * length, dtype=np.uint32).reshape(batch, length)
        return {"keys": keys, "values": values}

    def execute(self, dev, module, inputs, length, batch, ascending):
        src_key, src_val = dev.upload(inputs["keys"]), dev.upload(inputs["values"])
        dst_key, dst_val = dev.alloc(4 * batch * length), dev.alloc(4 * batch * length)
        dev.launch(module["bitonic_sort"], grid=batch, block=length // 2,
                   params=[dst_key, dst_val, src_key, src_val, length, int(ascending)])
        return {"keys": dev.copy_out(dst_key, batch * length, np.uint32).reshape(batch, length),
                "values": dev.copy_out(dst_val, batch * length, np.uint32).reshape(batch, length)}

    def reference(self, inputs, length, batch, ascending):
        keys, values = network(inputs["keys"], inputs["values"], ascending)
        independent = np.sort(inputs["keys"], axis=1)
        return {"keys": keys, "values": values, "sorted": independent if ascending else independent[:, ::-1]}

    def check(self, outputs, expected, length, batch, ascending):
        # the network's replay must itself sort: a wrong replay cannot hide a wrong kernel
        bit_exact(self.name, "keys of the network's replay", expected["keys"], expected["sorted"])
        count = bit_exact(self.name, "keys", outputs["keys"], expected["sorted"])
        bit_exact(self.name, "values", outputs["values"], expected["values"])
        order = "ascending" if ascending else "descending"
        return f"{batch} arrays of {length} pairs sorted {order}, {count} keys and values exact"
