from collections import Counter

import pytest

from sova_lib.benchmarks.sovabench import labels
from sova_lib.benchmarks.sovabench.splits import load_split, parse_clip_name, read_tsv, split_path


def test_published_counts():
    inter = load_split("interpair")
    queries = [c for c in inter if not c.is_distractor]
    assert len(inter) == 9882
    assert len(queries) == 1423
    assert Counter(c.source_dataset for c in queries) == {"MEVA": 975, "VIRAT": 448}
    assert sum(c.is_distractor for c in inter) == 8459
    assert min(c.index for c in inter if c.is_distractor) == 2922
    intra = load_split("intrapair")
    assert len(intra) == 2300
    assert Counter(c.source_dataset for c in intra) == {"MEVA": 1728, "VIRAT": 572}
    assert {c.label for c in intra} == set(labels.ACTIONS)
    assert len(load_split("interpair_queries")) == 1423


def test_shared_clips_keep_their_index():
    inter = {c.name: c.index for c in load_split("interpair")}
    intra = load_split("intrapair")
    shared = [c for c in intra if c.name in inter]
    assert len({c.index for c in shared}) == 1358
    assert all(inter[c.name] == c.index for c in shared)


def test_duplicated_intra_pair_clip_is_kept():
    intra = {c.index: c for c in load_split("intrapair")}
    assert intra[1836].name == intra[1838].name


def test_clip_name_parsing_and_reversal():
    assert parse_clip_name("VIRAT_S_000007.person_opens_trunk.5340.5373") == (
        "VIRAT_S_000007", "person_opens_trunk", 5340, 5373)
    video, activity, start, end = parse_clip_name(
        "2018-03-05.13-15-00.13-20-00.bus.G340.r13.vehicle_drives_forward.4213.4089")
    assert (video, activity, start, end) == ("2018-03-05.13-15-00.13-20-00.bus.G340.r13",
                                              "vehicle_drives_forward", 4089, 4213)
    forward = [c for c in load_split("intrapair") if c.label == "driving forward"]
    assert len(forward) == 83 and all(c.reversed and c.start_frame < c.end_frame for c in forward)


def test_clip_properties():
    clip = next(c for c in load_split("interpair") if c.label == "opening trunk")
    assert (clip.pair, clip.dim, clip.source_dataset) == ("trunk", "human_vehicle", "VIRAT")


def test_malformed_row_names_file_and_line(tmp_path):
    lines = split_path("intrapair").read_text().splitlines()[:4]
    lines[3] = "flying" + lines[3][lines[3].index("\t"):]  # the subdim column
    bad = tmp_path / "bad.tsv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"bad.tsv, line 4: unknown SOVABench action 'flying'"):
        read_tsv(bad)


def test_unknown_split():
    with pytest.raises(ValueError, match="unknown SOVABench split"):
        load_split("nope")
