"""The D-FLOW ring guard is per slot, as the RTL's is (docs/timing-model.md, "The SM").

A divergent path's lane group rewinds the RP at its SIMT-stack entry and reissues positions the
other group wrote; a producer there must wait until the other group's collector units have read
the slot. Guarding only position - ring let it go: the older reader then waited for the new
producer, which waited (memory order, one color) for an older store that waited for that reader,
and both engines deadlocked (found 2026-12-07 on an FP32 loop nest with lane-dependent trip
counts, and by Csmith seeds 227 and 282: tests/frontend/test_csmith.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dualflow.isa.assembler import assemble_file
from dualflow.machine.presets import preset
from dualflow.models import Device
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.scoreboard import PENDING, RingScoreboard

DATA = Path(__file__).parent / "data"


def test_a_slot_is_busy_while_any_of_its_positions_is_unread():
    board = RingScoreboard(32)
    board.add_reader(148)  # an older lane group's reader of position 148 (slot 20)
    assert board.guard_blocks(148)  # the same position, reissued by a rewound path
    assert board.guard_blocks(148 + 32)  # the next value of the slot
    assert not board.guard_blocks(149)
    board.read_done(148)
    assert not board.guard_blocks(148)
    board.issue(150)
    assert board.ready[150 % 32] == PENDING and board.guard_blocks(150 + 32)


def _run(dev, kernel, reps: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.load(DATA / "slot_reissue.in.npy")
    d_in, d_out, d_iters = dev.upload(x), dev.alloc(4 * 72), dev.alloc(4 * 72)
    dev.launch(kernel, grid=1, block=64, params=[d_in, d_out, d_iters, 64, reps, 40])
    return dev.copy_out(d_out, 72), dev.copy_out(d_iters, 72)


@pytest.mark.parametrize("reps", [2, 3])
def test_a_rewound_path_does_not_deadlock_either_engine(reps: int):
    kernel = assemble_file(DATA / "slot_reissue.dflow.s").only
    want = _run(Device(), kernel, reps)
    cycles = {}
    for engine in ("reference", "compiled"):
        dev = TimingDevice(preset("paper-rtx3080").replace(mode="dflow", num_sms=1), engine=engine)
        got = _run(dev, kernel, reps)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        cycles[engine] = dev.gpu.cycle
    assert cycles["reference"] == cycles["compiled"] > 0
