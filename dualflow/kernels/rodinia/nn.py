"""Rodinia 3.1 nn: distance from every hurricane record to a target on the GPU, k nearest on the host."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.models import fp32

from ..workload import CheckFailed, Workload

DEFAULT_THREADS_PER_BLOCK = 256
RAND_MAX = 0x7FFFFFFF  # glibc rand() returns 0 .. 2^31 - 1


def hurricane_locations(rng: np.random.Generator, canes: int, files: int) -> np.ndarray:
    """Record locations as ``hurricane_gen canes files`` writes them and nn's loadData reads them back.

    Each of ``files`` files gets ``canes // files + 1`` records. lat = (7 + rand() % 63) + rand() / RAND_MAX
    and lon = rand() % 358 + rand() / RAND_MAX, in float arithmetic; the file stores them as "%5.1f" and
    nn parses the text with atof into a float. (hurricane_gen reseeds every file with time(NULL), so files
    written within one second are copies of each other; here every file is an independent draw.)
    Returns float32 [records, 2] = (lat, lng), the LatLong array of structs.
    """
    n = files * (canes // files + 1)
    frac_scale = np.float32(RAND_MAX)  # (float)0x7fffffff, i.e. 2^31

    def coordinate(base: np.ndarray) -> np.ndarray:
        frac = rng.integers(0, RAND_MAX, n, endpoint=True).astype(np.float32) / frac_scale
        value = base.astype(np.float32) + frac  # float + float, rounded to float
        # printf("%5.1f") rounds the exact binary value correctly; atof reads it back, stored as float
        return np.array([float(f"{v:5.1f}") for v in value.astype(np.float64)], np.float32)

    lat = coordinate(7 + rng.integers(0, 63, n))
    lng = coordinate(rng.integers(0, 358, n))
    return np.stack([lat, lng], axis=1)


def launch_grid(records: int, threads: int, max_grid_x: int) -> tuple[int, int]:
    """The host's scaling arithmetic: blocks, then a 2-D grid when blocks exceed the grid's x limit."""
    blocks = -(-records // threads)
    grid_y = -(-blocks // max_grid_x)
    grid_x = -(-blocks // grid_y)
    return grid_x, grid_y


def find_lowest(distances: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """Rodinia's findLowest: ``top`` passes of selection with swaps; returns (record indices, distances).

    Rodinia's strict ``<`` scan picks the first minimum by current position, which after earlier swaps
    is not always the lowest record index; here equal distances go to the lower record index, so the
    result is well defined (the k smallest, stable order).
    """
    dist = np.array(distances, np.float32)
    index = np.arange(dist.size)
    for i in range(top):
        rest = dist[i:]
        candidates = np.flatnonzero(rest == rest.min()) + i
        j = int(candidates[np.argmin(index[candidates])])
        dist[[i, j]] = dist[[j, i]]
        index[[i, j]] = index[[j, i]]
    return index[:top].copy(), dist[:top].copy()


class Nn(Workload):
    suite = "rodinia"
    name = "nn"
    description = ("nearest neighbours: one 256-thread-block launch, a thread per 8-byte {lat, lng} record "
                   "computes its FP32 distance (sub, mul, fma, sqrt); the host selects the k nearest")
    source = Path(__file__).with_name("nn.s")
    _query = {"results": 5, "lat": 30.0, "lng": 90.0}  # `./nn filelist_4 -r 5 -lat 30 -lng 90`
    sizes = {
        # hurricane_gen 300 1: 301 records, 2 blocks (the second has 45 live threads)
        "tiny": {"canes": 300, "files": 1, **_query},
        # hurricane_gen 4000 4: 4004 records, 16 blocks
        "small": {"canes": 4000, "files": 4, **_query},
        # Rodinia's gen_dataset.sh, hurricane_gen 42760 4: 4 x 10691 = 42764 records, 168 blocks
        "paper": {"canes": 42760, "files": 4, **_query},
    }
    tolerance = ("distances bit-exact against numpy float32 in the kernel's operation order (fsub, fsub, fmul, "
                 "one-rounding fma, correctly rounded sqrt); k nearest indices equal, ties to the lower index")

    def generate(self, rng, canes, files, results, lat, lng, max_grid_x=None):
        return {"locations": hurricane_locations(rng, canes, files)}

    def execute(self, dev, module, inputs, canes, files, results, lat, lng, max_grid_x=None):
        locations = inputs["locations"]
        num_records = locations.shape[0]
        top = min(results, num_records)
        cfg = dev.config
        threads = min(cfg.max_threads_per_block, DEFAULT_THREADS_PER_BLOCK)
        if num_records > cfg.global_memory_bytes * 85 // 100 // 12:
            raise ValueError("nn: input too large for the device")
        grid = launch_grid(num_records, threads, max_grid_x or cfg.max_grid_dim[0])
        d_locations = dev.upload(locations)
        d_distances = dev.alloc(4 * num_records)
        dev.launch(module["euclid"], grid=grid, block=threads,
                   params=[d_locations, d_distances, num_records, float(lat), float(lng)])
        distances = dev.copy_out(d_distances, num_records, np.float32)
        nearest, nearest_dist = find_lowest(distances, top)
        return {"distances": distances, "nearest": nearest, "nearest_distances": nearest_dist}

    def reference(self, inputs, canes, files, results, lat, lng, max_grid_x=None):
        loc = inputs["locations"]
        dlat = np.float32(lat) - loc[:, 0]
        dlng = np.float32(lng) - loc[:, 1]
        sq_lng = dlng * dlng
        # numpy has no float32 fma: the toolkit's exact one (the product is exact, one rounding)
        total = fp32.ffma(dlat.view(np.uint32), dlat.view(np.uint32), sq_lng.view(np.uint32)).view(np.float32)
        distances = np.sqrt(total)
        top = min(results, loc.shape[0])
        nearest = np.argsort(distances, kind="stable")[:top]
        return {"distances": distances, "nearest": nearest, "nearest_distances": distances[nearest]}

    def check(self, outputs, expected, canes, files, results, lat, lng, max_grid_x=None):
        got = np.asarray(outputs["distances"], np.float32)
        want = np.asarray(expected["distances"], np.float32)
        if got.shape != want.shape:
            raise CheckFailed(f"nn: {got.size} distances, expected {want.size}")
        bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        if bad.size:
            i = int(bad[0])
            raise CheckFailed(f"nn: {bad.size} of {want.size} distances differ from numpy; first at record {i}: "
                              f"got {got[i]!r}, expected {want[i]!r}")
        got_idx = [int(v) for v in outputs["nearest"]]
        want_idx = [int(v) for v in expected["nearest"]]
        if got_idx != want_idx:
            r = next((r for r, (g, w) in enumerate(zip(got_idx, want_idx)) if g != w), min(len(got_idx),
                                                                                           len(want_idx)))
            raise CheckFailed(f"nn: nearest records {got_idx} differ from numpy {want_idx}; first at rank {r}")
        nearest = ", ".join(f"{d:.4g}" for d in np.asarray(expected["nearest_distances"], np.float32))
        return f"{want.size} distances bit-exact; {len(want_idx)} nearest records {want_idx} (at {nearest}) match"
