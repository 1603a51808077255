"""The REG-to-DFLOW converter.

    from dualflow.isa.convert import convert_module
    dflow_module, reports = convert_module(reg_module, dmax=31, ring=32)

Pipeline: control-flow graph with reconvergence regions (``cfg``), isolation of critical edges
into joins (``surgery``), liveness and recomputable values (``liveness``, ``remat``), layout-driven
code generation with join frames and tails (``codegen``), refinement of loop-header frames from
the loop latch (a few rounds, keeping the cheapest), linking, and memory-ordering colors
(``colors``). docs/converter.md explains the algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import DEFAULT_DMAX, DEFAULT_RING, Kernel, Module
from dualflow.isa.opcodes import Form, Opcode

from .cfg import ConvertError, build_cfg, natural_loops
from .codegen import CodeGen, Emitted, block_code_order
from .colors import assign_colors
from .surgery import isolate_critical_edges

__all__ = ["ConvertError", "ConversionReport", "convert_kernel", "convert_module"]

#: Rounds of loop-frame refinement (each regenerates the kernel with the frames the latches want).
REFINE_ROUNDS = 4
#: Weight of an instruction per loop level it sits in, for choosing between rounds.
LOOP_WEIGHT = 16


@dataclass
class ConversionReport:
    """What the converter did to one kernel.

    ``causes`` gives, per output pc, why the instruction is there: "orig" (translated from the
    REG instruction at ``source_pc``), or overhead: "relay-join", "relay-dmax", "remat", "pad",
    "spill", "reload", "branch" (a jump added for a split edge).
    """

    kernel: str
    causes: list[str] = field(default_factory=list)
    source_pc: list[int | None] = field(default_factory=list)
    static_reg: int = 0
    duplicated: int = 0  #: instructions of tiny joins copied onto a split edge (each copy runs instead of the original)
    rounds: int = 0
    spill_bytes: int = 0

    def static_overhead(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.causes:
            if c != "orig":
                out[c] = out.get(c, 0) + 1
        return out


def _loop_depth(cfg) -> dict[int, int]:
    """Loop nesting depth per block."""
    depth: dict[int, int] = {}
    for body in natural_loops(cfg).values():
        for n in body:
            depth[n] = depth.get(n, 0) + 1
    return depth


def _cost(gen: CodeGen, depth: dict[int, int]) -> int:
    total = 0
    for bid, bc in gen.codes.items():
        w = LOOP_WEIGHT ** depth.get(bid, 0)
        total += w * sum(1 for e in bc.body + bc.tail + bc.term if e.cause != "orig")
    return total


def convert_kernel(kernel: Kernel, *, dmax: int = DEFAULT_DMAX,
                   ring: int = DEFAULT_RING) -> tuple[Kernel, ConversionReport]:
    """Translate one REG-form kernel into an equivalent DFLOW-form kernel."""
    if kernel.form is not Form.REG:
        raise ConvertError(f"kernel {kernel.name!r} is already in {kernel.form.value.upper()} form")
    if ring <= dmax:
        raise ConvertError(f"ring {ring} must exceed dmax {dmax}")
    if dmax < 2 * 4 + 4:
        raise ConvertError(f"dmax {dmax} is too small for the converter (at least 12)")
    cfg = build_cfg(kernel)
    isolate_critical_edges(cfg)
    depth = _loop_depth(cfg)
    spill_base = kernel.local_bytes
    best, best_cost, frames, rounds = None, None, {}, 0
    for _ in range(REFINE_ROUNDS):
        rounds += 1
        gen = CodeGen(cfg, dmax, spill_base, frames)
        gen.run()
        cost = _cost(gen, depth)
        if best is None or cost < best_cost:
            best, best_cost = gen, cost
        proposals = {h: f for h, f in gen.proposals.items() if gen.frames.get(h) != f}
        if not proposals:
            break
        frames = {**frames, **{h: gen.frames[h] for h in gen.frames if h in gen.proposals}, **proposals}
    return _link(kernel, cfg, best, dmax, ring, rounds)


def _link(kernel: Kernel, cfg, gen: CodeGen, dmax: int, ring: int, rounds: int) -> tuple[Kernel, ConversionReport]:
    order = block_code_order(cfg, set(gen.codes))
    start: dict[int, int] = {}
    emitted: list[Emitted] = []
    for bid in order:
        start[bid] = len(emitted)
        bc = gen.codes[bid]
        emitted.extend(bc.body + bc.tail + bc.term)
    code: list[Instruction] = []
    for e in emitted:
        ins = e.ins
        if e.target is not None:
            ins = Instruction(ins.op, a=ins.a, b=ins.b, c=ins.c, mod=ins.mod, bimm=True, imm=start[e.target])
        code.append(ins)
    code = assign_colors(kernel, code, [e.pc for e in emitted])
    labels = {}
    for bid in order:
        blk = cfg.blocks[bid]
        if blk.label and blk.copy_of is None and start[bid] < len(code):
            labels.setdefault(start[bid], blk.label)
    spill_bytes = 4 * (max(gen.spilled_regs) + 1) if gen.spilled_regs else 0
    out = Kernel(name=kernel.name, form=Form.DFLOW, code=code, params=list(kernel.params),
                 shared_bytes=kernel.shared_bytes, local_bytes=kernel.local_bytes + spill_bytes,
                 ring=ring, dmax=dmax, labels=labels)
    report = ConversionReport(kernel.name, [e.cause for e in emitted], [e.pc for e in emitted],
                              static_reg=sum(1 for i in kernel.code if i.op is not Opcode.NOP), rounds=rounds,
                              duplicated=sum(len(gen.codes[b].body + gen.codes[b].term) for b in order
                                             if cfg.blocks[b].copy_of is not None and cfg.blocks[b].copy_of >= 0),
                              spill_bytes=spill_bytes)
    return out, report


def convert_module(module: Module, *, dmax: int = DEFAULT_DMAX,
                   ring: int = DEFAULT_RING) -> tuple[Module, dict[str, ConversionReport]]:
    """Convert every kernel of a REG-form module."""
    kernels, reports = {}, {}
    for k in module:
        kernels[k.name], reports[k.name] = convert_kernel(k, dmax=dmax, ring=ring)
    return Module(kernels, module.path), reports
