"""The spec's seven hand-computed cases (muvr-spec.md Sec. 6), computed by the library, for the notebook.

``hand_cases()`` returns one row per checked quantity: the case, what is
measured, the value the library computes and the value worked out by hand
(as a fraction where it is one). Every row also runs as an exact assertion
in the tests.

``hand_cases`` is one named module in each benchmark that has hand-worked
cases in its spec (``sova_lib.benchmarks.muvr.hand_cases``,
``sova_lib.benchmarks.vantage.hand_cases``): the spec's cases computed
through the library, one row per checked quantity beside the value worked
out by hand, for the benchmark's notebook and its tests.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from sova_lib.benchmarks.muvr import metrics
from sova_lib.benchmarks.muvr.annotations import MuvrQuery, Partition, TagPrompt
from sova_lib.benchmarks.muvr.fusion import QueryVectors, fused_rows, tag_rows
from sova_lib.benchmarks.muvr.retrieval import evaluate_partition
from sova_lib.similarity import ItemVectors

__all__ = ["case3_vectors", "case4_partition", "hand_cases"]

_R2 = float(np.sqrt(0.5))


def case3_vectors():
    """Case 3: gallery A {e1, e2}, B {(e1+e2)/sqrt 2, e3}; query frames {e1, e2}, description (e1+e3)/sqrt 2, tag e3."""
    e = np.eye(3)
    gallery = ItemVectors(np.array(["A", "B"]), np.array([0, 0, 1, 1]),
                          np.stack([e[0], e[1], (e[0] + e[1]) * _R2, e[2]]))
    queries = QueryVectors(frames=ItemVectors(np.array(["q"]), np.array([0, 0]), e[:2]),
                           text=ItemVectors(np.array(["q"]), np.array([0]), ((e[0] + e[2]) * _R2)[None]),
                           tags={"t": e[2]})
    return gallery, queries


def case4_partition():
    """Case 4 as vectors: each video's first frame gives its S (cosine with the description), its second its tag score."""
    names, s, tag = ["a", "c", "x", "b", "d", "y"], np.array([.9, .8, .7, .6, .5, .4]), np.array([.2, .1, .1, 1, 0, 0])
    i, dim = np.arange(len(names)), 2 + 2 * len(names)
    rows = np.zeros((2 * len(names), dim))  # video i: rows 2i (its S) and 2i + 1 (its tag score)
    rows[2 * i, 0], rows[2 * i, 2 + 2 * i] = s, np.sqrt(1 - s * s)
    rows[2 * i + 1, 1], rows[2 * i + 1, 3 + 2 * i] = tag, np.sqrt(1 - tag * tag)
    gallery = ItemVectors(np.array(names), np.repeat(i, 2), rows)
    queries = QueryVectors(text=ItemVectors(np.array(["q"]), np.array([0]), np.eye(dim)[:1]),
                           tags={"t": np.eye(dim)[1]})
    prompts = (TagPrompt("q", "+t", ("a", "b"), ((1, "t"),)), TagPrompt("q", "-t", ("c", "d"), ((-1, "t"),)))
    partition = Partition("news", tuple(names), (MuvrQuery("q", "", None, ("a", "b", "c", "d")),), prompts, {})
    return partition, gallery, queries


def _scores(gallery, queries, mode):
    out = {}
    fused_rows(gallery, queries, ["q"], mode, lambda pos, rows: out.update(row=rows[0]), dtype=np.float64)
    return out["row"]


def hand_cases() -> list[dict]:
    """Rows ``{case, quantity, computed, by hand}`` for the spec's cases 1-7."""
    rows = []

    def add(case, quantity, computed, expected):
        rows.append({"case": case, "quantity": quantity, "computed": round(float(computed), 4),
                     "by hand": str(expected) if isinstance(expected, Fraction) else round(float(expected), 4)})

    s1, r1 = np.array([[.9, .8, .7, .6, 0]]), np.array([[1, 0, 1, 0, 1]], bool)
    v1 = np.array([[1, 1, 1, 1, 0]], bool)
    add(1, "AP, positive e unscored", metrics.average_precision_misses(s1, r1, v1, [3])[0], Fraction(5, 9))
    add(1, "AP, e scored .5", metrics.average_precision_misses(s1 + [[0, 0, 0, 0, .5]], r1, None, [3])[0], 0.7556)
    for k, value in zip((1, 2, 3), metrics.recall_at_k(s1, r1, v1, [3], ks=(1, 2, 3))[0]):
        add(1, f"R@{k}", value, Fraction(1 if k < 3 else 2, 3))
    s2, r2 = np.array([[.9, .7, .8, .1], [.6, .5, .4, .3]]), np.array([[1, 1, 0, 0], [0, 0, 0, 1]], bool)
    ap2 = metrics.average_precision_misses(s2, r2)
    add(2, "AP q1", ap2[0], Fraction(5, 6))
    add(2, "AP q2", ap2[1], Fraction(1, 4))
    add(2, "mAP", ap2.mean(), Fraction(13, 24))
    add(2, "uAP", metrics.unified_ap(s2, r2), Fraction(44, 63))
    gallery, queries = case3_vectors()
    for mode, name, on_a in (("video", "S_v", 1.0), ("text", "S_t", _R2), ("text+video", "S_tv", (1 + _R2) / 2)):
        value = _scores(gallery, queries, mode)
        add(3, f"{name} of A", value[0], on_a)
        add(3, f"{name} of B", value[1], _R2)
    tv, tag = _scores(gallery, queries, "text+video"), tag_rows(gallery, [queries.tags["t"]], dtype=np.float64)[0]
    add(3, "+tag B (p = 0.3)", tv[1] + 0.3 * tag[1], _R2 + 0.3)
    add(3, "-tag B (p = 0.3)", tv[1] - 0.3 * tag[1], _R2 - 0.3)
    for weight, expected in ((0.0, (0.75, 0.45)), (0.3, (1.0, 0.5))):
        ap4 = evaluate_partition(*case4_partition(), version="filter", query="text", tag_weight=weight,
                                 dtype=np.float64).ap
        add(4, f"AP +t, p = {weight:g}", ap4[0], expected[0])
        add(4, f"AP -t, p = {weight:g}", ap4[1], expected[1])
    pos, neg = [1, 1, 0, 0, 1], [0, 1, 0, 1, 0]
    add(5, "Reranking Score", metrics.reranking_score(pos, neg), -0.2)
    add(5, "Accuracy (%)", metrics.qa_accuracy([x for p in zip(pos, neg) for x in p], [1, 0] * 5), 60.0)
    add(5, "'yes' parses as", metrics.parse_official("yes"), 0.0)
    add(6, "random E[AP], N = 4, R = 2", metrics.random_baseline([2], [4])[0][0], Fraction(49, 72))
    s7, r7 = np.array([[.9, .5, .5]]), np.array([[1, 0, 1]], bool)
    add(7, "AP, expected ties", metrics.average_precision_misses(s7, r7)[0], Fraction(11, 12))
    add(7, "AP, optimistic ties (c before b)", metrics.average_precision_misses(s7, r7, ties="optimistic")[0], 1.0)
    add(7, "AP, pessimistic ties (b before c)", metrics.average_precision_misses(s7, r7, ties="pessimistic")[0],
        Fraction(5, 6))
    add(7, "AP, gallery order (b before c)", metrics.average_precision_misses(s7, r7, ties="gallery-order")[0],
        Fraction(5, 6))
    return rows
