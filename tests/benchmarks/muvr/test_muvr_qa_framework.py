"""MUVR-QA through the describer runner and cache; the MLLM-to-Embedding framework on described windows."""
import hashlib
import shutil

import numpy as np
import pytest
from PIL import Image

from sova_lib.benchmarks.muvr import framework, qa, retrieval
from sova_lib.benchmarks.muvr.annotations import MuvrQuery, Partition
from sova_lib.describe.contract import DescriberEnvironmentError
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine
from sova_lib.item_vectors import read_descriptions
from sova_lib.video import example_videos
from tests.benchmarks.muvr.fixtures import synthetic

QUIET = RunOptions(show_progress=False, verbose=False)


class FakeDescriber:
    """Answers Yes when the target's first frame is bright; records what it was sent."""

    name, max_batch_size, max_concurrency = "fake", 2, 1

    def __init__(self):
        self.seen = []

    def config(self):
        return {"model": "fake-rule"}

    def describe(self, requests):
        self.seen += requests
        return ["Yes" if np.asarray(r.frames[-6]).mean() > 100 else "No" for r in requests]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic(tmp_path_factory.mktemp("qa"), 0, partitions=("news",),
                                topics=2, videos_per_topic=5, distractors=2)


def _frames(folder, count, value):
    folder.mkdir(parents=True)
    for i in range(count):
        Image.fromarray(np.full((4, 4, 3), value + i, np.uint8)).save(folder / f"{i:04d}.png")


def test_target_frame_indices():
    assert qa.target_frame_indices(13) == [1, 3, 5, 7, 9, 11]  # s = 2: int(1 + 2i)
    assert qa.target_frame_indices(61) == [5, 15, 25, 35, 45, 55]


def test_prompts_follow_the_code_with_the_paper_text_as_a_template(data):
    questions = qa.load_qa(data, ["news"])
    base, tagged = questions[0], questions[2]
    text = qa.question_text(base)
    assert "[Tag]" not in text and "[<region>]" not in text and text.endswith("return Yes. If not, return No.")
    assert "must exist in [Target]: synthetic tag news 1 0" in qa.question_text(tagged)
    neg = qa.QAQuestion("x", "news", "q", "t", "-snow", 1, "d")
    assert "must not exist in [Target]: snow" in qa.question_text(neg)
    assert "[Tag]:\n-snow" in qa.question_text(neg, template="paper", mode="text-only")


def test_run_qa_caches_answers_and_scores_them(data, tmp_path):
    questions = qa.load_qa(data, ["news"])
    video_root = tmp_path / "videos"
    for q in questions:
        if not (video_root / q.query).exists():
            _frames(video_root / q.query, 5, 10)
        _frames(video_root / q.target, 13, 200 if q.label else 20)
    describer = FakeDescriber()
    summary = qa.run_qa(describer, questions, video_root, tmp_path / "cache", run=QUIET)
    assert summary.done == 4 and len(describer.seen) == 4
    assert all(len(r.frames) == 7 for r in describer.seen)  # query middle frame + 6 target frames
    assert np.asarray(describer.seen[0].frames[0]).mean() == 12  # frame 5 // 2 = 2 of the query: value 10 + 2
    assert {r.prompt for r in describer.seen} == {qa.question_text(q) for q in questions}
    answers = read_descriptions(summary.folder)
    result = qa.score_answers(questions, answers)
    assert result.accuracy == {"all": 100.0, "no_tag": 100.0} and result.reranking_score["all"] == 1.0
    again = qa.run_qa(FakeDescriber(), questions, video_root, tmp_path / "cache", run=QUIET)
    assert again.skipped_cached == 4 and again.folder == summary.folder
    other = qa.run_qa(FakeDescriber(), questions, video_root, tmp_path / "cache", mode="text-only",
                      run=QUIET)
    assert other.folder != summary.folder


def test_run_qa_records_a_missing_video_and_goes_on(data, tmp_path):
    questions = qa.load_qa(data, ["news"])[:2]
    _frames(tmp_path / "v" / questions[0].query, 3, 0)
    _frames(tmp_path / "v" / questions[0].target, 8, 200)
    summary = qa.run_qa(FakeDescriber(), questions, tmp_path / "v", tmp_path / "c", run=QUIET)
    assert summary.done == 1 and summary.failed == 1
    assert "not under" in summary.failures[questions[1].id]


def test_score_answers_strict_and_missing():
    qs = [qa.QAQuestion(f"n/{i}", "news", "q", f"t{i}", "", 1 - i % 2, "d") for i in range(4)]
    result = qa.score_answers(qs, {"n/0": "yes", "n/1": "Nope", "n/2": "Yes", "n/3": "No"}, parse="strict")
    assert result.unparseable == ["n/1"] and result.accuracy["all"] == 100.0
    official = qa.score_answers(qs, {"n/0": "yes", "n/1": "Nope", "n/2": "Yes", "n/3": "No"})
    assert official.accuracy["all"] == 75.0 and official.reranking_score["all"] == pytest.approx((-1 + 1) / 2)
    with pytest.raises(ValueError, match="1 of 4 questions have no answer"):
        qa.score_answers(qs, {"n/0": "Yes", "n/1": "No", "n/2": "Yes"})


def test_windows():
    assert framework.windows(300, 10.0) == [(0, 119), (120, 239), (240, 299)]
    assert framework.windows(245, 10.0) == [(0, 119), (120, 239)]  # a last 0.5 s is dropped
    assert len(framework.windows(10_000, 10.0, max_windows=10)) == 10
    assert framework.window_spec() == "muvr-windows:12s:max10"


def test_describe_windows_puts_the_layout_in_the_cache_key(tmp_path):
    video = example_videos()[0]
    (tmp_path / "v").mkdir()
    shutil.copy(video, tmp_path / "v" / f"BVx{video.suffix}")
    describer = FakeDescriber()

    def loader(item, fps):
        return [np.full((2, 2, 3), 0, np.uint8)] * 6, (), True

    runs = [framework.describe_windows(describer, ["BVx", "BVmissing"], tmp_path / "v", tmp_path / "c",
                                       prompt="Describe this video.", seconds=s, engine=LocalEngine(loader), run=QUIET)
            for s in (1.0, 2.0)]
    assert runs[0].folder != runs[1].folder
    assert "BVmissing@0" in runs[0].failures
    ids = sorted(read_descriptions(runs[0].folder), key=lambda i: int(i.split("@")[1]))
    assert ids == [f"BVx@{k}" for k in range(len(ids))] and len(ids) >= 2


class HashEncoder:
    """A stand-in sentence encoder: the same sentence always gets the same random unit vector."""

    def encode(self, texts):
        out = []
        for t in texts:
            seed = int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).standard_normal(16)
            out.append(v / np.linalg.norm(v))
        return np.array(out, dtype=np.float32)


def test_framework_pools_windows_and_any_window_can_match():
    texts = {"g1@0": "A cat sleeps.", "g1@1": "A red car drives by.", "g2@0": "Snow falls.", "g3@0": "People talk.",
             "q@0": "A red car drives by."}
    assert framework.pool_windows(texts)["g1"] == "A cat sleeps.\nA red car drives by."
    part = Partition("news", ("g1", "g2", "g3", "q"),
                     (MuvrQuery("q", "Snow falls. [<region>] A dog barks.", None, ("g1", "g2")),), (), {})
    gallery, queries = framework.framework_vectors(texts, HashEncoder())(part)
    assert list(gallery.ids) == ["g1", "g2", "g3", "q"] and gallery.counts.tolist() == [2, 1, 1, 1]
    assert queries.text.counts.tolist() == [2]  # "Snow falls." and "A dog barks."
    result = retrieval.evaluate_vectors([part], framework.framework_vectors(texts, HashEncoder()), query="text+video")
    assert result.per_partition["news"]["mAP"] == pytest.approx(100.0)  # g1 by S_v = 1, g2 by S_t = 1
    whole = framework.framework_vectors(texts, HashEncoder(), split_query=False)(part)[1]
    assert whole.text.counts.tolist() == [1]
    with pytest.raises(ValueError, match="not '<video id>@<window>'"):
        framework.pool_windows({"g1": "x"})


class Unreachable(FakeDescriber):
    """A describer whose server cannot be reached: its load() says so, as the OpenAI backend's does."""

    def load(self):
        raise DescriberEnvironmentError("cannot reach http://127.0.0.1:9/v1: is the server running?")


def test_run_qa_with_a_describer_that_cannot_start_stops_before_any_question(data, tmp_path):
    describer = Unreachable()
    with pytest.raises(DescriberEnvironmentError, match="is the server running"):
        qa.run_qa(describer, qa.load_qa(data, ["news"]), tmp_path / "v", tmp_path / "c", run=QUIET)
    assert describer.seen == []
