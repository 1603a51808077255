"""Ordinary but wrong arguments (issue 17, items 7 and 11): each ends with one clear line naming
the option or field, a non-zero exit and no traceback, before any output is written; Ctrl-C while
the command loads or while ``rtl generate`` elaborates prints one line, not a traceback or warnings."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest
from paths import REPO

from dualflow.cli import main
from dualflow.common.errors import ConfigError
from dualflow.machine import GpuConfig
from dualflow.machine.config import MAX_SMS, describe
from dualflow.machine.fields import INT_MAXIMUM
from dualflow.machine.presets import PRESETS, preset

ROOT = REPO
LOOP = ".kernel spin\n.form reg\nL:\n    bra L\n"


def run_main(capsys, argv: list[str]) -> tuple[int, str]:
    """Exit status and standard error of ``dualflow ARGV`` in this process (argparse's exits too)."""
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    # --seed -1 on every command that takes a seed
    ("sim vadd --size tiny --seed -1", "argument --seed: must be a non-negative integer below 2**64, not -1"),
    ("bench run vadd --size tiny --seed -1", "argument --seed: must be a non-negative integer"),
    ("trace vadd --seed -1 -o {out}", "argument --seed: must be a non-negative integer"),
    ("demo --seed -1", "argument --seed: must be a non-negative integer"),
    ("overhead vadd --size tiny --seed -1", "argument --seed: must be a non-negative integer"),
    ("reproduce --seed -1 -o {out}", "argument --seed: must be a non-negative integer"),
    ("cosim --workload vadd --seed -1", "argument --seed: must be a non-negative integer"),
    # problem sizes
    ("trace vadd --n -5 -o {out}", "argument --n: must be 1..16,777,216, not -5"),
    ("demo --n -1", "argument --n: must be 1..16,777,216, not -1"),
    ("trace vadd --n 1099511627776 -o {out}", "argument --n: must be 1..16,777,216, not 1099511627776"),
    # reproduce
    ("reproduce --warps abc -o {out}", "argument --warps: expected comma-separated integers in 1..64, not 'abc'"),
    ("reproduce --warps 8,,16 -o {out}", "argument --warps: expected comma-separated integers in 1..64, not '8,,16'"),
    ("reproduce --warps 8,65 -o {out}", "argument --warps: each value must be in 1..64, not 65"),
    ("reproduce --warps 0,8 -o {out}", "argument --warps: each value must be in 1..64, not 0"),
    ("reproduce -j 0 -o {out}", "argument -j/--jobs: must be at least 1, not 0"),
    # workload names
    ("overhead bogus", "unknown workload 'bogus'"),
    # --set into the configuration tree
    ("sim vadd --size tiny --set num_sms.x=1", "GpuConfig.num_sms is a single value, not a group of fields"),
    ("sim vadd --size tiny --set sm=5", "GpuConfig.sm is a group of SmConfig fields, not 5"),
    ("sim vadd --size tiny --set sm.int_unit=4", "SmConfig.int_unit is a group of UnitConfig fields, not 4"),
    ("sim vadd --size tiny --set core_clock_mhz=Infinity", "GpuConfig.core_clock_mhz must be a finite number"),
    ("sim vadd --size tiny --set memory.dram.clock_mhz=1e-300", "DramConfig.clock_mhz must be a finite number"),
    # upper limits (item 11)
    ("sim vadd --size tiny --set num_sms=1000000", "GpuConfig.num_sms must be at most 1,024, not 1,000,000"),
    ("sim vadd --size tiny --set sm.max_threads=1048576", "SmConfig.max_threads must be at most 65,536"),
    ("sim vadd --size tiny --set sm.int_unit.latency=1099511627776", "UnitConfig.latency must be at most 1,048,576"),
    ("sim vadd --size tiny --set memory.l2.size_bytes=1099511627776", "L2Config.size_bytes must be at most"),
    ("convert {src} --ring 100000000000", "argument --ring: must be 2..2,048, not 100000000000"),
    ("convert {src} --dmax 0", "argument --dmax: must be 1..255, not 0"),
    ("overhead vadd --ring 100000000000", "argument --ring: must be 2..2,048, not 100000000000"),
    # the instruction budget option
    ("sim {loop} --max-instructions 0", "argument --max-instructions: must be at least 1, not 0"),
    # the RTL's module name
    ("rtl generate --name bad\tname -o {out}", "module name 'bad name': a Verilog identifier"),
])
def test_bad_argument_is_one_line(capsys, tmp_path, argv, message):
    src = ROOT / "dualflow" / "kernels" / "samples" / "vadd.reg.s"
    loop = tmp_path / "loop.s"
    loop.write_text(LOOP)
    out = tmp_path / "out"
    args = [a.replace("\t", " ").format(out=out, src=src, loop=loop) for a in argv.split(" ")]
    rc, err = run_main(capsys, args)
    assert rc not in (0, None)
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and message in errors[0], err
    assert not out.exists()  # nothing written


def test_upper_limits_are_documented_and_the_presets_keep_within_them():
    fields = describe()
    assert fields["num_sms"]["maximum"] == MAX_SMS
    assert fields["memory.l2.size_bytes"]["maximum"] == 1 << 28
    assert "maximum" not in fields["sm.fetch_width"]  # INT_MAXIMUM applies
    for name in PRESETS:
        preset(name)
    with pytest.raises(ConfigError, match=f"at most {INT_MAXIMUM:,}"):
        GpuConfig().replace(**{"sm.registers": INT_MAXIMUM + 1})
    assert GpuConfig().replace(num_sms=MAX_SMS).num_sms == MAX_SMS


def _stderr_until(proc: subprocess.Popen, marker: bytes) -> bytes:
    """Read ``proc``'s standard error until ``marker`` has appeared (or it ends: a failure); returns
    what was read."""
    buf, fd = b"", proc.stderr.fileno()
    while marker not in buf:
        if select.select([fd], [], [], 1)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, buf[-2000:]
            buf += chunk
    return buf


def _interrupted(argv: list[str], marker: bytes, delay: float) -> tuple[int, list[str]]:
    """Run ``python -X importtime -m dualflow ARGV``; once ``marker`` was imported (the import-time
    report names it) and ``delay`` seconds more, Ctrl-C; returns the status and the lines of
    standard error that are not the import-time report."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "dualflow", *argv], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        buf = _stderr_until(proc, marker)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [line for line in (buf + err).decode().splitlines() if not line.startswith("import time:")]
    return proc.returncode, lines


def test_ctrl_c_while_the_command_loads_is_one_line(tmp_path):
    """The command modules (numpy, the models) load inside ``main``'s ``try``: Ctrl-C just after
    ``dualflow.common.errors`` was imported (the first thing ``dualflow.cli`` imports) ends with one line
    and status 130."""
    rc, lines = _interrupted(["sim", "vadd", "--size", "tiny"], b" dualflow.common.errors\n", 0.05)
    assert rc == 130
    assert lines == ["dualflow: stopped by SIGINT"]


def test_ctrl_c_during_rtl_generate_prints_no_amaranth_warnings(tmp_path):
    out = tmp_path / "core.v"
    rc, lines = _interrupted(["rtl", "generate", "-o", str(out)], b" dualflow.rtl.core\n", 0.5)
    assert rc == 130
    assert lines == ["dualflow: stopped by SIGINT"]
    assert not out.exists()
