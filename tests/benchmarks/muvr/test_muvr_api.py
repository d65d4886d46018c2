"""``sova_lib.benchmarks.muvr.describe`` and ``evaluate``, as the command and the notebooks call them: one input
each, a result that records itself and prints itself as the command does."""
import json

import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.muvr import qa, retrieval
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL
from tests.benchmarks.muvr.fixtures import synthetic

PARTITIONS = ("news", "dance")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic(tmp_path_factory.mktemp("api"), 1, partitions=PARTITIONS, topics=2, videos_per_topic=5,
                     distractors=2)


def test_released_features_score_as_the_retrieval_module_and_record_their_folder(data):
    features = data / "features" / "VLMs_1_15" / SYNTHETIC_MODEL
    result = muvr.evaluate_files(data, partitions=PARTITIONS, features=features, query="video", bootstrap=0)
    direct = retrieval.evaluate_vectors([muvr.load_partition(data, p) for p in PARTITIONS],
                                muvr.released_vectors(features, query="video"), query="video")
    assert result.metrics == direct.metrics
    record = result.to_record()
    assert (record["kind"], record["source"], record["cache"], record["protocol"]) == (
        "embeddings", str(features), SYNTHETIC_MODEL, "base video")
    assert result.text().splitlines()[0] == "MUVR-base (video, ties expected): " + "  ".join(
        f"{k} {v:.1f}" for k, v in direct.metrics.items())


def test_qa_answers_and_the_inputs_each_version_takes(data, tmp_path):
    questions = qa.load_qa(data, ["news"])
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": q.id, "text": "Yes"}) + "\n" for q in questions))
    result = muvr.evaluate_files(data, version="qa", partitions=["news"], answers=answers)
    # always Yes: every positive kept and every negative too, half the questions right, pair score 0
    assert (result.accuracy["all"], result.reranking_score["all"]) == (50.0, 0.0)
    assert result.to_record()["cache"] == "answers.jsonl"
    assert result.text().startswith("MUVR-QA all: accuracy 50.0%  reranking score +0.00")
    with pytest.raises(ValueError, match="--version qa needs --answers"):
        muvr.evaluate_files(data, version="qa", partitions=["news"])
    with pytest.raises(ValueError, match="--answers applies to --version qa"):
        muvr.evaluate_files(data, partitions=["news"], answers=answers)


def test_windows_are_described_with_the_general_preset_by_default(data, tmp_path):
    from sova_lib.describe.run_cache import RunOptions
    from tests.benchmarks.muvr.test_muvr_qa_framework import FakeDescriber

    quiet = RunOptions(show_progress=False, verbose=False)
    summary = muvr.describe(FakeDescriber(), data, tmp_path, tmp_path / "cache", partitions=["news"], run=quiet)
    named = muvr.describe(FakeDescriber(), data, tmp_path, tmp_path / "cache", partitions=["news"], run=quiet,
                          prompt="general")
    manifest = json.loads((summary.folder / "manifest.json").read_text())
    assert named.folder == summary.folder and manifest["prompt"]["name"] == "general"
    assert summary.failed > 0 and named.skipped_failed == summary.failed  # no video under tmp_path: all recorded


def test_the_random_ranking_records_itself_as_a_baseline(data):
    result = muvr.evaluate_files(data, partitions=PARTITIONS, baseline="random-ranking", seed=3)
    assert result.metrics == muvr.random_ranking([muvr.load_partition(data, p) for p in PARTITIONS]).metrics
    record = result.to_record()
    assert (record["kind"], record["baseline"], record["seed"]) == ("baseline", "random-ranking", 3)
