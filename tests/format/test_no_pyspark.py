"""The format layer must work on machines without pyspark (and never start a JVM)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import hoodie.format


def test_format_imports_without_pyspark() -> None:
    modules = sorted(m.name for m in pkgutil.iter_modules(hoodie.format.__path__, "hoodie.format."))
    assert "hoodie.format.reader" in modules and "hoodie.format.logformat" in modules
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pyspark' or name.startswith('pyspark.') or name == 'py4j':\n"
        "            raise ImportError('pyspark is blocked in this test')\n"
        "sys.meta_path.insert(0, Block())\n"
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
