"""The package's shape: a small public API, imports that point one way (checked by import-linter), and no
private name used outside its module."""
import ast
import importlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import sova_lib
from tests.paths import ROOT

LINT = Path(sys.executable).with_name("lint-imports")


def test_public_api_is_small_documented_and_made_of_the_sub_packages_own_objects():
    assert 12 <= len(sova_lib.__all__) <= 20 and len(set(sova_lib.__all__)) == len(sova_lib.__all__)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert sova_lib.__version__ == version
    documented = set(re.findall(r"``(\w+)``", sova_lib.__doc__))
    for name in set(sova_lib.__all__) - {"__version__"}:
        obj = getattr(sova_lib, name)
        home = obj.__module__
        # the very object its defining module holds under the same name, not a copy or a stand-in
        assert home.startswith("sova_lib.") and getattr(importlib.import_module(home), name) is obj, name
        assert callable(obj) and (obj.__doc__ or "").strip(), f"{name} is not a documented callable"
        assert name in documented, f"{name} is exported but not named in the package docstring"
    # a fresh interpreter's star import binds exactly the public names
    code = "import sova_lib; ns = {}; exec('from sova_lib import *', ns); print(sorted(set(ns) - {'__builtins__'}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == str(sorted(sova_lib.__all__))
    assert sova_lib.get_protocol("inter-pair").benchmark == "SOVABench"  # the registry imports its providers


#: Private names still imported across modules, in code others own at present: (importing module, imported name).
PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_uses(source: str, module: str, is_package: bool = False) -> set[tuple[str, str]]:
    """``(module, name)`` for each private name of another ``sova_lib`` module that ``source`` uses.

    Counted: ``from sova_lib.x import _y`` (relative imports too) and ``x._y`` where ``x`` was bound by an import
    of a ``sova_lib`` module. Dunder names (``__version__``) are public.
    """
    private = re.compile(r"^_(?!_.*__$)")
    tree = ast.parse(source)
    bound, found = {}, set()
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            if base.split(".")[0] != "sova_lib":
                continue
            for alias in node.names:
                if private.match(alias.name):
                    found.add((module, f"{base}.{alias.name}"))
                bound[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sova_lib":
                    bound[alias.asname or "sova_lib"] = alias.name if alias.asname else "sova_lib"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound \
                and private.match(node.attr):
            found.add((module, f"{bound[node.value.id]}.{node.attr}"))
    return found


def test_the_private_name_scan_finds_each_form():
    source = ("from sova_lib.describe.cache import _now, cache_key\nfrom . import _helper\n"
              "from sova_lib.describe import cache as c\nimport sova_lib.storage as st\nimport numpy as np\n"
              "from sova_lib._version import __version__\nc._slug('x'); st.now(); np._core; cache_key._x\n")
    assert private_uses(source, "sova_lib.paper.demo") == {
        ("sova_lib.paper.demo", "sova_lib.describe.cache._now"), ("sova_lib.paper.demo", "sova_lib.paper._helper"),
        ("sova_lib.paper.demo", "sova_lib.describe.cache._slug"),
        ("sova_lib.paper.demo", "sova_lib.describe.cache.cache_key._x")}
    assert private_uses("from . import _x\n", "sova_lib.paper", is_package=True) == {
        ("sova_lib.paper", "sova_lib.paper._x")}


def test_no_library_module_uses_a_private_name_of_another():
    found = set()
    for path in sorted((ROOT / "sova_lib").rglob("*.py")):
        found |= private_uses(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")
    found = {(m, name) for m, name in found if name.rsplit(".", 1)[0] != m}  # a module's own names are its own
    assert found - PRIVATE_IMPORTS_ALLOWED == set(), "private names used outside their module"
    assert PRIVATE_IMPORTS_ALLOWED - found == set(), "an allowed private import is gone: drop it from the list"


def _lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


@pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed beside this Python")
def test_the_layer_contract_holds_and_catches_an_upward_import(tmp_path):
    assert _lint(ROOT).returncode == 0
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "sova_lib", copy / "sova_lib", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / "pyproject.toml", copy)
    metrics = copy / "sova_lib" / "metrics.py"
    metrics.write_text(metrics.read_text() + "\nfrom sova_lib.paper import plots  # noqa: E402,F401\n")
    broken = _lint(copy)
    assert broken.returncode != 0
    assert "BROKEN" in broken.stdout and "sova_lib.metrics -> sova_lib.paper.plots" in broken.stdout
