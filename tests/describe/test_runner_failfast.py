"""The runner's fail-fast path, empty and over-long answers, and what the loader does with short clips and high rates."""
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from sova_lib.describe.contract import DescriberEnvironmentError
from sova_lib.describe.item import Item, load_item
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items
from sova_lib.video.frames import example_videos, sample_indices


def lines(path):
    path = Path(path)
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def loader(item, fps):
    return [None] * 2, (0.0, 1.0), True


class Scripted:
    """Answers from ``script(id)``: a string, or an exception to raise."""

    name = "scripted"
    max_batch_size = 1
    max_concurrency = 1

    def __init__(self, script):
        self.script, self.calls = script, []

    def config(self):
        return {"model": "scripted"}

    def describe(self, requests):
        out = []
        for request in requests:
            self.calls.append(request.id)
            answer = self.script(request.id)
            if isinstance(answer, BaseException):
                raise answer
            out.append(answer)
        return out


def run(describer, ids, tmp_path, **options):
    """``describe_items`` quietly, one item at a time; ``options`` are ``RunOptions`` fields."""
    items = [Item(i, tmp_path / f"{i}.mp4") for i in ids]
    return describe_items(describer, items, tmp_path / "cache", prompt="Describe.",
                          run=RunOptions(show_progress=False, verbose=False, **options),
                          engine=LocalEngine(loader, load_workers=1, prefetch=1))


def folder_of(tmp_path):
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    return folder


def test_an_environment_error_stops_the_run_and_marks_no_item(tmp_path):
    down = DescriberEnvironmentError("cannot reach http://127.0.0.1:9/v1/chat/completions for model 'm'")
    describer = Scripted(lambda i: down if i >= 2 else f"clip {i}")
    with pytest.raises(DescriberEnvironmentError, match="cannot reach http://127.0.0.1:9/v1"):
        run(describer, range(6), tmp_path)
    folder = folder_of(tmp_path)
    assert [r["id"] for r in lines(folder / "descriptions.jsonl")] == [0, 1]
    assert lines(folder / "errors.jsonl") == []
    assert describer.calls == [0, 1, 2]  # nothing after the failing call
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["stopped"]["reason"].startswith("cannot reach http://127.0.0.1:9/v1")
    # the next run (the server is back) describes the rest: nothing was recorded as failed
    summary = run(Scripted(lambda i: f"clip {i}"), range(6), tmp_path)
    assert (summary.done, summary.skipped_cached, summary.skipped_failed) == (4, 2, 0)


def test_the_first_items_failing_alike_stop_the_run(tmp_path):
    describer = Scripted(lambda i: RuntimeError("CUDA error: no kernel image is available"))
    with pytest.raises(DescriberEnvironmentError) as error:
        run(describer, range(12), tmp_path, stop_after_same_failures=5)
    assert str(error.value) == ("stopped: the first 5 items all failed with the same error, which points at the "
                                "describer or its environment rather than the items: "
                                "RuntimeError: CUDA error: no kernel image is available")
    assert describer.calls == [0, 1, 2, 3, 4]
    assert lines(folder_of(tmp_path) / "errors.jsonl") == []


def test_item_failures_that_differ_or_follow_a_success_are_recorded(tmp_path):
    differing = Scripted(lambda i: ValueError(f"clip {i} is too long"))
    summary = run(differing, range(7), tmp_path / "a", stop_after_same_failures=5)
    assert summary.failed == 7 and [r["id"] for r in lines(folder_of(tmp_path / "a") / "errors.jsonl")] == list(
        range(7))
    after_success = Scripted(lambda i: "fine" if i == 0 else RuntimeError("same"))
    summary = run(after_success, range(8), tmp_path / "b", stop_after_same_failures=5)
    assert (summary.done, summary.failed) == (1, 7)
    fewer = Scripted(lambda i: RuntimeError("same"))
    summary = run(fewer, range(3), tmp_path / "c", stop_after_same_failures=5)
    assert summary.failed == 3 and len(lines(folder_of(tmp_path / "c") / "errors.jsonl")) == 3


def test_missing_files_never_trigger_the_rule(tmp_path):
    items = [Item(i, tmp_path / "absent.mp4") for i in range(7)]
    summary = describe_items(Scripted(lambda i: "x"), items, tmp_path / "cache", prompt="Describe.",
                             run=RunOptions(show_progress=False, verbose=False, stop_after_same_failures=3))
    assert summary.failed == 7


def test_an_empty_answer_is_a_failed_item_that_retry_errors_asks_again(tmp_path):
    answers = {0: "a car turns left", 1: "", 2: "  \n", 3: "a person walks"}
    summary = run(Scripted(answers.get), range(4), tmp_path)
    folder = folder_of(tmp_path)
    assert [r["id"] for r in lines(folder / "descriptions.jsonl")] == [0, 3]
    assert [(r["id"], r["error"]) for r in lines(folder / "errors.jsonl")] == [
        (1, "the describer gave an empty answer"), (2, "the describer gave an empty answer")]
    assert (summary.done, summary.failed) == (2, 2)
    healthy = Scripted(lambda i: f"answer {i}")
    again = run(healthy, range(4), tmp_path, retry_errors=True)
    assert (again.done, again.skipped_cached, healthy.calls) == (2, 2, [1, 2])
    assert [r["text"] for r in lines(folder / "descriptions.jsonl")][2:] == ["answer 1", "answer 2"]


def test_a_run_whose_first_answers_are_all_empty_stops(tmp_path):
    describer = Scripted(lambda i: "")
    with pytest.raises(DescriberEnvironmentError, match=r"^stopped: the first 5 items all failed with the same "
                                                        r"error.*: the describer gave an empty answer$"):
        run(describer, range(9), tmp_path, stop_after_same_failures=5)
    assert describer.calls == [0, 1, 2, 3, 4] and lines(folder_of(tmp_path) / "errors.jsonl") == []


def test_an_answer_over_the_limit_is_cut_flagged_counted_and_recorded(tmp_path):
    answers = {0: "x" * 12, 1: "short", 2: "y" * 10}
    summary = run(Scripted(answers.get), range(3), tmp_path, max_answer_chars=10)
    folder = folder_of(tmp_path)
    records = {r["id"]: r for r in lines(folder / "descriptions.jsonl")}
    assert records == {0: {"id": 0, "text": "x" * 10, "cut": 12}, 1: {"id": 1, "text": "short"},
                       2: {"id": 2, "text": "y" * 10}}
    assert (summary.done, summary.cut) == (3, 1)
    assert "1 of the 3 answers were longer than 10 characters and were cut" in str(summary)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert (manifest["max_answer_chars"], manifest["last_run"]["cut"]) == (10, 1)


def test_a_one_frame_clip_keeps_the_samplers_repeat(tmp_path):
    video = shutil.copy(example_videos()[0], tmp_path / "v.mp4")
    frames, times, is_video = load_item(Item("one", video, window=(7, 7)), 1.0)
    assert is_video and len(frames) == 2 and times == (0.0, 0.0)
    assert np.array_equal(np.asarray(frames[0]), np.asarray(frames[1]))


def test_an_fps_above_the_videos_rate_is_capped_with_a_warning(tmp_path, caplog):
    video = shutil.copy(example_videos()[0], tmp_path / "v.mp4")  # 60 frames at 10 fps
    with caplog.at_level(logging.WARNING, logger="sova_lib.describe.item"):
        frames, times, _ = load_item(Item("fast", video), 25.0)
    expected = sample_indices(60, 10.0, 10.0)  # n = round(60 / 10 * 10) + 1 = 61: one frame repeats
    assert len(expected) == 61 and len(frames) == 61
    assert times == tuple(float(t) for t in expected / 10.0)
    assert "--fps 25 is above the frame rate of v.mp4 (10 fps): sampling at 10 fps instead" in caplog.text


def test_ctrl_c_between_a_lines_write_and_its_count_leaves_the_manifest_counting_the_line(tmp_path, monkeypatch):
    """Ctrl-C raises in the main thread between any two steps: here right after the second answer's line is written
    and before the cache counts it. The manifest counts what is on disk (2), and the next run resumes after both."""
    from sova_lib.describe import cache as cache_module

    real_append = cache_module.DescriptionCache._append
    appended = []

    def append_then_interrupt(self, file, record):
        real_append(self, file, record)
        appended.append(record["id"])
        if len(appended) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(cache_module.DescriptionCache, "_append", append_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(Scripted(lambda i: f"clip {i}"), range(4), tmp_path)
    folder = folder_of(tmp_path)
    assert [r["id"] for r in lines(folder / "descriptions.jsonl")] == [0, 1]
    assert json.loads((folder / "manifest.json").read_text())["counts"] == {"done": 2, "failed": 0}
    monkeypatch.undo()
    summary = run(Scripted(lambda i: f"clip {i}"), range(4), tmp_path)
    assert summary.skipped_cached == 2 and summary.done == 2
