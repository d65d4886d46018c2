"""``--limit``, ``--frames`` and ``--max-frames``: each does what its help says, on every command that has it."""
import argparse
import json

import pytest

from sova_lib.benchmarks.excerpts import example_clips
from sova_lib.cli import build_parser, main
from sova_lib.describe import contract
from sova_lib.video.frames import example_videos

#: vtest_lawn_0600-0659.mp4: 60 frames at 10 fps.
LAWN = next(v for v in example_videos() if v.name.startswith("vtest_lawn"))


class FrameTeller:
    """Answers with the clip frame numbers it was shown (timestamp x 10 fps)."""

    name = "fake-frames"
    max_batch_size, max_concurrency = 1, 1

    def config(self):
        return {"model": "frame-teller"}

    def describe(self, requests):
        return [" ".join(str(round(t * 10)) for t in r.timestamps) for r in requests]


@pytest.fixture(autouse=True)
def fake_backend(monkeypatch):
    monkeypatch.setitem(contract.DESCRIBERS, "fake-frames", f"{__name__}:FrameTeller")


def _describe(tmp_path, *options):
    assert main(["describe", "--backend", "fake-frames", "--videos", str(LAWN), "--cache-dir", str(tmp_path),
                 "--no-progress", *options]) == 0
    folders = sorted((tmp_path / "descriptions").iterdir(), key=lambda f: f.stat().st_mtime)
    folder = folders[-1]
    (line,) = (folder / "descriptions.jsonl").read_text().splitlines()
    return folder, [int(x) for x in json.loads(line)["text"].split()]


@pytest.mark.parametrize("options, frames, name", [
    ([], [0, 10, 20, 30, 39, 49, 59], "-general-1fps__"),  # the paper's sampler: round(60 / 10 * 1) + 1 = 7 frames
    (["--frames", "4"], [0, 20, 39, 59], "-general-4frames__"),  # linspace(0, 59, 4) = 0, 19.67, 39.33, 59
    (["--frames", "1"], [0], "-general-1frames__"),
    (["--max-frames", "3"], [0, 30, 59], "-general-1fps-max3__"),  # 7 frames > 3: 0, 29.5 (to even: 30), 59
    (["--max-frames", "7"], [0, 10, 20, 30, 39, 49, 59], "-general-1fps-max7__"),  # under the cap: the paper's
    (["--fps", "2", "--max-frames", "5"], [0, 15, 30, 44, 59], "-general-2fps-max5__"),  # 13 frames, capped at 5
])
def test_frame_options_show_exactly_these_frames(tmp_path, options, frames, name):
    folder, shown = _describe(tmp_path, *options)
    assert shown == frames and name in folder.name
    manifest = json.loads((folder / "manifest.json").read_text())
    asked = dict(zip(options[::2], options[1::2]))
    assert manifest.get("frames") == (int(asked["--frames"]) if "--frames" in asked else None)
    assert manifest.get("max_frames") == (int(asked["--max-frames"]) if "--max-frames" in asked else None)
    assert manifest["fps"] == (None if "--frames" in asked else float(asked.get("--fps", 1)))
    assert ("frames" in manifest["hash_fields"]) == ("--frames" in asked)


def test_the_papers_default_keeps_its_key(tmp_path):
    """No new option given: the key has no frames fields, so the default's cache folders keep their names."""
    folder, _ = _describe(tmp_path)
    again, _ = _describe(tmp_path, "--fps", "1")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert again == folder and not {"frames", "max_frames"} & set(manifest["hash_fields"])


@pytest.mark.parametrize("options, error", [
    (["--frames", "4", "--fps", "2"], "--frames sets the frame count itself; drop --fps"),
    (["--frames", "4", "--max-frames", "2"], "--frames sets the frame count itself; drop --max-frames"),
    (["--frames", "0"], "argument --frames: 0 is below 1; give 1 or more"),
    (["--max-frames", "-1"], "argument --max-frames: -1 is below 1; give 1 or more"),
    (["--limit", "0"], "argument --limit: 0 is below 1; give 1 or more"),
])
def test_bad_frame_options_are_one_line_exit_2(tmp_path, capsys, options, error):
    assert main(["describe", "--backend", "fake-frames", "--videos", str(LAWN), "--cache-dir", str(tmp_path),
                 "--no-progress", *options]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert error in line


def test_limit_describes_the_first_n_then_the_full_run_the_rest_into_the_same_folder(tmp_path, capsys):
    argv = ["describe", "--backend", "fake-frames", "--protocol", "quickstart-direction", "--cache-dir", str(tmp_path),
            "--no-progress"]
    order = [clip.item().id for clip in example_clips()]
    assert len(order) == 6
    assert main([*argv, "--limit", "2"]) == 0
    (folder,) = (tmp_path / "descriptions").iterdir()
    lines = (folder / "descriptions.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["id"] for x in lines) == sorted(order[:2])  # in the order they finished
    out = capsys.readouterr().out
    assert "described 2, skipped 0" in out and "left out 4 items beyond the limit (--limit)" in out
    assert main([*argv, "--limit", "2"]) == 0  # the same first two: nothing to do
    assert "described 0, skipped 2 (already cached)" in capsys.readouterr().out
    assert main(argv) == 0
    (same,) = (tmp_path / "descriptions").iterdir()
    after = (same / "descriptions.jsonl").read_text().splitlines()
    assert same == folder and after[:2] == lines and sorted(json.loads(x)["id"] for x in after) == sorted(order)
    assert "described 4, skipped 2 (already cached)" in capsys.readouterr().out


def _options(path):
    parser = build_parser(path[0])
    for word in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    parser.filled()  # a verb's options are added when it first parses
    return {flag for action in parser._actions for flag in action.option_strings}


@pytest.mark.parametrize("path, expected", [
    (("describe",), {"--limit", "--fps", "--frames", "--max-frames"}),
    (("sovabench", "describe"), {"--limit", "--fps", "--frames", "--max-frames"}),
    (("muvr", "describe"), {"--limit", "--fps", "--frames", "--max-frames"}),
    (("embed",), {"--limit", "--fps", "--frames", "--max-frames"}),
    (("sovabench", "embed"), {"--limit", "--fps", "--frames", "--max-frames"}),
    (("vantage", "describe"), {"--limit", "--frames"}),  # its own frame plan: a fixed count per video
    (("image-tasks", "describe"), {"--limit"}),  # still images
])
def test_each_command_that_samples_or_runs_has_the_options(path, expected):
    have = _options(path)
    assert expected <= have
    assert not ({"--fps", "--frames", "--max-frames"} - expected) & have


def test_embed_takes_the_same_frames_and_limit(tmp_path):
    from sova_lib.describe.contrastive import read_cache
    from tests.tiny_contrastive import build_tiny_clip

    model = build_tiny_clip(tmp_path / "clip")
    videos = tmp_path / "videos"
    videos.mkdir()
    for video in example_videos():
        (videos / video.name).symlink_to(video)
    argv = ["embed", "--model", str(model), "--videos", str(videos), "--pool", "none", "--frames", "4",
            "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--device", "cpu"]
    assert main([*argv, "--limit", "1"]) == 0
    (folder,) = (tmp_path / "cache" / "frame-embeddings").iterdir()
    first = read_cache(folder)
    assert list(first) == ["vtest_lawn_0600-0659"] and first["vtest_lawn_0600-0659"][1].tolist() == [0, 20, 39, 59]
    assert "-none-4frames__" in folder.name
    assert main(argv) == 0
    found = read_cache(folder)
    assert found["vtest_square_0000-0049_half"][1].tolist() == [0, 16, 33, 49]  # linspace(0, 49, 4), to even
    assert sorted(found) == sorted(v.stem for v in example_videos())


def test_vantage_describe_limit_asks_and_submits_the_first_items(tmp_path, monkeypatch, capsys):
    from sova_lib.benchmarks.vantage.synthetic import write_street_benchmark
    from sova_lib.video.frames import probe

    monkeypatch.setitem(contract.DESCRIBERS, "stand-in", "sova_lib.benchmarks.vantage.synthetic:RuleBasedStandIn")
    tsvs = write_street_benchmark(tmp_path / "bench", [LAWN], [probe(LAWN).num_frames / 10.0])
    argv = ["vantage", "describe", "--task", "event_verification", "--items", str(tsvs["event_verification"]),
            "--media-root", str(LAWN.parent), "--backend", "stand-in", "--cache-dir", str(tmp_path / "cache"),
            "--no-progress"]
    assert main([*argv, "--limit", "1", "--out", str(tmp_path / "one.jsonl")]) == 0
    assert [json.loads(x)["id"] for x in (tmp_path / "one.jsonl").read_text().splitlines()] == [
        "vtest_lawn_0600-0659__ev_000000"]
    assert main([*argv, "--out", str(tmp_path / "all.jsonl")]) == 0
    assert "described 1, skipped 1 (already cached)" in capsys.readouterr().out
    assert [json.loads(x)["id"] for x in (tmp_path / "all.jsonl").read_text().splitlines()] == [
        "vtest_lawn_0600-0659__ev_000000", "vtest_lawn_0600-0659__ev_000001"]


@pytest.mark.parametrize("options, frames, name", [
    (dict(frames=3), [0, 30, 59], "-general-3frames__"),
    (dict(max_frames=4), [0, 20, 39, 59], "-general-1fps-max4__"),  # 7 frames at 1 fps, capped at 4
])
def test_muvr_windows_take_the_same_frame_options(tmp_path, options, frames, name):
    """One 12 s window covers the 6 s clip (frames 0..59): the options apply to each window as to a clip."""
    from sova_lib.benchmarks.muvr.framework import describe_windows
    from sova_lib.describe.run_cache import RunOptions

    (tmp_path / "videos").mkdir()
    (tmp_path / "videos" / "BV1lawn.mp4").symlink_to(LAWN)
    summary = describe_windows(FrameTeller(), ["BV1lawn"], tmp_path / "videos", tmp_path / "cache", prompt="general",
                               run=RunOptions(show_progress=False, verbose=False), **options)
    (line,) = (summary.folder / "descriptions.jsonl").read_text().splitlines()
    assert json.loads(line) == {"id": "BV1lawn@0", "text": " ".join(map(str, frames))}
    assert name in summary.folder.name
