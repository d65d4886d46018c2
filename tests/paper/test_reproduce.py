from pathlib import Path

import pytest

from sova_lib.paper import reproduce
from tests.paths import ROOT  # noqa: E402


def test_find_notebooks_in_order(tmp_path):
    found = reproduce.find_notebooks(ROOT / "notebooks")
    assert [p.name for p in found] == ["00_quickstart.py", "01_benchmark.py", "02_results.py", "03_ablations.py",
                                       "04_errors.py", "05_muvr.py", "06_vantage.py", "07_image_tasks.py"]
    with pytest.raises(FileNotFoundError, match="no notebooks"):
        reproduce.find_notebooks(tmp_path)


def test_reproduce_command_options():
    from sova_lib.cli import build_parser

    args = build_parser().parse_args(["reproduce", "--skip-notebooks", "--build", "b"])
    assert args.skip_notebooks and args.build == "b" and Path(args.notebooks) == ROOT / "notebooks"
