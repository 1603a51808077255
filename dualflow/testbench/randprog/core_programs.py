"""Random programs for the RTL core: generated structured programs that fit a ``CoreParams``, in
the core's form, as co-simulation cases.

``core_program(params, seed)`` draws one program with the generator (``generator.generate``)
configured for the core (``gen_config``): launch shapes of the core's warp size whose blocks fit
its warps (at most 64 threads: the generator's shared-memory phases give each thread one word of
256 bytes), a value pool and a never-written register inside its register count, FP32/SFU
values only when asked (``fp``: the campaign turns it on when the core has FP units). The REG
program does not depend on the mode, so BASE and DFLOW cores run the same program for a seed;
a DFLOW core runs its conversion for the core's Dmax and ring. ``fault_programs`` makes the
programs that fault on purpose.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from dualflow.common.errors import ConfigError
from dualflow.isa import Form, Kernel, Variant, assemble
from dualflow.isa.convert import MIN_DMAX, convert_kernel
from dualflow.models.device import Device
from dualflow.rtl.decode import VARIANTS as RTL_VARIANTS
from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams

from ..cosim import CosimCase
from .generator import (
    POOL_BASE,
    SHARED_PHASE_BYTES,
    UNWRITTEN,
    GenConfig,
    Launch,
    Program,
    RandomSource,
    generate,
    make_inputs,
    upload,
)
from .hands import handify

__all__ = ["CoreProgram", "core_launches", "core_program", "form_kernel", "gen_config", "main_hands"]

#: Threads of a block the generator's shared-memory phases have a word for (one word each).
MAX_BLOCK = SHARED_PHASE_BYTES // 4
#: Nesting of if/else and loops (the converter's tests use 3): deeper SIMT stacks.
RTL_MAX_DEPTH = 4
#: Extra chance of a shared-memory phase with barriers per converged statement (warps wait at them).
SHARED_PHASE_PERCENT = 6
#: Cycles per block before the bench gives up: far above what a generated program needs.
MAX_CYCLES = 200_000


def core_launches(params: CoreParams) -> tuple[Launch, ...]:
    """Launch shapes for the core: one warp, a partial last warp, every warp (at most
    ``MAX_BLOCK`` threads); grids of one to three blocks (the core runs them one after another)."""
    L = params.warp_size
    full = min(params.warps * L, MAX_BLOCK)
    blocks = sorted({L, max(L, full - L // 2), full})
    return tuple(Launch(L, block, grid) for block in blocks for grid in (1, 2, 3))


def gen_config(params: CoreParams, *, fp: bool = False, read_unwritten: bool = True) -> GenConfig:
    """The generator's settings for ``params``: every register the program names inside the BASE
    register count, ``fp`` as given. ``read_unwritten``: read a never-written register now and
    then and pool registers before their first value (a block starts with every register at 0,
    in the golden model and in the core's register file, regfile.py)."""
    top = min(UNWRITTEN, params.regs - 1)
    max_pool = max(4, min(GenConfig.max_pool, top - POOL_BASE))
    return GenConfig(min_pool=min(GenConfig.min_pool, max_pool), max_pool=max_pool, fp=fp,
                     unwritten=top if read_unwritten else None, launches=core_launches(params),
                     max_depth=RTL_MAX_DEPTH, shared_phase_percent=SHARED_PHASE_PERCENT)


def main_hands(params: CoreParams) -> list[int]:
    """The hands a random hands program may take as its main hand: those whose ring leaves the
    converter its smallest Dmax; program seed ``seed`` takes ``main_hands[seed % len(main_hands)]``."""
    mains = [h for h, n in enumerate(params.ring_sizes) if min(params.dmax, n - 1) >= MIN_DMAX]
    if not mains:
        raise ConfigError(f"a random hands program needs a hand whose ring exceeds the converter's smallest "
                          f"Dmax {MIN_DMAX} (and dmax at least that), not rings {params.ring_sizes}, "
                          f"dmax {params.dmax}")
    return mains


def form_kernel(text: str, params: CoreParams, where: str = "<random>",
                variants: frozenset[Variant] = frozenset(), seed: int = 0) -> Kernel:
    """Assemble REG ``text``; for a DFLOW core, convert it for the core's Dmax and ring with the
    DFLOW ``variants`` given (every DFLOW core implements those of ``rtl.decode.VARIANTS``). A core
    with hands (``params.hands`` > 1) runs a hands program: the conversion for the ring of a main
    hand named by ``seed`` (``main_hands``), spread over every hand by ``hands.handify`` (random side producers,
    sources, rpinc and reservations on the other hands, legal by construction)."""
    kernel = assemble(text, where).only
    if params.mode.form is Form.DFLOW and params.hands > 1:
        rng = random.Random(f"hands {seed}")
        mains = main_hands(params)
        main = mains[seed % len(mains)]
        ring = params.ring_sizes[main]
        kernel, _report = convert_kernel(kernel, dmax=min(params.dmax, ring - 1), ring=ring, variants=variants)
        return handify(kernel, params.ring_sizes, main, rng, words=params.imem_words)
    if params.mode.form is Form.DFLOW:
        kernel, _report = convert_kernel(kernel, dmax=params.dmax, ring=params.ring, variants=variants)
    return kernel


def seed_variants(seed: int, params: CoreParams | None = None) -> frozenset[Variant]:
    """The DFLOW variants a random program is converted with: every variant every DFLOW core
    implements (``rtl.decode.VARIANTS``) for odd seeds, none for even ones, so a campaign runs both
    the original form and the variants; and, for every seed, ``uniform-operands`` when ``params``
    is a core built with them (the converter turns the program's ``ldc`` and uniform ``s2r`` into
    uniform operands where it can: that core is there to run them)."""
    uniform = frozenset({Variant.UNIFORM_OPERANDS}) if params is not None and params.uniform_operands else frozenset()
    return (RTL_VARIANTS if seed % 2 else frozenset()) | uniform


@dataclass
class CoreProgram:
    """One generated program for one core.

    Attributes
    ----------
    seed: the generator's seed (the program and its inputs follow from it and the core).
    program: the generated tree. text: its REG assembly (with a fault when ``fault`` is set).
    kernel: what the core runs (REG, or its DFLOW conversion). fault: the trap the program is
    made to meet (``fault_programs``), None for a program that must run to its end.
    """

    seed: int
    program: Program
    text: str
    kernel: Kernel
    fault: TrapCause | None = None

    @property
    def name(self) -> str:
        return f"random-{self.seed}" + (f"-{self.fault.name.lower()}" if self.fault else "")

    def case(self, *, memory_seed: int | None = None) -> CosimCase:
        """The program as a co-simulation case (the memory model's latencies from ``memory_seed``,
        default the program's seed)."""
        prog = self.program

        def setup(dev: Device) -> list[int]:
            return upload(dev, make_inputs(prog.data_seed), prog.launch, prog.n, prog.slots)

        return CosimCase(self.name, self.kernel, prog.launch.block, setup, grid=prog.launch.grid,
                         seed=self.seed if memory_seed is None else memory_seed, max_cycles=MAX_CYCLES)


def core_program(params: CoreParams, seed: int, *, fp: bool = False, read_unwritten: bool = True) -> CoreProgram:
    """The program of ``seed`` for a core built with ``params`` (deterministic; ``gen_config``
    says what ``fp`` and ``read_unwritten`` do)."""
    prog = generate(RandomSource(seed), gen_config(params, fp=fp, read_unwritten=read_unwritten))
    text = prog.text
    return CoreProgram(seed, prog, text, form_kernel(text, params, f"<random seed {seed}>", seed_variants(seed, params),
                                                     seed=seed))


def core_runs_fp(params: CoreParams) -> bool:
    """Does the core execute FP32 and SFU instructions? Asked of the core's own decoder (Amaranth's
    simulator, a fraction of a second): true unless it flags an FP instruction (``fadd``) and an
    SFU one (``fdiv``) as ``fp_trap`` (this core has no FP units yet; dualflow/rtl/decode.py). A decoder
    without the ``fp_trap`` field traps no FP opcode."""
    from amaranth.sim import Simulator

    from dualflow.isa import Instruction, Opcode
    from dualflow.rtl.decode import DecodedLayout, Decoder

    if "fp_trap" not in dict(DecodedLayout()):
        return True
    dut = Decoder(distance_operands=params.mode.form is Form.DFLOW)
    trapped = []

    async def bench(ctx):
        for op in (Opcode.FADD, Opcode.FDIV):
            ctx.set(dut.word, Instruction(op, dst=1, a=1, b=2).encode())
            trapped.append(ctx.get(dut.out.fp_trap))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return not any(trapped)
