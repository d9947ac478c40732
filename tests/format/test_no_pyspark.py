"""The format layer must work on machines without pyspark (and never start a JVM)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import hoodie.format
from tests.helpers import PYSPARK_BLOCKER


def test_format_imports_without_pyspark() -> None:
    modules = sorted(m.name for m in pkgutil.walk_packages(hoodie.format.__path__, "hoodie.format."))
    assert "hoodie.format.slice.reader" in modules and "hoodie.format.log.logformat" in modules
    code = (
        PYSPARK_BLOCKER +
        f"mods = {modules!r}\n"
        "import importlib\n"
        "for m in mods: importlib.import_module(m)\n"
        "import hoodie; hoodie.read_table\n"
        "import hoodie.interfaces.cli\n"
        "assert not any(k.startswith('pyspark') for k in sys.modules)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_spark_entry_points_without_pyspark_say_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pyspark' or name.startswith('pyspark.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from hoodie.interfaces.cli import main\n"
        "sys.exit(main(['quickstart', '--base-path', sys.argv[1]]))\n"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, "-c", code, f"{d}/t"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "needs pyspark 4.3" in out.stderr and "pip install 'hoodie[spark]'" in out.stderr, out.stderr


def test_readme_quickstart_installs_what_the_quickstart_needs() -> None:
    """The README's first command runs on a fresh machine: it must install the spark extra (pyspark
    is not a base dependency), and the extra must pin the pyspark the engine is built for."""
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    first = next(l for l in (root / "README.md").read_text().splitlines() if "hoodie quickstart" in l)
    assert re.search(r"pip install -e \"\.\[[^\]]*spark[^\]]*\]\"", first), first
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "pyspark==4.3.0" in extras["spark"]
