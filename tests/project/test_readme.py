"""The README stays true to the code: every `dualflow` command line it shows parses with the
current options, every command is shown, and its Python examples (and the `TimingDevice` example
of docs/timing-model.md) run."""

from __future__ import annotations

import re
import shlex

import pytest
from paths import REPO

from dualflow.cli import build_parser

ROOT = REPO
README = (ROOT / "README.md").read_text()


def command_lines() -> list[str]:
    out = []
    for line in README.splitlines():
        line = line.strip()
        if line.startswith(".venv/bin/dualflow "):
            out.append(line.split("  #", 1)[0].removeprefix(".venv/bin/dualflow "))
    return out


@pytest.mark.parametrize("line", command_lines())
def test_readme_command_line_parses(line):
    argv = shlex.split(line.replace("[", "").replace("]", ""))  # optional parts shown in brackets
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        raise AssertionError(f"README: `dualflow {line}` does not parse") from exc
    assert callable(args.func)


def test_readme_shows_every_command():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    shown = {line.split()[0] for line in command_lines()}
    assert set(sub.choices) <= shown, set(sub.choices) - shown


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_python_examples_run(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    blocks = python_blocks(README)
    assert len(blocks) == 2
    namespace: dict = {}
    for code in blocks:  # the second example continues the first
        exec(compile(code, "README.md", "exec"), namespace)
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("[2. 2. 2. 2.] ") and "{" not in first  # counts, not {value, unit} dictionaries
    assert second.startswith("[2. 2. 2. 2.] ")


def test_timing_device_section_runs(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "timing-model.md").read_text()
    section = text.split("## From Python: `TimingDevice`", 1)[1].split("\n## ", 1)[0]
    (code,) = python_blocks(section)
    exec(compile(code, "docs/timing-model.md", "exec"), {})
    assert capsys.readouterr().out.startswith("[2. 2. 2. 2.] ")
