"""The port manifest (dualflow/models/timing/compiled/ports.py) agrees with the sources: every
compiled function it lists and every reference function they port exists, every reference
function is as it was when its ports were last checked (port_hashes.py), and every function of
the ported compiled modules is declared. The other tests show that the check names what is wrong."""

from __future__ import annotations

import ast
import textwrap

import pytest

from dualflow.models.timing.compiled import port_check
from dualflow.models.timing.compiled.port_hashes import REFERENCE_HASHES
from dualflow.models.timing.compiled.ports import COMPILED_ONLY, PORTS


def test_the_manifest_agrees_with_the_sources():
    found = port_check.problems()
    assert not found, "\n".join(found)


def _new_problems(**manifest) -> list[str]:
    """The problems a changed manifest has that the manifest as it is does not."""
    return sorted(set(port_check.problems(**manifest)) - set(port_check.problems()))


def test_a_changed_reference_function_names_the_ports_to_recheck():
    found = _new_problems(hashes=dict(REFERENCE_HASHES, **{"sm:Sm._fetch": "0" * 16}))
    assert len(found) == 1
    assert "reference function sm:Sm._fetch changed" in found[0] and "sm:fetch" in found[0]
    assert port_check.RECORD_COMMAND in found[0]


def test_a_reference_function_that_is_gone_is_named_with_its_ports():
    found = _new_problems(ports=dict(PORTS, **{"sm:fetch": ("sm:Sm._fetch_renamed",)}))
    assert any("sm:Sm._fetch_renamed no longer exists" in m and "sm:fetch" in m for m in found), found


def test_a_compiled_function_that_is_gone_is_named():
    found = _new_problems(ports=dict(PORTS, **{"sm:fetch_renamed": PORTS["sm:fetch"]}))
    assert any("compiled function sm:fetch_renamed (in ports.PORTS) no longer exists" in m for m in found), found


def test_an_undeclared_compiled_function_is_named():
    ports = {name: refs for name, refs in PORTS.items() if name != "sm:fetch"}
    found = _new_problems(ports=ports, hashes={r: h for r, h in REFERENCE_HASHES.items() if r != "sm:Sm._fetch"})
    assert found == ["compiled function sm:fetch is neither a port (ports.PORTS) nor compiled-only "
                     "(ports.COMPILED_ONLY)"]


def test_a_function_declared_twice_is_named():
    found = _new_problems(compiled_only=dict(COMPILED_ONLY, twice=("sm:fetch",)))
    assert found == ["compiled function sm:fetch is declared more than once (ports.PORTS, ports.COMPILED_ONLY)"]


def _hash(source: str, qualname: str) -> str:
    node = port_check.find_definition(ast.parse(textwrap.dedent(source)), qualname)
    assert node is not None
    return port_check.source_hash(node)


ORIGINAL = '''
class Unit:
    def step(self, t):
        """Docstring."""
        busy = self.busy  # a comment
        return max(busy, t) + 1
'''


@pytest.mark.parametrize("variant, same", [
    ('''
class Unit:
    def step(self, t):
        """Another docstring, and a comment moved."""
        # a comment
        busy = (
            self.busy
        )
        return max(busy, t) + 1
''', True),
    ('''
class Unit:
    def step(self, t):
        busy = self.busy
        return max(busy, t) + 2
''', False),
    ('''
class Unit:
    def step(self, t):
        return max(self.busy, t) + 1
''', False),
])
def test_the_hash_ignores_docstrings_comments_and_layout_but_not_code(variant, same):
    assert (_hash(variant, "Unit.step") == _hash(ORIGINAL, "Unit.step")) is same


def test_definitions_are_found_by_qualified_name_and_inside_functions():
    tree = ast.parse(textwrap.dedent('''
        class A:
            def f(self):
                if self:
                    def inner():
                        pass
                    return inner
        def g():
            pass
    '''))
    assert port_check.find_definition(tree, "A.f").name == "f"
    assert port_check.find_definition(tree, "A.f.<locals>.inner").name == "inner"
    assert port_check.find_definition(tree, "g").name == "g"
    assert port_check.find_definition(tree, "A") is None  # a class is not a function
    assert port_check.find_definition(tree, "A.g") is None


def test_recording_writes_the_current_hashes(tmp_path):
    path = tmp_path / "port_hashes.py"
    recorded = port_check.record(path)
    namespace: dict = {}
    exec(path.read_text(), namespace)
    assert namespace["REFERENCE_HASHES"] == recorded == port_check.current_hashes()
