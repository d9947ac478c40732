"""hoodie's layers import downward only, and no two modules import each other (directly or round about).

The layers, bottom to top (a module may import its own layer and the ones below):

0. ``base``: the top-level modules every layer shares: ``hoodie.errors`` (the error root),
   ``hoodie.configs`` (the config package: every key and the rules that read them, with its
   submodules), ``hoodie.faults`` (crash-test hooks), ``hoodie.metrics``.
1. ``format``: ``hoodie.format.*`` (the table format, pure Python).
2. ``services``: ``hoodie.services.*`` (compaction, TTL, clean, rollback).
3. ``engine``: ``hoodie.engine.*`` (Spark).
4. ``interfaces``: ``hoodie.interfaces.*`` (Python table API, SQL, catalog, CLI).
5. ``facade``: ``hoodie`` (``__init__``), ``hoodie.spark``, ``hoodie.catalog``: thin re-exports of the
   layers below for users; nothing inside hoodie imports them.

A module's layer comes from its top-level package name only, so moving modules into subpackages
(``hoodie.format.timeline.active.*``) keeps the rule. The walk reads every ``import`` statement with ``ast``,
module-level and function-local alike (a function-local import is a dependency too; it only hides
a cycle from the interpreter). Implicit parent-package imports are not edges: ``import
hoodie.format.table`` is an edge to ``hoodie.format.table``, not to ``hoodie.format``; an import that
names a package (``from hoodie.services.ttl import run_ttl``) is an edge to its ``__init__``.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

SRC = Path(__file__).resolve().parent.parent / "src"

BASE_MODULES = ("hoodie.errors", "hoodie.configs", "hoodie.faults", "hoodie.metrics", "hoodie.progress")
FACADE_MODULES = ("hoodie", "hoodie.spark", "hoodie.catalog")
LAYERS = ("base", "format", "services", "engine", "interfaces", "facade")

# Known violations, each one edge (importer, imported) with the reason it is still here; the test
# fails when an entry's edge is gone, so the list cannot go stale. Empty since the one commit path
# (issue 13) removed the last upward imports and cycles.
ALLOWED: dict[tuple[str, str], str] = {}

# Below the interfaces a module's imports of hoodie's own modules stand at its head, where a reader
# looks (issue 32): none is needed inside a function to break a cycle (the graph has none). Local
# imports stay where they load an optional package: the engine's modules import one another when used
# (``hoodie.engine.datasource`` needs PySpark 4's ``pyspark.sql.datasource``), and pyspark and other
# optional packages are no hoodie modules. A module listed here would keep its own for the reason given
# (none is: the last two, TTL's move and record TTL, moved theirs up); the test fails when a listed
# module has none left, so the list cannot go stale.
LOCAL_IMPORTS_ALLOWED: dict[str, str] = {}


@dataclass(frozen=True)
class Import:
    """One import statement's edge: where it is and whether it runs inside a function."""

    src: str
    dst: str
    line: int
    local: bool


def module_name(path: Path, root: Path = SRC) -> str:
    """``src/hoodie/format/table.py`` -> ``hoodie.format.table``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover(root: Path = SRC) -> dict[str, Path]:
    """Every module of the ``hoodie`` package, by dotted name."""
    return {module_name(p, root): p for p in sorted((root / "hoodie").rglob("*.py"))}


def layer_of(module: str) -> str:
    """The layer a module belongs to, from its top-level package name (see the module docstring)."""
    if module in BASE_MODULES or any(module.startswith(m + ".") for m in BASE_MODULES):
        return "base"
    if module in FACADE_MODULES:
        return "facade"
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in LAYERS[1:5]:
        return parts[1]
    raise AssertionError(f"{module} belongs to no layer: put it in a layer package, or add it to "
                         "BASE_MODULES or FACADE_MODULES in tests/test_layering.py with its rule")


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name an ``ImportFrom`` names (``from ..x import y`` -> ``hoodie.a.x``)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _target(name: str, modules: dict[str, Path]) -> Optional[str]:
    """The longest prefix of ``name`` that is a hoodie module (None outside hoodie)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        cand = ".".join(parts[:n])
        if cand in modules:
            return cand
    return None


def _walk(tree: ast.AST) -> Iterable[tuple[ast.AST, bool]]:
    """Every node with whether it sits inside a function (its import runs on call, not on load)."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, local = stack.pop()
        yield node, local
        inner = local or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The hoodie-internal import edges of one module."""
    is_package = path.name == "__init__.py"
    out: list[Import] = []
    for node, local in _walk(ast.parse(path.read_text(), str(path))):
        targets: list[Optional[str]] = []
        if isinstance(node, ast.Import):
            targets = [_target(alias.name, modules) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node)
            for alias in node.names:
                # ``from pkg import sub`` imports the submodule; ``from pkg import name`` the package.
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in modules else _target(base, modules))
        out.extend(Import(module, t, node.lineno, local) for t in targets if t is not None and t != module)
    return out


@functools.lru_cache(maxsize=None)
def import_graph(root: Path = SRC) -> tuple[dict[str, Path], list[Import]]:
    """All modules and all hoodie-internal import statements between them. Built once per root and
    process (the tests only read it: parsing every module took 2-3 s per test)."""
    modules = discover(root)
    edges: list[Import] = []
    for name, path in modules.items():
        edges.extend(imports_of(name, path, modules))
    return modules, edges


def upward(edges: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Edges from a lower layer to a higher one, and imports of the facade from inside hoodie."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted({(a, b) for a, b in edges
                   if rank[layer_of(a)] < rank[layer_of(b)] or (layer_of(b) == "facade" and layer_of(a) != "facade")})


def cycles(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in sorted(set(edges)):
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, iter(succ[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def _sites(edges: list[Import], pairs: Iterable[tuple[str, str]]) -> str:
    wanted = set(pairs)
    lines = []
    for a, b in sorted(wanted):
        where = ", ".join(sorted({f"line {e.line}{' (in a function)' if e.local else ''}"
                                  for e in edges if (e.src, e.dst) == (a, b)}))
        lines.append(f"  {a} -> {b} ({layer_of(a)} -> {layer_of(b)}; {where})")
    return "\n".join(lines)


def summary(root: Path = SRC) -> dict[str, int]:
    """The import graph's numbers (for reports): modules, edges, upward edges, cycles, local imports."""
    modules, edges = import_graph(root)
    pairs = {(e.src, e.dst) for e in edges}
    comps = cycles(modules, pairs)
    return {"modules": len(modules), "edges": len(pairs), "upward_edges": len(upward(pairs)),
            "cycles": len(comps), "modules_in_cycles": sum(len(c) for c in comps),
            "function_local_imports": sum(1 for e in edges if e.local)}


# ---------------------------------------------------------------------------------------------- tests


def test_every_module_has_a_layer() -> None:
    modules = discover()
    assert "hoodie.format.table" in modules and "hoodie.interfaces.cli" in modules  # the walk found the tree
    for m in modules:
        layer_of(m)


def test_no_upward_import() -> None:
    _, edges = import_graph()
    pairs = {(e.src, e.dst) for e in edges} - set(ALLOWED)
    bad = upward(pairs)
    assert not bad, ("upward imports (layers import downward only: base < format < services < engine < "
                     "interfaces < facade; move the shared code down, or pass it in from above):\n"
                     + _sites(edges, bad))


def test_no_import_cycle() -> None:
    modules, edges = import_graph()
    pairs = {(e.src, e.dst) for e in edges} - set(ALLOWED)
    comps = cycles(modules, pairs)
    msg = []
    for comp in comps:
        inside = [(e.src, e.dst) for e in edges if e.src in comp and e.dst in comp and (e.src, e.dst) in pairs]
        msg.append(f"cycle between {', '.join(comp)}:\n{_sites(edges, inside)}")
    assert not comps, ("import cycles (move what both sides need into a module both import, or "
                       "pass it in):\n" + "\n".join(msg))


def stale_allowances(modules: Iterable[str], pairs: set[tuple[str, str]],
                     allowed: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(allowed edges that no longer exist, allowed edges that exist but are neither upward nor on a cycle)."""
    ups = set(upward(pairs))
    comp_of = {m: i for i, comp in enumerate(cycles(modules, pairs)) for m in comp}
    gone = sorted(e for e in allowed if e not in pairs)
    fine = sorted((a, b) for a, b in allowed
                  if (a, b) in pairs and (a, b) not in ups and not (a in comp_of and comp_of.get(b) == comp_of[a]))
    return gone, fine


def test_allow_list_is_current() -> None:
    """Each allowed edge still exists and is still a violation, so the list cannot go stale."""
    modules, edges = import_graph()
    gone, fine = stale_allowances(modules, {(e.src, e.dst) for e in edges}, ALLOWED)
    assert not gone, f"allow-listed edges no longer exist; delete them from ALLOWED: {gone}"
    assert not fine, f"allow-listed edges are neither upward nor on a cycle; delete them from ALLOWED: {fine}"


def test_stale_allowances_are_found() -> None:
    modules = ["hoodie.format.a", "hoodie.format.b", "hoodie.services.c"]
    pairs = {("hoodie.format.a", "hoodie.format.b"), ("hoodie.format.b", "hoodie.format.a"),
             ("hoodie.format.a", "hoodie.services.c"), ("hoodie.services.c", "hoodie.format.b")}
    allowed = [("hoodie.format.b", "hoodie.format.a"), ("hoodie.format.a", "hoodie.services.c"),
               ("hoodie.services.c", "hoodie.format.b"), ("hoodie.format.b", "hoodie.services.c")]
    assert stale_allowances(modules, pairs, allowed) == ([("hoodie.format.b", "hoodie.services.c")], [])
    # Once a -> c is gone, c -> b is a plain downward edge on no cycle: its allowance is stale.
    pairs2 = pairs - {("hoodie.format.a", "hoodie.services.c")}
    assert stale_allowances(modules, pairs2, allowed[1:3]) == ([("hoodie.format.a", "hoodie.services.c")],
                                                                [("hoodie.services.c", "hoodie.format.b")])


# ---------------------------------------------------------------------- the walk itself, on a toy tree


def _toy(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_walk_sees_every_import_form(tmp_path: Path) -> None:
    root = _toy(tmp_path, {
        "hoodie/__init__.py": "",
        "hoodie/errors.py": "",
        "hoodie/format/__init__.py": "from . import table\n",
        "hoodie/format/table.py": "import hoodie.format.file_group.naming as n\nfrom .. import errors\n",
        "hoodie/format/file_group/naming.py": "def f():\n    from hoodie.services import ttl\n",
        "hoodie/services/__init__.py": "",
        "hoodie/services/ttl/__init__.py": "from .service import run\n",
        "hoodie/services/ttl/service.py": "from ...format.table import X\nclass C:\n    from hoodie.format.file_group import naming\n",
    })
    modules, edges = import_graph(root)
    got = {(e.src, e.dst, e.local) for e in edges}
    assert got == {
        ("hoodie.format", "hoodie.format.table", False),
        ("hoodie.format.table", "hoodie.format.file_group.naming", False),
        ("hoodie.format.table", "hoodie.errors", False),
        ("hoodie.format.file_group.naming", "hoodie.services.ttl", True),
        ("hoodie.services.ttl", "hoodie.services.ttl.service", False),
        ("hoodie.services.ttl.service", "hoodie.format.table", False),
        ("hoodie.services.ttl.service", "hoodie.format.file_group.naming", False),
    }
    pairs = {(e.src, e.dst) for e in edges}
    assert upward(pairs) == [("hoodie.format.file_group.naming", "hoodie.services.ttl")]
    assert cycles(modules, pairs) == [["hoodie.format.file_group.naming", "hoodie.format.table", "hoodie.services.ttl",
                                       "hoodie.services.ttl.service"]]
    assert cycles(modules, pairs - {("hoodie.format.file_group.naming", "hoodie.services.ttl")}) == []


def test_facade_imported_from_inside_is_upward() -> None:
    assert upward({("hoodie.format.table", "hoodie"), ("hoodie.interfaces.sql", "hoodie.catalog")}) == [
        ("hoodie.format.table", "hoodie"), ("hoodie.interfaces.sql", "hoodie.catalog")]
    assert upward({("hoodie.catalog", "hoodie.interfaces.catalog"), ("hoodie.metrics", "hoodie.configs")}) == []


def local_imports_below_interfaces(edges: Iterable[Import]) -> list[Import]:
    """Function-local imports of hoodie modules in the base, format, services and engine layers (an
    engine module importing another engine module excepted: see LOCAL_IMPORTS_ALLOWED's comment)."""
    return sorted((e for e in edges if e.local and layer_of(e.src) in LAYERS[:4]
                   and not (layer_of(e.src) == "engine" and layer_of(e.dst) == "engine")),
                  key=lambda e: (e.src, e.line))


def test_no_function_local_import_below_interfaces() -> None:
    _, edges = import_graph()
    found = local_imports_below_interfaces(edges)
    bad = [e for e in found if e.src not in LOCAL_IMPORTS_ALLOWED]
    assert not bad, ("function-local imports of hoodie modules below the interfaces (move them to the module's "
                     "head):\n" + "\n".join(f"  {e.src} line {e.line} -> {e.dst}" for e in bad))
    stale = sorted(set(LOCAL_IMPORTS_ALLOWED) - {e.src for e in found})
    assert not stale, f"modules in LOCAL_IMPORTS_ALLOWED without a local import; delete them from it: {stale}"


def test_local_imports_are_found_per_layer(tmp_path: Path) -> None:
    root = _toy(tmp_path, {
        "hoodie/__init__.py": "",
        "hoodie/format/__init__.py": "",
        "hoodie/format/a.py": "def f():\n    from hoodie.format import b\n",
        "hoodie/format/b.py": "import hoodie.format.a\n",
        "hoodie/engine/__init__.py": "",
        "hoodie/engine/x.py": "def f():\n    import hoodie.engine.y\n    from hoodie.format import b\n",
        "hoodie/engine/y.py": "",
        "hoodie/interfaces/__init__.py": "",
        "hoodie/interfaces/cli.py": "def main():\n    from hoodie.engine import x\n",
    })
    _, edges = import_graph(root)
    assert [(e.src, e.dst) for e in local_imports_below_interfaces(edges)] == [
        ("hoodie.engine.x", "hoodie.format.b"), ("hoodie.format.a", "hoodie.format.b")]


def test_rollback_room_imports_in_any_order() -> None:
    """The rollback package's head imports nothing (its module docstring says why): the transaction
    imports the rollback of failed writes, and compaction's rollback the rollback instant, while the
    entry point imports both. A head re-exporting the entry point would break an interpreter whose
    first import is one of these (the graph above cannot see it: parent packages are no edges)."""
    for first in ("hoodie.services.transaction", "hoodie.services.compaction", "hoodie.services.rollback.action",
                  "hoodie.services.rollback.operation"):
        run = subprocess.run([sys.executable, "-c", f"import {first}"], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": f"{SRC}:{SRC.parent}"})
        assert run.returncode == 0, f"importing {first} first fails:\n{run.stderr[-2000:]}"


# Sibling rules (issue 32): a service room reads another room's data through the format layer or that
# room's public head, never through its internals. Record TTL reads the event-time ranges of log files
# from ``hoodie.format.slice.event_ranges``, which compaction reads too (they once lived in compaction's
# room). (importing room, room it must not reach into; its package head stays importable).
SIBLING_RULES: tuple[tuple[str, str], ...] = (
    ("hoodie.services.ttl", "hoodie.services.compaction"),
)


def sibling_violations(edges: Iterable[Import]) -> list[Import]:
    """Imports of a room's internal modules by a sibling room that :data:`SIBLING_RULES` forbid."""
    return sorted((e for e in edges for src, dst in SIBLING_RULES
                   if (e.src == src or e.src.startswith(src + ".")) and e.dst.startswith(dst + ".")),
                  key=lambda e: (e.src, e.line))


def test_ttl_does_not_reach_into_compaction() -> None:
    _, edges = import_graph()
    bad = sibling_violations(edges)
    assert not bad, ("a room imports a sibling room's internals (read them through hoodie.format or the room's "
                     "package head):\n" + "\n".join(f"  {e.src} line {e.line} -> {e.dst}" for e in bad))


def test_sibling_violations_are_found(tmp_path: Path) -> None:
    root = _toy(tmp_path, {
        "hoodie/__init__.py": "",
        "hoodie/services/__init__.py": "",
        "hoodie/services/compaction/__init__.py": "",
        "hoodie/services/compaction/event_index.py": "",
        "hoodie/services/ttl/__init__.py": "",
        "hoodie/services/ttl/record_ttl.py": "from hoodie.services.compaction.event_index import x\n",
        "hoodie/services/ttl/service.py": "from hoodie.services import compaction\n",
    })
    _, edges = import_graph(root)
    assert [(e.src, e.dst) for e in sibling_violations(edges)] == [
        ("hoodie.services.ttl.record_ttl", "hoodie.services.compaction.event_index")]
