"""Running a describer on VANTAGE items: prompts per item, frames in order, the answer cache, the stand-in run."""
import json

import numpy as np
import pytest
from PIL import Image

from sova_lib.benchmarks.vantage.ground_truth import read_ground_truth
from sova_lib.benchmarks.vantage.inputs import VantageItem, read_items
from sova_lib.benchmarks.vantage.run import (
    FRAME_PREFIX,
    cache_id,
    cached_answers,
    describe_task,
    load_media,
    render_prompt,
)
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.synthetic import RuleBasedStandIn, write_street_benchmark
from sova_lib.benchmarks.vantage.tasks import submission_answers
from sova_lib.describe.backends.openai import OpenAIDescriber
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest
from sova_lib.describe.run_cache import RunOptions
from sova_lib.video.frames import example_videos, probe

QUIET = RunOptions(show_progress=False, verbose=False)


class Recorder:
    """A fake describer that records what it is sent and echoes the prompt's first line."""

    name = "recorder"
    max_batch_size = 2
    max_concurrency = 1

    def __init__(self):
        self.sent = []

    def config(self):
        return {"model": "recorder"}

    def describe(self, requests):
        self.sent += list(requests)
        return ["Answer: A" for _ in requests]


@pytest.fixture(scope="module")
def street(tmp_path_factory):
    videos = example_videos()
    durations = [probe(v).num_frames / probe(v).fps for v in videos]
    folder = tmp_path_factory.mktemp("street")
    return folder, write_street_benchmark(folder, videos, durations), videos[0].parent


def test_video_frames_follow_the_harness_plan(street):
    folder, tsvs, root = street
    item = read_items("vqa", tsvs["vqa"])[0]
    frames, times, is_video = load_media(item, root, 8)
    n = probe(root / item.media[0]).num_frames
    assert is_video and len(frames) == 8 and frames[0].size == (384, 288)
    assert times == tuple(int(i * n / 9) / 10.0 for i in range(1, 9))
    assert render_prompt(item, 8).text.startswith(FRAME_PREFIX.format(n=8) + "\n" + item.question)


def test_event_verification_drops_its_system_prompt_for_frame_lists(street, tmp_path):
    folder, tsvs, root = street
    items = read_items("event_verification", tsvs["event_verification"])
    rec = Recorder()
    describe_task(rec, "event_verification", items, tmp_path, media_root=root, n_frames=4, run=QUIET)
    sent = next(r for r in rec.sent if r.id == cache_id(items[0], render_prompt(items[0], 4)))
    assert sent.system_prompt is None and items[0].system_prompt not in sent.prompt and items[0].question in sent.prompt


def test_describe_caches_by_prompt_and_resumes(street, tmp_path):
    folder, tsvs, root = street
    items = read_items("vqa", tsvs["vqa"])
    rec = Recorder()
    summary = describe_task(rec, "vqa", items, tmp_path, media_root=root, n_frames=3, run=QUIET)
    assert summary.done == len(items) and len(rec.sent) == len(items)
    by_id = {r.id: r for r in rec.sent}
    for it in items:
        req = by_id[cache_id(it, render_prompt(it, 3))]
        assert req.prompt == render_prompt(it, 3).text and len(req.frames) == 3
    lines = [json.loads(x) for x in (summary.folder / "descriptions.jsonl").read_text().splitlines()]
    assert {x["id"].split("@")[1] for x in lines} == {render_prompt(it, 3).sha256[:12] for it in items}
    changed = [items[0].__class__(items[0].id, "vqa", items[0].media, "A new question?", items[0].options)] + items[1:]
    again = describe_task(rec, "vqa", changed, tmp_path, media_root=root, n_frames=3, run=QUIET)
    assert again.folder == summary.folder and again.done == 1 and again.skipped_cached == len(items) - 1
    assert cached_answers(summary.folder, changed, 3) == {it.id: "Answer: A" for it in items}


def test_a_missing_video_is_recorded_not_raised(tmp_path):
    item = VantageItem("1", "temporal", ("absent.mp4",), "When?")
    summary = describe_task(Recorder(), "temporal", [item], tmp_path, media_root=tmp_path, run=QUIET)
    assert summary.failed == 1 and "absent.mp4" in next(iter(summary.failures.values()))


def test_tracking_images_in_order(tmp_path):
    seq = tmp_path / "seq" / "frames"
    seq.mkdir(parents=True)
    for k in range(3):
        Image.fromarray(np.full((100, 200, 3), 40 * k, dtype=np.uint8)).save(seq / f"f{k:02d}.png")
    item = VantageItem("seq", "sot", tuple(f"seq/frames/f{k:02d}.png" for k in range(3)),
                       extra={"init_bbox": [100, 100, 600, 500], "frame_ids": ["0", "1", "2"]})
    images, times, is_video = load_media(item, tmp_path)
    assert not is_video and len(images) == 4 and images[0].size == (100, 40)
    assert images[1].getpixel((20, 10)) == (255, 0, 0) and images[3].getpixel((0, 0)) == (80, 80, 80)
    assert "[100, 100, 600, 500]" in render_prompt(item).text


def test_openai_request_keeps_image_order_then_text():
    frames = [Image.new("RGB", (4, 4), (v, 0, 0)) for v in (10, 200)]
    body = OpenAIDescriber(model="m").request_body(DescribeRequest("1", frames, "question", None, False))
    parts = body["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"] and parts[-1]["text"] == "question"


def test_rule_based_stand_in_run_scores_every_video_task(street, tmp_path):
    folder, tsvs, root = street
    for task in ("vqa", "event_verification", "temporal"):
        items = read_items(task, tsvs[task])
        summary = describe_task(RuleBasedStandIn(), task, items, tmp_path, media_root=root, run=QUIET)
        answers = submission_answers(items, cached_answers(summary.folder, items))
        result = score_answers(task, read_ground_truth(folder / f"{task}_gt.jsonl", task), answers)
        assert result.parse_rate == 1.0 and 0 <= result.value <= 100
    assert result.task == "temporal" and result.secondary["n_videos"] == 3


class Unreachable(Recorder):
    """A describer whose server cannot be reached: its load() says so, as the OpenAI backend's does."""

    def load(self):
        raise DescriberEnvironmentError("cannot reach http://127.0.0.1:9/v1: is the server running?")


def test_a_describer_that_cannot_start_stops_the_run_before_any_item(street, tmp_path):
    folder, tsvs, root = street
    describer = Unreachable()
    with pytest.raises(DescriberEnvironmentError, match="is the server running"):
        describe_task(describer, "vqa", read_items("vqa", tsvs["vqa"]), tmp_path, media_root=root, run=QUIET)
    assert describer.sent == []
