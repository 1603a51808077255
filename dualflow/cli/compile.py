"""The CUDA front end's command: ``dualflow compile FILE.cu`` writes REG-form assembly."""

from __future__ import annotations

import argparse

from dualflow.common.atomic_write import atomic_write, check_output


def cmd_compile(args) -> int:
    from dualflow.frontend import CompileOptions, compile_file

    if args.output is not None:
        check_output(args.output, "-o", inputs=[args.source])
    flags = tuple(f"-D{d}" for d in args.define) + tuple(args.clang_flag)
    options = CompileOptions(flags=flags, opt_level=args.opt, max_registers=args.maxrregcount,
                             kernel=args.kernel)
    compiled = compile_file(args.source, options)
    for r in compiled.reports.values():
        spills = (f", {r.spilled_values} values spilled ({r.spill_stores} stores, {r.spill_loads} loads)"
                  if r.spilled_values else "")
        print(f"{r.name}: {r.registers} registers, {r.shared_bytes} B shared, {r.local_bytes} B local{spills}; "
              f"{r.ptx_instructions} PTX -> {r.reg_instructions} REG instructions")
    if args.output is not None:
        atomic_write(args.output, compiled.assembly)
        if args.output != "-":
            print(f"wrote {args.output}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    from dualflow.isa.encoding import MAX_REGS

    p = sub.add_parser("compile", help="compile CUDA C (.cu) or PTX (.ptx) to REG-form assembly through clang")
    p.add_argument("source", help="a .cu file (CUDA C; #include \"dualflow_cuda.h\") or a .ptx file")
    p.add_argument("-o", "--output", help="REG-form assembly output (.s; - for standard output)")
    p.add_argument("--kernel", metavar="NAME", help="compile only this kernel")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="a preprocessor definition for clang (repeatable)")
    p.add_argument("--clang-flag", action="append", default=[], metavar="FLAG",
                   help="another clang flag, e.g. --clang-flag=-ffp-contract=off (repeatable)")
    p.add_argument("-O", dest="opt", default="-O2", choices=["-O1", "-O2", "-O3"],
                   type=lambda s: s if s.startswith("-") else f"-O{s}", help="clang's optimization level (default 2)")
    p.add_argument("--maxrregcount", type=int, default=MAX_REGS, metavar="N",
                   help=f"registers per thread the allocator may use; the rest spill to local memory "
                        f"(default {MAX_REGS})")
    p.set_defaults(func=cmd_compile)
