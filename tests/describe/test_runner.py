"""The runner loop and its resumable cache, with fake describers on real video files."""
import dataclasses
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from sova_lib.describe.item import Item
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.describe.provenance import config_hash
from sova_lib.describe.run_cache import Outcome, RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items
from sova_lib.video.frames import example_videos, probe, sample_indices
from tests.paths import ROOT  # noqa: E402

QUIET = RunOptions(show_progress=False, verbose=False)


class FrameCounter:
    """A deterministic describer: says how many frames it saw and with which instruction."""

    name = "fake"

    def __init__(self, model="frame-counter", max_batch_size=1, max_concurrency=1):
        self.model, self.max_batch_size, self.max_concurrency = model, max_batch_size, max_concurrency
        self.batches = []

    def config(self):
        return {"model": self.model}

    def describe(self, requests):
        self.batches.append([r.id for r in requests])
        return [f"{r.prompt} | frames: {len(r.frames)} | video: {r.is_video} | system: {r.system_prompt}"
                for r in requests]


def read_lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def fake_loader(item, fps):
    return [None] * 3, (0.0, 1.0, 2.0), True


@pytest.fixture
def media(tmp_path):
    """Three real example videos, an image, a corrupt video and a missing one."""
    folder = tmp_path / "media"
    folder.mkdir()
    items = []
    for path in example_videos():
        items.append(Item(path.stem, shutil.copy(path, folder / path.name)))
    Image.new("RGB", (40, 30), (200, 10, 10)).save(folder / "still.png")
    items.append(Item("still", folder / "still.png"))
    (folder / "corrupt.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    items.append(Item("corrupt", folder / "corrupt.mp4"))
    items.append(Item("missing", folder / "missing.mp4"))
    return items


def expected_frames(path, fps=1.0):
    info = probe(path)
    return len(sample_indices(info.num_frames, info.fps, fps))


def test_real_videos_images_and_failures(media, tmp_path):
    cache = tmp_path / "cache"
    summary = describe_items(FrameCounter(), media, cache, prompt=resolve_prompt("general"), fps=1.0,
                             run=QUIET)
    assert (summary.done, summary.failed, summary.skipped_cached) == (4, 2, 0)
    texts = {r["id"]: r["text"] for r in read_lines(summary.folder / "descriptions.jsonl")}
    # 50 frames at 10 fps -> round(5) + 1 = 6 frames; 60 frames -> 7 (spec section 5)
    counts = {item.id: expected_frames(item.path) for item in media[:3]}
    assert sorted(counts.values()) == [6, 7, 7]
    for vid, n in counts.items():
        assert texts[vid] == f"Describe this video. | frames: {n} | video: True | system: None"
    assert texts["still"] == "Describe the image. | frames: 1 | video: False | system: None"
    errors = {r["id"]: r for r in read_lines(summary.folder / "errors.jsonl")}
    assert sorted(errors) == ["corrupt", "missing"]
    assert errors["missing"]["error"].startswith("FileNotFoundError: no such file:")
    assert "corrupt.mp4" in errors["corrupt"]["error"] and errors["corrupt"]["time"].endswith("+00:00")


def test_rerun_skips_failures_until_retry_errors(media, tmp_path):
    cache, prompt = tmp_path / "cache", resolve_prompt("general")
    run = lambda **kw: describe_items(FrameCounter(), media, cache, prompt=prompt,
                                      run=RunOptions(show_progress=False, verbose=False, **kw))
    run()
    again = run()
    assert (again.done, again.failed, again.skipped_cached, again.skipped_failed) == (0, 0, 4, 2)
    shutil.copy(media[0].path, media[4].path)  # the corrupt file is repaired
    retried = run(retry_errors=True)
    assert (retried.done, retried.failed, retried.skipped_cached) == (1, 1, 4)
    assert (retried.total_done, retried.total_failed) == (5, 1)
    ids = [r["id"] for r in read_lines(retried.folder / "descriptions.jsonl")]
    assert sorted(ids) == sorted(i.id for i in media[:5])
    assert [r["id"] for r in read_lines(retried.folder / "errors.jsonl")] == ["corrupt", "missing", "missing"]
    assert "--retry-errors" in str(again) and "1 items without a description" in str(retried)


def test_manifest_records_the_configuration_and_its_hash(media, tmp_path):
    summary = describe_items(FrameCounter(), media[:2], tmp_path, prompt=resolve_prompt("task-aware"), fps=2.0,
                             crop_source="clip-files", run=QUIET)
    m = json.loads((summary.folder / "manifest.json").read_text())
    assert m["backend"] == "fake" and m["describer"] == {"model": "frame-counter"} and m["model"] == "frame-counter"
    assert m["prompt"]["video"] == "Briefly classify the actions occurring in this video."
    assert m["system_prompt"].startswith("You are an expert video analysis model")
    assert (m["fps"], m["sampler_version"], m["crop_source"], m["versions"]["sova_lib"]) == (2.0, "1", "clip-files",
                                                                                             "0.1.0")
    assert m["schema"] == 1 and m["source"] == "run" and {"python", "torch", "transformers"} <= set(m["versions"])
    assert "versions" not in m["hash_fields"] and "device" not in m["hash_fields"]  # an upgrade keeps the cache
    assert m["counts"] == {"done": 2, "failed": 0} and m["last_run"]["described"] == 2
    assert m["throughput_items_per_s"] > 0 and m["created"] <= m["started"] <= m["updated"]
    assert m["config_hash"] == config_hash({k: m[k] for k in m["hash_fields"]})
    assert summary.folder.name == f"fake-frame-counter-task-aware-2fps__{m['config_hash']}"


def test_changed_prompt_or_fps_gets_a_new_folder_same_config_resumes(tmp_path):
    items = [Item(i, Path(f"v{i}.mp4")) for i in range(5)]
    run = lambda prompt, fps, model="frame-counter": describe_items(
        FrameCounter(model), items, tmp_path, prompt=prompt, fps=fps, engine=LocalEngine(fake_loader), run=QUIET)
    first = run(resolve_prompt("general"), 1.0)
    assert run(resolve_prompt("general"), 1).folder == first.folder
    assert run(resolve_prompt("general"), 1).skipped_cached == 5
    folders = {first.folder,
               run(resolve_prompt("general"), 2.0).folder,
               run(resolve_prompt("task-aware"), 1.0).folder,
               run(resolve_prompt("general", "Be brief."), 1.0).folder,
               run("Describe this video.", 1.0).folder,
               run(resolve_prompt("general"), 1.0, model="other").folder}
    assert len(folders) == 6
    assert sorted(p.name for p in (tmp_path / "descriptions").iterdir()) == sorted(f.name for f in folders)


def test_torn_last_line_is_cut_and_the_item_redone(tmp_path):
    items = [Item(i, Path(f"v{i}.mp4")) for i in range(4)]
    key_run = lambda: describe_items(FrameCounter(), items, tmp_path, prompt="Say it.",
                                     engine=LocalEngine(fake_loader), run=QUIET)
    folder = key_run().folder
    path = folder / "descriptions.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + lines[2][:9])  # a run killed while writing its third line
    summary = key_run()
    assert (summary.skipped_cached, summary.done) == (2, 2)
    records = read_lines(path)
    assert sorted(r["id"] for r in records) == [0, 1, 2, 3] and len(records) == 4


def test_batches_concurrency_and_background_loading(tmp_path):
    loaded = threading.Condition()
    loader_threads, count = set(), [0]

    def loader(item, fps):
        loader_threads.add(threading.current_thread().name)
        with loaded:
            count[0] += 1
            loaded.notify_all()
        return [None], (0.0,), True

    class Gated(FrameCounter):
        def __init__(self):
            super().__init__(max_batch_size=4, max_concurrency=2)
            self.barrier = threading.Barrier(2, timeout=5)
            self.lock, self.calls, self.in_flight, self.peak = threading.Lock(), 0, 0, 0
            self.loaded_during_first_call = False

        def describe(self, requests):
            with self.lock:
                call, self.calls = self.calls, self.calls + 1
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            if call == 0:  # frames keep loading while the model is busy
                with loaded:
                    self.loaded_during_first_call = loaded.wait_for(lambda: count[0] >= len(requests) + 3, 5)
            if call < 2:
                self.barrier.wait()  # the first two calls are in flight together
            out = super().describe(requests)
            with self.lock:
                self.in_flight -= 1
            return out

    d = Gated()
    s = describe_items(d, [Item(i, Path(f"{i}.mp4")) for i in range(11)], tmp_path, prompt="Say it.",
                       engine=LocalEngine(loader), run=QUIET)
    assert (s.done, s.failed) == (11, 0)
    assert d.loaded_during_first_call and d.peak == 2
    assert max(len(b) for b in d.batches) == 4 and sorted(sum(d.batches, [])) == list(range(11))
    assert loader_threads and all(n.startswith("sova-load") for n in loader_threads)


def test_items_loaded_in_one_wait_go_to_the_model_in_their_own_order(tmp_path):
    """One loader thread and a model slower than it: several loads finish while a call is out, and the items still
    reach the model in the order given (not in the order of a set of finished futures)."""

    class Slow(FrameCounter):
        def describe(self, requests):
            time.sleep(0.005)
            return super().describe(requests)

    d = Slow()
    s = describe_items(d, [Item(i, Path(f"{i}.mp4")) for i in range(60)], tmp_path, prompt="Say it.",
                       engine=LocalEngine(fake_loader, load_workers=1, prefetch=4), run=QUIET)
    assert (s.done, s.failed) == (60, 0)
    assert sum(d.batches, []) == list(range(60))


def test_a_failing_batch_is_retried_item_by_item(tmp_path):
    class Picky(FrameCounter):
        def describe(self, requests):
            if any(r.id == 3 for r in requests):
                raise RuntimeError("cannot describe item 3")
            return super().describe(requests)

    s = describe_items(Picky(max_batch_size=4), [Item(i, Path(f"{i}.mp4")) for i in range(8)], tmp_path,
                       prompt="Say it.", engine=LocalEngine(fake_loader), run=QUIET)
    assert (s.done, s.failed) == (7, 1)
    assert s.failures == {3: "RuntimeError: cannot describe item 3"}


def test_bad_input_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="item id 1 appears twice"):
        describe_items(FrameCounter(), [Item(1, Path("a.mp4")), Item(1, Path("b.mp4"))], tmp_path,
                       prompt="Say it.", engine=LocalEngine(fake_loader), run=QUIET)

    class Leaky(FrameCounter):
        def config(self):
            return {"model": "m", "api_key": "sk-should-never-be-written"}

    with pytest.raises(ValueError, match="secrets must never be written"):
        describe_items(Leaky(), [Item(1, Path("a.mp4"))], tmp_path, prompt="Say it.",
                       engine=LocalEngine(fake_loader), run=QUIET)
    # the engine's own loading options reach a run only through the engine
    assert not {f.name for f in dataclasses.fields(LocalEngine)} & set(inspect.signature(describe_items).parameters)
    assert not (tmp_path / "descriptions").exists()


def test_the_local_engine_yields_one_outcome_per_item():
    """``LocalEngine.outcomes``: a text per described item, a failed load and a reason known before loading as
    unloaded errors, what loading learned in ``run_info``; no work starts nothing, not even ``load()``."""

    class Loading(FrameCounter):
        def load(self):
            self.device = "cpu:0"

        def run_info(self):
            return {"device": getattr(self, "device", None)}

    def loader(item, fps):
        if item.id == "gone":
            raise FileNotFoundError("no such file: gone.mp4")
        return fake_loader(item, fps)

    describer, prompt, info = Loading(), resolve_prompt("Say it."), {"batch_size": 1}
    assert list(LocalEngine(loader).outcomes(describer, [], 1.0, prompt, info)) == []
    assert not hasattr(describer, "device") and info == {"batch_size": 1}
    items = [Item("a", Path("a.mp4")), Item("gone", Path("gone.mp4")), Item("planned", Path("p.mp4"), error="no region")]
    outcomes = list(LocalEngine(loader, load_workers=1).outcomes(describer, items, 1.0, prompt, info))
    assert sorted(outcomes, key=lambda o: o.id) == [
        Outcome("a", "Say it. | frames: 3 | video: True | system: None"),
        Outcome("gone", None, "FileNotFoundError: no such file: gone.mp4", loaded=False),
        Outcome("planned", None, "no region", loaded=False)]
    assert info == {"batch_size": 1, "device": "cpu:0"} and describer.batches == [["a"]]


SLOW_RUN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from sova_lib.describe.item import Item
    from sova_lib.describe.runner import LocalEngine, RunOptions, describe_items

    class Slow:
        name, max_batch_size, max_concurrency = "slow", 1, 2
        def config(self):
            return {"model": "slow-fake"}
        def describe(self, requests):
            time.sleep(0.02)
            return [f"text of {r.id}" for r in requests]

    describe_items(Slow(), [Item(i, Path(f"{i}.mp4")) for i in range(int(sys.argv[2]))], sys.argv[1],
                   prompt="Say it.", engine=LocalEngine(lambda item, fps: ([None], (0.0,), True)),
                   run=RunOptions(sync_every=0.05, show_progress=False, verbose=False))
""")


def test_a_run_killed_with_sigkill_resumes_with_one_line_per_item(tmp_path):
    n = 120
    script = tmp_path / "slow_run.py"
    script.write_text(SLOW_RUN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "cache"), str(n)], env=env)
    folder = None
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = list((tmp_path / "cache").glob("descriptions/*/descriptions.jsonl"))
            if found and found[0].read_text().count("\n") >= 10:
                folder = found[0].parent
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL and folder is not None
    before = (folder / "descriptions.jsonl").read_text().count("\n")
    assert 10 <= before < n

    exec_globals = {}
    exec(compile(SLOW_RUN.split("describe_items(Slow()")[0], "slow", "exec"), exec_globals)
    summary = describe_items(exec_globals["Slow"](), [Item(i, Path(f"{i}.mp4")) for i in range(n)],
                             tmp_path / "cache", prompt="Say it.", engine=LocalEngine(fake_loader), run=QUIET)
    assert summary.folder == folder and summary.skipped_cached >= before
    records = read_lines(folder / "descriptions.jsonl")
    assert sorted(r["id"] for r in records) == list(range(n))
    assert all(r["text"] == f"text of {r['id']}" for r in records)
    assert (folder / "descriptions.jsonl").read_bytes().endswith(b"\n")


def test_a_run_with_nothing_to_do_leaves_the_manifest_alone(tmp_path):
    from sova_lib.describe.item import Item
    from sova_lib.describe.runner import describe_items

    class Echo:
        name, max_batch_size, max_concurrency = "echo", 1, 1

        def config(self):
            return {"model": "echo"}

        def describe(self, requests):
            return [f"frames: {len(r.frames)}" for r in requests]

    from PIL import Image

    image = tmp_path / "a.png"
    Image.new("RGB", (8, 8)).save(image)
    items = [Item("a", image)]
    first = describe_items(Echo(), items, tmp_path / "cache", prompt="Describe the image.", fps=1.0,
                           run=RunOptions(show_progress=False))
    manifest = next((tmp_path / "cache" / "descriptions").glob("*/manifest.json"))
    before = manifest.read_text()
    again = describe_items(Echo(), items, tmp_path / "cache", prompt="Describe the image.", fps=1.0,
                           run=RunOptions(show_progress=False))
    assert first.done == 1 and again.done == 0 and again.skipped_cached == 1
    assert manifest.read_text() == before
