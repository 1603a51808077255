"""Memory system of the performance model: coalescing, shared-memory banks, L1 with MSHRs,
interconnect, L2 slices, DRAM."""
