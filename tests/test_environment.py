"""environment.yml and requirements.txt pin the same packages at the same versions, and this environment has them."""
import re
from importlib import metadata

import yaml

from tests.paths import ROOT  # noqa: E402


def _pins(lines):
    return dict(re.match(r"([A-Za-z0-9_.-]+)==(\S+)", s).groups() for s in lines if "==" in s)


def test_conda_and_pip_pins_agree():
    req = _pins(l.strip() for l in (ROOT / "requirements.txt").read_text().splitlines() if not l.startswith("#"))
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _pins(pip) == req


def _requirements() -> dict:
    return _pins(l.strip() for l in (ROOT / "requirements.txt").read_text().splitlines() if not l.startswith("#"))


def test_installed_versions_are_the_pinned_ones():
    """The environment the tests run in is the one requirements.txt describes (a drifted install fails here)."""
    req = _requirements()
    assert {"torch", "numpy", "filelock", "tenacity", "httpx"} <= set(req)
    installed = {}
    for name in req:
        try:
            installed[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed[name] = None
    # a local build tag (torch's "+cpu", "+cu128") is the same release
    assert {n: (v or "").split("+")[0] for n, v in installed.items()} == req


def test_torchvision_is_the_release_built_for_torch():
    """torchvision 0.N is built for torch 2.(N - 15), patch for patch (0.15 <-> 2.0, ..., 0.28 <-> 2.13)."""
    req = _requirements()
    torch_major, torch_minor, torch_patch = map(int, req["torch"].split("."))
    vision_major, vision_minor, vision_patch = map(int, req["torchvision"].split("."))
    assert (torch_major, vision_major, vision_minor - torch_minor, vision_patch) == (2, 0, 15, torch_patch)
    assert {"accelerate", "num2words"} <= set(req)


#: Pinned for the tests and the checks of the code alone, not needed to run sova_lib; and pinned only to fix the
#: release that other packages bring (sentence-transformers and scikit-learn need scipy; sova_lib never imports it).
DEVELOPMENT = {"pytest", "pytest-xdist", "pytest-timeout", "hypothesis", "ruff", "import-linter",
               "fastapi", "uvicorn", "starlette", "openai"}  # the last four: transformers serve, in the tests
TRANSITIVE = {"scipy"}


def test_the_declared_dependencies_are_the_pinned_ones():
    """pyproject.toml declares every pinned package but the development tools, and each pin meets its bound."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    declared += [Requirement(r) for name, extra in project["optional-dependencies"].items() if name != "all"
                 for r in extra]
    pins = _requirements()
    names = {r.name.lower(): r for r in declared}
    assert sorted(names) == sorted(n.lower() for n in pins if n not in DEVELOPMENT | TRANSITIVE)
    assert [r.name for r in declared if pins[r.name] not in r.specifier] == []
    assert project["optional-dependencies"]["all"] == ["sova_lib[notebooks,ray,vantage]"]
