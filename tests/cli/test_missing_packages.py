"""A command whose package is not installed says so in one line naming the extra that has it, exit status 1."""
from __future__ import annotations

import subprocess
import sys

import pytest

from sova_lib.cli import EXTRAS, main
from tests.paths import ROOT

QUICKSTART_CACHE = ROOT / "cache" / "descriptions" / "quickstart-motion-classical-motion-general-2fps__35741fb179ec"


def _without(module: str, *argv: str):
    """``sova argv`` in a fresh process where ``import module`` fails as it does when the package is missing."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            "from sova_lib.cli import main; raise SystemExit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.parametrize("module, argv, line", [
    ("papermill", ["reproduce", "--notebooks", "notebooks"],
     "sova: reproduce needs papermill, from the 'notebooks' extra of sova_lib, which is not installed: "
     "pip install \"sova_lib[notebooks]\" (or make venv in a checkout)"),
    ("cv2", ["describe", "--backend", "motion", "--fps", "2", "--protocol", "quickstart-direction"],
     "sova: describe needs cv2, a dependency of sova_lib, which is not installed: reinstall sova_lib "
     "(or make venv in a checkout)"),
    ("sentence_transformers", ["sovabench", "evaluate", "--protocol", "quickstart-direction",
                               "--descriptions", str(QUICKSTART_CACHE)],
     "sova: sovabench evaluate needs sentence_transformers, a dependency of sova_lib, which is not installed: "
     "reinstall sova_lib (or make venv in a checkout)"),
])
def test_a_missing_package_is_one_line_and_exit_1(tmp_path, module, argv, line):
    done = _without(module, *argv, "--cache-dir", str(tmp_path / "cache"), *(["--out", str(tmp_path / "f")]
                                                                               if argv[0] == "reproduce" else []))
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (1, [line]), done.stderr
    assert "Traceback" not in done.stderr


def test_every_extra_module_names_an_extra_of_the_package():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS.values()) == set(extras) - {"all"}


def test_reproduce_outside_a_checkout_says_to_pass_the_notebooks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # a folder without notebooks/, as a user's folder outside a checkout
    assert main(["reproduce", "--out", str(tmp_path / "figures"), "--cache-dir", str(tmp_path / "cache")]) == 2
    assert capsys.readouterr().err == (
        "sova: error: --notebooks notebooks: no such folder; run sova reproduce in a checkout of the repository "
        "(its notebooks/ is the default) or pass --notebooks DIR, the folder of the NN_name.py notebooks\n")
    assert not (tmp_path / "figures").exists()
