"""Tests of the per-video annotation index (sova_lib.benchmarks.sovabench.clips.kpf_index): the counted-box rule, the cache."""
from __future__ import annotations

from pathlib import Path

from sova_lib.benchmarks.sovabench.clips import kpf, kpf_index
from sova_lib.benchmarks.sovabench.splits import DATA_DIR

SAMPLE = DATA_DIR / "meva-annotations-sample"
G506 = "2018-03-05.13-15-00.13-20-00.bus.G506"


def _write(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _toy_video(tmp_path: Path, name="toy") -> kpf.AnnotationFiles:
    """Object 1 moves 1 px right per frame over frames 0..20; object 2 is still; object 3 acts nowhere."""
    geom = []
    for f in range(21):
        geom.append(f"- {{ geom: {{id1: 1, ts0: {f}, g0: {10 + f} 100 {20 + f} 150}} }}")
        geom.append(f"- {{ geom: {{id1: 2, ts0: {f}, g0: 300 40 320 60}} }}")
        geom.append(f"- {{ geom: {{id1: 3, ts0: {f}, g0: 0 0 1000 1000}} }}")
    acts = [
        # A: actor 1 counted on 8..15 by A itself -> boxes of frames 8..14 (end exclusive)
        "- { act: { act2: {a: 1.0}, id2: 0, timespan: [{tsr0: [5, 15]}], actors: [{id1: 1, timespan: [{tsr0: [8, 15]}]}] } }",
        # B: object 2's only activity; two actor timespans
        "- { act: { act2: {b: 1.0}, id2: 1, timespan: [{tsr0: [0, 20]}], "
        "actors: [{id1: 2, timespan: [{tsr0: [0, 2]}, {tsr0: [18, 19]}]}] } }",
        # C: no actors
        "- { act: { act2: {c: 1.0}, id2: 2, timespan: [{tsr0: [0, 20]}] } }",
        # D: several timespans
        "- { act: { act2: {d: 1.0}, id2: 3, timespan: [{tsr0: [0, 3]}, {tsr0: [6, 9]}], "
        "actors: [{id1: 1, timespan: [{tsr0: [0, 9]}]}] } }",
    ]
    _write(tmp_path / f"{name}.geom.yml", geom)
    _write(tmp_path / f"{name}.activities.yml", acts)
    return kpf.find_annotation_files(tmp_path)[name]


def test_region_counts_boxes_inside_any_actor_timespan_only(tmp_path):
    index = kpf_index.build_video_index(_toy_video(tmp_path))
    a, b, c, d = index.activities
    # Actor 1 is counted on 8..15 (A) and 0..9 (D): frames 5..14 of A all count -> x from 15 to 34
    assert (a.region, a.n_boxes) == ((15, 100, 34, 150), 10)
    # Object 2 counts on 0..2 and 18..19, inside B's 0 <= f < 20
    assert (b.region, b.n_boxes) == ((300, 40, 320, 60), 5)
    assert c.region is None and c.actor_ids == ()
    assert d.region is None and d.timespans == ((0, 3), (6, 9))
    assert [x.line for x in index.activities] == [1, 2, 3, 4]
    assert index.find("a", 5, 15) == [a] and index.find("a", 5, 14) == []
    assert index.find("d", 0, 9) == [d] and index.find("d", 6, 9) == [d]


def test_region_of_activity_A_without_D_is_limited_to_its_actor_timespan(tmp_path):
    files = _toy_video(tmp_path)
    lines = files.activities.read_text().splitlines()
    _write(files.activities, lines[:3])  # drop D: actor 1 now counts on 8..15 only
    a = kpf_index.build_video_index(files).activities[0]
    assert (a.region, a.n_boxes) == ((18, 100, 34, 150), 7)  # frames 8..14


def test_index_is_cached_and_rebuilt_when_a_file_changes(tmp_path, monkeypatch):
    (tmp_path / "ann").mkdir()
    files = _toy_video(tmp_path / "ann")
    cache = tmp_path / "cache"
    first = kpf_index.load_video_index(files, cache)
    assert len(list(cache.glob("toy.*.json"))) == 1

    calls = []
    real = kpf_index.build_video_index
    monkeypatch.setattr(kpf_index, "build_video_index", lambda f, **kw: calls.append(f) or real(f, **kw))
    second = kpf_index.load_video_index(files, cache)
    assert calls == [] and second.activities == first.activities and second.key == first.key

    with open(files.geom, "a") as f:  # a changed geometry file invalidates the index
        f.write("- { geom: {id1: 1, ts0: 9, g0: 0 100 20 150} }\n")
    third = kpf_index.load_video_index(files, cache)
    assert len(calls) == 1
    assert third.activities[0].region == (0, 100, 34, 150)

    kpf_index.load_video_index(files, False)  # no cache: always rebuilt
    assert len(calls) == 2


def test_index_json_round_trip_on_the_sample(tmp_path):
    index = kpf_index.load_video_index(kpf.find_annotation_files(SAMPLE)[G506], tmp_path)
    again = kpf_index.VideoIndex.from_json(index.to_json())
    assert again.activities == index.activities and again.types == index.types
    stops = again.find("vehicle_stops", 8779, 8844)
    assert len(stops) == 1 and stops[0].region == (1516, 133, 1784, 316) and stops[0].n_boxes == 65


def test_default_index_dir_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SOVA_KPF_INDEX_DIR", str(tmp_path / "idx"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kpf_index.default_index_dir() == tmp_path / "idx"
    monkeypatch.delenv("SOVA_KPF_INDEX_DIR")
    assert kpf_index.default_index_dir() == tmp_path / "xdg" / "sova_lib" / "kpf-index"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert kpf_index.default_index_dir() == tmp_path / "home" / ".cache" / "sova_lib" / "kpf-index"
