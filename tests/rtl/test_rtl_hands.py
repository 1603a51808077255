"""The ``hands`` variant on the RTL core (docs/rtl.md, "Hands"): hand-written hands kernels
co-simulated against the golden model (every retired record, its hand, RP and slot, and the final
memory) on cores built with their rings, small ones included; an illegal read on a small hand traps
alike; the core's parameters and the refusals of kernels whose rings are not the core's."""

from __future__ import annotations

import pytest
from programs import hands_divergent, hands_loop, hands_source, hands_unwritten_read

from dualflow.common.errors import ConfigError
from dualflow.isa import Variant, assemble
from dualflow.rtl.decode import CORE_VARIANTS
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CosimCase, check_case, run_cosim

#: 4 lanes x 2 warps: blocks of 8 threads; the if-else kernels send odd lanes one way (every warp diverges).
CORE = dict(warp_size=4, warps=2, register_banks=4, collector_units=4, alu_latency=2)
THREADS = 8


def _kernel(name: str, rings: str, dmax: int, body: str, variants: str = "hands") -> str:
    return f""".kernel {name}
.form dflow
.param out
.ring {rings}
.dmax {dmax}
.variant {variants}
{body}"""


#: hand s wraps (ring 8) around a loop that reads an invariant on hand v and tid on hand u (rings of 2)
LOOP = hands_source("loop", "8 2 2 2", 7, hands_loop(12))

#: rings of two entries: every read a distance 1 back, rpinc on hands t and v, a store's data on t
SMALL = _kernel("small", "8 2 2 2", 7, """    s2r %tid.x                 ; s0: tid
    mov 1 -> t                 ; t0 = 1
    iadd |t1|, |1| -> t        ; t1 = 1 + tid
    imul |t1|, |t1| -> t       ; t2 = (1 + tid)^2
    iadd |t1|, 5 -> u          ; u0 = t2 + 5
    rpinc 3 -> v               ; v skips 0..2
    iadd |u1|, |t1| -> v       ; v3 = u0 + t2
    rpinc 1 -> t               ; t skips 3
    mov |v1| -> t              ; t4 = v3
    ishl |1|, 2                ; s1 = tid * 4
    ldc out                    ; s2
    iadd |1|, |2|              ; s3 = out + tid * 4
    stg [|1|], |t1|            ; t4
    exit
""")

#: a divergent if: each hand joins at its own largest RP (s from path A, t from path B)
DIVERGENT = hands_source("divergent", "16 8", 8, hands_divergent("iand |2|, 1"))

#: ssy L, 2 -> t reserves on hand t: path B writes nothing on t, the join reads 3 back on t
RESERVED = _kernel("reserved", "16 8", 7, """    mov 7 -> t                 ; t0: read after the join
    s2r %tid.x                 ; s0
    ssy JOIN, 2 -> t
    iand |1|, 1                ; s1: odd lanes take path A
    brnz |1|, A
    sync                       ; path B: nothing on t
A:  mov 1 -> t                 ; path A: t + 2
    mov 2 -> t
    sync
JOIN:
    ishl |2|, 2                ; tid (s: 0 and 1 written, RP_s 2)
    ldc out
    iadd |1|, |2|
    stg [|1|], |t3|            ; the 7, 3 back on t when RP_t is 1 + 2
    exit
""", variants="hands reserved-ssy")

#: three hands of 4, 8 and 2 entries (14 entries a warp, not a power of two): hand s wraps, a
#: reserving ssy on t, rpinc on u in one path and on s after the join, ldc writing hand u
THREE = _kernel("three", "4 8 2", 7, """    s2r %tid.x -> t            ; t0: tid
    mov 10                     ; s0
    mov 20                     ; s1
    mov 30                     ; s2
    mov 40                     ; s3
    mov 50                     ; s4 (s0's slot)
    iadd |1|, |t1| -> t        ; t1 = 50 + tid
    iand |t2|, 1 -> u          ; u0: odd lanes take path A
    ssy JOIN, 2 -> t           ; the SYNC entry's RP_t is 2 + 2
    brnz |u1|, A
    iadd |2|, 1                ; path B: s5 = 41
    rpinc 1 -> u               ; path B: u skips 1
    sync
A:  iadd |1|, 2                ; path A: s5 = 52
    iadd |1|, 3                ; path A: s6 = 55
    iadd |t1|, |1| -> t        ; path A: t2 = 105 + tid
    mov |t3| -> u              ; path A: u1 = tid
    sync
JOIN:                          ; RP_s 7, RP_t 4 (reserved), RP_u 2
    mov |3|                    ; s7 = 50 (position 4)
    iadd |t3|, |1| -> t        ; t4 = (50 + tid) + 50
    rpinc 1 -> s               ; s skips 8
    ishl |t5|, 2 -> t          ; t5 = tid * 4
    ldc out -> u               ; u2
    iadd |u1|, |t1|            ; s9 = out + tid * 4
    stg [|1|], |t2|            ; t4
    exit
""", variants="hands reserved-ssy")

#: path B's lanes never wrote position 1 of hand t: an illegal read at the join (DFLOW_READ)
ILLEGAL = _kernel("illegal", "16 8", 7, hands_unwritten_read(5))


def _expected_loop(tid: int) -> int:
    acc = tid
    for i in range(12):
        acc = i * 3 + acc
    return acc


EXPECTED = {
    "loop": [_expected_loop(t) for t in range(THREADS)],
    "small": [2 * (1 + t) ** 2 + 5 for t in range(THREADS)],
    "divergent": [107] * THREADS,
    "reserved": [7] * THREADS,
    "three": [100 + t for t in range(THREADS)],
}

#: core rings (and dmax) -> the kernels that run on it
CORES = {
    (8, 2, 2, 2): (7, [LOOP, SMALL]),
    (16, 8): (15, [DIVERGENT, RESERVED, ILLEGAL]),
    (4, 8, 2): (7, [THREE]),
}


def _case(text: str, outputs: dict) -> CosimCase:
    kernel = assemble(text).only

    def setup(dev):
        out = dev.alloc(4 * THREADS)
        outputs[kernel.name] = out
        return [out]

    return CosimCase(kernel.name, kernel, THREADS, setup)


@pytest.mark.parametrize("rings", list(CORES), ids=lambda r: "rings-" + "-".join(map(str, r)))
def test_hands_kernels_match_the_golden_model(rings):
    dmax, texts = CORES[rings]
    params = CoreParams(mode="dflow", rings=rings, dmax=dmax, **CORE)
    outputs: dict = {}
    results = run_cosim(params, [_case(t, outputs) for t in texts])
    problems = []
    for r in results:
        if not r.ok or not r.compare.matched:
            problems.append(r.summary())
        elif r.name == "illegal":
            if r.fault is None or "illegal DFLOW read of |t1|" not in r.fault.message:
                problems.append(f"illegal: expected the illegal read of |t1|, got {r.summary()}")
        else:
            if r.fault is not None:
                problems.append(f"{r.name}: faulted: {r.fault.message}")
            base = outputs[r.name] // 4
            words = r.memory[base:base + THREADS].tolist() if r.memory is not None else None
            if words != EXPECTED[r.name]:
                problems.append(f"{r.name}: out {words}, expected {EXPECTED[r.name]}")
            hands = {rec.hand for rec in r.rtl.records}
            if len(hands) < 2:
                problems.append(f"{r.name}: the trace names hands {hands}")
    assert not problems, "\n\n".join(problems)


def test_hands_params():
    p = CoreParams(mode="dflow", rings=(16, 8, 4), dmax=15)
    assert p.hands == 3 and p.ring == 16 and p.hand_base == (0, 16, 24) and p.entries_per_warp == 28
    assert CoreParams(**p.to_dict()) == p and p.to_dict()["rings"] == [16, 8, 4]
    one = CoreParams(rings=(16,), dmax=15)
    assert one.rings is None and one.ring == 16 and one.hands == 1 and "rings" not in one.to_dict()
    assert CoreParams().to_dict() == CoreParams(ring=32).to_dict() and "rings" not in CoreParams().to_dict()
    for bad in [(16, 12), (16, 8, 4, 2, 2), (), (1, 4)]:
        with pytest.raises(ConfigError, match="rings must be 1 to 4 powers of two"):
            CoreParams(rings=bad, dmax=3)
    with pytest.raises(ConfigError, match="ring 8 must be hand 0's ring"):
        CoreParams(ring=8, rings=(16, 8), dmax=7)
    with pytest.raises(ConfigError, match="hands are of the DFLOW form"):
        CoreParams(mode="base", rings=(16, 8))
    with pytest.raises(ConfigError, match="dmax must be an integer in 1..max.rings.-1 = 15"):
        CoreParams(rings=(16, 8), dmax=16)


def test_cosim_takes_hands_kernels_on_a_core_of_their_rings():
    assert Variant.HANDS in CORE_VARIANTS
    kernel = assemble(DIVERGENT).only
    check_case(CoreParams(rings=(16, 8), dmax=15, **CORE), CosimCase("k", kernel, THREADS))
    with pytest.raises(ConfigError, match=r"kernel rings 16 8 differ from the core's rings 16 16 .*--rings 16 8"):
        check_case(CoreParams(rings=(16, 16), dmax=15, **CORE), CosimCase("k", kernel, THREADS))
    with pytest.raises(ConfigError, match="kernel rings 16 8 differ from the core's rings 32"):
        check_case(CoreParams(**CORE), CosimCase("k", kernel, THREADS))
    # a hands kernel of one ring runs on a core of that ring (every selector is 0)
    one = assemble(_kernel("one", "32", 31, "    mov 1\n    exit\n")).only
    check_case(CoreParams(**CORE), CosimCase("one", one, THREADS))


def test_cosim_command_runs_a_hands_kernel_with_its_rings(tmp_path, capsys):
    """``dualflow cosim FILE --rings ..``: the core of the test above (the same build)."""
    from dualflow.cli import main

    src = tmp_path / "divergent.s"
    src.write_text(DIVERGENT)
    core = ["--mode", "dflow", "--warp-size", "4", "--warps", "2", "--register-banks", "4", "--collector-units", "4",
            "--alu-latency", "2", "--dmax", "15", "--block", str(THREADS)]
    assert main(["cosim", str(src), *core, "--rings", "16", "8"]) == 0
    out = capsys.readouterr().out
    assert "0 mismatches" in out or "match" in out, out
    assert main(["cosim", str(src), *core]) == 1
    err = capsys.readouterr().err
    assert "--rings 16 8" in err and "Traceback" not in err
