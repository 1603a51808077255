"""Check the port manifest (``ports.py``) against the sources, and re-record its hashes.

    python -m dualflow.models.timing.compiled.port_check            # list the problems (exit 1 if any)
    python -m dualflow.models.timing.compiled.port_check --record   # after re-checking the ports

A reference function is identified by the hash of its normalized source: the function's
``ast`` with every docstring removed, unparsed (so comments, docstrings and formatting do not
count, and the text does not depend on the Python version's ``ast.dump``). Functions are found
by reading the modules' source files, not by importing them (no numba compilation).

``--record`` is a developer command: it rewrites ``port_hashes.py`` beside this file, in the
source tree, with the hashes of the reference functions as they are now. Nothing in the package
calls it, so the engines never write into the package at run time. Run it only after the ports
of every changed reference function were re-checked (read against the reference, and the
engine-equality tests and the behaviour lock run: tests/models/timing/test_timing_compiled.py,
test_compiled_memory.py, tests/project/test_behaviour_lock.py).
"""

from __future__ import annotations

import argparse
import ast
import copy
import functools
import hashlib
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from .port_hashes import REFERENCE_HASHES
from .ports import COMPILED, COMPILED_ONLY, PORTED_MODULES, PORTS, REFERENCE

HASHES_FILE = Path(__file__).with_name("port_hashes.py")
RECORD_COMMAND = "python -m dualflow.models.timing.compiled.port_check --record"


def absolute(name: str, package: str) -> tuple[str, str]:
    """(module, qualname) of a manifest name ``module:qualname``, its module relative to
    ``package`` unless it starts with ``dualflow.``."""
    module, _, qualname = name.partition(":")
    if not module.startswith("dualflow."):
        module = f"{package}.{module}"
    return module, qualname


def module_tree(module: str) -> ast.Module | None:
    """The parsed source of ``module`` (None if there is no such module)."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return _parsed(spec.origin, Path(spec.origin).stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _parsed(path: str, mtime_ns: int) -> ast.Module:
    """The parsed file ``path`` (cached while its modification time stays ``mtime_ns``)."""
    return ast.parse(Path(path).read_text(), path)


def find_definition(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function ``qualname`` (``Class.method``, ``function``, ``outer.<locals>.inner``) of
    ``tree``, or None."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    node: ast.AST = tree
    nested = False
    for part in qualname.split("."):
        if part == "<locals>":  # a function defined anywhere inside the one before
            nested = True
            continue
        scope = list(ast.walk(node))[1:] if nested else getattr(node, "body", [])
        found = next((n for n in scope if isinstance(n, kinds) and n.name == part), None)
        if found is None:
            return None
        node, nested = found, False
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def normalized_source(node: ast.AST) -> str:
    """``node`` unparsed without docstrings (its own and those of what it defines)."""
    node = copy.deepcopy(node)
    for inner in ast.walk(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ast.get_docstring(inner):
            inner.body = inner.body[1:] or [ast.Pass()]
    return ast.unparse(node)


def source_hash(node: ast.AST) -> str:
    """The recorded form of a function: 16 hex digits of the SHA-256 of its normalized source."""
    return hashlib.sha256(normalized_source(node).encode()).hexdigest()[:16]


def _definition(name: str, package: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    module, qualname = absolute(name, package)
    tree = module_tree(module)
    return None if tree is None else find_definition(tree, qualname)


def references(ports: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Each reference function the manifest names -> the compiled functions that port it."""
    out: dict[str, list[str]] = {}
    for compiled, refs in ports.items():
        for ref in refs:
            out.setdefault(ref, []).append(compiled)
    return out


def current_hashes(ports: Mapping[str, tuple[str, ...]] = PORTS) -> dict[str, str | None]:
    """The hash of every reference function the manifest names, as its source is now (None: gone)."""
    out = {}
    for ref in sorted(references(ports)):
        node = _definition(ref, REFERENCE)
        out[ref] = None if node is None else source_hash(node)
    return out


def _top_level_functions(module: str) -> Iterable[str]:
    tree = module_tree(f"{COMPILED}.{module}")
    if tree is None:
        return [f"{module}:<missing module>"]
    return [f"{module}:{n.name}" for n in tree.body if isinstance(n, ast.FunctionDef)]


def problems(ports: Mapping[str, tuple[str, ...]] = PORTS, hashes: Mapping[str, str] = REFERENCE_HASHES,
             compiled_only: Mapping[str, tuple[str, ...]] = COMPILED_ONLY,
             modules: Iterable[str] = PORTED_MODULES) -> list[str]:
    """Everything in which the manifest and the sources disagree, one message each."""
    out = []
    for compiled in sorted(ports):
        if _definition(compiled, COMPILED) is None:
            out.append(f"compiled function {compiled} (in ports.PORTS) no longer exists: update the manifest")
        if not ports[compiled]:
            out.append(f"compiled function {compiled} names no reference function")
    ported_by = references(ports)
    now = current_hashes(ports)
    for ref, compiled in sorted(ported_by.items()):
        ports_text = ", ".join(compiled)
        if now[ref] is None:
            out.append(f"reference function {ref} no longer exists: its port(s) {ports_text} must be re-checked "
                       "against what replaced it, and the manifest updated")
        elif ref not in hashes:
            out.append(f"reference function {ref} has no recorded hash: check its port(s) {ports_text}, then run "
                       f"{RECORD_COMMAND}")
        elif hashes[ref] != now[ref]:
            out.append(f"reference function {ref} changed (recorded hash {hashes[ref]}, now {now[ref]}): re-check "
                       f"its port(s) {ports_text}, then run {RECORD_COMMAND}")
    for ref in sorted(set(hashes) - set(ported_by)):
        out.append(f"a hash is recorded for {ref}, which no port names: run {RECORD_COMMAND}")
    # every function of a ported module is declared: a port, or compiled-only
    unported = [name for names in compiled_only.values() for name in names]
    for name in sorted({n for n in unported if unported.count(n) > 1} | (set(unported) & set(ports))):
        out.append(f"compiled function {name} is declared more than once (ports.PORTS, ports.COMPILED_ONLY)")
    declared = set(ports) | set(unported)
    for module in modules:
        for name in _top_level_functions(module):
            if name not in declared:
                out.append(f"compiled function {name} is neither a port (ports.PORTS) nor compiled-only "
                           "(ports.COMPILED_ONLY)")
    for name in sorted(unported):
        if _definition(name, COMPILED) is None:
            out.append(f"compiled function {name} (in ports.COMPILED_ONLY) no longer exists: update the manifest")
    return out


def hashes_source(hashes: Mapping[str, str]) -> str:
    """The text of ``port_hashes.py`` recording ``hashes``."""
    lines = [f'"""Generated by ``{RECORD_COMMAND}`` (port_check.py): the hash of each',
             "reference function the port manifest (ports.py) names, as it was when its ports were last checked.",
             'Do not edit by hand."""', "", "REFERENCE_HASHES: dict[str, str] = {"]
    lines += [f'    "{ref}": "{value}",' for ref, value in sorted(hashes.items())]
    lines += ["}", ""]
    return "\n".join(lines)


def record(path: Path = HASHES_FILE) -> dict[str, str]:
    """Write the current hashes of the manifest's reference functions to ``path`` (see the module
    docstring: a developer command); refuses while a listed function is missing."""
    now = current_hashes()
    missing = [ref for ref, value in now.items() if value is None]
    if missing:
        raise SystemExit(f"cannot record: reference function(s) {', '.join(missing)} no longer exist; "
                         "update ports.py first")
    path.write_text(hashes_source(now))
    return now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true",
                        help="rewrite port_hashes.py with the reference functions' current hashes")
    args = parser.parse_args(argv)
    if args.record:
        before = dict(REFERENCE_HASHES)
        now = record()
        changed = sorted(ref for ref in now if before.get(ref) != now[ref])
        print(f"recorded {len(now)} reference hashes in {HASHES_FILE}" + (f"; changed: {', '.join(changed)}"
                                                                          if changed else "; none changed"))
        return 0
    found = problems()
    for message in found:
        print(message)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
