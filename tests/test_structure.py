"""The source tree stays readable (issue 32): no class name is defined twice (a reader who finds one
``RollbackResult`` must not have to ask which), and no source file grows beyond what a reader can hold.
Both read the files with ``ast`` only; nothing is imported."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "hoodie"
MAX_LINES = 800

# Files still over MAX_LINES, each with its size when listed: the test fails when one grows, or when
# one shrinks below the limit (then delete it here), so the list only gets shorter.
TOO_LONG: dict[str, int] = {}


def _sources() -> dict[str, Path]:
    return {p.relative_to(SRC).as_posix(): p for p in sorted(SRC.rglob("*.py"))}


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> ast.Module:
    """``ast.parse``, once per source text and process (the tests here only read the trees)."""
    return ast.parse(text)


@functools.lru_cache(maxsize=None)
def _nodes(text: str) -> tuple[ast.AST, ...]:
    """Every node of the source's tree (``ast.walk``), once per source text and process."""
    return tuple(ast.walk(_parse(text)))


def classes_defined_twice(files: dict[str, str]) -> dict[str, list[str]]:
    """Class names (module level) defined in more than one of ``files`` (name -> source text)."""
    where: dict[str, list[str]] = defaultdict(list)
    for name, text in files.items():
        for node in _parse(text).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(name)
    return {cls: sorted(mods) for cls, mods in where.items() if len(mods) > 1}


def test_no_class_name_is_defined_twice() -> None:
    twice = classes_defined_twice({n: p.read_text() for n, p in _sources().items()})
    assert not twice, f"class names defined in more than one module (name each for its room): {twice}"


def test_classes_defined_twice_are_found() -> None:
    assert classes_defined_twice({"a.py": "class R:\n    pass\nclass S: ...\n", "b.py": "class R: ...\n",
                                  "c.py": "def f():\n    class S: ...\n"}) == {"R": ["a.py", "b.py"]}


def test_no_source_file_over_the_limit() -> None:
    sizes = {n: len(p.read_text().splitlines()) for n, p in _sources().items()}
    over = {n: k for n, k in sizes.items() if k > MAX_LINES and n not in TOO_LONG}
    assert not over, f"source files over {MAX_LINES} lines (split them by what they do): {over}"
    grown = {n: (sizes.get(n), k) for n, k in TOO_LONG.items() if sizes.get(n, 0) > k}
    assert not grown, f"files listed in TOO_LONG grew (now, listed): {grown}"
    done = sorted(n for n in TOO_LONG if sizes.get(n, 0) <= MAX_LINES)
    assert not done, f"files in TOO_LONG are within {MAX_LINES} lines now; delete them from TOO_LONG: {done}"


# Snapshots, not reloads (issue 32): a transaction loads the table once per acquisition of the lock and
# goes on with the snapshots its steps return (HoodieTable.wrote/removed, update_table_properties,
# the commit point's). ``reload()`` (forget the listed timeline of a shared object) is for the few places
# that must see other writers' instants in the same object; each call says why in a comment on its line
# or the line above, and there are at most MAX_RELOADS of them (there were 51).
MAX_RELOADS = 10


def reload_calls(files: dict[str, str]) -> list[tuple[str, int, bool]]:
    """``x.reload()`` calls in ``files`` (name -> source): (file, line, explained by a comment)."""
    out = []
    for name, text in files.items():
        lines = text.splitlines()
        for node in _nodes(text):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reload"
                    and not node.args and not node.keywords):
                here, above = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
                out.append((name, node.lineno, "#" in here or above.strip().startswith("#")))
    return sorted(out)


def test_reload_call_sites_are_few_and_explained() -> None:
    calls = reload_calls({n: p.read_text() for n, p in _sources().items()})
    assert len(calls) <= MAX_RELOADS, f"{len(calls)} reload() call sites (at most {MAX_RELOADS}): go on with the " \
        f"snapshot a step returns instead: {calls}"
    bare = [(n, line) for n, line, explained in calls if not explained]
    assert not bare, f"reload() without a comment saying why the table must be listed again: {bare}"


def test_reload_calls_are_found() -> None:
    assert reload_calls({"a.py": "t.reload()\n# other writers\nt.reload()\nt.reload(x)\n",
                         "b.py": "def f(t):\n    return t.reload().timeline  # after the lock\n"}) == [
        ("a.py", 1, False), ("a.py", 3, True), ("b.py", 2, True)]


def props_assignments(files: dict[str, str]) -> list[tuple[str, int]]:
    """Assignments to a table's ``props`` (``t.props = ...``, ``t.props[k] = ...``, ``del t.props[k]``)."""
    out = []
    for name, text in files.items():
        for node in _nodes(text):
            targets: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                t = t.value if isinstance(t, ast.Subscript) else t
                if isinstance(t, ast.Attribute) and t.attr == "props":
                    out.append((name, node.lineno))
    return sorted(out)


def test_table_properties_never_change_in_place() -> None:
    """A change of hoodie.properties goes through update_table_properties, which returns a new snapshot."""
    found = props_assignments({n: p.read_text() for n, p in _sources().items()})
    assert not found, f"table properties assigned in place (use update_table_properties' new snapshot): {found}"


def test_props_assignments_are_found() -> None:
    assert props_assignments({"a.py": "t.props = {}\nt.props['k'] = 'v'\ndel t.props['k']\nx = t.props\n"
                                      "self.data_props = dict(t.props)\n"}) == [("a.py", 1), ("a.py", 2), ("a.py", 3)]
