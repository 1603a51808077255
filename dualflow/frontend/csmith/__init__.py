"""Differential testing of the CUDA front end with Csmith's random programs.

For each Csmith seed: generate a program the machine can run (``generate``: 32-bit, no pointers,
aggregates, floats or jumps, small), turn it into one body that compiles both for the host and as
a CUDA kernel in which every thread runs the whole program on its own globals (``transform``,
with our own runtime headers in ``include/``), build and run it with g++ once per thread seed
(``host``), compile it through the front end and run it on the functional and timing models
(``device``), and compare every thread's checksum (``differential``). ``campaign`` runs many seeds
in worker processes and tallies them; ``benchmarks/csmith_campaign.py`` is its command line.
``ptx_census`` counts the PTX opcodes the programs use.
"""

from .campaign import Tally, run_campaign
from .device import DeviceProgram, Target, compile_kernel, run_target
from .differential import ProgramResult, Settings, check_program, thread_seeds
from .errors import StageError
from .generate import DEFAULT_OPTIONS, CsmithOptions, run_csmith
from .transform import Program, host_source, kernel_source, transform

__all__ = ["CsmithOptions", "DEFAULT_OPTIONS", "DeviceProgram", "Program", "ProgramResult", "Settings", "StageError",
           "Target", "Tally", "check_program", "compile_kernel", "host_source", "kernel_source", "run_campaign",
           "run_csmith", "run_target", "thread_seeds", "transform"]
