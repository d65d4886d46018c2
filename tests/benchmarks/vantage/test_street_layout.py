"""The synthetic street benchmark in the harness's LMUData layout, read by a stand-in harness that finds its videos
as the harness's loaders do, through ``sova vantage harness-prompts`` for all four video tasks.

The stand-in (``_LOADERS``) has the harness's module paths and, per class, the harness's rule for the video path and
its ``data_root``: temporal ``data_root/<video>.mp4`` (``vantage_temporal.py:313``), VQA and dense captioning
``data_root/<video>`` with ``.mp4`` appended when missing (``vantage_vqa.py:430-431``, ``vantage_dvc.py:154``),
event verification ``data_root/videos/<video>`` (``vantage_event_verification.py:139``); like the harness, its
message holds frames only when that file exists. Its text names the path it opened, so each record says which file
the harness would read.
"""
import csv
import json
import sys
import textwrap

import pytest

from sova_lib.benchmarks.vantage.inputs import LMU_DATASETS, TSV_COLUMNS, read_items
from sova_lib.benchmarks.vantage.synthetic import write_street_benchmark
from sova_lib.cli import main
from sova_lib.describe import contract
from sova_lib.video.frames import example_videos, probe
from tests.vantage_harness import harness_packages

_BASE = '''
import os


class StandIn:
    def __init__(self, dataset=None, nframe=0, fps=-1, total_pixels=None, max_pixels=None, max_frames=None,
                 custom_prompt=None):
        raise AssertionError("the harness's __init__ is never run")

    def build_prompt(self, line, video_llm=True):
        path = self.video_path(line)
        text = dict(type="text", value=f"<{type(self).__name__} {line['index']} {path}>")
        if not os.path.exists(path):
            return [text]
        if video_llm:
            return [dict(type="video", value=path, nframes=self.nframe), text]
        frames = self.save_video_frames(self.frames_of(line, path))
        return [*(dict(type="image", value=f) for f in frames), dict(type="text", value=f"<{len(frames)} frames>"), text]

    def frames_of(self, line, path):
        return line["video"]
'''

_LOADERS = {
    "vantage_temporal": ("VANTAGE_Temporal", "return os.path.join(self.data_root, str(line['video']) + '.mp4')"),
    "vantage_vqa": ("VANTAGE_VQA", "name = str(line['video'])\n"
                                   "return os.path.join(self.data_root, name if name.endswith('.mp4') else name + '.mp4')"),
    "vantage_dvc": ("VANTAGE_DVC", "return os.path.join(self.data_root, str(line['video']).removesuffix('.mp4') + '.mp4')"),
    "vantage_event_verification": ("VANTAGE_EventVerification",
                                   "return os.path.join(self.data_root, 'videos', str(line['video']))"),
}


def _stand_in_harness(folder):
    harness_packages(folder)
    (folder / "vlmeval/dataset/stand_in.py").write_text(textwrap.dedent(_BASE))
    for module, (name, body) in _LOADERS.items():
        extra = ("    def frames_of(self, line, path):\n        return path[:-4]\n\n"  # the path, less .mp4 (l. 168)
                 if module == "vantage_event_verification" else "")
        (folder / f"vlmeval/dataset/{module}.py").write_text(
            f"import os\n\nfrom vlmeval.dataset.stand_in import StandIn\n\n\nclass {name}(StandIn):\n"
            f"    def video_path(self, line):\n{textwrap.indent(body, ' ' * 8)}\n\n{extra}")
    return folder


def _forget_harness():
    for name in [m for m in sys.modules if m == "vlmeval" or m.startswith("vlmeval.")]:
        del sys.modules[name]


@pytest.fixture
def harness(tmp_path, monkeypatch):
    """The stand-in checkout, imported afresh (another test's ``vlmeval`` modules forgotten before and after)."""
    monkeypatch.setattr("sys.path", list(sys.path))
    _forget_harness()
    yield _stand_in_harness(tmp_path / "harness")
    _forget_harness()


@pytest.fixture
def street(tmp_path):
    videos = example_videos()
    return videos, write_street_benchmark(tmp_path / "lmu", videos, [probe(v).num_frames / probe(v).fps for v in videos])


def test_the_street_benchmark_is_laid_out_as_run_lmudata_writes_it(street, tmp_path):
    videos, tsvs = street
    for task, tsv in tsvs.items():
        name = LMU_DATASETS[task]
        assert tsv == tmp_path / "lmu" / "datasets" / name / f"{name}.tsv"  # run_lmudata.py:16-19
        assert sorted(p.name for p in (tsv.parent / "videos").iterdir()) == [v.name for v in videos]
        raw = tsv.read_bytes()
        assert b"\r" not in raw  # csv.DictWriter(..., lineterminator="\n"), run_lmudata.py:474-477
        rows = list(csv.reader(raw.decode().splitlines(), delimiter="\t"))
        assert tuple(rows[0]) == TSV_COLUMNS[task] and [r[0] for r in rows[1:]] == [str(k) for k in range(len(rows) - 1)]
        named = [r[1] for r in rows[1:]]
        if task == "temporal":  # the bare stem (run_lmudata.py:908-909)
            assert named == [v.stem for v in videos]
        else:  # the file's name (run_lmudata.py:611, 761, 840)
            assert sorted(set(named)) == [v.name for v in videos]
    vqa = list(csv.DictReader(tsvs["vqa"].read_text().splitlines(), delimiter="\t"))
    assert json.loads(vqa[0]["options"]) == ["pedestrians", "a forklift", "a train", "nothing"]  # bare (l. 632)
    assert vqa[0]["question"] == "Question: What moves through the scene?"
    assert read_items("vqa", tsvs["vqa"])[0].options == ("A. pedestrians", "B. a forklift", "C. a train", "D. nothing")


@pytest.mark.parametrize("video_input", ["frames", "video"])
def test_harness_prompts_reads_every_task_of_the_street_benchmark(street, harness, tmp_path, capsys, video_input):
    videos, tsvs = street
    for task, tsv in tsvs.items():
        out = tmp_path / f"{task}.jsonl"
        assert main(["vantage", "harness-prompts", "--harness", str(harness), "--task", task, "--items", str(tsv),
                     "--model-family", "gpt", "--nframe", "3", "--video-input", video_input, "--out", str(out)]) == 0
        records = [json.loads(x) for x in out.read_text().splitlines()]
        rows = list(csv.DictReader(tsv.read_text().splitlines(), delimiter="\t"))
        assert [r["id"] for r in records] == [r["index"] for r in rows]
        opened = [r["messages"][0]["content"][-1].split(" ", 2)[2][:-1] for r in records]
        stems = [r["video"].removesuffix(".mp4") for r in rows]
        assert opened == [str(tsv.parent / "videos" / f"{stem}.mp4") for stem in stems], task
        assert all(r["media_at"] == 0 and r["frames"] == {"nframe": 3} for r in records)
    capsys.readouterr()


def test_a_temporal_tsv_naming_files_finds_no_video_in_the_harness(street, harness, tmp_path, capsys):
    videos, tsvs = street
    tsv = tsvs["temporal"]
    tsv.write_text(tsv.read_text().replace(videos[0].stem, videos[0].name))
    assert main(["vantage", "harness-prompts", "--harness", str(harness), "--task", "temporal", "--items", str(tsv),
                 "--model-family", "gpt", "--nframe", "3", "--out", str(tmp_path / "t.jsonl")]) == 2
    looked = tsv.parent / "videos" / f"{videos[0].name}.mp4"
    assert capsys.readouterr().err == (
        f"sova: error: item 0: the harness's message holds no video or frames, so the harness found no video at "
        f"{looked}: give as --media-root the folder its prepare_dataset returns as the root\n")


def test_event_verification_takes_the_dataset_folder_as_its_data_root(street, harness, tmp_path, capsys):
    videos, tsvs = street
    tsv = tsvs["event_verification"]
    base = ["vantage", "harness-prompts", "--harness", str(harness), "--task", "event_verification", "--items",
            str(tsv), "--model-family", "gpt", "--nframe", "3", "--out", str(tmp_path / "ev.jsonl")]
    assert main([*base, "--media-root", str(tsv.parent)]) == 0
    capsys.readouterr()
    assert main([*base, "--media-root", str(tsv.parent / "videos")]) == 2  # .../videos/videos/<clip>.mp4
    assert f"found no video at {tsv.parent / 'videos' / 'videos' / videos[0].name}:" in capsys.readouterr().err


def test_harness_prompts_then_describe_the_temporal_task(street, harness, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(contract.DESCRIBERS, "stand-in", "sova_lib.benchmarks.vantage.synthetic:RuleBasedStandIn")
    videos, tsvs = street
    tsv, prompts = tsvs["temporal"], tmp_path / "temporal_prompts.jsonl"
    assert main(["vantage", "harness-prompts", "--harness", str(harness), "--task", "temporal", "--items", str(tsv),
                 "--model-family", "gpt", "--nframe", "4", "--out", str(prompts)]) == 0
    out = tmp_path / "temporal.jsonl"
    assert main(["vantage", "describe", "--task", "temporal", "--items", str(tsv), "--media-root",
                 str(tsv.parent / "videos"), "--prompts", str(prompts), "--backend", "stand-in", "--cache-dir",
                 str(tmp_path / "cache"), "--no-progress", "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"submission: {out} (3 of 3 items)"
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == [
        f"{v.stem}__tg_{k:06d}" for k, v in enumerate(videos)]


def test_vqa_options_already_labelled_stay_as_listed(tmp_path):
    tsv = tmp_path / "vqa.tsv"
    tsv.write_text('index\tvideo\tquestion\toptions\n0\ta.mp4\tQ\t"[""A. x"", ""B. y""]"\n'
                   '1\ta.mp4\tQ\t"[""x"", ""B. y""]"\n')
    assert [it.options for it in read_items("vqa", tsv)] == [("A. x", "B. y"), ("A. x", "B. B. y")]


def test_fps_frames_of_every_task_with_a_relative_media_root(street, harness, tmp_path, monkeypatch, capsys):
    """``--fps 1``: the harness's frame count is ``int(F / f * 1)`` (``video_base.py:94-105``), counted on the file
    the loader hands ``save_video_frames`` (event verification: its own path less ``.mp4``, l. 167-168)."""
    videos, tsvs = street
    monkeypatch.chdir(tmp_path)
    for task, tsv in tsvs.items():
        root = tsv.parent if task == "event_verification" else tsv.parent / "videos"
        out = tmp_path / f"{task}.jsonl"
        assert main(["vantage", "harness-prompts", "--harness", str(harness), "--task", task, "--items", str(tsv),
                     "--media-root", str(root.relative_to(tmp_path)), "--model-family", "gpt", "--fps", "1",
                     "--out", str(out)]) == 0
        records = [json.loads(x) for x in out.read_text().splitlines()]
        rows = list(csv.DictReader(tsv.read_text().splitlines(), delimiter="\t"))
        by_stem = {v.stem: v for v in videos}
        assert len(records) == len(rows)
        for record, row in zip(records, rows):
            stem = row["video"].removesuffix(".mp4")
            info = probe(by_stem[stem])
            counted, opened = record["messages"][0]["content"]
            assert counted == f"<{int(info.num_frames / info.fps * 1)} frames>" and record["frames"] == {"fps": 1}
            assert opened.endswith(f"{stem}.mp4>")
    capsys.readouterr()
