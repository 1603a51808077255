"""Cycle-level performance model of a whole GPU (BASE and D-FLOW modes), execution-driven by the functional model."""
