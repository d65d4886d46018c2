"""Every script of ``bench/`` runs in its quick mode (``--quick``: small sizes, seconds) and prints its report, so
that none can break unnoticed; the numbers of a quick run mean nothing and are not checked. The scripts that load
models run in ``test_bench_models.py``, the Ray one in ``test_bench_ray.py`` (with the other tests that start
Ray), so that the test suite's units of work stay short."""
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT

#: Each script, and words its report always prints.
REPORTS = {
    "bench_clips.py": "peak memory, largest / smallest file",
    "bench_describe.py": "llava",
    "bench_embed.py": "set scoring, 50 x 300 clips",
    "bench_encode.py": "quickstart-direction mAP on the committed cache: float32 58.89 (+0.00), bfloat16 58.89",
    "bench_evaluate.py": "speed-up on the same subset",
    "bench_feedback.py": "warm sova sovabench evaluate",
    "bench_frames.py": "same frames: True",
    "bench_motion.py": "load (decord) + describe",
    "bench_muvr.py": "largest AP difference, loop vs ours",
    "bench_openai.py": "same request bodies: True",
    "bench_ray.py": "items/s",
}
#: The scripts that load models (torch), and the one that starts Ray: run by the two modules named above.
MODELS = ("bench_describe.py", "bench_embed.py", "bench_encode.py")
RAY = ("bench_ray.py",)


def run_quick(script: str, cwd) -> None:
    """Run ``bench/<script> --quick`` in a fresh interpreter; it must exit 0 and print its report."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--quick"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert REPORTS[script] in done.stdout, done.stdout


def test_every_script_of_bench_is_run_here():
    assert sorted(p.name for p in (ROOT / "bench").glob("*.py")) == sorted(REPORTS)
    assert set(MODELS) | set(RAY) < set(REPORTS)


@pytest.mark.parametrize("script", sorted(set(REPORTS) - set(MODELS) - set(RAY)))
def test_the_script_runs_quick_and_reports(script, tmp_path):
    run_quick(script, tmp_path)
