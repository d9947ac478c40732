"""The source tree stays readable (issue 32): no class name is defined twice (a reader who finds one
``RollbackResult`` must not have to ask which), and no source file grows beyond what a reader can hold.
Both read the files with ``ast`` only; nothing is imported."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "hoodie"
MAX_LINES = 800

# Files still over MAX_LINES, each with its size when listed: the test fails when one grows, or when
# one shrinks below the limit (then delete it here), so the list only gets shorter.
TOO_LONG: dict[str, int] = {}


def _sources() -> dict[str, Path]:
    return {p.relative_to(SRC).as_posix(): p for p in sorted(SRC.rglob("*.py"))}


def classes_defined_twice(files: dict[str, str]) -> dict[str, list[str]]:
    """Class names (module level) defined in more than one of ``files`` (name -> source text)."""
    where: dict[str, list[str]] = defaultdict(list)
    for name, text in files.items():
        for node in ast.parse(text).body:
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
