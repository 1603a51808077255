"""Dualflow: an open toolkit for out-of-order SIMT GPUs with a distance-operand instruction set.

The parts of this namespace live in the repository's top-level folders:
``dualflow.isa`` (isa/), ``dualflow.models`` (models/), ``dualflow.kernels`` (kernels/),
``dualflow.rtl`` (rtl/), ``dualflow.testbench`` (testbench/), ``dualflow.synth`` (synth/).
"""

__version__ = "0.1.0"
