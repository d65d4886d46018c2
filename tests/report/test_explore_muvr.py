"""The explorer on MUVR: a hand-built partition with known answers, and retrieval.evaluate_vectors's AP on the synthetic set."""
import numpy as np
import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.excerpts import DIRECTION_PROTOCOL
from sova_lib.benchmarks.muvr import retrieval
from sova_lib.benchmarks.muvr.framework import framework_vectors, pool_windows
from sova_lib.benchmarks.muvr.metrics import TIES
from sova_lib.benchmarks.muvr.retrieval import rows_of
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL, write_annotations
from sova_lib.benchmarks.muvr.synthetic_runs import write_tied_synthetic
from sova_lib.report import explore
from tests.report.test_explore import _cache

# Sentence -> unit vector, by hand (e1..e4 the unit axes).
VECTORS = {
    "A red car turns left.": [1, 0, 0, 0],
    "It stops.": [0, 1, 0, 0],
    "Nothing happens.": [0, 0, 1, 0],
    "A dog runs.": [0.6, 0, 0, 0.8],
    "A man waits.": [0, 0, 0, 1],
}
# Described windows "<video>@<k>"; v4 has none, so it is a gallery video without vectors.
WINDOWS = {"v1@0": "A red car turns left.", "v1@1": "Nothing happens.", "v2@0": "A dog runs.", "v3@0": "It stops.",
           "q2@0": "A man waits."}


class HandEncoder:
    """``encode`` by table lookup: every sentence of the hand-built case has its vector above."""

    name = "hand-made"

    def encode(self, sentences):
        return np.array([VECTORS[s] for s in sentences], dtype=np.float32)


def _hand_partition(root):
    # q's positives: v1, v2 and v4 (|G_q| = 3); v3 is in the gallery through q2's list. Gallery order (videos.json):
    # v1, v2, v3, v4.
    write_annotations(root / "annotations" / "retrieval" / "news",
                      [("q", 1), ("q2", 1), ("v1", 0), ("v2", 0), ("v3", 0), ("v4", 0)],
                      [("q", "A red car turns left. It stops."), ("q2", "A man waits.")],
                      {"q": ["v1", "v2", "v4"], "q2": ["v3"]})
    return muvr.load_partition(root, "news")


# The description's sentences [e1, e2] against each video, by hand (query "text": S_t, the maximum cosine):
# v1 [e1, e3] -> 1 (pair 0, 0); v3 [e2] -> 1 (pair 1, 0); v2 [0.6 e1 + 0.8 e4] -> 0.6 (pair 0, 0); v4 unscored.
# v1 and v3 tie at 1, v2 is third, v4 is a miss; |G_q| = 3:
#   optimistic / gallery-order (v1 before v3): (1 + 2/3) / 3 = 5/9
#   pessimistic: (1/2 + 2/3) / 3 = 7/18
#   expected: v1 first or second with equal chance, (3/4 + 2/3) / 3 = 17/36
HAND_AP = {"expected": 17 / 36, "optimistic": 5 / 9, "pessimistic": 7 / 18, "gallery-order": 5 / 9}


@pytest.mark.parametrize("ties", sorted(HAND_AP))
def test_muvr_view_hand_built_case(tmp_path, ties):
    part = _hand_partition(tmp_path)
    vectors, texts = explore.load_muvr_cache((framework_vectors(WINDOWS, HandEncoder()), pool_windows(WINDOWS)))
    view = explore.muvr_view(part, vectors, "q", query="text", texts=texts, k=3, ties=ties)
    assert view.ap == pytest.approx(HAND_AP[ties], abs=1e-12)
    # the library's own MUVR evaluation agrees, under the same tie rule
    scored = retrieval.evaluate_vectors([part], vectors, query="text", ties=ties)
    assert scored.per_row["news/q"] == pytest.approx(HAND_AP[ties], abs=1e-12)
    assert view.n_relevant == 3 and view.n_gallery == 3 and view.notes == ["1 positive(s) have no vectors: misses"]
    hits = view.hits
    assert hits["id"].tolist() == ["v1", "v3", "v2"] and hits["relevant"].tolist() == [True, False, True]
    assert hits["similarity"].to_numpy() == pytest.approx([1.0, 1.0, 0.6], abs=1e-6)
    assert hits["query sentence"].tolist() == ["A red car turns left.", "It stops.", "A red car turns left."]
    assert hits["item sentence"].tolist() == ["A red car turns left.", "It stops.", "A dog runs."]
    assert hits["sentence pair"].tolist() == [(0, 0), (1, 0), (0, 0)]
    assert hits["video score"].isna().all()  # query "text" uses no query video
    page = explore.view_html(view)
    assert "<mark>A red car turns left.</mark><br>Nothing happens." in page and "no vectors" in page


def test_muvr_view_bad_input(tmp_path):
    part = _hand_partition(tmp_path)
    vectors = framework_vectors(WINDOWS, HandEncoder())
    with pytest.raises(ValueError, match="not a scored Base query"):
        explore.muvr_view(part, vectors, "v1", query="text")
    with pytest.raises(ValueError, match="unknown query"):
        explore.muvr_view(part, vectors, "q", query="audio")
    with pytest.raises(ValueError, match="need a sentence encoder"):
        explore.load_muvr_cache(tmp_path / "windows.jsonl")
    with pytest.raises(ValueError, match="no such feature folder"):
        explore.load_muvr_cache(tmp_path / "nothing-here")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("muvr")
    return muvr.write_synthetic(root, np.random.default_rng(3), partitions=("news", "dance"))


@pytest.mark.parametrize("query", ["text", "video", "text+video"])
def test_every_query_ap_is_muvr_evaluate_s(synthetic, query):
    parts = explore.muvr_partitions(synthetic)
    assert list(parts) == ["news", "dance"]
    features = explore.muvr_caches_of(synthetic)[SYNTHETIC_MODEL]
    vectors, texts = explore.load_muvr_cache(features, query=query)
    assert texts is None
    for ties in ("expected", "gallery-order"):
        scored = retrieval.evaluate_vectors(list(parts.values()), vectors, query=query, ties=ties)
        assert len(scored.per_row) == 18
        for key, ap in scored.per_row.items():
            name, qid = key.split("/")
            view = explore.muvr_view(parts[name], vectors, qid, query=query, ties=ties, k=30)
            assert view.ap == pytest.approx(ap, abs=1e-12), key
            assert qid not in view.hits["id"].tolist()
            assert view.hits["similarity"].is_monotonic_decreasing
        worst = explore.muvr_worst_queries(parts["news"], vectors, query=query, ties=ties, n=4)
        news = sorted(100 * v for k, v in scored.per_row.items() if k.startswith("news/"))
        assert worst["AP"].to_numpy() == pytest.approx(news[:4])


def test_tied_scores_follow_each_tie_rule(tmp_path):
    # gallery videos share frames in groups of 4, so their scores tie: each rule must match retrieval.evaluate_vectors's
    parts = write_tied_synthetic(tmp_path / "tied", np.random.default_rng(0))
    vectors, _ = explore.load_muvr_cache(explore.muvr_caches_of(tmp_path / "tied")[SYNTHETIC_MODEL], query="video")
    by_rule = {}
    for ties in TIES:
        scored = retrieval.evaluate_vectors(parts, vectors, query="video", ties=ties)
        by_rule[ties] = {k.split("/")[1]: explore.muvr_view(parts[0], vectors, k.split("/")[1], query="video",
                                                            ties=ties).ap for k in scored.per_row}
        assert by_rule[ties] == pytest.approx({k.split("/")[1]: v for k, v in scored.per_row.items()}, abs=1e-12)
    assert any(by_rule["optimistic"][q] > by_rule["expected"][q] > by_rule["pessimistic"][q] for q in by_rule["expected"])


def test_explorer_offers_muvr_partitions(synthetic):
    items, texts = _cache()
    ex = explore.Explorer({"hand-built": (items, texts)}, [DIRECTION_PROTOCOL], muvr_root=synthetic, k=3)
    assert [v for _, v in ex.protocol.options] == [DIRECTION_PROTOCOL, "muvr/news", "muvr/dance"]
    assert ex.view.protocol == DIRECTION_PROTOCOL and list(ex.cache.options) == ["hand-built"]
    ex.protocol.value = "muvr/dance"
    assert list(ex.cache.options) == [SYNTHETIC_MODEL]
    parts = explore.muvr_partitions(synthetic)
    vectors = muvr.released_vectors(explore.muvr_caches_of(synthetic)[SYNTHETIC_MODEL])
    per_row = retrieval.evaluate_vectors(list(parts.values()), vectors).per_row
    assert ex.view.protocol == "MUVR dance (text+video)" and ex.view.query == ex.query.value
    assert ex.view.ap == pytest.approx(per_row[f"dance/{ex.query.value}"], abs=1e-12)
    worst_id = ex.worst_list.options[1][1]
    ex.worst_list.value = worst_id
    assert ex.view.query == worst_id
    assert ex.view.ap == pytest.approx(min(v for k, v in per_row.items() if k.startswith("dance/")), abs=1e-12)
    assert "AP = " in ex.html.value and ex.image.value[:4] == b"\x89PNG"
    ex.protocol.value = DIRECTION_PROTOCOL
    assert list(ex.cache.options) == ["hand-built"] and ex.view.protocol == DIRECTION_PROTOCOL
    # without a live kernel: the static view of the first MUVR partition's first query
    static = explore.show({}, [], muvr_root=synthetic, k=2, interactive=False)
    assert static.protocol == "MUVR news (text+video)" and len(static.hits) == 2
    assert static.ap == pytest.approx(per_row[f"news/{static.query}"], abs=1e-12)
    assert static.query == rows_of(parts["news"], "base")[0][0]
    with pytest.raises(ValueError, match="no released features"):
        explore.Explorer({}, [], muvr_root=synthetic, muvr_caches={})
