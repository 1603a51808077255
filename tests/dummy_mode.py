"""A mode no layer builds, for the refusal tests: it answers every capability question ``Mode``
answers (GPU-CC's answers: no register file, no fetch per instruction), so a layer that forgot its
``check_implemented`` would go on and run it as some other mode instead of failing on a missing
attribute. Every layer must refuse it with the ConfigError naming the layer."""

from __future__ import annotations

import dataclasses

from dualflow.isa import Form
from dualflow.machine.config import GpuConfig
from dualflow.machine.fields import Choice
from dualflow.machine.mode import Capabilities, Dispatch, Mode, RegisterFile, ScoreboardKind


class FutureMode(Choice):
    GPU_CC = "gpu-cc"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(label="GPU-CC", form=Form.REG, register_file=RegisterFile.NONE,
                            dispatch=Dispatch.OUT_OF_ORDER, fetch_per_instruction=False,
                            scoreboard=ScoreboardKind.SLOTS)

    # Mode's own capability properties: each reads ``self.capabilities``, so the dummy answers
    # every question the way a new member of Mode would.
    label, form, register_file, ring, dispatch, out_of_order, fetch_per_instruction, scoreboard = (
        vars(Mode)[name] for name in ("label", "form", "register_file", "ring", "dispatch", "out_of_order",
                                      "fetch_per_instruction", "scoreboard"))


DUMMY = FutureMode.GPU_CC


def refused(layer: str) -> str:
    """The message (a ``pytest.raises`` match) of ``layer`` refusing the dummy mode."""
    return f"{layer} does not implement mode 'gpu-cc'"


def with_mode(config: GpuConfig, mode: object = DUMMY) -> GpuConfig:
    """``config`` running ``mode``, set past GpuConfig's own parse: what a configuration holds once
    a new member is added to ``Mode`` that the layer under test does not build."""
    out = dataclasses.replace(config)
    object.__setattr__(out, "mode", mode)
    return out
