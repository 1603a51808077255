"""Switching activity from a VCD file: rises and falls of every dumped bit over a window of the run,
the clock cycles in it, and how many of those cycles a set of enable signals was high.

A *toggle* is a bit going 0 -> 1 (rise) or 1 -> 0 (fall); changes to or from x or z are not
counted (they happen at power-up, before reset, outside any window). The simulation is
zero-delay (the cell models' ``specify`` delays are not used: Icarus ignores them without
``-gspecify``), and the simulator dumps a net at most once per time step, so glitches are not
seen: this is functional activity, the same the RTL has at its registers.

The window is either explicit times (VCD units) or a rule on top-level signals: it opens when
``open`` rises and closes at the next rise of one of ``close`` (the core's ``start`` pulse and its
``done`` or ``trap``); several windows (one per block) add up. A window is half open, (open,
close]: the changes of the time step at which it opens are not counted, those of the step at
which it closes are (so a window of n clock periods sees each edge once: n rises and n falls of
the clock, and the register updates of the edge that raises ``done``). A clock cycle is a rise of
``clock`` in a window; an enable
group (the bits of one macro port's ``EN``) is sampled at each such rise, with the values it held
just before the edge, as the flip-flops and macros see it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError

__all__ = ["CORE_WINDOW", "Activity", "SignalWindow", "read_activity"]

#: A dumped bit: (scope path below the root, e.g. ``"rf.bank0"``, ``""`` for the root; net; bit).
BitName = tuple[str, str, int]


@dataclass(frozen=True)
class SignalWindow:
    """Windows opened by a rise of ``open`` and closed by a rise of any of ``close`` (root nets)."""

    open: str = "start"
    close: tuple[str, ...] = ("done", "trap")


#: The core's run windows: from each ``start`` pulse to ``done`` or ``trap``.
CORE_WINDOW = SignalWindow()


@dataclass
class Activity:
    """What :func:`read_activity` measured.

    ``rises[b]``, ``falls[b]``: toggles of bit ``b`` (a :data:`BitName`; every name of a bit the
    dump has) in the windows; ``cycles``: clock rises in the windows; ``enabled[i]``: cycles in
    which enable group ``i`` had a bit at 1; ``windows``: the (open, close) times; ``time_unit_s``.
    """

    rises: dict[BitName, int]
    falls: dict[BitName, int]
    cycles: int
    enabled: list[int]
    windows: list[tuple[int, int]]
    time_unit_s: float
    names: set[BitName] = field(default_factory=set)

    def toggles(self, name: BitName) -> int | None:
        """Rises + falls of a bit; None when the dump does not have it."""
        if name not in self.names:
            return None
        return self.rises.get(name, 0) + self.falls.get(name, 0)


_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15}


def _pad(value: str, width: int) -> str:
    if len(value) >= width:
        return value[-width:]
    fill = value[0] if value[0] in "xz" else "0"
    return fill * (width - len(value)) + value


def read_activity(path: str | Path, root: str, *, clock: str = "clk",
                  window: SignalWindow | tuple[int, int] = CORE_WINDOW,
                  enables: Sequence[Iterable[BitName]] = ()) -> Activity:
    """Toggles of every bit dumped under the scope ``root`` (dotted VCD path of the design's top)."""
    path = Path(path)
    try:
        f = open(path)
    except OSError as e:
        raise DualflowError(f"cannot read VCD file {path}: {e.strerror}") from None
    prefix = root.split(".")
    scope: list[str] = []
    width: dict[str, int] = {}
    # code -> [(name, position from the left)]
    where: dict[str, list[tuple[str, str, int, int]]] = {}
    time_unit = 1e-12
    with f:
        for line in f:
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "$scope":
                scope.append(tok[2].lstrip("\\"))
            elif tok[0] == "$upscope":
                scope.pop()
            elif tok[0] == "$timescale":
                text = " ".join(tok[1:]).replace("$end", "").strip() or next(f).strip()
                num = "".join(c for c in text if c.isdigit()) or "1"
                time_unit = int(num) * _UNITS[text.lstrip("0123456789 ")]
            elif tok[0] == "$var":
                code, n, name = tok[3], int(tok[2]), tok[4].lstrip("\\")
                if scope[:len(prefix)] != prefix:
                    continue
                rng = tok[5] if len(tok) > 6 and tok[5].startswith("[") else None
                msb, lsb = (n - 1, 0)
                if rng:
                    parts = rng.strip("[]").split(":")
                    msb, lsb = int(parts[0]), int(parts[-1])
                width[code] = n
                sub = ".".join(scope[len(prefix):])
                step = -1 if msb >= lsb else 1
                for pos in range(n):
                    where.setdefault(code, []).append((sub, name, msb + step * pos, pos))
            elif tok[0] == "$enddefinitions":
                break
        else:
            raise DualflowError(f"{path}: no $enddefinitions: not a complete VCD file")
        if not where:
            raise DualflowError(f"{path}: no signals under scope {root!r}")
        by_name = {(s, n, b): (code, pos) for code, bits in where.items() for s, n, b, pos in bits}

        def locate(name: BitName, what: str) -> tuple[str, int]:
            if name not in by_name:
                raise DualflowError(f"{path}: {what} {'.'.join(filter(None, name[:2]))}[{name[2]}] is not in the dump")
            return by_name[name]

        clk = locate(("", clock, 0), "clock")
        groups = [[locate(b, "enable") for b in g] for g in enables]
        if isinstance(window, SignalWindow):
            opener = locate(("", window.open, 0), "window signal")
            closers = [by_name[("", c, 0)] for c in window.close if ("", c, 0) in by_name]
            if not closers:
                raise DualflowError(f"{path}: none of {', '.join(window.close)} is in the dump")
            times = None
        else:
            opener, closers, times = None, [], window
        value = {code: "x" * n for code, n in width.items()}
        rises = {code: [0] * n for code, n in width.items()}
        falls = {code: [0] * n for code, n in width.items()}
        enabled = [0] * len(groups)
        windows: list[tuple[int, int]] = []
        state = {"open": False, "since": 0, "cycles": 0}
        now = 0
        pending: list[tuple[str, str]] = []

        def bit(code_pos: tuple[str, int], values: dict[str, str]) -> str:
            code, pos = code_pos
            return values[code][pos]

        def step(t: int) -> None:
            """Apply the changes of time ``t``."""
            was = state["open"]
            if times is not None:
                is_open = times[0] <= t < times[1]
            else:
                new = dict(pending)
                is_open = was
                if not was and opener[0] in new and value[opener[0]][opener[1]] != "1" \
                        and _pad(new[opener[0]], width[opener[0]])[opener[1]] == "1":
                    is_open = True
                if was and any(c in new and value[c][p] != "1" and _pad(new[c], width[c])[p] == "1"
                               for c, p in closers):
                    is_open = False
            if was and clk[0] in dict(pending) and value[clk[0]][clk[1]] == "0" \
                    and _pad(dict(pending)[clk[0]], width[clk[0]])[clk[1]] == "1":
                state["cycles"] += 1
                for i, g in enumerate(groups):
                    enabled[i] += any(bit(b, value) == "1" for b in g)
            count = was
            for code, raw in pending:
                n = width.get(code)
                if n is None:
                    continue
                new = _pad(raw, n)
                old = value[code]
                if count and new != old:
                    r, fl = rises[code], falls[code]
                    for pos in range(n):
                        a, b = old[pos], new[pos]
                        if a != b:
                            if a == "0" and b == "1":
                                r[pos] += 1
                            elif a == "1" and b == "0":
                                fl[pos] += 1
                value[code] = new
            if is_open and not was:
                state["since"] = t
            elif was and not is_open:
                windows.append((state["since"], t))
            state["open"] = is_open
            pending.clear()

        for line in f:
            c = line[:1]
            if c == "#":
                step(now)
                now = int(line[1:])
            elif c in "01xzXZ":
                pending.append((line[1:].strip(), c.lower()))
            elif c in "bB":
                raw, code = line[1:].split()
                pending.append((code, raw.lower()))
            elif c in "rR" or c == "$" or not line.strip():
                continue
            else:
                raise DualflowError(f"{path}: unexpected line {line.strip()[:60]!r}")
        step(now)
    if state["open"]:
        windows.append((state["since"], now))
    out_r, out_f = {}, {}
    for code, bits in where.items():
        for s, n, b, pos in bits:
            if rises[code][pos]:
                out_r[(s, n, b)] = rises[code][pos]
            if falls[code][pos]:
                out_f[(s, n, b)] = falls[code][pos]
    return Activity(out_r, out_f, state["cycles"], enabled, windows, time_unit, set(by_name))
