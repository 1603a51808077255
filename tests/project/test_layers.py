"""No package imports a package above it: every import of every module (function-local ones
included) is checked against the layering in ``dualflow/layers.py``, and the package graph has no
cycle. The checker is shown to catch a planted upward import, a relative one, and a cycle."""

from __future__ import annotations

import ast
import functools
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from paths import REPO

from dualflow.layers import BUILDS_ON, below

ROOT = REPO


def installed_modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the ``dualflow`` packages, read off the folder tree (the tree is the import
    tree): dotted name -> (file, is a package's ``__init__``)."""
    out: dict[str, tuple[Path, bool]] = {}
    for file in sorted((ROOT / "dualflow").rglob("*.py")):
        parts = file.relative_to(ROOT).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (file, is_package)
    return out


def test_setuptools_finds_every_package_of_the_tree():
    """pyproject.toml lists no packages: setuptools finds them, and it finds every folder of Python
    files, so none is left out of an install (or out of the layer check)."""
    from setuptools import find_namespace_packages

    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert packages == {"find": {"include": ["dualflow*"]}}, "packages are found, not listed"
    found = set(find_namespace_packages(str(ROOT), include=["dualflow*"]))
    folders = {".".join(file.parent.relative_to(ROOT).parts) for file in (ROOT / "dualflow").rglob("*.py")}
    assert folders <= found, folders - found


def from_module(node: ast.ImportFrom, package: list[str]) -> str:
    """The absolute module a ``from ... import`` reads from, inside ``package`` (its dotted parts)."""
    if not node.level:
        return node.module or ""
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, source: str, is_package: bool, *, names: bool = False) -> Iterator[tuple[int, str]]:
    """(line, absolute module) of every import in ``source`` anywhere in the file, relative
    imports resolved; ``from dualflow import x`` yields ``dualflow.x``, and with ``names`` every
    ``from m import x`` also yields ``m.x`` (``x`` may be a submodule: ``from . import compiled``)."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = from_module(node, package)
            if module == "dualflow":
                for alias in node.names:
                    yield node.lineno, f"dualflow.{alias.name}"
            else:
                yield node.lineno, module
                if names:
                    for alias in node.names:
                        yield node.lineno, f"{module}.{alias.name}"


def part_of(module: str) -> str | None:
    """The layer a ``dualflow`` module belongs to (``dualflow.models.timing.sm`` -> ``models``);
    None for modules outside the namespace."""
    parts = module.split(".")
    if parts[0] != "dualflow":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def check(modules: Mapping[str, tuple[str, bool]],
          table: Mapping[str, tuple[str, ...]] = BUILDS_ON) -> tuple[list[str], dict[str, set[str]]]:
    """Imports that break the layering, one message each, and the part-to-part import graph."""
    problems: list[str] = []
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in sorted(modules.items()):
        part = part_of(name)
        if part not in table:
            problems.append(f"{name}: part {part!r} has no place in dualflow/layers.py")
            continue
        allowed = below(part, table)
        for line, target in imports_of(name, source, is_package):
            other = part_of(target)
            if other is None or other == part:
                continue
            graph.setdefault(part, set()).add(other)
            if other not in allowed:
                problems.append(f"{name}:{line}: imports {target}, but {part} does not build on {other}")
    return problems, graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


@functools.cache
def read_all() -> dict[str, tuple[str, bool]]:
    return {name: (file.read_text(), is_package) for name, (file, is_package) in installed_modules().items()}


def test_every_import_goes_down():
    modules = read_all()
    assert "dualflow.cli.rtl" in modules and "dualflow.models.timing.sm" in modules  # the walk finds them
    problems, _graph = check(modules)
    assert problems == []


def test_no_import_cycle_between_packages():
    _problems, graph = check(read_all())
    assert find_cycle(graph) is None


def test_the_layering_itself_has_no_cycle():
    for part in BUILDS_ON:
        assert part not in below(part), part


def test_every_part_of_the_namespace_has_a_layer():
    parts = {part_of(name) for name in installed_modules()}
    assert parts <= set(BUILDS_ON), parts - set(BUILDS_ON)


@pytest.mark.parametrize("name, is_package, source, message", [
    # a function-local upward import, the kind the command-line code used to make
    ("dualflow.isa.fake", False, "def f():\n    from dualflow.rtl import core\n",
     "dualflow.isa.fake:2: imports dualflow.rtl, but isa does not build on rtl"),
    # a relative import that climbs out of the package
    ("dualflow.models.timing.fake", False, "from ...kernels import registry\n",
     "imports dualflow.kernels, but models does not build on kernels"),
    ("dualflow.rtl", True, "from dualflow import testbench\n",
     "imports dualflow.testbench, but rtl does not build on testbench"),
    ("dualflow.rtl.fake", False, "import dualflow.synth.yosys\n",
     "imports dualflow.synth.yosys, but rtl does not build on synth"),
    # sideways: experiments and testbench are on separate branches
    ("dualflow.experiments.fake", False, "from dualflow.testbench.cosim import run_cosim\n",
     "experiments does not build on testbench"),
    ("dualflow.newpart", False, "", "part 'newpart' has no place"),
])
def test_the_check_catches_a_planted_import(name, is_package, source, message):
    problems, _graph = check({name: (source, is_package)})
    assert len(problems) == 1 and message in problems[0], problems


def test_downward_and_outside_imports_pass():
    source = "import numpy\nfrom dualflow.isa import Form\nfrom .stats import TimingStats\n"
    assert check({"dualflow.models.timing.fake": (source, False)})[0] == []


#: Rules between the modules of one part: (the package whose modules the rule is about, the
#: package inside it they must not import, the modules excepted with the reason). The reference
#: timing engine is the compiled one's specification: it must read, and run, without it.
INSIDE_RULES: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("dualflow.models.timing", "dualflow.models.timing.compiled", {
        "dualflow.models.timing.device": "TimingDevice builds the engine its caller names, the compiled one too",
    }),
)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def check_inside(modules: Mapping[str, tuple[str, bool]],
                 rules: tuple[tuple[str, str, dict[str, str]], ...] = INSIDE_RULES) -> list[str]:
    """Imports (function-local ones included) that break a rule of ``rules``, one message each."""
    problems = []
    for package, forbidden, excepted in rules:
        for name, (source, is_package) in sorted(modules.items()):
            if not _within(name, package) or _within(name, forbidden) or name in excepted:
                continue
            for line, target in imports_of(name, source, is_package, names=True):
                if _within(target, forbidden):
                    problems.append(f"{name}:{line}: imports {target}, but {package} must not import {forbidden}")
                    break
    return problems


def test_the_reference_timing_engine_does_not_import_the_compiled_one():
    modules = read_all()
    for _package, _forbidden, excepted in INSIDE_RULES:
        assert set(excepted) <= set(modules), "an exception names a module that no longer exists"
    assert check_inside(modules) == []


@pytest.mark.parametrize("source", [
    "from .compiled.engine import CompiledGpu\n",
    "def f():\n    from . import compiled\n",  # function-local, and the package named as a name
    "import dualflow.models.timing.compiled.core\n",
])
def test_the_inside_rule_catches_a_planted_import(source):
    problems = check_inside({"dualflow.models.timing.sm": (source, False)})
    assert len(problems) == 1 and "must not import dualflow.models.timing.compiled" in problems[0], problems
    # the compiled package itself, and the one excepted module, may
    assert check_inside({"dualflow.models.timing.compiled.engine": (source, False),
                         "dualflow.models.timing.device": (source, False)}) == []


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    _problems, graph = check({"dualflow.rtl.x": ("from dualflow.testbench import sim\n", False),
                              "dualflow.testbench.y": ("from dualflow.rtl import core\n", False)})
    assert find_cycle(graph) == ["rtl", "testbench", "rtl"]


def test_a_layering_with_a_cycle_is_seen():
    assert "a" in below("a", {"a": ("b",), "b": ("a",)})


def module_graph(modules: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Which of ``modules`` each one imports, anywhere in its file: ``from p import m`` is an import
    of the module ``p.m`` when there is one, else of ``p`` (a name ``p`` defines or re-exports)."""
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in modules.items():
        package = name.split(".") if is_package else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = from_module(node, package)
                targets.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                               for alias in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_no_import_cycle_between_modules():
    """Inside a package too, no module imports one that imports it back, not even from inside a
    function (a function-local import hides the cycle from the import system, not from a reader)."""
    assert find_cycle(module_graph(read_all())) is None


@pytest.mark.parametrize("modules, cycle", [
    # the converter's cost weights read back from the package whose driver imports hands.py
    ({"dualflow.isa.convert": ("from .hands import assign\n", True),
      "dualflow.isa.convert.hands": ("def assign():\n    from . import LOCAL_LOAD_COST\n", False)},
     ["dualflow.isa.convert", "dualflow.isa.convert.hands", "dualflow.isa.convert"]),
    # two modules of one package, one import local to a function
    ({"dualflow.testbench.sim": ("def run():\n    from .verilator import verilator_env\n", False),
      "dualflow.testbench.verilator": ("from dualflow.testbench.sim import BUILD_BASE\n", False)},
     ["dualflow.testbench.sim", "dualflow.testbench.verilator", "dualflow.testbench.sim"]),
])
def test_the_module_cycle_check_catches_a_planted_cycle(modules, cycle):
    assert find_cycle(module_graph(modules)) == cycle


def test_importing_a_submodule_by_name_is_no_import_of_its_package():
    """``from . import costs`` in a package's module reads the module ``costs``, not the package's
    ``__init__`` (which may import the importer)."""
    modules = {"dualflow.isa.convert": ("from .hands import assign\n", True),
               "dualflow.isa.convert.hands": ("from . import costs\n", False),
               "dualflow.isa.convert.costs": ("", False)}
    assert module_graph(modules)["dualflow.isa.convert.hands"] == {"dualflow.isa.convert.costs"}
    assert find_cycle(module_graph(modules)) is None


def test_test_modules_import_test_modules_of_their_own_folder_only():
    """pytest puts a test file's folder on the path as it collects it, so a test module imported
    from another folder is found only when that folder happens to be collected first: shared
    helpers live in tests/ itself (engines.py, dram_cases.py, ...)."""
    tests = ROOT / "tests"
    beside = {file.stem: file.parent for file in tests.rglob("test_*.py")}
    found = []
    for file in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{file.relative_to(ROOT)}:{node.lineno}: {name}" for name in names
                      if name in beside and beside[name] != file.parent]
    assert not found, found
