"""Workloads (kernels in both operand forms with host drivers and numpy reference checks) and the
directed program suite (``directed``: small programs with their expected results, run on every level)."""
