"""The package's shape: a small public API, and imports that point one way (checked by import-linter)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sova_lib
from tests.paths import ROOT

LINT = Path(sys.executable).with_name("lint-imports")


def test_public_api_is_small_and_importable():
    assert 12 <= len(sova_lib.__all__) <= 20
    for name in sova_lib.__all__:
        assert getattr(sova_lib, name) is not None, name
    assert sova_lib.get_protocol("inter-pair").benchmark == "SOVABench"  # registered by import sova_lib


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
