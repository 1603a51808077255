"""A block of the core talks to another only through ``dualflow/rtl/interfaces.py``: every layout or
signature one RTL module imports from another comes from there, so no block owns a payload that
other blocks read. ``decode`` is the exception: the decoded instruction is the ISA's vocabulary
(generated from it), which the interfaces themselves are built from."""

from __future__ import annotations

import ast

import pytest
from paths import REPO

RTL = REPO / "dualflow" / "rtl"
#: Modules whose layouts other modules may import directly (see the module docstring).
VOCABULARY = {"interfaces", "decode"}


def is_interface(name: str) -> bool:
    """Whether an imported name is a payload layout or a port signature."""
    return name.endswith(("_layout", "_signature", "Signature"))


def misplaced_imports(module: str, source: str) -> list[str]:
    """Layouts and signatures ``module`` (dotted, under ``dualflow.rtl``) imports from an RTL module
    other than the vocabulary ones."""
    package = ["dualflow", "rtl", *module.split(".")[:-1]]
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[:len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("dualflow.rtl."):
            continue
        source_module = target.removeprefix("dualflow.rtl.")
        if source_module in VOCABULARY:
            continue
        out += [f"{module}:{node.lineno}: {alias.name} from {source_module}"
                for alias in node.names if is_interface(alias.name)]
    return out


def test_blocks_import_layouts_and_signatures_only_from_interfaces():
    modules = {".".join(f.relative_to(RTL).with_suffix("").parts): f.read_text() for f in RTL.rglob("*.py")}
    assert "core" in modules and "fp.stages" in modules  # the walk finds them
    assert [line for name, text in sorted(modules.items()) for line in misplaced_imports(name, text)] == []


@pytest.mark.parametrize("module, source, found", [
    ("control", "from .regfile import bank_of, read_request_layout\n", ["control:1: read_request_layout from regfile"]),
    ("fp.stages", "from ..collector import dispatch_layout\n", ["fp.stages:1: dispatch_layout from collector"]),
    ("issue", "def f():\n    from dualflow.rtl.scoreboard import check_signature\n",
     ["issue:2: check_signature from scoreboard"]),
    ("core", "from .stages import TraceSignature\n", ["core:1: TraceSignature from stages"]),
    ("issue", "from .interfaces import alloc_layout\nfrom .decode import decoded_layout\n", []),
])
def test_the_check_sees_a_block_importing_another_blocks_layout(module, source, found):
    assert misplaced_imports(module, source) == found
