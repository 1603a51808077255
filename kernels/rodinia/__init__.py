"""Rodinia 3.1 workloads, ported to the Dualflow REG form with their host drivers."""

from __future__ import annotations

from ..workload import Workload

#: name -> workload class, in the order `dualflow bench list` prints them.
RODINIA: dict[str, type[Workload]] = {}
