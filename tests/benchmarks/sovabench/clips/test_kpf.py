"""Tests of the KPF reader (sova_lib.benchmarks.sovabench.clips.kpf) on the vendored MEVA sample and on small written files."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import yaml

from sova_lib.benchmarks.sovabench.clips import kpf
from sova_lib.benchmarks.sovabench.splits import DATA_DIR

SAMPLE = DATA_DIR / "meva-annotations-sample"
G506 = "2018-03-05.13-15-00.13-20-00.bus.G506"


def _sample_files():
    return kpf.find_annotation_files(SAMPLE)


def _write(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_find_annotation_files_locates_the_four_sample_videos():
    found = _sample_files()
    assert sorted(found) == sorted([
        "2018-03-05.13-15-00.13-20-00.bus.G506",
        "2018-03-11.17-25-02.17-30-02.school.G424",
        "2018-03-15.15-45-00.15-50-00.bus.G505",
        "2018-03-15.15-50-06.15-55-06.hospital.G341",
    ])
    f = found[G506]
    assert f.activities.name == f"{G506}.activities.yml"
    assert f.geom.name == f"{G506}.geom.yml" and f.types.name == f"{G506}.types.yml"
    assert f.geom.parent.name == "13"  # found below ROOT/annotation/.../2018-03-05/13/


def test_annotation_names_drop_the_meva_release_suffix():
    assert kpf.annotation_names(f"{G506}.r13") == (f"{G506}.r13", G506)
    assert kpf.annotation_names("VIRAT_S_000007") == ("VIRAT_S_000007",)


def test_read_activities_on_a_real_line():
    acts = kpf.read_activities(_sample_files()[G506].activities)
    assert len(acts) == 31
    a = acts[0]  # line 1 of the file, checked by eye
    assert (a.name, a.id2, a.timespans, a.line) == ("person_carries_heavy_object", 23, ((6522, 6714),), 1)
    assert a.actors == (kpf.Actor(37, ((6522, 6714),)), kpf.Actor(38, ((6522, 6714),)))


def test_read_types_on_the_sample():
    types = kpf.read_types(_sample_files()[G506].types)
    assert types[37] == "person" and types[38] == "bag" and types[19] == "vehicle"


def test_virat_names_map_to_meva_and_unquoted_keys_parse(tmp_path):
    path = _write(tmp_path / "VIRAT_S_000001.activities.yml", [
        "- { meta: 'converted' }",
        "- { act: { act2: {vehicle_starting: 1.0}, id2: 3, timespan: [{tsr0: [10, 40]}], src: truth, "
        "actors: [{id1: 7, timespan: [{tsr0: [10, 40]}]}] } }",
        "- { act: { act2: {Open_Trunk: 1.0}, id2: 4, timespan: [{tsr0: [1, 2]}], actors: [] } }",
    ])
    acts = kpf.read_activities(path)
    assert [(a.name, a.source_name, a.line) for a in acts] == [
        ("vehicle_starts", "vehicle_starting", 2), ("person_opens_trunk", "Open_Trunk", 3)]
    assert acts[1].actors == ()
    assert set(kpf.VIRAT_TO_MEVA.values()) >= {"person_closes_vehicle_door", "vehicle_turns_right"}
    assert len(kpf.VIRAT_TO_MEVA) == 12


@functools.lru_cache(maxsize=None)
def _yaml_geom(path: Path) -> list[dict]:
    return [yaml.load(line, Loader=yaml.CSafeLoader)[0]["geom"] for line in open(path)]


@pytest.mark.parametrize("block_chars", [7_777, 100_000, 4_000_000])
def test_iter_geom_matches_a_yaml_parser(block_chars):
    """The streaming parser gives exactly what a YAML parser gives, whatever the block size."""
    path = _sample_files()[G506].geom
    ref = _yaml_geom(path)
    blocks = list(kpf.iter_geom(path, block_chars=block_chars))
    if block_chars < 100_000:
        assert len(blocks) > 10
    ids = np.concatenate([b.ids for b in blocks])
    frames = np.concatenate([b.frames for b in blocks])
    boxes = np.concatenate([b.boxes for b in blocks])
    assert len(ids) == len(ref) == 5357
    np.testing.assert_array_equal(ids, [r["id1"] for r in ref])
    np.testing.assert_array_equal(frames, [r["ts0"] for r in ref])
    np.testing.assert_array_equal(boxes, [[float(v) for v in r["g0"].split()] for r in ref])
    # block start lines add up
    assert blocks[0].first_line == 1
    assert all(b.first_line == a.first_line + len(a.ids) for a, b in zip(blocks, blocks[1:]))


def test_iter_geom_accepts_meta_blank_lines_floats_and_any_field_order(tmp_path):
    path = _write(tmp_path / "v.geom.yml", [
        '- { meta: "id1: 99 is not a box" }',
        "",
        "- { geom: {id1: 3, id0: 0, ts0: 12, g0: 1 2 30 40, src: truth} }",
        "- {'geom': {'g0': '5.5 6 70 80', 'id0': 1, 'id1': 4, 'ts0': 13}}",
        "# a comment",
        "- { geom: { ts0: 14, g0: 0 0 9 9, id1: 5 } }",
    ])
    (block,) = list(kpf.iter_geom(path))
    np.testing.assert_array_equal(block.ids, [3, 4, 5])
    np.testing.assert_array_equal(block.frames, [12, 13, 14])
    np.testing.assert_array_equal(block.boxes, [[1, 2, 30, 40], [5.5, 6, 70, 80], [0, 0, 9, 9]])


@pytest.mark.parametrize("bad, what", [
    ("- {'geom': {'g0': '1 2 3', 'id0': 0, 'id1': 1, 'ts0': 5}}", "g0"),  # three numbers
    ("- {'geom': {'g0': '1 2 3 4', 'id0': 0, 'id1': 1, 'ts0': 5}", "unbalanced"),  # truncated
    ("- {'geom': {'g0': '1 2 3 4', 'id0': 0, 'ts0': 5}}", "id1"),  # no object id
    ("garbage", "record"),
])
def test_malformed_geom_line_names_file_and_line(tmp_path, bad, what):
    lines = Path(_sample_files()[G506].geom).read_text().splitlines()[:3000]
    lines[2345] = bad  # line 2346
    path = _write(tmp_path / "broken.geom.yml", lines)
    with pytest.raises(kpf.KpfError, match=r"broken\.geom\.yml, line 2346: .*" + what):
        for _ in kpf.iter_geom(path, block_chars=10_000):
            pass


def test_malformed_activities_line_names_file_and_line(tmp_path):
    lines = Path(_sample_files()[G506].activities).read_text().splitlines()
    lines[4] = lines[4][:60]  # cut in the middle of a flow mapping
    path = _write(tmp_path / "x.activities.yml", lines)
    with pytest.raises(kpf.KpfError, match=r"x\.activities\.yml, line 5: not valid YAML"):
        kpf.read_activities(path)
    lines[4] = "- { act: { id2: 3, timespan: [{tsr0: [1, 2]}] } }"
    _write(path, lines)
    with pytest.raises(kpf.KpfError, match=r"line 5: activity has no 'act2"):
        kpf.read_activities(path)
