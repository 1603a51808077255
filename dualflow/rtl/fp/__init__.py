"""The core's FP32 units: the pipelined FP32 unit (``FpPipeline``) and the special-function unit.

Every block matches ``dualflow.models.fp32`` (docs/isa.md, "FP32 semantics") bit for bit. The
blocks, one job each: ``fields`` (unpack and classify an operand, flushing a denormal input),
``round_pack`` (normalize, round to nearest even with gradual underflow, flush a subnormal
result, overflow to infinity, pack), ``fma`` (the exact fused multiply-add sum that ``fadd``,
``fsub``, ``fmul`` and ``ffma`` all use), ``convert`` (float to integer), ``compare`` (``fsetp``,
``fmin``, ``fmax``), ``lane`` (one lane of the FP32 unit) and ``pipeline`` (all lanes and the
stage registers).
"""
