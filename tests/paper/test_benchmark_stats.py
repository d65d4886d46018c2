import pytest

from sova_lib.benchmarks.sovabench.splits import load_split

from paper import benchmark_stats as stats


def test_table2_sovabench_rows():
    t = stats.table2().set_index("benchmark")
    assert t.loc["SOVABench (Inter-pair)", "samples (here)"] == 9882
    assert t.loc["SOVABench (Inter-pair)", "samples (paper)"] == 9900  # printed as 9.9k
    assert t.loc["SOVABench (Inter-pair)", "queries (here)"] == 1423
    assert t.loc["SOVABench (Intra-pair)", "samples (here)"] == t.loc["SOVABench (Intra-pair)", "queries (here)"] == 2300
    assert t.loc["SOVABench (Inter-pair, constrained; Table C.1)", "queries (here)"] == 1423
    assert t.loc["EVVE", "queries (paper)"] == 620 and t.loc["EVVE", "queries (here)"] == "not computed here"


def test_query_counts_match_the_metadata():
    counts = stats.query_counts("interpair")
    assert counts.sum().to_dict() == {"MEVA": 975, "VIRAT": 448}  # measured in the spec
    assert len(counts) == 12 and "driving forward" not in counts.index  # the pair left out of inter-pair
    assert counts.loc["turning left"].tolist() == [177, 70]
    independent = sum(1 for c in load_split("interpair") if c.label == "closing trunk")
    assert counts.loc["closing trunk"].sum() == independent


def test_pair_counts():
    pairs = stats.pair_counts()
    assert pairs["clips"].sum() == 2300 and len(pairs) == 14
    trunk = pairs[pairs["pair"] == "trunk"].set_index("action")["clips"]
    assert trunk.to_dict() == {"opening trunk": 49, "closing trunk": 48}


def test_metadata_durations_use_the_planner_windows():
    d = stats.metadata_durations("interpair").set_index("index")
    assert len(d) == 9882
    clips = {c.index: c for c in load_split("interpair")}
    start = next(c for c in clips.values() if c.activity == "vehicle_starts" and c.start_frame >= 90)
    stop = next(c for c in clips.values() if c.activity == "vehicle_stops")
    plain = next(c for c in clips.values() if c.activity == "person_opens_trunk")
    assert d.loc[start.index, "frames"] == start.end_frame - start.start_frame + 1 + 90
    assert d.loc[stop.index, "frames"] == stop.end_frame - stop.start_frame + 1 + 90
    assert d.loc[plain.index, "frames"] == plain.end_frame - plain.start_frame + 1
    assert d.loc[plain.index, "duration_s"] == pytest.approx(d.loc[plain.index, "frames"] / 30)
    half = stats.metadata_durations("interpair", fps=15.0).set_index("index")
    assert half.loc[plain.index, "duration_s"] == pytest.approx(2 * d.loc[plain.index, "duration_s"])


def test_sample_manifest_plans_the_shipped_annotations():
    frame, videos = stats.sample_manifest()
    assert len(videos) == 4
    assert len(frame) == 91 and (frame["status"] == "ok").all()
    assert set(frame["source_video"].str.split(".r13").str[0]) <= {v.split(".r13")[0] for v in videos}
    assert ((frame["x2"] - frame["x1"]) >= 112).all() and ((frame["y2"] - frame["y1"]) >= 112).all()
