"""The package's public API (small, documented, the sub-packages' own objects) and its import contract."""
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
    metrics.write_text(metrics.read_text() + "\nfrom sova_lib.report import plots  # noqa: E402,F401\n")
    broken = _lint(copy)
    assert broken.returncode != 0
    assert "BROKEN" in broken.stdout and "sova_lib.metrics -> sova_lib.report.plots" in broken.stdout
    # reading results sits above the benchmarks: report.compare scores with a benchmark, never the other way
    api = copy / "sova_lib" / "benchmarks" / "sovabench" / "api.py"
    api.write_text(api.read_text() + "\nfrom sova_lib.report import compare  # noqa: E402,F401\n")
    metrics.write_text(metrics.read_text().replace("\nfrom sova_lib.report import plots  # noqa: E402,F401\n", "\n"))
    broken = _lint(copy)
    assert broken.returncode != 0 and "sova_lib.benchmarks.sovabench.api -> sova_lib.report.compare" in broken.stdout


def _imported_roots(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports (absolute imports; a relative one stays in sova_lib)."""
    import ast

    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_notebooks_helper_package_stays_outside_the_installed_package():
    """``sova_lib`` never imports the notebooks' ``paper`` package, and the wheel's package list leaves it out."""
    from setuptools import find_namespace_packages

    assert (ROOT / "notebooks" / "paper" / "__init__.py").is_file()
    importers = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "sova_lib").rglob("*.py"))
                 if "paper" in _imported_roots(p)]
    assert importers == []
    assert {"sova_lib", "pandas", "papermill"} <= _imported_roots(ROOT / "sova_lib" / "report" / "reproduce.py")  # in a function too
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    shipped = find_namespace_packages(str(ROOT), include=include)
    assert {"sova_lib", "sova_lib.report", "sova_lib.cli"} <= set(shipped)
    assert [p for p in shipped if not p.startswith("sova_lib")] == []
    every = find_namespace_packages(str(ROOT), exclude=[".*", "*.venv*"])  # what the include leaves out is there
    assert "notebooks.paper" in every and "notebooks.paper" not in shipped
