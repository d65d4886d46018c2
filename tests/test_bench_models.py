"""The ``bench/`` scripts that load models (torch) run in their quick mode and report (``tests/test_bench.py``)."""
import pytest

from tests.test_bench import MODELS, run_quick


@pytest.mark.parametrize("script", MODELS)
def test_the_script_runs_quick_and_reports(script, tmp_path):
    run_quick(script, tmp_path)
