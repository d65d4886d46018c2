"""A warm ``sova sovabench evaluate`` (every split and vector cached) gives the cold run's result and record, and imports
neither NLTK nor torch, sentence-transformers, SciPy or scikit-learn."""
import json
import os
import shutil
import subprocess
import sys

from tests.paths import ROOT

QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))
HEAVY = ("nltk", "torch", "sentence_transformers", "transformers", "scipy", "sklearn", "pandas")

# Runs `sova sovabench evaluate` in a fresh interpreter, then reports which heavy modules it imported.
RUN = """
import json, sys
from sova_lib.cli import main
code = main(sys.argv[2:])
print(json.dumps({"code": code, "heavy": [m for m in json.loads(sys.argv[1]) if m in sys.modules]}), file=sys.stderr)
"""


def _evaluate(descriptions, cache, results):
    args = ["sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", str(descriptions),
            "--cache-dir", str(cache), "--out", str(results), "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(HEAVY), *args], env=env, capture_output=True,
                          text=True, timeout=300)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    (record,) = results.glob("*.json")
    return json.loads(done.stdout), record.read_text(), report["heavy"]


def test_warm_run_gives_the_cold_runs_result_and_record_without_heavy_imports(tmp_path):
    descriptions = tmp_path / QUICKSTART.name
    shutil.copytree(QUICKSTART, descriptions)
    cold, cold_record, cold_heavy = _evaluate(descriptions, tmp_path / "cache", tmp_path / "cold")
    warm, warm_record, warm_heavy = _evaluate(descriptions, tmp_path / "cache", tmp_path / "warm")
    assert {"nltk", "torch", "sentence_transformers"} <= set(cold_heavy)  # the cold run split and encoded
    assert warm_heavy == []
    assert warm == cold and warm_record == cold_record  # every float as printed by json, to the last digit
    assert round(cold["value"], 2) == 58.89  # the quickstart's score (README)
    splits = list((tmp_path / "cache" / "sentences").glob("punkt-english__*/splits.jsonl"))
    assert len(splits) == 1 and len(splits[0].read_text().splitlines()) == 6  # one line per description
