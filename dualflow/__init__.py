"""Dualflow: an open toolkit for out-of-order SIMT GPUs with a distance-operand instruction set.

The parts of this namespace live in the repository's top-level folders:
``dualflow.isa`` (isa/), ``dualflow.machine`` (machine/), ``dualflow.models`` (models/),
``dualflow.kernels`` (kernels/), ``dualflow.experiments`` (experiments/), ``dualflow.rtl`` (rtl/),
``dualflow.testbench`` (testbench/), ``dualflow.synth`` (synth/); the command line is
``dualflow.cli`` (dualflow/cli/). ``dualflow.layers`` states which part may import which.
"""

__version__ = "0.1.0"
