"""Workloads: kernels in both operand forms with host drivers and numpy reference checks."""
