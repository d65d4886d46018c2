"""Video names of the four video tasks' TSVs, read as the harness's loaders read them.

``vantage_temporal.py:313`` appends ``.mp4`` to the bare stem ``run_lmudata.py:908-909`` stores; ``vantage_vqa.py:
430-431`` and ``vantage_dvc.py:154`` append it when it is missing; ``vantage_event_verification.py:139`` takes the
name as given. Each case below is that rule applied by hand.
"""
import json
import shutil

import pytest

from sova_lib.benchmarks.vantage.inputs import read_items, video_file
from sova_lib.benchmarks.vantage.run import describe_task, load_media
from sova_lib.benchmarks.vantage.synthetic import RuleBasedStandIn
from sova_lib.cli import main
from sova_lib.describe import contract
from sova_lib.describe.run_cache import RunOptions
from sova_lib.video.frames import example_videos

QUIET = RunOptions(show_progress=False, verbose=False)


@pytest.mark.parametrize(("task", "name", "file"), [
    ("temporal", "clip", "clip.mp4"),
    ("temporal", "clip.mp4", "clip.mp4.mp4"),  # the stem is stored bare; a name with .mp4 is one more stem
    ("temporal", "/abs/clip", "/abs/clip.mp4"),
    ("vqa", "clip", "clip.mp4"),
    ("vqa", "clip.mp4", "clip.mp4"),
    ("vqa", "clip.avi", "clip.avi.mp4"),
    ("dvc", "clip", "clip.mp4"),
    ("dvc", "clip.mp4", "clip.mp4"),
    ("event_verification", "clip.mp4", "clip.mp4"),
    ("event_verification", "clip", "clip"),
])
def test_video_file_follows_each_loader(task, name, file):
    assert video_file(task, name) == file


def test_video_file_refuses_an_image_task():
    with pytest.raises(ValueError, match="task 'refex' has no video"):
        video_file("refex", "a.jpg")


def _tsv(path, names):
    """A temporal TSV as ``run_lmudata.py:942`` writes it: ``index, video, question``."""
    rows = ["index\tvideo\tquestion"] + [f"{k}\t{name}\tWhen do people walk?" for k, name in enumerate(names)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_temporal_tsv_of_bare_stems_is_described(tmp_path):
    videos = example_videos()
    tsv = _tsv(tmp_path / "VANTAGE_Temporal.tsv", [v.stem for v in videos])
    items = read_items("temporal", tsv)
    assert [it.media for it in items] == [(v.stem,) for v in videos]
    frames, _, is_video = load_media(items[0], videos[0].parent, 3)
    assert is_video and len(frames) == 3
    summary = describe_task(RuleBasedStandIn(), "temporal", items, tmp_path / "cache", media_root=videos[0].parent,
                            run=QUIET)
    assert summary.done == 3 and summary.failed == 0


def test_a_temporal_name_with_mp4_is_looked_for_as_the_harness_does(tmp_path):
    video = example_videos()[0]
    items = read_items("temporal", _tsv(tmp_path / "t.tsv", [video.name]))
    with pytest.raises(FileNotFoundError) as err:
        load_media(items[0], video.parent)
    assert str(err.value) == (f"no such video: {video.parent / (video.name + '.mp4')} (a temporal TSV names each "
                              "video by its bare stem: the harness appends .mp4, vantage_temporal.py:313)")


def test_describe_and_submit_a_temporal_tsv_of_bare_stems(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(contract.DESCRIBERS, "stand-in", "sova_lib.benchmarks.vantage.synthetic:RuleBasedStandIn")
    videos = example_videos()
    root = tmp_path / "VANTAGE_Temporal"
    (root / "videos").mkdir(parents=True)
    for v in videos:
        shutil.copyfile(v, root / "videos" / v.name)
    tsv = _tsv(root / "VANTAGE_Temporal.tsv", [v.stem for v in videos])
    out = tmp_path / "temporal.jsonl"
    assert main(["vantage", "describe", "--task", "temporal", "--items", str(tsv), "--media-root",
                 str(root / "videos"), "--backend", "stand-in", "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"submission: {out} (3 of 3 items)"
    ids = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert ids == [f"{v.stem}__tg_{k:06d}" for k, v in enumerate(videos)]
    folder, = (tmp_path / "cache" / "descriptions").iterdir()
    again = tmp_path / "again.jsonl"
    assert main(["vantage", "submit", "--task", "temporal", "--items", str(tsv), "--answers", str(folder),
                 "--model", "stand-in", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
