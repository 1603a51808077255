"""Instruction-set commands: ``dualflow asm``, ``disasm``, ``isa``, ``convert``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dualflow.common.atomic_write import atomic_write, check_output
from dualflow.common.errors import DualflowError
from dualflow.isa.kernel import MAX_RING

from .options import add_rings, add_variants, int_in, variants_of


def _load_module(path: str):
    from dualflow.frontend.program import is_program, load_program
    from dualflow.isa import Module

    p = Path(path)
    if is_program(path):
        return load_program(p)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DualflowError(f"{path}: cannot read: {exc.strerror}") from None
    return Module.from_bytes(data, str(p))


def cmd_asm(args) -> int:
    from dualflow.isa import assemble_file

    if args.output is not None:
        check_output(args.output, "-o", inputs=[args.source])
    module = assemble_file(args.source)
    for k in module:
        rings = f"rings {' '.join(map(str, k.rings))}" if k.hands else f"ring {k.ring}"  # one per hand (hands)
        extra = f"{k.regs} registers" if k.form.value == "reg" else f"{rings}, dmax {k.dmax}"
        print(f"{k.name}: {k.form.value}, {len(k.code)} instructions, {extra}, "
              f"{k.shared_bytes} B shared, {k.local_bytes} B local")
    if args.output is not None:
        atomic_write(args.output, module.to_bytes())
        if args.output != "-":
            print(f"wrote {args.output}")
    return 0


def cmd_disasm(args) -> int:
    from dualflow.isa import disassemble

    sys.stdout.write(disassemble(_load_module(args.input)))
    return 0


def cmd_isa(args) -> int:
    from dualflow.isa.table import format_table

    sys.stdout.write(format_table())
    return 0


def cmd_convert(args) -> int:
    from dualflow.frontend.program import load_program
    from dualflow.isa import disassemble
    from dualflow.isa.convert import convert_module

    if args.output is not None:
        check_output(args.output, "-o", inputs=[args.source])
    module = load_program(args.source)
    converted, reports = convert_module(module, dmax=args.dmax, ring=args.ring, variants=variants_of(args),
                                        rings=args.rings)
    for name, rep in reports.items():
        added = rep.static_overhead()
        detail = ", ".join(f"{c} {n}" for c, n in sorted(added.items())) or "none"
        print(f"{name}: {rep.static_reg} -> {len(converted[name].code)} instructions (added: {detail}); "
              f"{rep.spill_bytes} B of spill slots")
    text = disassemble(converted)
    if args.output is not None and args.output != "-":
        atomic_write(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the instruction-set subcommands on the top-level subparsers."""
    p = sub.add_parser("asm", help="assemble a .s file (either form); optionally write a binary")
    p.add_argument("source", help="assembly file")
    p.add_argument("-o", "--output", help="binary output file (- for standard output)")
    p.set_defaults(func=cmd_asm)

    p = sub.add_parser("disasm", help="disassemble a binary (or re-format a .s file)")
    p.add_argument("input", help="binary written by `dualflow asm -o`, or a .s file")
    p.set_defaults(func=cmd_disasm)

    p = sub.add_parser("isa", help="print the instruction-set table")
    p.set_defaults(func=cmd_isa)

    p = sub.add_parser("convert", help="convert a REG-form assembly file (or CUDA .cu / .ptx) to DFLOW form")
    p.add_argument("source", help="REG-form assembly file, or a .cu / .ptx file compiled through the front end")
    p.add_argument("-o", "--output", help="DFLOW-form assembly output (default: standard output)")
    from dualflow.isa.encoding import OPERAND_MAX

    p.add_argument("--dmax", type=int_in(1, OPERAND_MAX), default=31,
                   help=f"largest operand distance (default 31, at most {OPERAND_MAX})")
    p.add_argument("--ring", type=int_in(2, MAX_RING), default=32,
                   help=f"ring entries per warp (default 32, at most {MAX_RING:,})")
    add_variants(p)
    add_rings(p)
    p.set_defaults(func=cmd_convert)
