"""The lock: uv.lock pins every distribution with hashes, requirements-lock.txt is it for pip, environment.yml and the
Makefile install it and nothing else, and the environment the tests run in equals it."""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests import locked_environment
from tests.paths import ROOT


def _lock() -> dict:
    return tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))


def _locked_packages() -> dict[str, str]:
    """Every distribution uv.lock pins (sova_lib itself aside): name -> version (the last, where Pythons differ)."""
    return {p["name"]: p["version"] for p in _lock()["package"] if p["name"] != "sova-lib"}


def _exported() -> dict[str, list[str]]:
    """requirements-lock.txt: name -> the hashes under its line."""
    entries, name = {}, None
    for line in (ROOT / "requirements-lock.txt").read_text(encoding="utf-8").splitlines():
        if match := re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line):
            name = f"{canonicalize_name(match[1])}=={match[2]}"
            entries[name] = []
        elif hashes := re.findall(r"--hash=sha256:([0-9a-f]{64})", line):
            entries[name] += hashes
    return entries


def test_every_locked_distribution_has_its_hashes():
    """Each package of uv.lock has a sha256 for each of its files, and requirements-lock.txt lists each with them."""
    packages = [p for p in _lock()["package"] if p["name"] != "sova-lib"]
    assert len(packages) > 150
    unhashed = [p["name"] for p in packages
                if not all(re.fullmatch(r"sha256:[0-9a-f]{64}", f["hash"])
                           for f in p.get("wheels", []) + ([p["sdist"]] if "sdist" in p else []))]
    assert unhashed == []
    exported = _exported()
    assert sorted(exported) == sorted(f"{canonicalize_name(p['name'])}=={p['version']}" for p in packages)
    assert [name for name, hashes in exported.items() if not hashes] == []


def test_the_lock_covers_the_platforms_and_pythons_the_readme_names():
    lock = _lock()
    environments = " ".join(lock["supported-markers"])
    for platform in ("sys_platform == 'linux'", "sys_platform == 'darwin'", "sys_platform == 'win32'"):
        assert platform in environments
    assert lock["requires-python"] == ">=3.11"
    assert "python_full_version < '3.14'" in environments


def test_environment_yml_installs_the_lock_and_nothing_else():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == ["-r requirements-lock.txt"]


def test_the_declared_dependencies_admit_the_locked_releases():
    """pyproject.toml's ranges (for pip install sova_lib beside other packages) admit every locked release."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = [Requirement(r) for r in project["project"]["dependencies"]]
    declared += [Requirement(r) for name, extra in project["project"]["optional-dependencies"].items()
                 if name != "all" for r in extra]
    declared += [Requirement(r) for group in project["dependency-groups"].values() for r in group]
    pins = {canonicalize_name(n): v for n, v in _locked_packages().items()}
    assert [str(r) for r in declared if canonicalize_name(r.name) not in pins] == []
    assert [str(r) for r in declared if pins[canonicalize_name(r.name)] not in r.specifier] == []
    assert project["project"]["optional-dependencies"]["all"] == ["sova_lib[notebooks,ray,vantage]"]


def test_torchvision_is_the_release_built_for_torch():
    """torchvision 0.N is built for torch 2.(N - 15), patch for patch (0.15 <-> 2.0, ..., 0.28 <-> 2.13)."""
    pins = _locked_packages()
    torch_major, torch_minor, torch_patch = map(int, pins["torch"].split("."))
    vision_major, vision_minor, vision_patch = map(int, pins["torchvision"].split("."))
    assert (torch_major, vision_major, vision_minor - torch_minor, vision_patch) == (2, 0, 15, torch_patch)


def test_the_environment_in_use_equals_the_lock():
    assert locked_environment.drift() == []


def test_what_packages_vendor_is_not_taken_for_installed():
    """``import setuptools`` and ``import ray`` put folders of vendored copies with their metadata on the path (wheel,
    tomli, zipp, ...; colorama), as any test that imports them does for the rest of its worker; the environment still
    equals the lock."""
    code = (
        "import setuptools, ray, sys\n"
        "from tests import locked_environment as e\n"
        "print(sum(entry.endswith(('_vendor', 'thirdparty_files')) for entry in sys.path))\n"
        "sys.exit(e.main())"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    vendored, verdict = done.stdout.split("\n", 1)
    assert (int(vendored), done.returncode) == (2, 0), done.stdout
    assert verdict.startswith("the environment equals the lock (")


def test_a_drifted_distribution_is_named(tmp_path):
    """A lock whose numpy is another release, and which lacks pytest: the verdict names both, and nothing else."""
    lock = tmp_path / "requirements-lock.txt"
    text = (ROOT / "requirements-lock.txt").read_text(encoding="utf-8")
    numpy = locked_environment.locked()["numpy"]
    text = re.sub(rf"^numpy=={re.escape(numpy)}", "numpy==1.0.0", text, flags=re.M)
    text = re.sub(r"^pytest==\S+", "pytest-not-this==1.0", text, flags=re.M)
    lock.write_text(text, encoding="utf-8")
    assert locked_environment.drift(lock) == [
        f"numpy: installed {numpy}, locked 1.0.0",
        f"pytest: installed {pytest.__version__}, not in the lock",
        "pytest-not-this: locked 1.0, not installed",
    ]
    assert locked_environment.verdict(lock).startswith("the environment differs from the lock (requirements-lock.txt): ")


def _lock_check(folder):
    """make lock-check in ``folder``, with this environment's uv."""
    return subprocess.run(["make", "-s", "lock-check", f"VENV={sys.prefix}"], cwd=folder, capture_output=True,
                          text=True, timeout=120)


def test_the_lock_is_up_to_date_with_pyproject():
    """uv.lock resolves pyproject.toml as it is, and requirements-lock.txt is uv.lock exported (make lock-check)."""
    done = _lock_check(ROOT)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_dependency_added_without_relocking_is_refused_in_one_line(tmp_path):
    """pyproject.toml gains a package, the lock stays: make stops before any install, with the command to run."""
    for name in ("Makefile", "pyproject.toml", "uv.lock", "requirements-lock.txt", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "sova_lib").mkdir()
    project = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(project.replace('    "numpy>=2.4",', '    "numpy>=2.4",\n    "rich>=13",'))
    done = _lock_check(tmp_path)
    assert done.returncode == 2
    assert re.fullmatch(r"Makefile:\d+: \*\*\* uv.lock is out of date with pyproject.toml: run make lock, review git "
                        r"diff uv.lock requirements-lock.txt, and commit the three files together.  Stop.\n",
                        done.stderr)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "requirements-lock.txt").write_text("numpy==1.0\n")
    done = _lock_check(tmp_path)
    assert done.returncode == 2
    assert re.fullmatch(r"Makefile:\d+: \*\*\* requirements-lock.txt is not uv.lock exported: run make lock, and "
                        r"commit both files together.  Stop.\n", done.stderr)


@pytest.mark.slow
def test_a_figure_that_differs_names_the_drifted_package_first(tmp_path):
    """fontTools 4.69.1 (it subsets DejaVu Sans differently) put first on the path of a throw-away environment: the
    figure test fails on the PDF, and its message names the drift before the file."""
    site = tmp_path / "site"
    subprocess.run([str(Path(sys.prefix) / "bin" / "uv"), "pip", "install", "--quiet", "--no-config", "--no-deps", "--python",
                    sys.executable, "--target", str(site), "fonttools==4.69.1"], cwd=tmp_path, check=True, timeout=300)
    test = "tests/paper/test_figure_bytes.py::test_the_notebooks_figure_cells_redraw_the_committed_figures[04_errors]"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:]
    assert ("AssertionError: 04_errors_confusion.pdf differs from the committed file; the environment differs from "
            "the lock (requirements-lock.txt): fonttools: installed 4.69.1, locked 4.68.0") in done.stdout


@pytest.mark.slow
def test_make_brings_a_drifted_venv_back_to_the_lock(tmp_path):
    """A venv made by make, then given an extra package and another release of a locked one by hand: the next make
    removes the one and puts the locked release back, and the environment equals the lock again."""
    venv = tmp_path / "venv"
    make = ["make", "-s", "venv", f"VENV={venv}", f"PYTHON={sys.executable}"]
    subprocess.run(make, cwd=ROOT, check=True, capture_output=True, timeout=900)
    python = str(venv / "bin" / "python")
    check = [python, "-c", "from tests.locked_environment import drift; print(drift())"]
    subprocess.run([str(venv / "bin" / "uv"), "pip", "install", "--quiet", "--no-config", "--python", python,
                    "tqdm==4.69.0", "termcolor==2.4.0"], cwd=tmp_path, check=True, timeout=300)
    tqdm = locked_environment.locked()["tqdm"]
    drifted = subprocess.run(check, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert drifted == f"['termcolor: installed 2.4.0, not in the lock', 'tqdm: installed 4.69.0, locked {tqdm}']\n"
    subprocess.run(make, cwd=ROOT, check=True, capture_output=True, timeout=900)
    assert subprocess.run(check, cwd=ROOT, capture_output=True, text=True, check=True).stdout == "[]\n"
