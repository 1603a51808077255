"""The register stages that carry a fixed-latency unit's result to its output."""

from amaranth import Module, Signal, Value
from amaranth.lib import data

__all__ = ["result_stages"]


def result_stages(m: Module, valid: Value, tag: Value, value: Value, *, stages: int, tag_width: int,
                  layout: data.Layout) -> tuple[Value, Value, Value]:
    """Delay (valid, tag, value) by ``stages`` cycles through registers ``x1_`` .. ``x<stages>_``
    (where a synthesis tool retimes the logic in front); returns the last stage's signals."""
    for stage in range(1, stages + 1):
        v = Signal(name=f"x{stage}_valid")
        t = Signal(tag_width, name=f"x{stage}_tag")
        r = Signal(layout, name=f"x{stage}_result")
        m.d.sync += [v.eq(valid), t.eq(tag), r.eq(value)]
        valid, tag, value = v, t, r
    return valid, tag, value
