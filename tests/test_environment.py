"""environment.yml and requirements.txt must pin the same packages at the same versions."""
import re

import yaml

from tests.paths import ROOT  # noqa: E402


def _pins(lines):
    return dict(re.match(r"([A-Za-z0-9_.-]+)==(\S+)", s).groups() for s in lines if "==" in s)


def test_conda_and_pip_pins_agree():
    req = _pins(l.strip() for l in (ROOT / "requirements.txt").read_text().splitlines() if not l.startswith("#"))
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _pins(pip) == req
    assert req["torch"] == "2.13.0"


def test_gpu_additions_match_torch():
    """requirements-gpu.txt pins the torchvision built for the pinned torch (0.28 <-> 2.13) and nothing twice."""
    req = _pins(l.strip() for l in (ROOT / "requirements.txt").read_text().splitlines() if not l.startswith("#"))
    gpu = _pins(l.strip() for l in (ROOT / "requirements-gpu.txt").read_text().splitlines() if not l.startswith("#"))
    assert gpu == {"torchvision": "0.28.0"}
    assert req["torch"] == "2.13.0" and not set(gpu) & set(req)
    assert {"accelerate", "num2words"} <= set(req)
    env = yaml.safe_load((ROOT / "environment-gpu.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-r requirements.txt" in pip and "-r requirements-gpu.txt" in pip
