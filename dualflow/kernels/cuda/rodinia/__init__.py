"""Rodinia 3.1 workloads whose kernels are CUDA C compiled by the front end (our own code of what
the CUDA kernels compute), with host drivers in the original order and numpy references."""

from __future__ import annotations

from dualflow.kernels.workload import Workload

from .backprop import Backprop
from .kmeans import Kmeans
from .srad import Srad
from .streamcluster import Streamcluster

#: name -> workload class
RODINIA_CUDA: dict[str, type[Workload]] = {w.name: w for w in (Backprop, Kmeans, Srad, Streamcluster)}
