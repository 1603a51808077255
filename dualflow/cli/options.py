"""Argument types of the command line: each turns the text of an option into its value or
rejects it with argparse's usage message and one line naming the option and the rule (exit 2)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

#: The largest problem size (``--n``) of ``dualflow demo`` and ``trace``: 16 Mi elements, whose
#: three buffers fill a quarter of the functional model's 1 GiB of global memory.
MAX_N = 1 << 24
#: The largest seed: numpy takes any non-negative integer; 64 bits are plenty.
MAX_SEED = (1 << 64) - 1


def int_in(low: int, high: int | None = None, rule: str | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in ``low..high`` (no upper limit when ``high`` is None);
    ``rule`` says so in the message instead of the numbers."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, not {text!r}") from None
        if value < low or (high is not None and value > high):
            what = rule or (f"{low}..{high:,}" if high is not None else f"at least {low}")
            raise argparse.ArgumentTypeError(f"must be {what}, not {text}")
        return value

    parse.__name__ = "integer"  # argparse names the type in its own messages
    return parse


#: ``--seed``: a non-negative integer (numpy's seeds).
seed = int_in(0, MAX_SEED, "a non-negative integer below 2**64")
#: A count that must be at least 1 (``--max-instructions``, ``--jobs``, ``--study-sms``).
positive = int_in(1)


def int_list(low: int, high: int) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: comma-separated integers, each in ``low..high`` (``--warps 8,16,32``)."""

    def parse(text: str) -> tuple[int, ...]:
        values = []
        for item in text.split(","):
            try:
                value = int(item.strip(), 10)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"expected comma-separated integers in {low}..{high}, not {text!r}") from None
            if not low <= value <= high:
                raise argparse.ArgumentTypeError(f"each value must be in {low}..{high}, not {value} (in {text!r})")
            values.append(value)
        return tuple(values)

    parse.__name__ = "list of integers"
    return parse


def add_max_instructions(parser) -> None:
    """``--max-instructions N``: the instruction budget of each launch (``FunctionalConfig``)."""
    from dualflow.machine.functional import BUDGET_PER_WARP

    parser.add_argument("--max-instructions", type=positive, default=None, metavar="N",
                        help="stop a launch as a runaway after N warp instructions (default "
                             f"{BUDGET_PER_WARP:,} per warp of the launch)")


def add_variants(parser) -> None:
    """``--variant NAME`` (repeatable): the DFLOW variants the converter may use (``args.variants``,
    a frozenset of ``Variant``)."""
    from dualflow.isa.convert import VARIANTS
    from dualflow.isa.opcodes import Variant

    names = [v.value for v in Variant if v in VARIANTS]  # those the converter uses
    parser.add_argument("--variant", dest="variants", action="append", choices=names, default=[],
                        help=f"DFLOW variant the converter may use (repeatable; docs/isa.md, \"Variants\"): "
                             f"{', '.join(names)}")


def _rings(text: str) -> tuple[int, ...]:
    from dualflow.isa.opcodes import MAX_HANDS

    try:
        sizes = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: ring sizes S,T[,U[,V]] (integers, comma-separated)") from None
    if not 2 <= len(sizes) <= MAX_HANDS or any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError(f"{text!r}: two to {MAX_HANDS} ring sizes S,T[,U[,V]] (hands s, t, u, v), "
                                         "each at least 1")
    return sizes


def add_rings(parser) -> None:
    """``--rings S,T[,U[,V]]``: with ``--variant hands``, the ring of each hand the converter uses
    instead of splitting ``--ring`` between them (``args.rings``, None when not given)."""
    parser.add_argument("--rings", type=_rings, default=None, metavar="S,T[,U[,V]]",
                        help="with --variant hands: the rings of hands s, t, u, v (default: --ring is the budget "
                             "per warp, hands t, u, v get what their loop invariants need, hand s the rest)")


def variants_of(args) -> frozenset:
    """The ``Variant``s named by ``--variant``."""
    from dualflow.isa.opcodes import Variant

    return frozenset(Variant(name) for name in args.variants)
