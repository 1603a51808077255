"""Device global memory: a byte-addressed space of 32-bit words with an allocation map.

Every word carries a valid bit set by ``alloc`` and cleared by ``free``, so any access outside
an allocation is caught exactly (like a sanitizer), not only accesses past the end.
"""

from __future__ import annotations

import numpy as np

from dualflow.common.errors import DualflowError

#: Allocations are aligned to this many bytes (a cache line, as cudaMalloc does at least).
ALIGNMENT = 256


class DeviceMemoryError(DualflowError):
    """A host-side memory request that cannot be met."""


class GlobalMemory:
    """Byte-addressed global memory. Address 0..ALIGNMENT-1 is never allocated (null)."""

    def __init__(self, capacity_bytes: int):
        self.capacity = capacity_bytes
        self.words = np.zeros(1024, dtype=np.uint32)
        self.valid = np.zeros(1024, dtype=bool)
        self.top = ALIGNMENT
        self.allocations: dict[int, int] = {}

    def _grow(self, nwords: int) -> None:
        if nwords <= len(self.words):
            return
        size = max(nwords, 2 * len(self.words))
        self.words = np.concatenate([self.words, np.zeros(size - len(self.words), np.uint32)])
        self.valid = np.concatenate([self.valid, np.zeros(size - len(self.valid), bool)])

    def alloc(self, nbytes: int) -> int:
        """Allocate ``nbytes`` (rounded up to whole words), zero-filled; returns the address."""
        if not isinstance(nbytes, (int, np.integer)) or nbytes <= 0:
            raise DeviceMemoryError(f"alloc: size must be a positive number of bytes, not {nbytes!r}")
        addr = self.top
        end = addr + (int(nbytes) + 3) // 4 * 4
        if end > self.capacity:
            raise DeviceMemoryError(f"alloc: {nbytes} bytes do not fit: {self.capacity - addr} of "
                               f"{self.capacity} bytes of global memory left")
        self._grow(end // 4)
        self.words[addr // 4:end // 4] = 0
        self.valid[addr // 4:end // 4] = True
        self.allocations[addr] = end - addr
        self.top = (end + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        return addr

    def free(self, addr: int) -> None:
        size = self.allocations.pop(addr, None)
        if size is None:
            raise DeviceMemoryError(f"free: {addr:#x} is not the start of an allocation")
        self.valid[addr // 4:(addr + size) // 4] = False

    def _span(self, addr: int, nbytes: int, what: str) -> slice:
        if addr % 4 or nbytes % 4:
            raise DeviceMemoryError(f"{what}: address {addr:#x} and size {nbytes} must be multiples of 4")
        lo, hi = addr // 4, (addr + nbytes) // 4
        if addr < 0 or hi > len(self.valid) or not self.valid[lo:hi].all():
            raise DeviceMemoryError(f"{what}: [{addr:#x}, {addr + nbytes:#x}) is not inside an allocation")
        return slice(lo, hi)

    def write(self, addr: int, data: np.ndarray) -> None:
        """Copy a host array (any 4-byte dtype) to device memory at ``addr``."""
        raw = np.ascontiguousarray(data)
        if raw.dtype.itemsize != 4:
            raise DeviceMemoryError(f"copy to device: element size must be 4 bytes, not {raw.dtype}")
        span = self._span(addr, raw.nbytes, "copy to device")
        self.words[span] = raw.reshape(-1).view(np.uint32)

    def read(self, addr: int, count: int, dtype=np.uint32) -> np.ndarray:
        """Copy ``count`` 4-byte elements from device memory at ``addr`` to a new host array."""
        span = self._span(addr, 4 * count, "copy from device")
        return self.words[span].copy().view(dtype)
