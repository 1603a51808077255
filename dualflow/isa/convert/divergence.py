"""Which ``ssy`` regions keep their lanes together: a divergence analysis of the REG code.

A value is *uniform* when every lane that computes it together (one group of a warp's active
lanes) gets the same value: an immediate, a parameter (``ldc`` at a uniform address), a uniform
special register (``UNIFORM_SREGS``), a vote, or an operation on uniform values. Thread and lane
indices and every load from memory are lane-varying (a load at a uniform address may still race
with a store; it is not trusted). A region whose own branch and every branch it owns read
uniform conditions is *uniform*: the lanes that enter it take the same path through it, so they
leave every loop in it in the same iteration and reach its join together. A branch inside an
inner region is the inner region's: lanes that part there meet again at its join, inside the
outer region, and go on together. Its join then needs no
reconvergence treatment beyond an ordinary join (docs/isa.md, rule 3 is about lanes that leave a
loop apart); the code generator lays it out like any other join (``Region.lanes_leave_apart``).

Lanes that took different paths through a non-uniform region hold different values of what the
region wrote: a register defined in such a region and live at its join is lane-varying after it,
whatever it was computed from. Iterated to a fixed point: a lane-varying value can make another
region non-uniform.
"""

from __future__ import annotations

from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import SPECS, UNIFORM_SREGS, Opcode, SpecialReg

from .cfg import Cfg, build_cfg
from .liveness import defines, liveness, uses

#: Producers whose result is the same in every active lane whatever their sources: a vote.
_UNIFORM_ALWAYS = frozenset({Opcode.VOTE})
#: Producers whose result varies by lane whatever their sources: loads from memory other than the
#: parameter block (``ldc``, uniform at a uniform address).
_VARYING_ALWAYS = frozenset({Opcode.LDG, Opcode.LDS, Opcode.LDL})


def analysed_cfg(kernel: Kernel) -> Cfg:
    """``build_cfg`` with every region's ``uniform`` set: the CFG the converter plans on."""
    cfg = build_cfg(kernel)
    mark_uniform_regions(cfg)
    return cfg


def _reaching(cfg: Cfg) -> dict[int, dict[int, frozenset[tuple[int, int]]]]:
    """Register -> the definitions (block, index) that may reach each block's entry."""
    gen = {}
    for b in cfg.blocks:
        last: dict[int, tuple[int, int]] = {}
        for k, ins in enumerate(b.code):
            r = defines(ins)
            if r is not None:
                last[r] = (b.id, k)
        gen[b.id] = last
    reach: dict[int, dict[int, frozenset]] = {b.id: {} for b in cfg.blocks}
    order = cfg.rpo()
    changed = True
    while changed:
        changed = False
        for bid in order:
            out = dict(reach[bid])
            out.update({r: frozenset({d}) for r, d in gen[bid].items()})
            for s in cfg.blocks[bid].succs:
                into = reach[s]
                for r, ds in out.items():
                    if not ds <= into.get(r, frozenset()):
                        into[r] = into.get(r, frozenset()) | ds
                        changed = True
    return reach


def _branches_owned(cfg: Cfg) -> dict[int, list[int]]:
    """Region -> the blocks whose branch it owns: the branch after its ``ssy``, and those whose
    innermost open region it is. A branch inside an inner region is that region's: its lanes
    reconverge at the inner join, inside this region, and go on together."""
    opened: dict[int, int] = {}  # block -> the innermost region its ssy instructions open
    for rid, region in sorted(cfg.regions.items(), key=lambda item: item[1].pc):
        opened[region.ssy_block] = rid
    owned: dict[int, list[int]] = {}
    for b in cfg.blocks:
        rid = opened.get(b.id, b.stack[-1] if b.stack else None)
        if rid is not None:
            owned.setdefault(rid, []).append(b.id)
    return owned


def mark_uniform_regions(cfg: Cfg) -> None:
    """Set ``Region.uniform`` on every region of ``cfg``.

    Per definition, not per register (a compiler reuses registers: a loop counter's register may
    later hold a loaded value). A definition in a non-uniform region whose register is live at
    the region's join is lane-varying: the groups that meet there hold different values (or
    some an older one), also around a loop back into the region."""
    reach = _reaching(cfg)
    live_in, _ = liveness(cfg)
    owned = _branches_owned(cfg)
    varying: set[tuple[int, int]] = set()  # definitions
    divergent: set[int] = set()  # regions
    branch_varies: dict[int, bool] = {}
    changed = True
    while changed:
        changed = False
        for b in cfg.blocks:
            now = {r: set(ds) for r, ds in reach[b.id].items()}
            for k, ins in enumerate(b.code):
                read_varies = any(d in varying for r in uses(ins) for d in now.get(r, ()))
                if SPECS[ins.op].conditional:
                    branch_varies[b.id] = read_varies
                r = defines(ins)
                if r is None:
                    continue
                if (b.id, k) not in varying and (
                        ins.op in _VARYING_ALWAYS
                        or ins.op is Opcode.S2R and SpecialReg(ins.mod) not in UNIFORM_SREGS
                        or ins.op not in _UNIFORM_ALWAYS and read_varies):
                    varying.add((b.id, k))
                    changed = True
                now[r] = {(b.id, k)}
        for rid, region in cfg.regions.items():
            if rid in divergent or not any(branch_varies.get(b, False) for b in owned.get(rid, ())):
                continue
            divergent.add(rid)
            changed = True
            leaving = live_in.get(region.join, set())
            varying |= {(b, k) for b in region.blocks for k, ins in enumerate(cfg.blocks[b].code)
                        if defines(ins) in leaving}
    for rid, region in cfg.regions.items():
        region.uniform = rid not in divergent
