"""A workload whose numpy reference is wrong in one word: its check must name that word."""

from __future__ import annotations

import re

import pytest

from dualflow.isa import Form
from dualflow.kernels.workload import CheckFailed, run_workload


def check_names_a_wrong_word(workload, key: str, index) -> None:
    """Flip the lowest bit of ``reference()[key][index]`` (one ulp of a float, one unit of an
    integer) and require the tiny run's check to fail naming ``index``."""

    class Corrupted(workload):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref[key] = ref[key].copy()
            ref[key].view("uint32")[index] ^= 1
            return ref

    with pytest.raises(CheckFailed, match=f"index {re.escape(str(index))}:"):
        run_workload(Corrupted, "tiny", Form.REG)
