"""Dualflow: an open toolkit for out-of-order SIMT GPUs with a distance-operand instruction set.

Each part of this namespace is a folder of ``dualflow/``, bottom to top: ``common`` (errors, file
writes, build folders), ``isa`` (instruction set, assembler, converter), ``machine`` (the machine
description), ``models`` (functional and timing models), ``kernels`` (workloads), ``energy``,
``experiments``; beside them ``rtl`` (the Amaranth core), ``synth`` and ``testbench``; ``cli`` (the
command line) on top. ``dualflow.layers`` states which part may import which.
"""

__version__ = "0.1.0"
