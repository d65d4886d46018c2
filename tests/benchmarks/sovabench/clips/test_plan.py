"""Tests of clip planning, extraction and statistics (sova_lib.benchmarks.sovabench.clips.plan, sova_lib.benchmarks.sovabench.clips.extract, sova sovabench clips ...)."""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from sova_lib.benchmarks.sovabench.clips import extract as clip_extract
from sova_lib.benchmarks.sovabench.clips import frame_size, kpf
from sova_lib.benchmarks.sovabench.clips import plan as clips
from sova_lib.benchmarks.sovabench.clips import stats as clip_stats
from sova_lib.benchmarks.sovabench.splits import DATA_DIR, Clip, load_split
from sova_lib.cli import main
from sova_lib.crop import clamp
from tests.paths import DATA

SAMPLE = DATA_DIR / "meva-annotations-sample"
VTEST = DATA / "vtest"


# --------------------------------------------------------------------------- planning on real annotations


def _sample_rows():
    names = set(kpf.find_annotation_files(SAMPLE))
    out = []
    for split in ("interpair", "intrapair"):
        out += [c for c in load_split(split) if set(kpf.annotation_names(c.source_video)) & names]
    return out


@functools.lru_cache(maxsize=None)
def _records(path: Path, kind: str) -> list[dict]:
    """The records of a sample KPF file; geom lines (Python-style flow mappings) are read as JSON for speed."""
    if kind != "geom":
        return [yaml.load(line, Loader=yaml.CSafeLoader)[0][kind] for line in open(path)]
    table = str.maketrans({"'": '"'})
    return [json.loads(line[2:].translate(table).replace("True", "true").replace("False", "false"))[kind]
            for line in open(path)]


def _naive_plan(clip: Clip) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """Spec section 6 written out plainly with a YAML parser, frame by frame (an independent check)."""
    base = kpf.annotation_names(clip.source_video)[-1]
    acts = _records(next(SAMPLE.rglob(f"{base}.activities.yml")), "act")
    geoms = _records(next(SAMPLE.rglob(f"{base}.geom.yml")), "geom")
    name = "vehicle_reverses" if clip.activity == "vehicle_drives_forward" else clip.activity
    counted: dict[int, set[int]] = {}
    for a in acts:
        for actor in a.get("actors", []):
            for ts in actor["timespan"]:
                counted.setdefault(actor["id1"], set()).update(range(ts["tsr0"][0], ts["tsr0"][1] + 1))
    (act,) = [a for a in acts if name in a["act2"] and a["timespan"][0]["tsr0"] == [clip.start_frame, clip.end_frame]]
    actors = {x["id1"] for x in act["actors"]}
    x1 = y1 = float("inf")
    x2 = y2 = float("-inf")
    for g in geoms:
        f = g["ts0"]
        if g["id1"] in actors and clip.start_frame <= f < clip.end_frame and f in counted[g["id1"]]:
            a, b, c, d = (int(v) for v in g["g0"].split())
            x1, y1, x2, y2 = min(x1, a), min(y1, b), max(x2, c), max(y2, d)
    start, end = clip.start_frame, clip.end_frame
    if name == "vehicle_starts":
        start = max(0, start - 90)
    if name == "vehicle_stops":
        end += 90
    return (start, end), (x1, y1, x2, y2)


@pytest.fixture(scope="module")
def sample_plan(tmp_path_factory):
    rows = _sample_rows()
    return rows, clips.plan_clips(rows, SAMPLE, cache_dir=tmp_path_factory.mktemp("kpf-index"))


def test_every_sample_row_is_found_with_a_region_of_at_least_112_px(sample_plan):
    rows, planned = sample_plan
    assert len(rows) == 127  # 47 inter-pair + 80 intra-pair rows come from the 4 sample videos
    assert [p.index for p in planned] == [r.index for r in rows]
    assert {p.status for p in planned} == {"ok"}
    assert all(p.x2 - p.x1 >= 112 and p.y2 - p.y1 >= 112 for p in planned)


def test_sample_plan_matches_a_plain_frame_by_frame_computation(sample_plan):
    rows, planned = sample_plan
    cache = {}
    for clip, p in zip(rows, planned):
        key = (clip.source_video, clip.activity, clip.start_frame, clip.end_frame)
        if key not in cache:
            cache[key] = _naive_plan(clip)
        window, region = cache[key]
        assert ((p.start_frame, p.end_frame), p.region) == (window, region), clip.name


def test_parallel_planning_gives_the_same_manifest(sample_plan, tmp_path):
    rows, planned = sample_plan
    assert clips.plan_clips(rows, SAMPLE, cache_dir=tmp_path, workers=2) == planned
    assert len(list(tmp_path.glob("*.json"))) == 4  # one index per video, written by the workers


def test_hand_checked_rows_buffers_and_reversal(sample_plan):
    _, planned = sample_plan
    by_index = {p.index: p for p in planned}
    # G424 vehicle_starts 8657-8725, actor 47: its 69 boxes checked by hand in the geom file
    r = by_index[2156]
    assert (r.activity, r.start_frame, r.end_frame, r.region) == ("vehicle_starts", 8567, 8725, (1612, 605, 1919, 766))
    # G506 vehicle_stops 8779-8844, actor 41: 65 boxes on 8779 <= f < 8844
    r = by_index[779]
    assert (r.activity, r.start_frame, r.end_frame, r.region) == ("vehicle_stops", 8779, 8934, (1516, 133, 1784, 316))
    # driving forward = the vehicle_reverses activity, reversed; same window and region as the reversing clip
    fwd, rev = by_index[781], by_index[775]
    assert fwd.video.endswith("vehicle_drives_forward.4225.4105") and rev.video.endswith("vehicle_reverses.4105.4225")
    assert (fwd.activity, fwd.reversed, rev.reversed) == ("vehicle_reverses", True, False)
    assert (fwd.start_frame, fwd.end_frame, fwd.region) == (rev.start_frame, rev.end_frame, rev.region) == (
        4105, 4225, (1690, 90, 1907, 207))
    # a region that passes the 1920 px frame edge is kept as annotated
    assert by_index[780].x2 == 1920
    # the start/stop buffers apply to every start/stop row, and only to them
    for p in planned:
        a, b = (int(v) for v in p.video.rsplit(".", 2)[1:])
        a, b = min(a, b), max(a, b)
        assert (p.start_frame, p.end_frame) == {"vehicle_starts": (max(0, a - 90), b),
                                                "vehicle_stops": (a, b + 90)}.get(p.activity, (a, b))


def _clip(index, name, label="distractor"):
    from sova_lib.benchmarks.sovabench.splits import parse_clip_name

    video, activity, s, e = parse_clip_name(name)
    return Clip(index, name, "VIRAT" if video.startswith("VIRAT_") else "MEVA", video, activity, s, e, label, "")


def test_statuses_for_missing_annotations_absent_activity_and_bad_activities(tmp_path):
    g506 = "2018-03-05.13-15-00.13-20-00.bus.G506"
    rows = [
        _clip(1, f"{g506}.r13.vehicle_stops.8779.8844", "stopping"),
        _clip(2, f"{g506}.r13.vehicle_stops.8779.8845", "stopping"),  # frames differ: not found
        _clip(3, f"{g506}.r13.person_sings.10.20"),  # no such activity
        _clip(4, "VIRAT_S_000001.vehicle_turns_left.5.50", "turning left"),  # no annotation file
    ]
    planned = clips.plan_clips(rows, SAMPLE, cache_dir=tmp_path)
    assert [p.status for p in planned] == ["ok", "activity_not_found", "activity_not_found", "annotation_missing"]
    assert planned[3].region is None and (planned[3].start_frame, planned[3].end_frame) == (5, 50)
    assert planned[1].end_frame == 8845 + 90
    lines = clips.summary_lines(planned)
    assert lines[0] == "4 rows: 1 clips planned" and any("activity_not_found: 2" in x for x in lines)


def test_statuses_no_boxes_too_small_several_timespans_and_virat_names(tmp_path):
    ann = tmp_path / "ann" / "deep" / "folder"
    ann.mkdir(parents=True)
    (ann / "VIRAT_S_000001.activities.yml").write_text("\n".join([
        "- { act: { act2: {vehicle_starting: 1.0}, id2: 0, timespan: [{tsr0: [100, 200]}], "
        "actors: [{id1: 1, timespan: [{tsr0: [100, 200]}]}] } }",
        "- { act: { act2: {Open_Trunk: 1.0}, id2: 1, timespan: [{tsr0: [10, 20]}], "
        "actors: [{id1: 2, timespan: [{tsr0: [10, 20]}]}] } }",
        "- { act: { act2: {Closing: 1.0}, id2: 2, timespan: [{tsr0: [10, 20]}], "
        "actors: [{id1: 3, timespan: [{tsr0: [10, 20]}]}] } }",
        "- { act: { act2: {Loading: 1.0}, id2: 3, timespan: [{tsr0: [10, 20]}, {tsr0: [30, 40]}], "
        "actors: [{id1: 1, timespan: [{tsr0: [10, 40]}]}] } }",
        "- { act: { act2: {Unloading: 1.0}, id2: 4, timespan: [{tsr0: [10, 20]}] } }",
    ]) + "\n")
    geom = [f"- {{ geom: {{id1: 1, ts0: {f}, g0: 0 0 200 112}} }}" for f in range(50, 150)]
    geom += [f"- {{ geom: {{id1: 2, ts0: {f}, g0: 0 0 111 300}} }}" for f in range(10, 21)]
    (ann / "VIRAT_S_000001.geom.yml").write_text("\n".join(geom) + "\n")
    rows = [
        _clip(1, "VIRAT_S_000001.vehicle_starts.100.200", "starting"),
        _clip(2, "VIRAT_S_000001.person_opens_trunk.10.20", "opening trunk"),
        _clip(3, "VIRAT_S_000001.person_closes_vehicle_door.10.20", "closing vehicle door"),
        _clip(4, "VIRAT_S_000001.person_loads_vehicle.10.40", "loading vehicle"),
        _clip(5, "VIRAT_S_000001.person_unloads_vehicle.10.20", "unloading vehicle"),
    ]
    planned = clips.plan_clips(rows, tmp_path / "ann", cache_dir=False)
    assert [p.status for p in planned] == ["ok", "region_too_small", "no_boxes", "several_timespans",
                                           "activity_not_found"]
    assert (planned[0].start_frame, planned[0].end_frame, planned[0].region) == (10, 200, (0, 0, 200, 112))
    assert planned[1].region == (0, 0, 111, 300)
    smaller = clips.plan_clips(rows[1:2], tmp_path / "ann", cache_dir=False, min_size=100, buffer_frames=5)
    assert smaller[0].status == "ok"
    assert clips.plan_clips(rows[:1], tmp_path / "ann", cache_dir=False, buffer_frames=5)[0].start_frame == 95


def test_malformed_annotation_raises_naming_file_and_line(tmp_path):
    (tmp_path / "v.activities.yml").write_text("- { act: { act2: {a: 1.0}, id2: 0, timespan: [{tsr0: [1, 5]}], "
                                               "actors: [{id1: 1, timespan: [{tsr0: [1, 5]}]}] } }\n")
    (tmp_path / "v.geom.yml").write_text("- { geom: {id1: 1, ts0: 1, g0: 0 0 200 200} }\n- { geom: {id1: 1, ts0: 2 }\n")
    with pytest.raises(kpf.KpfError, match=r"v\.geom\.yml, line 2"):
        clips.plan_clips([_clip(1, "v.a.1.5")], tmp_path, cache_dir=False)


# --------------------------------------------------------------------------- manifest


def test_manifest_round_trip_and_errors(tmp_path):
    rows = [clips.ManifestRow(3, "a.x.1.9", "a", "x", 1, 9, 0, 5, 120, 130, False, "ok"),
            clips.ManifestRow(4, "a.y.9.1", "a", "vehicle_reverses", 1, 9, None, None, None, None, True, "no_boxes")]
    path = clips.write_manifest(rows, tmp_path / "sub" / "m.tsv")
    text = path.read_text().splitlines()
    assert text[0].split("\t") == list(clips.MANIFEST_COLUMNS)
    assert text[2] == "4\ta.y.9.1\ta\tvehicle_reverses\t1\t9\t\t\t\t\tTrue\tno_boxes"
    assert clips.read_manifest(path) == rows
    path.write_text("\n".join(text[:2] + [text[2].replace("no_boxes", "lost")]) + "\n")
    with pytest.raises(ValueError, match=r"m\.tsv, line 3: unknown status 'lost'"):
        clips.read_manifest(path)


def test_manifest_frames_args():
    row = clips.ManifestRow(7, "v.vehicle_drives_forward.20.10", "v", "vehicle_reverses", 10, 20, -4, 30, 2000, 90,
                            True, "ok")
    assert clips.manifest_frames_args(row) == {"window": (10, 20), "crop": (-4, 30, 2000, 90), "reverse": True}
    with pytest.raises(ValueError, match="status 'no_boxes'"):
        clips.manifest_frames_args(clips.ManifestRow(8, "v", "v", "a", 1, 2, None, None, None, None, False, "no_boxes"))


# --------------------------------------------------------------------------- statistics


def _stats_manifest():
    R = clips.ManifestRow
    return clip_stats.manifest_frame([
        R(0, "VIRAT_S_1.a.0.29", "VIRAT_S_1", "a", 0, 29, 0, 0, 200, 120, False, "ok"),
        R(1, "m.b.10.69", "m", "b", 10, 69, -10, 50, 1930, 250, False, "ok"),
        R(2, "m.c.0.9", "m", "c", 0, 9, 0, 0, 50, 50, False, "region_too_small"),
        R(3, "VIRAT_S_2.d.5.6", "VIRAT_S_2", "d", 5, 6, None, None, None, None, False, "annotation_missing"),
    ])


def test_durations_and_crop_sizes():
    df = _stats_manifest()
    d = clip_stats.clip_durations(df)
    assert d["index"].tolist() == [0, 1] and d["frames"].tolist() == [30, 60]
    assert d["duration_s"].tolist() == [1.0, 2.0]
    d = clip_stats.clip_durations(df, {"VIRAT": 15.0, "MEVA": 30.0})
    assert d["duration_s"].tolist() == [2.0, 2.0]
    assert clip_stats.clip_durations(df, 60)["duration_s"].tolist() == [0.5, 1.0]
    with pytest.raises(ValueError, match="VIRAT"):
        clip_stats.clip_durations(df, {"MEVA": 30.0})
    s = clip_stats.crop_sizes(df)
    assert s[["width", "height"]].values.tolist() == [[200, 120], [1940, 200]]


def test_counts_per_class_dataset_and_status():
    df = _stats_manifest()
    labelled = [_clip(0, "VIRAT_S_1.a.0.29", "starting"), _clip(1, "m.b.10.69", "starting"),
                _clip(2, "m.c.0.9", "stopping")]
    c = clip_stats.class_counts(df, labelled)
    assert c.values.tolist() == [["starting", 2, 2], ["stopping", 1, 0], ["unknown", 1, 0]]
    assert clip_stats.dataset_counts(df).values.tolist() == [["MEVA", 2, 1], ["VIRAT", 2, 1]]
    st = clip_stats.status_counts(df)
    assert st.values.tolist() == [["ok", 1, 1, 2], ["annotation_missing", 0, 1, 1], ["region_too_small", 1, 0, 1]]
    # default labels come from the packaged splits, by index
    real = clip_stats.manifest_frame([clips.ManifestRow(768, "x", "x", "a", 1, 2, 0, 0, 200, 200, False, "ok")])
    assert clip_stats.class_counts(real).values.tolist() == [["closing trunk", 1, 1]]


# --------------------------------------------------------------------------- extraction, synthetic video

W, H, N, FPS = 160, 120, 60, 25


def _synth_frame(i: int) -> np.ndarray:
    """Red = x, blue = y, green = 4 * frame index; a white 30x24 box at (10 + 2i, 20 + i // 2)."""
    a = np.zeros((H, W, 3), np.uint8)
    a[..., 0] = np.arange(W)[None, :]
    a[..., 2] = np.arange(H)[:, None]
    a[..., 1] = 4 * i
    x0, y0 = 10 + 2 * i, 20 + i // 2
    a[y0:y0 + 24, x0:x0 + 30] = 255
    return a


def _write_lossless(path: Path, frames, fps=FPS):
    import av

    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264rgb", rate=Fraction(fps))
        s.width, s.height, s.pix_fmt, s.options = frames[0].shape[1], frames[0].shape[0], "rgb24", {"crf": "0"}
        for f in frames:
            for p in s.encode(av.VideoFrame.from_ndarray(f, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)


def _decode(path: Path):
    import av

    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return [f.to_ndarray(format="rgb24") for f in c.decode(s)], float(s.average_rate)


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """A lossless synthetic source video with KPF annotations of its moving box, and a plan."""
    root = tmp_path_factory.mktemp("synth")
    (root / "videos" / "cam").mkdir(parents=True)
    _write_lossless(root / "videos" / "cam" / "synth_cam.r13.mp4", [_synth_frame(i) for i in range(N)])
    geom = []
    for i in range(N):
        geom.append(f"- {{ geom: {{id1: 1, ts0: {i}, g0: {10 + 2 * i} {20 + i // 2} {40 + 2 * i} {44 + i // 2}}} }}")
        geom.append(f"- {{ geom: {{id1: 2, ts0: {i}, g0: 100 80 190 130}} }}")  # passes the frame's edge
    acts = [
        "- { act: { act2: {vehicle_reverses: 1.0}, id2: 0, timespan: [{tsr0: [10, 20]}], actors: [{id1: 1, timespan: [{tsr0: [10, 20]}]}] } }",
        "- { act: { act2: {vehicle_starts: 1.0}, id2: 1, timespan: [{tsr0: [30, 40]}], actors: [{id1: 1, timespan: [{tsr0: [30, 40]}]}] } }",
        "- { act: { act2: {vehicle_stops: 1.0}, id2: 2, timespan: [{tsr0: [50, 55]}], actors: [{id1: 1, timespan: [{tsr0: [50, 55]}]}] } }",
        "- { act: { act2: {person_loads_vehicle: 1.0}, id2: 3, timespan: [{tsr0: [0, 5]}], actors: [{id1: 2, timespan: [{tsr0: [0, 5]}]}] } }",
    ]
    (root / "ann").mkdir()
    (root / "ann" / "synth_cam.geom.yml").write_text("\n".join(geom) + "\n")
    (root / "ann" / "synth_cam.activities.yml").write_text("\n".join(acts) + "\n")
    rows = [
        _clip(1, "synth_cam.r13.vehicle_drives_forward.20.10", "driving forward"),
        _clip(2, "synth_cam.r13.vehicle_reverses.10.20", "reversing"),
        _clip(3, "synth_cam.r13.vehicle_starts.30.40", "starting"),
        _clip(4, "synth_cam.r13.vehicle_stops.50.55", "stopping"),
        _clip(5, "synth_cam.r13.person_loads_vehicle.0.5", "loading vehicle"),
        _clip(6, "synth_cam.r13.vehicle_reverses.10.20", "reversing"),  # same clip twice: written once
    ]
    planned = clips.plan_clips(rows, root / "ann", cache_dir=False, min_size=16, buffer_frames=5)
    assert [p.status for p in planned] == ["ok"] * 6
    return root, planned


def _expected(row: clips.ManifestRow) -> list[np.ndarray]:
    x1, y1, x2, y2 = clamp(row.region, W, H)
    frames = [_synth_frame(i)[y1:y2, x1:x2] for i in range(row.start_frame, min(row.end_frame, N - 1) + 1)]
    return frames[::-1] if row.reversed else frames


def test_planned_windows_on_the_synthetic_video(synth):
    _, planned = synth
    assert [(p.start_frame, p.end_frame) for p in planned] == [(10, 20), (10, 20), (25, 40), (50, 60), (0, 5), (10, 20)]
    assert planned[0].region == (30, 25, 78, 53)  # the box over frames 10..19
    assert planned[4].region == (100, 80, 190, 130)


def test_lossless_extraction_is_pixel_exact(synth, tmp_path):
    root, planned = synth
    summary = clip_extract.extract_clips(planned, root / "videos", tmp_path, codec="libx264rgb", crf=0)
    assert (summary.written, summary.skipped, summary.failed, summary.clamped) == (5, 0, 0, 1)
    for row in planned:
        got, fps = _decode(tmp_path / f"{row.video}.mp4")
        want = _expected(row)
        assert fps == FPS and len(got) == len(want), row.video
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    # reversal, trimming and cropping, spelled out for the forward/reverse pair
    fwd, _ = _decode(tmp_path / f"{planned[0].video}.mp4")
    rev, _ = _decode(tmp_path / f"{planned[1].video}.mp4")
    assert len(fwd) == 11 and all((a == b).all() for a, b in zip(fwd, rev[::-1]))
    assert fwd[0][-1, 0, 1] == 4 * 20 and fwd[-1][-1, 0, 1] == 4 * 10  # green encodes the frame index
    assert rev[0][-1, 0].tolist() == [30, 4 * 10, 52]  # red = x1, blue = y2 - 1 of the crop
    assert _decode(tmp_path / f"{planned[4].video}.mp4")[0][0].shape == (40, 60, 3)  # clamped to 160x120
    log = [json.loads(x) for x in (tmp_path / "extract_log.jsonl").read_text().splitlines()]
    stops = next(r for r in log if r["index"] == 4)
    assert stops["window"] == [50, 59] and "clamped" in stops["reason"] and stops["fps"] == FPS


def test_parallel_extraction_over_two_source_videos(synth, tmp_path):
    root, planned = synth
    videos = tmp_path / "videos"
    videos.mkdir()
    shutil.copy(root / "videos" / "cam" / "synth_cam.r13.mp4", videos / "synth_cam.r13.mp4")
    shutil.copy(root / "videos" / "cam" / "synth_cam.r13.mp4", videos / "other_cam.avi.mp4")
    other = [dataclasses.replace(r, video=r.video.replace("synth_cam", "other_cam.avi"), source_video="other_cam.avi")
             for r in planned[:4]]
    s = clip_extract.extract_clips([*planned[:4], *other], videos, tmp_path / "out", codec="libx264rgb", crf=0,
                                   workers=2)
    assert (s.written, s.failed) == (8, 0)  # 4 clips from each source video
    for row in [planned[0], other[2]]:
        got, _ = _decode(tmp_path / "out" / f"{row.video}.mp4")
        want = _expected(row)
        assert len(got) == len(want) and all((g == w).all() for g, w in zip(got, want))


def test_default_h264_extraction_keeps_frames_in_order(synth, tmp_path):
    root, planned = synth
    clip_extract.extract_clips(planned[:1], root / "videos", tmp_path)
    got, fps = _decode(tmp_path / f"{planned[0].video}.mp4")
    want = _expected(planned[0])
    assert fps == FPS and len(got) == len(want) == 11
    assert got[0].shape == (28, 48, 3)
    for k, g in enumerate(got):
        err = [np.abs(g.astype(int) - w.astype(int)).mean() for w in want]
        assert int(np.argmin(err)) == k and err[k] < 3  # a neighbouring frame is off by >= 4 levels


def test_odd_crop_is_evened_for_420_output(synth, tmp_path):
    root, _ = synth
    row = clips.ManifestRow(9, "odd", "synth_cam.r13", "x", 3, 4, 1, 2, 42, 31, False, "ok")
    clip_extract.extract_clips([row], root / "videos", tmp_path)
    assert _decode(tmp_path / "odd.mp4")[0][0].shape == (28, 40, 3)
    clip_extract.extract_clips([row], root / "videos", tmp_path / "rgb", codec="libx264rgb", crf=0)
    got = _decode(tmp_path / "rgb" / "odd.mp4")[0]
    np.testing.assert_array_equal(got[1], _synth_frame(4)[2:31, 1:42])


def test_extraction_resumes_and_records_failures(synth, tmp_path, monkeypatch):
    root, planned = synth
    missing = clips.ManifestRow(20, "nowhere.a.1.2", "nowhere", "a", 1, 2, 0, 0, 50, 50, False, "ok")
    late = clips.ManifestRow(21, "late", "synth_cam.r13", "a", 70, 80, 0, 0, 50, 50, False, "ok")
    skipped = clips.ManifestRow(22, "bad", "synth_cam.r13", "a", 1, 2, None, None, None, None, False, "no_boxes")
    killed = tmp_path / f".{planned[2].video}.mp4.999.0badc0de.tmp"  # a killed run's, two hours old
    killed.write_bytes(b"left by a killed run")
    os.utime(killed, (killed.stat().st_atime - 7200, killed.stat().st_mtime - 7200))
    running = tmp_path / f".{planned[1].video}.mp4.998.0badc0de.tmp"  # another run's, being written now
    running.write_bytes(b"being written")

    real_replace = os.replace

    def flaky_replace(src, dst):
        if Path(dst).name == f"{planned[3].video}.mp4":
            raise OSError("disk full")
        return real_replace(src, dst)

    monkeypatch.setattr(clip_extract.os, "replace", flaky_replace)
    rows = [*planned, missing, late, skipped]
    s = clip_extract.extract_clips(rows, root / "videos", tmp_path, codec="libx264rgb", crf=0)
    assert (s.written, s.failed, s.not_ok) == (4, 3, 1)
    assert {e[0] for e in s.errors} == {4, 20, 21}
    assert not (tmp_path / f"{planned[3].video}.mp4").exists()
    assert sorted(p.name for p in tmp_path.glob(".*")) == [running.name]  # no partial file is left behind
    reasons = {e[0]: e[2] for e in s.errors}
    assert "disk full" in reasons[4] and "not found" in reasons[20] and "has 60 frames" in reasons[21]
    assert {kind: sorted(ids) for kind, ids in s.by_kind.items()} == {"video missing": [20], "write": [4],
                                                                      "video too short": [21]}

    monkeypatch.setattr(clip_extract.os, "replace", real_replace)
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.mp4")}
    s = clip_extract.extract_clips(rows, root / "videos", tmp_path, codec="libx264rgb", crf=0)
    assert (s.written, s.skipped, s.failed) == (1, 4, 2)
    assert all((tmp_path / n).stat().st_mtime_ns == t for n, t in before.items())  # finished clips untouched
    got, _ = _decode(tmp_path / f"{planned[3].video}.mp4")
    assert len(got) == 10
    log = (tmp_path / "extract_log.jsonl").read_text().splitlines()
    assert len(log) == (4 + 3) + (1 + 2)  # one line per clip written or failed, in each run


def test_a_clip_that_fails_to_close_fails_alone(synth, tmp_path, monkeypatch):
    root, planned = synth
    real_replace = os.replace

    def flaky_replace(src, dst):
        if Path(dst).name == f"{planned[0].video}.mp4":  # its window ends at frame 20, as the next clip's does
            raise OSError("disk full")
        return real_replace(src, dst)

    monkeypatch.setattr(clip_extract.os, "replace", flaky_replace)
    s = clip_extract.extract_clips(planned[:4], root / "videos", tmp_path, codec="libx264rgb", crf=0)
    assert (s.written, s.failed) == (3, 1)
    assert s.errors == [(1, planned[0].video, f"StorageError: cannot write {tmp_path / planned[0].video}.mp4: disk full; "
                                              "check the path, its permissions and the disk")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["extract_log.jsonl", *(f"{r.video}.mp4" for r in planned[1:4])])


def test_unknown_encoder_fails_each_clip_and_leaves_no_file(synth, tmp_path):
    root, planned = synth
    s = clip_extract.extract_clips(planned[:2], root / "videos", tmp_path, codec="no_such_codec")
    assert (s.written, s.failed) == (0, 2) and "no_such_codec" in s.errors[0][2]
    assert {kind: sorted(ids) for kind, ids in s.by_kind.items()} == {"encode": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["extract_log.jsonl"]


# --------------------------------------------------------------------------- real footage, end to end


def test_cli_plan_extract_stats_on_real_footage(tmp_path, capsys):
    manifest = tmp_path / "manifest.tsv"
    assert main(["sovabench", "clips", "plan", "--tsv", str(VTEST / "vtest_excerpt.tsv"), "--annotations", str(VTEST),
                 "--out", str(manifest), "--index-dir", str(tmp_path / "idx"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "4 rows: 1 clips planned" in out and "annotation_missing: 1" in out
    rows = clips.read_manifest(manifest)
    assert [r.status for r in rows] == ["ok", "region_too_small", "activity_not_found", "annotation_missing"]
    assert rows[0].region == (426, 159, 665, 320) and (rows[0].start_frame, rows[0].end_frame) == (2, 17)
    assert rows[1].region == (463, 161, 514, 240)

    code = main(["sovabench", "clips", "extract", "--manifest", str(manifest), "--video-root", str(VTEST),
                 "--out", str(tmp_path / "clips"), "--codec", "libx264rgb", "--crf", "0", "--pix-fmt", "rgb24",
                 "--no-progress"])
    assert code == 0
    assert "clips written: 1" in capsys.readouterr().out
    source, src_fps = _decode(VTEST / "vtest_excerpt.avi")
    got, fps = _decode(tmp_path / "clips" / f"{rows[0].video}.mp4")
    assert (len(source), src_fps, fps, len(got)) == (20, 10.0, 10.0, 16)
    for g, i in zip(got, range(2, 18)):
        np.testing.assert_array_equal(g, source[i][159:320, 426:665])

    # the same window reversed, cut from the real footage
    rev = clips.ManifestRow(9, "rev", "vtest_excerpt", "x", 2, 17, 426, 159, 665, 320, True, "ok")
    clip_extract.extract_clips([rev], VTEST, tmp_path / "rev", codec="libx264rgb", crf=0)
    got_rev, _ = _decode(tmp_path / "rev" / "rev.mp4")
    assert len(got_rev) == 16 and all((a == b).all() for a, b in zip(got_rev, got[::-1]))

    assert main(["sovabench", "clips", "stats", "--manifest", str(manifest), "--tsv", str(VTEST / "vtest_excerpt.tsv")]) == 0
    out = capsys.readouterr().out
    assert "distractor     4   1" in out
    assert "0.53" in out  # 16 frames at 30 fps


def test_cli_reports_bad_inputs(tmp_path, capsys):
    assert main(["sovabench", "clips", "plan", "--tsv", str(tmp_path / "none.tsv"), "--annotations", str(VTEST),
                 "--out", str(tmp_path / "m.tsv")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.geom.yml"
    bad.write_text("- { geom: {id1: 1, ts0: 1, g0: 0 0 200} }\n")
    (tmp_path / "bad.activities.yml").write_text("- { act: { act2: {a: 1.0}, id2: 0, timespan: [{tsr0: [1, 5]}], "
                                                 "actors: [{id1: 1, timespan: [{tsr0: [1, 5]}]}] } }\n")
    tsv = tmp_path / "t.tsv"
    tsv.write_text("subdim\tprefix\tvideo\tsuffix\tdim\ttask_type\tnegative\tpositive\tindex\n"
                   "distractor\tp\tbad.a.1.5\t.mp4\tdistractor\tretrieval\td\td\t0\n")
    assert main(["sovabench", "clips", "plan", "--tsv", str(tsv), "--annotations", str(tmp_path), "--out",
                 str(tmp_path / "m.tsv"), "--no-index", "--no-progress"]) == 2
    assert "bad.geom.yml, line 1" in capsys.readouterr().err


def test_a_source_video_smaller_than_its_annotations_fails_its_clips_in_one_reason(synth, tmp_path):
    """Regions planned on a frame four times the size of the synthetic 160x120 video (as a 320x176 stand-in of a
    1920x1080 MEVA video is): every clip of it fails with the sizes, before any is cropped; the planned regions,
    which pass the frame's edge by a few pixels (up to 190 of 160), still fit."""
    root, planned = synth
    assert frame_size.rows_reach(planned) == (190, 130)
    assert frame_size.size_mismatch(W, H, frame_size.rows_reach(planned)) is None
    scaled = [dataclasses.replace(r, x1=4 * r.x1, y1=4 * r.y1, x2=4 * r.x2, y2=4 * r.y2) for r in planned]
    assert frame_size.rows_reach(scaled) == (760, 520)
    s = clip_extract.extract_clips(scaled, root / "videos", tmp_path, codec="libx264rgb", crf=0)
    assert (s.written, s.failed) == (0, 5) and not list(tmp_path.glob("*.mp4"))  # 6 rows, 5 clip names
    assert {e[2] for e in s.errors} == {f"{root / 'videos' / 'cam' / 'synth_cam.r13.mp4'}: the video is 160x120, but "
                                        "its annotated boxes reach 760x520: it is not the annotated video (a stand-in "
                                        "or a resized copy?); put the original under --video-root"}
    assert list(s.by_kind) == ["size mismatch"] and sorted(s.by_kind["size mismatch"]) == [1, 2, 3, 4, 5]
    assert s.lines()[1:3] == ["  failed by kind: 5 size mismatch (5, 1, 2, ...)", f"  failed 5 {scaled[4].video}: "
                              + s.errors[0][2]]  # in the order of their windows; one line for the five
    assert frame_size.size_mismatch(320, 176, (1905, 1070)).startswith("the video is 320x176, but its annotated "
                                                                         "boxes reach 1905x1070")
    assert frame_size.size_mismatch(1920, 1080, (1920, 1072)) is None
    assert frame_size.size_mismatch(100, 100, (125, 125)) is None and frame_size.size_mismatch(100, 100, (126, 1))


def test_a_region_beside_the_frame_fails_alone_as_region_empty(synth, tmp_path):
    """A region that passes the frame's right edge (within SIZE_SLACK: the video is the annotated one) and holds
    no pixel of it: that clip fails, the other is written."""
    root, planned = synth
    beside = dataclasses.replace(planned[1], index=30, video="beside", x1=165, x2=190)
    s = clip_extract.extract_clips([planned[1], beside], root / "videos", tmp_path, codec="libx264rgb", crf=0)
    assert (s.written, s.by_kind) == (1, {"region empty": [30]})
    assert s.errors == [(30, "beside", "ValueError: the region (165, 25, 190, 53) is empty inside the 160x120 frame")]


def test_an_extraction_with_two_kinds_of_failure_counts_each_and_shows_its_first_reasons(synth, tmp_path, capsys):
    """Two clips whose source video is missing, three of a 320x176 stand-in of a 1920x1080 video (one line for the
    three, which share their reason), and two written: the summary counts both kinds with their first indices, and
    the log records each clip's kind."""
    from tests.helpers_video import numbered_frames, write_video

    root, planned = synth
    videos = tmp_path / "videos"
    shutil.copytree(root / "videos", videos)
    standin = write_video(videos / "standin_cam.r13.mp4", numbered_frames(30, 320, 176), FPS)

    def row(index, source, x1, y1, x2, y2, status="ok"):
        return clips.ManifestRow(index, f"{source}.vehicle_turns_left.{index}.{index + 5}", source,
                                 "vehicle_turns_left", index, index + 5, x1, y1, x2, y2, False, status)

    rows = [*planned[:2], row(20, "nowhere", 0, 0, 50, 50), row(21, "nowhere", 0, 0, 60, 60),
            row(10, "standin_cam.r13", 300, 200, 700, 600), row(11, "standin_cam.r13", 1500, 700, 1905, 1070),
            row(12, "standin_cam.r13", 0, 0, 400, 300), row(13, "synth_cam.r13", 0, 0, 50, 50, "no_boxes")]
    manifest = clips.write_manifest(rows, tmp_path / "manifest.tsv")
    out = tmp_path / "clips"
    code = main(["sovabench", "clips", "extract", "--manifest", str(manifest), "--video-root", str(videos),
                 "--out", str(out), "--codec", "libx264rgb", "--crf", "0", "--pix-fmt", "rgb24", "--no-progress"])
    assert code == 1
    missing = f"source video nowhere (.avi/.mp4/.mkv/.mov) not found under {videos}"
    assert capsys.readouterr().out.splitlines() == [
        "clips written: 2, already present: 0, failed: 5, rows without a clip (status not ok): 1",
        "  MEVA: written 2, already present 0, missing their source video 2",
        "  failed by kind: 2 video missing (20, 21); 3 size mismatch (10, 11, 12)",
        f"  failed 20 nowhere.vehicle_turns_left.20.25: {missing}",
        f"  failed 10 standin_cam.r13.vehicle_turns_left.10.15: {standin}: the video is 320x176, but its annotated "
        "boxes reach 1905x1070: it is not the annotated video (a stand-in or a resized copy?); put the original "
        "under --video-root",
        "  ... and 3 more, each with its reason in extract_log.jsonl",
        "  2 clip(s) miss their source video ('sova sovabench clips sources' lists the videos, 'sova sovabench clips "
        "fetch' downloads MEVA's; each is in extract_log.jsonl)",
        f"clips and extract_log.jsonl: {out}",
    ]
    log = [json.loads(line) for line in (out / "extract_log.jsonl").read_text().splitlines()]
    assert sorted((rec["index"], rec["status"], rec["kind"]) for rec in log) == [
        (1, "written", None), (2, "written", None), (10, "failed", "size mismatch"), (11, "failed", "size mismatch"),
        (12, "failed", "size mismatch"), (20, "failed", "video missing"), (21, "failed", "video missing")]
    assert sorted(p.name for p in out.glob("*.mp4")) == sorted(f"{r.video}.mp4" for r in planned[:2])
    assert {rec["kind"] for rec in log} - {None} <= set(clip_extract.KINDS)
