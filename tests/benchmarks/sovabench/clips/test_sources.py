"""Tests of the source-video list (sova_lib.benchmarks.sovabench.clips.sources, sova sovabench clips sources) and
of the per-dataset summaries of clips plan and clips extract."""
from __future__ import annotations

import csv
import json

import pytest

from sova_lib.benchmarks.sovabench.clips import extract as clip_extract
from sova_lib.benchmarks.sovabench.clips import plan as clip_plan
from sova_lib.benchmarks.sovabench.clips import sources
from sova_lib.benchmarks.sovabench.splits import DATA_DIR, load_split, read_tsv
from sova_lib.cli import main
from tests.helpers_video import numbered_frames, write_video

SAMPLE = DATA_DIR / "meva-annotations-sample"
G506 = "2018-03-05.13-15-00.13-20-00.bus.G506.r13"
G424 = "2018-03-11.17-25-02.17-30-02.school.G424.r13"
VIRAT = "VIRAT_S_000007"
HEADER = "subdim\tprefix\tvideo\tsuffix\tdim\ttask_type\tnegative\tpositive\tindex\n"


def write_tsv(path, names):
    """A SOVABench-format TSV of clips ``names`` (all 'turning left'), indices 0, 1, ..."""
    path.write_text(HEADER + "".join(f"turning left\tp\t{n}\t.mp4\tvehicle\tretrieval\tturning right\tturning left\t{k}\n"
                                     for k, n in enumerate(names)))
    return path


def test_the_key_of_a_known_meva_video():
    assert sources.meva_key(G506) == "drops-123-r13/2018-03-05/13/2018-03-05.13-15-00.13-20-00.bus.G506.r13.avi"
    # the hour folder is the start's hour, as the annotation repository files the same video
    assert sources.meva_key("2018-03-15.15-50-06.15-55-06.hospital.G341.r13") == \
        "drops-123-r13/2018-03-15/15/2018-03-15.15-50-06.15-55-06.hospital.G341.r13.avi"
    assert list(SAMPLE.rglob("2018-03-15.15-50-06.15-55-06.hospital.G341.activities.yml"))[0].parent.parts[-2:] == \
        ("2018-03-15", "15")
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        sources.meva_key("VIRAT_S_000007")


def _by_hand(split: str):
    """Source video -> (dataset, rows, last end frame + 1), read from the packaged TSV with the csv module."""
    out = {}
    with open(DATA_DIR / f"sovabench_{split}.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            video, activity, a, b = row["video"].rsplit(".", 3)
            dataset = "VIRAT" if video.startswith("VIRAT_") else "MEVA"
            _, n, end = out.get(video, (dataset, 0, 0))
            out[video] = (dataset, n + 1, max(end, int(a) + 1, int(b) + 1))
    return out


@pytest.mark.parametrize("split, counts", [
    ("interpair", {"MEVA": (564, 9428), "VIRAT": (44, 454)}),
    ("intrapair", {"MEVA": (219, 1728), "VIRAT": (44, 572)}),
])
def test_sources_of_the_packaged_protocols_with_the_annotation_sample(split, counts):
    listed = sources.list_sources(load_split(split), SAMPLE)
    for dataset, (videos, rows) in counts.items():
        group = [s for s in listed if s.dataset == dataset]
        assert (len(group), sum(s.rows for s in group)) == (videos, rows)
    hand = _by_hand(split)
    assert {s.source_video: (s.dataset, s.rows, s.frames_needed) for s in listed} == hand
    assert [s.source_video for s in listed] == sorted(hand, key=lambda v: (v.startswith("VIRAT_"), v))
    annotated = sorted(s.source_video for s in listed if s.annotations)
    assert annotated == sorted(f"{p.name[:-len('.activities.yml')]}.r13" for p in SAMPLE.rglob("*.activities.yml"))
    assert len(annotated) == 4 and all(s.video_status == "not looked for" for s in listed)
    g506 = next(s for s in listed if s.source_video == G506)
    assert g506.location == sources.meva_key(G506) and g506.annotations.endswith(
        "kitware-meva-training/2018-03-05/13/2018-03-05.13-15-00.13-20-00.bus.G506.activities.yml")
    virat = next(s for s in listed if s.source_video == VIRAT)
    assert virat.location == sources.VIRAT_WHERE and virat.url_key is None and virat.annotations == ""


def test_videos_on_disk_are_found_and_checked(tmp_path):
    root = tmp_path / "videos"
    (root / "deep").mkdir(parents=True)
    write_video(root / "deep" / f"{G506}.avi", numbered_frames(30, 64, 48), 30.0)  # the rows need 21 frames
    write_video(root / f"{G424}.avi", numbered_frames(12, 64, 48), 30.0)  # too short
    write_video(root / "VIRAT_S_000008.mp4", numbered_frames(30, 64, 48), 25.0)  # wrong rate
    (root / f"{VIRAT}.mp4").write_bytes(b"not a video")
    tsv = write_tsv(tmp_path / "t.tsv", [f"{G506}.vehicle_turns_left.5.20", f"{G424}.vehicle_turns_left.3.20",
                                         f"{VIRAT}.vehicle_turns_left.1.2", "VIRAT_S_000008.vehicle_turns_left.1.2",
                                         "2018-03-05.13-15-00.13-20-00.bus.G340.r13.vehicle_turns_left.1.2"])
    listed = sources.list_sources(read_tsv(tsv), None, root)
    got = {s.source_video: (s.video_status, s.frames, s.fps) for s in listed}
    assert got == {
        G506: ("ok", 30, 30.0),
        G424: ("12 frames, the rows need 21", 12, 30.0),
        "2018-03-05.13-15-00.13-20-00.bus.G340.r13": ("missing", None, None),
        VIRAT: (got[VIRAT][0], None, None),
        "VIRAT_S_000008": ("25 frames per second, not 30", 30, 25.0),
    }
    assert got[VIRAT][0].startswith("does not open:")
    assert {s.source_video: s.size for s in listed if s.size} == {G506: "64x48", G424: "64x48", "VIRAT_S_000008": "64x48"}
    lines = sources.summary_lines(listed, annotations=False, videos=True)
    assert lines[:4] == ["MEVA: 3 source videos, 3 rows", "  videos found and usable: 1, missing: 1, unusable: 1",
                         f"    {root / G424}.avi: 12 frames, the rows need 21",
                         "  from s3://mevadata-public-01/drops-123-r13/<date>/<hour>/<name>.avi ('sova sovabench "
                         "clips fetch' downloads them)"]
    assert lines[4:8] == ["VIRAT: 2 source videos, 2 rows", "  videos found and usable: 0, missing: 0, unusable: 2",
                          f"    {root / VIRAT}.mp4: {got[VIRAT][0]}",
                          f"    {root}/VIRAT_S_000008.mp4: 25 frames per second, not 30"]


def test_cli_sources_writes_tsv_or_json_and_exits_0_with_things_missing(tmp_path, capsys):
    out = tmp_path / "sources.tsv"
    assert main(["sovabench", "clips", "sources", "--tsv", "intra-pair", "--annotations", str(SAMPLE),
                 "--video-root", str(tmp_path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == ["MEVA: 219 source videos, 1728 rows", "  annotations found: 4, missing: 215",
                           "  videos found and usable: 0, missing: 219"]
    assert printed[4:7] == ["VIRAT: 44 source videos, 572 rows", "  annotations found: 0, missing: 44",
                            "  videos found and usable: 0, missing: 44"]
    assert "viratannotations" in printed[7] and printed[-1] == f"sources: {out}"
    rows = list(csv.DictReader(open(out, newline=""), delimiter="\t"))
    assert len(rows) == 263 and tuple(rows[0]) == sources.SOURCE_COLUMNS
    assert sum(int(r["rows"]) for r in rows) == 2300 and {r["video_status"] for r in rows} == {"missing"}
    as_json = tmp_path / "sources.json"
    assert main(["sovabench", "clips", "sources", "--tsv", "intra-pair", "--out", str(as_json)]) == 0
    capsys.readouterr()
    records = json.loads(as_json.read_text())
    assert [r["source_video"] for r in records] == [r["source_video"] for r in rows]
    assert records[0]["frames"] is None and records[0]["video_status"] == "not looked for"


def test_plan_summarises_each_dataset_and_names_where_annotations_come_from(tmp_path):
    rows = clip_plan.plan_clips(load_split("intrapair"), SAMPLE, cache_dir=tmp_path)
    lines = clip_plan.summary_lines(rows)
    assert lines[-4:] == [
        "  MEVA: 1728 rows, 80 planned; not planned: annotation_missing 1648",
        "    MEVA annotations: git clone https://gitlab.kitware.com/meva/meva-data-repo.git",
        "  VIRAT: 572 rows, 0 planned; not planned: annotation_missing 572",
        "    VIRAT annotations: git clone https://gitlab.kitware.com/viratdata/viratannotations.git",
    ]


def test_extract_summarises_each_dataset_with_some_videos_missing(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    write_video(videos / f"{G506}.avi", numbered_frames(30, 64, 48), 30.0)
    write_video(videos / f"{VIRAT}.mp4", numbered_frames(30, 64, 48), 30.0)

    def row(k, source, a, b):
        return clip_plan.ManifestRow(k, f"{source}.vehicle_turns_left.{a}.{b}", source, "vehicle_turns_left", a, b,
                                     0, 0, 32, 32, False, "ok")

    rows = [row(0, G506, 2, 6), row(1, G506, 8, 12), row(2, G424, 1, 5), row(3, G424, 6, 9), row(4, VIRAT, 1, 4),
            row(5, "VIRAT_S_000008", 1, 4)]
    s = clip_extract.extract_clips(rows, videos, tmp_path / "clips", codec="mpeg4")
    assert s.by_dataset == {"MEVA": {"written": 2, "skipped": 0, "missing": 2},
                            "VIRAT": {"written": 1, "skipped": 0, "missing": 1}}
    assert s.lines() == [
        "clips written: 3, already present: 0, failed: 3, rows without a clip (status not ok): 0",
        "  MEVA: written 2, already present 0, missing their source video 2",
        "  VIRAT: written 1, already present 0, missing their source video 1",
        "  failed by kind: 3 video missing (2, 3, 5)",  # the first two reasons that differ, one line each
        f"  failed 2 {rows[2].video}: source video {G424} (.avi/.mp4/.mkv/.mov) not found under {videos}",
        f"  failed 5 {rows[5].video}: source video VIRAT_S_000008 (.avi/.mp4/.mkv/.mov) not found under {videos}",
        "  ... and 1 more, each with its reason in extract_log.jsonl",
        "  3 clip(s) miss their source video ('sova sovabench clips sources' lists the videos, 'sova sovabench clips "
        "fetch' downloads MEVA's; each is in extract_log.jsonl)",
    ]
    # the missing video arrives: a rerun writes only what is missing
    write_video(videos / f"{G424}.avi", numbered_frames(30, 64, 48), 30.0)
    s = clip_extract.extract_clips(rows, videos, tmp_path / "clips", codec="mpeg4")
    assert s.by_dataset == {"MEVA": {"written": 2, "skipped": 2, "missing": 0},
                            "VIRAT": {"written": 0, "skipped": 1, "missing": 1}}
    assert sorted(p.stem for p in (tmp_path / "clips").glob("*.mp4")) == sorted(r.video for r in rows[:5])


def test_a_stand_in_smaller_than_its_annotations_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """A 320x176 stand-in of G506, whose annotated boxes reach x 1920 and y 717, is not usable, in one line that
    gives both sizes; a 1920x1080 video of G424 (boxes up to 1919x1079) is; the annotation index is cached where
    clips plan finds it."""
    monkeypatch.setenv("SOVA_KPF_INDEX_DIR", str(tmp_path / "index"))
    root = tmp_path / "videos"
    root.mkdir()
    write_video(root / f"{G506}.avi", numbered_frames(21, 320, 176), 30.0, codec="mpeg4")
    write_video(root / f"{G424}.avi", numbered_frames(21, 1920, 1080), 30.0, codec="mpeg4")
    tsv = write_tsv(tmp_path / "t.tsv", [f"{G506}.vehicle_turns_left.5.20", f"{G424}.vehicle_turns_left.3.20"])
    out = tmp_path / "sources.tsv"
    assert main(["sovabench", "clips", "sources", "--tsv", str(tsv), "--annotations", str(SAMPLE),
                 "--video-root", str(root), "--out", str(out)]) == 0
    refusal = ("the video is 320x176, but its annotated boxes reach 1920x717: it is not the annotated video (a "
               "stand-in or a resized copy?); put the original under --video-root")
    assert capsys.readouterr().out.splitlines()[:4] == [
        "MEVA: 2 source videos, 2 rows", "  annotations found: 2, missing: 0",
        "  videos found and usable: 1, missing: 0, unusable: 1", f"    {root / G506}.avi: {refusal}"]
    listed = {r["source_video"]: r for r in csv.DictReader(open(out, newline=""), delimiter="\t")}
    assert {v: (r["video_status"], r["size"], r["frames"]) for v, r in listed.items()} == {
        G506: (refusal, "320x176", "21"), G424: ("ok", "1920x1080", "21")}
    assert sorted(p.name.rsplit(".", 2)[0] for p in (tmp_path / "index").iterdir()) == sorted(  # <name>.<tag>.json
        n.removesuffix(".r13") for n in (G424, G506))


def test_sources_caches_its_annotation_indexes_where_index_dir_says_or_nowhere(tmp_path, capsys, monkeypatch):
    """``--index-dir`` puts the indexes where ``clips plan --index-dir`` reads them (the same files), ``--no-index``
    writes none; the list is the same either way, and the default folder ($SOVA_KPF_INDEX_DIR) stays empty."""
    monkeypatch.setenv("SOVA_KPF_INDEX_DIR", str(tmp_path / "default"))
    root = tmp_path / "videos"
    root.mkdir()
    write_video(root / f"{G506}.avi", numbered_frames(21, 320, 176), 30.0, codec="mpeg4")
    tsv = write_tsv(tmp_path / "t.tsv", [f"{G506}.vehicle_turns_left.5.20", f"{G424}.vehicle_turns_left.3.20"])
    common = ["sovabench", "clips", "sources", "--tsv", str(tsv), "--annotations", str(SAMPLE), "--video-root",
              str(root)]
    outputs = {}
    for name, flags in {"chosen": ["--index-dir", str(tmp_path / "chosen")], "none": ["--no-index"]}.items():
        assert main([*common, *flags, "--out", str(tmp_path / f"{name}.tsv")]) == 0
        outputs[name] = capsys.readouterr().out.replace(str(tmp_path / f"{name}.tsv"), "OUT")
    assert outputs["chosen"] == outputs["none"] and "unusable: 1" in outputs["none"]
    assert (tmp_path / "chosen.tsv").read_bytes() == (tmp_path / "none.tsv").read_bytes()
    assert not (tmp_path / "default").exists()
    (index,) = (tmp_path / "chosen").iterdir()  # only the video found is checked against its annotations
    assert index.name.rsplit(".", 2)[0] == G506.removesuffix(".r13")
    written = (index.stat().st_ino, index.stat().st_mtime_ns)
    assert main(["sovabench", "clips", "plan", "--tsv", str(tsv), "--annotations", str(SAMPLE), "--index-dir",
                 str(tmp_path / "chosen"), "--out", str(tmp_path / "m.tsv"), "--no-progress"]) == 0
    assert sorted(p.name.rsplit(".", 2)[0] for p in (tmp_path / "chosen").iterdir()) == sorted(
        n.removesuffix(".r13") for n in (G424, G506))
    assert (index.stat().st_ino, index.stat().st_mtime_ns) == written  # plan read the index sources wrote, not rebuilt it
