"""Frame embeddings with tiny random CLIP and SigLIP models: sampler frames, pooling, cache, resume, export."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

from sova_lib.describe.contrastive import ContrastiveModel, embed_items, export, read_cache  # noqa: E402
from sova_lib.describe.item import Item  # noqa: E402
from sova_lib.describe.run_cache import RunOptions
from sova_lib.fingerprint import folder_fingerprint  # noqa: E402
from sova_lib.item_vectors import read_embeddings  # noqa: E402
from sova_lib.video import example_videos, probe, sample_frames, sample_indices  # noqa: E402
from tests.tiny_contrastive import build_tiny_clip, build_tiny_siglip, build_tiny_xclip  # noqa: E402

BUILDERS = {"clip": build_tiny_clip, "siglip": build_tiny_siglip}
QUIET = RunOptions(show_progress=False)


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def tiny(request, tmp_path_factory):
    folder = BUILDERS[request.param](tmp_path_factory.mktemp(request.param) / "model")
    return ContrastiveModel(model=str(folder), batch_frames=4)


def _reference_mean(model, path, fps):
    """Mean of get_image_features over the sampler's frames, computed directly with torch."""
    import torch

    frames = sample_frames(path, rate=fps)
    inputs = model.processor(images=list(frames.images), return_tensors="pt")
    with torch.inference_mode():
        out = model.model.get_image_features(pixel_values=inputs["pixel_values"])
    out = out.pooler_output if hasattr(out, "pooler_output") else out
    return out.numpy().mean(axis=0), frames.indices


def test_mean_pool_is_the_mean_over_exactly_the_sampler_frames(tiny, tmp_path):
    videos = example_videos()
    items = [Item(k, p) for k, p in enumerate(videos)]
    summary = embed_items(tiny, items, tmp_path, fps=1.0, pool="mean", run=QUIET)
    assert summary.done == 3 and summary.failed == 0
    found = read_cache(summary.folder)
    for k, path in enumerate(videos):
        expected, indices = _reference_mean(tiny, path, 1.0)
        info = probe(path)
        assert indices.tolist() == sample_indices(info.num_frames, info.fps, 1.0).tolist()
        vectors, frames = found[k]
        assert vectors.shape == (1, expected.size) and frames.tolist() == [-1]
        assert np.abs(vectors[0] - expected).max() < 1e-5
    assert summary.frames == sum(len(sample_indices(probe(p).num_frames, probe(p).fps, 1.0)) for p in videos)


def test_pool_none_keeps_one_vector_per_sampled_frame(tiny, tmp_path):
    path = example_videos()[1]
    summary = embed_items(tiny, [Item("square", path)], tmp_path, fps=2.0, pool="none", run=QUIET)
    vectors, frames = read_cache(summary.folder)["square"]
    info = probe(path)
    expected = sample_indices(info.num_frames, info.fps, 2.0)
    assert frames.tolist() == expected.tolist() and len(vectors) == len(expected) == 11
    direct = tiny.image_features(list(sample_frames(path, rate=2.0).images))
    np.testing.assert_allclose(vectors, direct, atol=1e-5)


def _images(folder: Path, n: int) -> list[Item]:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    items = []
    for k in range(n):
        path = folder / f"{k:03d}.png"
        Image.fromarray(rng.integers(0, 256, (24, 30, 3), dtype=np.uint8)).save(path)
        items.append(Item(k, path))
    return items


def test_resume_skips_finished_items_and_export_round_trips(tiny, tmp_path):
    items = _images(tmp_path / "img", 7)
    first = embed_items(tiny, items[:4], tmp_path / "cache", pool="mean", flush_items=2, run=QUIET)
    second = embed_items(tiny, items, tmp_path / "cache", pool="mean", flush_items=2, run=QUIET)
    assert (first.done, second.done, second.skipped) == (4, 3, 4) and first.folder == second.folder
    out = export(second.folder, tmp_path / "vectors.npz")
    back = read_embeddings(out)
    assert back.ids.tolist() == list(range(7)) and back.owner.tolist() == list(range(7))
    direct = tiny.image_features([__import__("PIL.Image").Image.open(i.path).convert("RGB") for i in items])
    np.testing.assert_allclose(back.vectors, direct / np.linalg.norm(direct, axis=1, keepdims=True), atol=1e-5)
    manifest = json.loads((second.folder / "manifest.json").read_text())
    assert manifest["counts"] == {"done": 7, "failed": 0} and manifest["pool"] == "mean" and manifest["fps"] == 1.0
    assert manifest["schema"] == 1 and manifest["backend"] == "contrastive" and manifest["source"] == "run"
    assert manifest["model"] == Path(tiny.path).name == "model" and manifest["last_run"]["skipped"] == 4


def test_export_of_frame_sets_keeps_the_owner(tiny, tmp_path):
    videos = example_videos()[:2]
    summary = embed_items(tiny, [Item(10 + k, p) for k, p in enumerate(videos)], tmp_path, pool="none",
                          run=QUIET)
    back = read_embeddings(export(summary.folder, tmp_path / "frames.npz"))
    counts = [len(sample_indices(probe(p).num_frames, probe(p).fps, 1.0)) for p in videos]
    assert back.ids.tolist() == [10, 11] and np.bincount(back.owner).tolist() == counts
    with pytest.raises(KeyError, match="1 id"):
        export(summary.folder, tmp_path / "x.npz", ids=[10, 99])


def test_unreadable_and_missing_images_are_recorded_and_the_run_goes_on(tiny, tmp_path):
    items = _images(tmp_path / "img", 2)
    broken = tmp_path / "img" / "broken.jpg"
    broken.write_bytes(b"this is not a JPEG")
    items += [Item("broken", broken), Item("gone", tmp_path / "img" / "gone.png")]
    summary = embed_items(tiny, items, tmp_path / "cache", run=QUIET)
    assert (summary.done, summary.failed) == (2, 2)
    assert "broken.jpg" in summary.failures["broken"] and "no such file" in summary.failures["gone"]
    lines = [json.loads(x) for x in (summary.folder / "errors.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == ["broken", "gone"]
    again = embed_items(tiny, items, tmp_path / "cache", run=QUIET)
    assert (again.done, again.skipped) == (0, 4)



def test_run_options_retry_the_failures_once_repaired(tiny, tmp_path):
    from PIL import Image

    items = _images(tmp_path / "img", 1) + [Item("late", tmp_path / "img" / "late.png")]
    first = embed_items(tiny, items, tmp_path / "cache", run=QUIET)
    assert (first.done, first.failed) == (1, 1)
    Image.new("RGB", (32, 32), (10, 200, 10)).save(tmp_path / "img" / "late.png")
    kept = embed_items(tiny, items, tmp_path / "cache", run=QUIET)
    assert (kept.done, kept.skipped_cached, kept.skipped_failed) == (0, 1, 1)  # failures not retried by default
    retried = embed_items(tiny, items, tmp_path / "cache", run=RunOptions(retry_errors=True, show_progress=False))
    assert (retried.done, retried.skipped_cached, retried.total_done, retried.total_failed) == (1, 1, 2, 0)

def test_one_model_folder_spelled_four_ways_is_one_key_and_one_folder_on_any_machine(tmp_path, monkeypatch):
    """Absolute, relative, with a trailing slash, through a symbolic link: one key, one folder, one manifest; the
    key holds the folder's name and content, not its path, so the same weights elsewhere share it."""
    from sova_lib.describe.contrastive.model import planned_config
    from sova_lib.describe.contrastive.store import embedding_folder, embedding_key

    model = build_tiny_clip(tmp_path / "models" / "tiny-clip")
    (tmp_path / "link").symlink_to(model)
    monkeypatch.chdir(tmp_path)
    spellings = [str(model), "models/tiny-clip", str(model) + "/", "link"]
    configs = [planned_config(spelling)[0] for spelling in spellings]
    assert [c["model"] for c in configs] == ["tiny-clip"] * 4
    assert configs[0]["identity"] == folder_fingerprint(model)
    elsewhere = tmp_path / "other-machine" / "tiny-clip"
    shutil.copytree(model, elsewhere)
    assert planned_config(str(elsewhere))[0] == configs[0]
    folders = {embedding_folder(tmp_path / "cache", embedding_key(c, 1.0, "mean")) for c in configs}
    assert [f.name.split("__")[0] for f in folders] == ["tiny-clip-mean-1fps"]
    summary = embed_items(ContrastiveModel(model="link/"), _images(tmp_path / "img", 1), tmp_path / "cache", run=QUIET)
    assert {summary.folder} == folders
    assert json.loads((summary.folder / "manifest.json").read_text())["model"] == "tiny-clip"


def test_settings_and_weights_name_different_folders(tmp_path):
    a = ContrastiveModel(model=str(build_tiny_clip(tmp_path / "a", seed=0)))
    b = ContrastiveModel(model=str(build_tiny_clip(tmp_path / "b", seed=1)))
    assert a.config()["identity"] == folder_fingerprint(tmp_path / "a")
    items = _images(tmp_path / "img", 1)
    folders = {embed_items(m, items, tmp_path / "cache", fps=fps, pool=pool, run=QUIET).folder
               for m, fps, pool in [(a, 1, "mean"), (b, 1, "mean"), (a, 2, "mean"), (a, 1, "none")]}
    assert len(folders) == 4
    again = ContrastiveModel(model=str(build_tiny_clip(tmp_path / "a", seed=2)))  # the same folder, rebuilt in place
    rebuilt = embed_items(again, items, tmp_path / "cache", run=QUIET)
    assert rebuilt.folder not in folders and (rebuilt.done, rebuilt.skipped_cached) == (1, 0)


_CHILD = """
import time
from pathlib import Path
from sova_lib.describe.contrastive import ContrastiveModel, embed_items
from sova_lib.describe.item import Item
from sova_lib.describe.runner import RunOptions
model = ContrastiveModel(model={model!r}, batch_frames=1)
real = model.image_features
def slow(images):
    time.sleep(0.05)
    return real(images)
model.image_features = slow
items = [Item(k, Path({images!r}) / f"{{k:03d}}.png") for k in range({n})]
embed_items(model, items, {cache!r}, flush_items=1, load_workers=1, run=RunOptions(show_progress=False))
"""


def test_kill_9_mid_run_then_resume_gives_one_entry_per_item(tmp_path):
    model = build_tiny_clip(tmp_path / "model")
    n = 60
    _images(tmp_path / "img", n)
    script = _CHILD.format(model=str(model), images=str(tmp_path / "img"),
                           n=n, cache=str(tmp_path / "cache"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if len([p for p in (tmp_path / "cache").rglob("shard-*.npz") if not p.name.endswith(".tmp.npz")]) >= 5:
            break
        time.sleep(0.01)
    assert child.poll() is None, "the run ended before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    folder = next((tmp_path / "cache" / "frame-embeddings").iterdir())
    before = read_cache(folder)
    assert 5 <= len(before) < n
    summary = embed_items(ContrastiveModel(model=str(model)), [Item(k, tmp_path / "img" / f"{k:03d}.png") for k in range(n)],
                          tmp_path / "cache", run=QUIET)
    assert summary.folder == folder and summary.skipped == len(before) and summary.done == n - len(before)
    ids = []
    for shard in folder.glob("shard-*.npz"):
        with np.load(shard) as data:
            ids += [json.loads(i) for i in data["ids"].tolist()]
    assert sorted(ids) == list(range(n)) and not list(folder.glob("*.tmp.npz"))


def test_pool_video_uses_get_video_features_on_evenly_spread_sampler_frames(tmp_path):
    import torch

    model = ContrastiveModel(model=str(build_tiny_xclip(tmp_path / "xclip", num_frames=4)))
    path = example_videos()[0]
    summary = embed_items(model, [Item(0, path)], tmp_path / "cache", pool="video", run=QUIET)
    frames = list(sample_frames(path, rate=1.0).images)
    assert len(frames) == 7  # the sampler's frames; the video head takes 4 of them: 0, 2, 4, 6
    inputs = model.processor(videos=[[frames[i] for i in (0, 2, 4, 6)]], return_tensors="pt")
    with torch.inference_mode():
        out = model.model.get_video_features(pixel_values=inputs["pixel_values"])
    expected = (out.pooler_output if hasattr(out, "pooler_output") else out)[0].numpy()
    vectors, frame_ids = read_cache(summary.folder)[0]
    assert frame_ids.tolist() == [-1] and np.abs(vectors[0] - expected).max() < 1e-5
    assert json.loads((summary.folder / "manifest.json").read_text())["describer"]["video_frames"] == 4
    with pytest.raises(ValueError, match="only a video head"):
        embed_items(model, [Item(0, path)], tmp_path / "cache", pool="mean", run=QUIET)
