"""MUVR scoring and evaluation: hand cases 3 and 4 (spec Sec. 6), blocks, and the synthetic set end to end."""
import pickle

import numpy as np
import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.muvr import features, fusion
from sova_lib.benchmarks.muvr import retrieval as ev
from sova_lib.benchmarks.muvr.annotations import MuvrQuery, Partition, TagPrompt
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL
from sova_lib.similarity import ItemVectors
from tests.benchmarks.muvr import fixtures

R2 = np.sqrt(0.5)


def _collect(gallery, queries, ids, mode, block_vectors=256):
    out = np.full((len(ids), len(gallery.ids)), np.nan)

    def consume(positions, rows):
        out[positions] = rows

    fusion.fused_rows(gallery, queries, ids, mode, consume, block_vectors=block_vectors, dtype=np.float64)
    return out


def test_case3_fusion_and_signed_tag():
    e = np.eye(3)
    gallery = ItemVectors(np.array(["A", "B"]), np.array([0, 0, 1, 1]), np.stack([e[0], e[1], (e[0] + e[1]) * R2, e[2]]))
    queries = fusion.QueryVectors(frames=ItemVectors(np.array(["q"]), np.array([0, 0]), e[:2]),
                                   text=ItemVectors(np.array(["q"]), np.array([0]), ((e[0] + e[2]) * R2)[None]),
                                   tags={"t": e[2]})
    s_v, s_t, s_tv = (_collect(gallery, queries, ["q"], mode)[0] for mode in ("video", "text", "text+video"))
    np.testing.assert_allclose(s_v, [1, R2], atol=1e-12)
    np.testing.assert_allclose(s_t, [R2, R2], atol=1e-12)
    np.testing.assert_allclose(s_tv, [(1 + R2) / 2, R2], atol=1e-12)
    tag = fusion.tag_rows(gallery, [queries.tags["t"]], dtype=np.float64)[0]
    np.testing.assert_allclose(tag, [0, 1], atol=1e-12)
    np.testing.assert_allclose(s_tv + 0.3 * tag, [0.853553, 1.007107], atol=1e-6)  # +tag: B above A
    np.testing.assert_allclose(s_tv - 0.3 * tag, [0.853553, 0.407107], atol=1e-6)  # -tag


def _case4():
    names = ["a", "c", "x", "b", "d", "y"]
    s_tv = [.9, .8, .7, .6, .5, .4]
    tag = [.2, .1, .1, 1.0, 0.0, 0.0]
    dim = 2 + 2 * len(names)
    rows = []
    for i, (s, t) in enumerate(zip(s_tv, tag)):  # frame 1 carries the score, frame 2 the tag
        f1, f2 = np.zeros(dim), np.zeros(dim)
        f1[0], f1[2 + 2 * i] = s, np.sqrt(1 - s * s)
        f2[1], f2[3 + 2 * i] = t, np.sqrt(1 - t * t)
        rows += [f1, f2]
    gallery = ItemVectors(np.array(names), np.repeat(np.arange(6), 2), np.array(rows))
    text = ItemVectors(np.array(["q"]), np.array([0]), np.eye(dim)[:1])
    queries = fusion.QueryVectors(text=text, tags={"t": np.eye(dim)[1]})
    part = Partition("news", tuple(names), (MuvrQuery("q", "", None, ("a", "b", "c", "d")),),
                     (TagPrompt("q", "+t", ("a", "b"), ((1, "t"),)), TagPrompt("q", "-t", ("c", "d"), ((-1, "t"),))), {})
    return part, gallery, queries


@pytest.mark.parametrize("weight, expected", [(0.0, [0.75, 0.45]), (0.3, [1.0, 0.5])])
def test_case4_filter_prompts(weight, expected):
    part, gallery, queries = _case4()
    score = ev.evaluate_partition(part, gallery, queries, version="filter", query="text", tag_weight=weight,
                                  dtype=np.float64)
    np.testing.assert_allclose(score.ap, expected)
    assert score.uap is None and score.row_ids == ["q +t", "q -t"]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = fixtures.synthetic(tmp_path_factory.mktemp("muvr"), 0)
    return root, [muvr.load_partition(root, p) for p in muvr.PARTITIONS]


def _naive_rows(partition, folder, mode):
    """Scores by a per-query, per-video loop over the raw .npy files."""
    def unit(a):
        return a / np.linalg.norm(a, axis=-1, keepdims=True)

    frames = {v: unit(np.load(folder / f"{v}.npy").astype(np.float64)) for v in partition.gallery}
    out = []
    for q in partition.queries:
        text, _ = features.read_query_dict(folder / f"{q.id}_query_dict.pkl")
        row = []
        for v in partition.gallery:
            s_v = float((frames[q.id] @ frames[v].T).max())  # one pair of videos at a time
            s_t = float((frames[v] @ unit(text.astype(np.float64))).max())
            row.append({"video": s_v, "text": s_t, "text+video": (s_v + s_t) / 2}[mode])
        out.append(row)
    return np.array(out)


@pytest.mark.parametrize("mode", ["text", "video", "text+video"])
def test_synthetic_end_to_end_against_a_naive_loop(synthetic, mode):
    root, parts = synthetic
    folder = root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL
    part = parts[0]
    got = ev.evaluate_partition(part, *muvr.released_vectors(folder, query=mode)(part), query=mode, ks=(1, 5))
    scores = _naive_rows(part, folder / part.name, mode)
    for i, q in enumerate(part.queries):
        order = sorted((j for j, v in enumerate(part.gallery) if v != q.id), key=lambda j: -scores[i, j])
        pos = [v for v in q.positives if v != q.id]
        hits, ap = 0, 0.0
        for rank, j in enumerate(order, 1):
            if part.gallery[j] in pos:
                hits += 1
                ap += hits / rank
        assert got.ap[i] == pytest.approx(ap / len(pos), abs=1e-5)
        assert got.recall[i, 1] == pytest.approx(sum(part.gallery[j] in pos for j in order[:5]) / len(pos))


def test_blocks_do_not_change_results(synthetic):
    root, parts = synthetic
    vectors = muvr.released_vectors(root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL)(parts[1])
    ids = [q.id for q in parts[1].queries]
    whole = _collect(*vectors[:1], vectors[1], ids, "text+video", block_vectors=10_000)
    for block in (1, 7, 16):
        np.testing.assert_allclose(_collect(vectors[0], vectors[1], ids, "text+video", block_vectors=block), whole)


def test_result_averages_partitions_and_records_its_tie_rule(synthetic):
    root, parts = synthetic
    result = ev.evaluate_vectors(parts, muvr.released_vectors(root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL),
                           bootstrap=50, seed=1, source="synthetic")
    per = result.per_partition
    assert result.metrics["mAP"] == pytest.approx(np.mean([per[p]["mAP"] for p in muvr.PARTITIONS]))
    assert result.metrics["uAP"] == pytest.approx(np.mean([per[p]["uAP"] for p in muvr.PARTITIONS]))
    low, high = result.ci["mAP"]
    assert low < result.metrics["mAP"] < high
    assert result.to_json()["ties"] == "expected" and "per_row" not in result.to_json()
    again = ev.evaluate_vectors(parts, muvr.released_vectors(root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL),
                          bootstrap=50, seed=1, source="synthetic")
    assert again.ci == result.ci


def test_random_ranking_uses_the_whole_gallery(synthetic):
    _, parts = synthetic
    result = muvr.random_ranking(parts[:1])
    part = parts[0]
    from sova_lib.metrics import random_ranking_ap

    expected = np.mean([random_ranking_ap(len([p for p in q.positives if p != q.id]), len(part.gallery) - 1)
                        for q in part.queries])
    assert result.per_partition["news"]["mAP"] == pytest.approx(100 * expected)
    assert result.per_partition["news"]["R@200"] == 100.0


def test_npz_vectors_give_the_same_result(synthetic, tmp_path):
    root, parts = synthetic
    folder = root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL
    part = parts[2]
    gallery, queries = muvr.released_vectors(folder)(part)
    path = features.write_vectors_npz(tmp_path / "v.npz", gallery, queries.text, queries.tags)
    a = ev.evaluate_partition(part, gallery, queries)
    b = ev.evaluate_partition(part, *features.npz_vectors(path)(part))
    np.testing.assert_allclose(a.ap, b.ap)
    assert a.uap == pytest.approx(b.uap)


def _write_frames(folder, name, rows):
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{name}.npy", np.asarray(rows, dtype=np.float32))


def test_filter_uses_each_querys_own_tag_vector(tmp_path):
    """Two queries, one phrase "red", encoded e2 in q1's file and e3 in q2's (evaluate_all_vlm_mul.py:139-147).

    Description e1 for both; A = 0.6 e1 + 0.8 e2, B = 0.6 e1 + 0.8 e3, so S_t = 0.6 for both.
    ``+red`` keeps A (pos_all {A, B}); p = 1. q1 (e2): A 0.6 + 0.8 = 1.4, B 0.6 -> AP 1.
    q2 (e3): A 0.6, B 1.4 -> A second, AP 1/2. mAP = 3/4 (one shared vector per phrase would give 1).
    """
    e = np.eye(3)
    fixtures.write_partition(tmp_path, videos=["A", "B", "q1", "q2"], queries={"q1": "one", "q2": "two"},
                             positives={"q1": ["A", "B"], "q2": ["A", "B"]},
                             prompts={"q1": {"+red": ["A"]}, "q2": {"+red": ["A"]}},
                             tags={"q1": ["red"], "q2": ["red"]})
    folder = tmp_path / "features" / "news"
    _write_frames(folder, "A", [0.6 * e[0] + 0.8 * e[1]])
    _write_frames(folder, "B", [0.6 * e[0] + 0.8 * e[2]])
    for qid, own in (("q1", e[1]), ("q2", e[2])):
        (folder / f"{qid}_query_dict.pkl").write_bytes(pickle.dumps({"query_prompt": e[0][None], "tags": {"red": own}}))
    part = muvr.load_partition(tmp_path, "news")
    assert part.gallery == ("A", "B")
    result = ev.evaluate_vectors([part], muvr.released_vectors(folder.parent, query="text", version="filter"),
                           version="filter", query="text", tag_weight=1.0)
    assert result.per_row == pytest.approx({"news/q1 +red": 1.0, "news/q2 +red": 0.5})
    assert result.metrics["mAP"] == pytest.approx(75.0)
    # a query whose own file lacks the phrase is an error naming the query and the phrase
    (folder / "q2_query_dict.pkl").write_bytes(pickle.dumps({"query_prompt": e[0][None], "tags": {"blue": e[2]}}))
    with pytest.raises(ValueError, match="query 'q2' has no vector of its tag phrase 'red'"):
        ev.evaluate_vectors([part], muvr.released_vectors(folder.parent, query="text", version="filter"),
                      version="filter", query="text", tag_weight=1.0)
