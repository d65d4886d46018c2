import numpy as np
import pandas as pd
import pytest

from sova_lib.benchmarks.sovabench import labels
from sova_lib.evaluation import evaluate
from sova_lib.item_vectors import embed_descriptions
from sova_lib.protocols import get_protocol
from tests.helpers_ranking import OneHotEncoder
from tests.synthetic_cache import write_synthetic_cache

from paper import error_analysis as ea


def test_synthetic_texts_are_reproducible_and_do_what_they_say():
    a, made_a = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.1, rng=np.random.default_rng(7))
    b, _ = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.1, rng=np.random.default_rng(7))
    c, _ = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.1, rng=np.random.default_rng(8))
    assert a == b and a != c
    assert len(a) == 2300 and set(a) == set(get_protocol("intra-pair").ids().tolist())
    for row in made_a.itertuples():
        expected = {"correct": row.action, "temporal misunderstanding": labels.opposite_of(row.action),
                    "under-description": ea.GENERIC_SENTENCE}[row.constructed_as]
        assert row.text == expected == a[row.id]
    share = made_a["constructed_as"].value_counts(normalize=True)
    assert share["temporal misunderstanding"] == pytest.approx(0.3, abs=0.03)
    assert share["under-description"] == pytest.approx(0.1, abs=0.02)


def test_synthetic_texts_reject_bad_fractions():
    with pytest.raises(ValueError, match="sum to at most 1"):
        ea.synthetic_texts(swap_fraction=0.8, generic_fraction=0.3, rng=np.random.default_rng(0))


def test_synthetic_cache_is_marked_and_content_addressed(tmp_path):
    from sova_lib.report.cache_scan import find_description_caches

    folder = write_synthetic_cache(tmp_path, {1: "a", 2: "b"}, description="two texts")
    again = write_synthetic_cache(tmp_path, {1: "a", 2: "b"}, description="two texts")
    other = write_synthetic_cache(tmp_path, {1: "a", 2: "c"}, description="two texts")
    assert folder == again != other and folder.name.startswith("synthetic-demo__")
    (cache,) = [c for c in find_description_caches(tmp_path) if c.path == folder]
    assert cache.texts == {1: "a", 2: "b"} and cache.label == "synthetic demonstration (two texts)"


@pytest.fixture(scope="module")
def perfect():
    """Every intra-pair clip described by its action: perfect retrieval."""
    texts = {c.index: c.label for c in get_protocol("intra-pair").clips()}
    return texts, embed_descriptions(texts, OneHotEncoder())


def test_opposite_confusion_perfect_and_blind(perfect):
    texts, items = perfect
    conf = ea.opposite_confusion(items)
    assert len(conf) == 7 * 3 and (conf["top-1 opposite (%)"] == 0).all()
    # A describer blind to direction ("something happens to the trunk" for both actions): every other clip of
    # the pair ties, so the top neighbour is the opposite action exactly as often as a random ranking's.
    blind = {i: (labels.pair_of(t) if labels.pair_of(t) == "trunk" else t) for i, t in texts.items()}
    conf = ea.opposite_confusion(embed_descriptions(blind, OneHotEncoder())).set_index(["pair", "action"])
    trunk = conf.loc[("trunk", "all")]
    assert trunk["top-1 opposite (%)"] == pytest.approx(trunk["chance (%)"], abs=0.01)
    # opening trunk: 49 clips, each ties with 48 others of its action and 48 closing clips -> 48/96 = 50%
    assert conf.loc[("trunk", "opening trunk"), "top-1 opposite (%)"] == 50.0
    assert conf.loc[("trunk", "closing trunk"), "top-1 opposite (%)"] == pytest.approx(100 * 49 / 96, abs=0.01)
    assert conf.loc[("door", "all"), "top-1 opposite (%)"] == 0


def test_opposite_confusion_counts_swapped_clips_by_hand(perfect):
    texts, _ = perfect
    trunk = [c for c in get_protocol("intra-pair").clips() if c.pair == "trunk"]
    swapped = dict(texts)
    flip = trunk[0].index  # one clip described as the opposite action
    swapped[flip] = labels.opposite_of(texts[flip])
    conf = ea.opposite_confusion(embed_descriptions(swapped, OneHotEncoder())).set_index(["pair", "action"])
    # the flipped clip's top neighbours are all opposite-action clips; every other query ties with its own
    # action (the flipped clip has left that group, and it joins the opposite group as one more tie)
    n_same = sum(c.label == trunk[0].label for c in trunk)
    n_opp = len(trunk) - n_same
    expected_same_action = (100.0 + 0.0 * (n_same - 1)) / n_same  # only the flipped clip confuses
    expected_opposite_action = 100 / n_opp  # each such query ties with its n_opp - 1 peers and the flipped clip
    assert conf.loc[("trunk", trunk[0].label), "top-1 opposite (%)"] == pytest.approx(expected_same_action, abs=0.01)
    assert conf.loc[("trunk", labels.opposite_of(trunk[0].label)), "top-1 opposite (%)"] == pytest.approx(
        expected_opposite_action, abs=0.01)


def test_worst_queries_sorted_with_neighbours(perfect):
    texts, _ = perfect
    noisy, _ = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.0, rng=np.random.default_rng(2))
    items = embed_descriptions(noisy, OneHotEncoder())
    result = evaluate("intra-pair", items, ties="expected")
    worst = ea.worst_queries(items, noisy, result, k=5, neighbours=2)
    assert len(worst) == 5 and worst["AP (%)"].is_monotonic_increasing
    assert worst["AP (%)"].iloc[0] == round(100 * min(result.per_query.values()), 2)
    assert (worst["id"] != worst["n1 id"]).all() and (worst["n1 similarity"] >= worst["n2 similarity"]).all()
    for _, row in worst.iterrows():
        assert row["description"] == noisy[row["id"]] and row["n1 description"] == noisy[row["n1 id"]]
    trunk = ea.worst_queries(items, noisy, result, pair="trunk", k=None, neighbours=1)
    assert len(trunk) == 97 and set(trunk["pair"]) == {"trunk"}
    with pytest.raises(ValueError, match="unknown pair"):
        ea.worst_queries(items, noisy, result, pair="no-such-pair")


def test_labelling_sheet_round_trip(tmp_path):
    frame = pd.DataFrame({"id": [5, 9], "pair": ["trunk"] * 2, "action": ["opening trunk", "closing trunk"],
                          "AP (%)": [10.0, 20.0], "description": ["a", "b"], "n1 action": ["x", "y"],
                          "n1 description": ["c", "d"]})
    path = ea.write_labelling_sheet(frame, tmp_path / "sheet.csv", source="model X")
    sheet = ea.read_labels(path)
    assert list(sheet.columns) == ["source", "id", "pair", "action", "AP (%)", "description", "n1 action",
                                   "n1 description", "error_mode", "note"]
    assert (sheet["error_mode"] == "").all() and (sheet["source"] == "model X").all()
    sheet.loc[0, "error_mode"] = "hallucination"
    sheet.to_csv(path, index=False)
    ea.write_labelling_sheet(frame, path, source="model X")  # an existing sheet is kept
    assert ea.read_labels(path)["error_mode"].tolist() == ["hallucination", ""]  # "": not labelled yet
    sheet.loc[1, "error_mode"] = "halucination"
    sheet.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"sheet.csv, line 3 \(clip 9\): unknown error mode 'halucination'"):
        ea.read_labels(path)


def test_analysis_texts_prefers_a_real_cache(tmp_path):
    texts, source, constructed, cache = ea.analysis_texts(tmp_path, rng=np.random.default_rng(0))
    assert source.startswith("SYNTHETIC DEMONSTRATION") and constructed is not None and len(texts) == 2300
    assert cache is None
    real = {c.index: "The trunk opens." for c in get_protocol("intra-pair").clips()}
    folder = write_synthetic_cache(tmp_path, real, name="stand-in", description="a stand-in cache")
    texts, source, constructed, cache = ea.analysis_texts(tmp_path, rng=np.random.default_rng(0))
    assert texts == real and constructed is None and source == "synthetic demonstration (a stand-in cache)"
    assert cache.name == folder.name
    assert ea.analysis_texts(tmp_path, folder.name, rng=np.random.default_rng(0))[0] == real
    with pytest.raises(ValueError, match="no description cache named 'nope'"):
        ea.analysis_texts(tmp_path, "nope", rng=np.random.default_rng(0))


def test_the_score_is_one_record_naming_the_cache(tmp_path, perfect):
    texts, items = perfect
    real = {c.index: "The trunk opens." for c in get_protocol("intra-pair").clips()}
    write_synthetic_cache(tmp_path, real, name="stand-in", description="a stand-in cache")
    analysed = ea.analysis_texts(tmp_path, rng=np.random.default_rng(0))
    # every clip described by its action: every query ranks its own action first, Pair-mAP 100 in every pair
    record = ea.score_record(evaluate("intra-pair", items), analysed, encoder="one-hot")
    assert record["cache"] == analysed.cache.name and record["benchmark"] == "SOVABench"
    assert record["protocol"] == "intra-pair" and record["bootstrap"] == 0 and record["seed"] is None
    assert record["value"] == 100.0 and record["per_class"] == dict.fromkeys(
        ["forward/reverse", "enter/exit", "load/unload", "trunk", "door", "start/stop", "turn"], 100.0)
    # one sentence for every clip: every clip ties, so the expected AP is exactly the random ranking's
    from sova_lib.evaluation import baseline

    blind = ea.score_record(evaluate("intra-pair", embed_descriptions(real, OneHotEncoder())), analysed, encoder="x")
    assert blind["value"] == round(baseline("intra-pair", "random-ranking").value, 2)
    synthetic = ea.analysis_texts(tmp_path / "none", rng=np.random.default_rng(0))
    assert ea.score_record(evaluate("intra-pair", items), synthetic, encoder="one-hot")["cache"] is None
