"""MUVR's metrics as pure functions (MUVR paper, Sec. 4.1; spec muvr-spec.md Sec. 4).

Retrieval (shapes: ``scores``, ``relevant``, ``valid`` are ``(Q, N)`` over a
partition's gallery; ``n_positive`` is ``(Q,)``):

* ``valid`` marks the *scored* gallery videos of each row (the query's own
  video marked False: self-exclusion). ``relevant`` marks positives; only
  valid ones can be ranked.
* ``n_positive`` is ``|G_q|``, the query's positives in the gallery, whether
  scored or not: a positive without a score counts as a miss (it stays in the
  denominator, cuvr.py:211-217). A query with ``|G_q| = 0`` gets AP 0 and
  R@k 0, and is averaged in (spec Sec. 8.5).
* Tie rules (``TIES``): ``"expected"`` (default) is the expected value over
  all orders of tied scores, each equally likely; ``"optimistic"`` /
  ``"pessimistic"`` put the positives of each tie first / last (the bounds
  of the value over all orders); ``"gallery-order"`` keeps tied videos in
  the order of the gallery (``videos.json``), the earlier first. None of
  them is the official scripts' order, which is not fixed: they rank
  a set of video names (its order follows Python's string hashing, so
  ``PYTHONHASHSEED``; cuvr.py:122,174) with numpy's default, unstable
  ``argsort`` (cuvr.py:192,211), so on tied scores their numbers change from one process to
  the next; their mean over runs is the expected value.

``average_precision_misses`` -> AP per query; ``recall_at_k`` -> R@k per
query; ``unified_ap`` -> uAP of all (query, video) pairs of a partition in
one ranking; ``random_baseline`` -> the exact expected AP and R@k of a
uniformly random ranking.

QA (Sec. 4.1, "Reranking Score"; spec Sec. 4): ``parse_official`` (1 iff the
answer contains ``"Yes"``), ``parse_strict`` (first word yes/no, else
unparseable), ``qa_accuracy`` (percent of questions) and ``reranking_score``
(mean over (positive, negative) pairs of +1 / 0 / -1 / -2).

``metrics`` is one named module in the core and in each benchmark with metrics of its own
(``sova_lib.metrics``, ``sova_lib.benchmarks.muvr.metrics``, ``sova_lib.benchmarks.vantage.metrics``): the
benchmark's metrics as pure functions over arrays, with shapes, tie rule and denominators in each docstring.
This one holds MUVR's.
"""
from __future__ import annotations

import numpy as np

from sova_lib.metrics import average_precision_rows, random_ranking_ap

__all__ = ["KS", "TIES", "average_precision_misses", "parse_official", "parse_strict", "qa_accuracy", "random_baseline",
           "recall_at_k", "reranking_score", "unified_ap"]

TIES = ("expected", "optimistic", "pessimistic", "gallery-order")
#: Cut-offs of R@k (Tables 7 and 8; cuvr.py:222-225,501).
KS = (200, 500, 1000, 2000)


def _arrays(scores, relevant, valid, n_positive, ties):
    if ties not in TIES:
        raise ValueError(f"unknown tie rule {ties!r}; choose one of {TIES}")
    scores = np.asarray(scores)
    relevant = np.asarray(relevant, dtype=bool)
    valid = np.ones(scores.shape, bool) if valid is None else np.asarray(valid, dtype=bool)
    if scores.ndim != 2 or relevant.shape != scores.shape or valid.shape != scores.shape:
        raise ValueError(f"scores, relevant and valid must be (Q, N) of one shape, got "
                         f"{scores.shape}, {relevant.shape}, {valid.shape}")
    relevant = relevant & valid
    n_scored = relevant.sum(axis=1)
    n_positive = n_scored if n_positive is None else np.asarray(n_positive, dtype=np.int64)
    if n_positive.shape != (scores.shape[0],) or (n_positive < n_scored).any():
        raise ValueError("n_positive must be (Q,) and at least the number of scored positives of each row")
    return scores, relevant, valid, n_positive, n_scored


def average_precision_misses(scores, relevant, valid=None, n_positive=None, *, ties: str = "expected") -> np.ndarray:
    """AP of each query, ``(Q,)`` in [0, 1]: ``(1/|G_q|) * sum over ranked positives of precision at their rank``.

    Ranked = valid; ``n_positive`` (default: the valid positives) is
    ``|G_q|``, so unscored positives are misses. Example (spec Sec. 6, case 1):
    positives a, c, e; a .9, b .8, c .7, d .6, e unscored: ``(1 + 2/3) / 3 = 5/9``.
    """
    scores, relevant, valid, n_positive, n_scored = _arrays(scores, relevant, valid, n_positive, ties)
    rule = "stable" if ties == "gallery-order" else ties  # a stable descending sort keeps gallery order
    ap = average_precision_rows(scores, relevant, valid, ties=rule)
    sums = np.where(n_scored > 0, np.nan_to_num(ap) * n_scored, 0.0)
    return np.where(n_positive > 0, sums / np.maximum(n_positive, 1), 0.0)


def recall_at_k(scores, relevant, valid=None, n_positive=None, *, ks=KS, ties: str = "expected") -> np.ndarray:
    """R@k of each query, ``(Q, len(ks))`` in [0, 1]: positives among the first ``k`` ranked, over ``|G_q|``.

    A tie group that straddles rank ``k`` (``n`` tied videos, ``r``
    positives, ``m`` of its places inside the top ``k``) adds ``r * m / n``
    (expected), ``min(r, m)`` (optimistic) or ``max(0, m - (n - r))``
    (pessimistic). A ``k`` beyond the ranked count takes every ranked positive.
    """
    scores, relevant, valid, n_positive, n_scored = _arrays(scores, relevant, valid, n_positive, ties)
    key = np.where(valid, scores.astype(np.float64), -np.inf)
    if ties == "gallery-order":  # each valid video its own score, below the earlier ones of its tie: no tie is left
        key = np.where(valid, -np.argsort(np.argsort(-key, axis=1, kind="stable"), axis=1), -np.inf)
    n_valid = valid.sum(axis=1)
    out = np.zeros((scores.shape[0], len(ks)))
    ordered = -np.sort(-key, axis=1)
    for j, k in enumerate(ks):
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        cut = ordered[:, min(k, scores.shape[1]) - 1][:, None] if scores.shape[1] else key[:, :0]
        above, tied = key > cut, key == cut
        n_above, n_tied = above.sum(axis=1), tied.sum(axis=1)
        r_tied = (relevant & tied).sum(axis=1)
        places = k - n_above  # places of the tie group inside the top k
        if ties == "optimistic":
            partial = np.minimum(r_tied, places)
        elif ties == "pessimistic":
            partial = np.maximum(0, places - (n_tied - r_tied))
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                partial = np.where(n_tied > 0, r_tied * places / np.maximum(n_tied, 1), 0.0)
        got = (relevant & above).sum(axis=1) + partial
        got = np.where(k >= n_valid, n_scored, got)
        out[:, j] = np.where(n_positive > 0, got / np.maximum(n_positive, 1), 0.0)
    return out


def unified_ap(scores, relevant, valid=None, n_positive=None, *, ties: str = "expected") -> float:
    """uAP: AP of all valid (query, video) pairs of the matrix in one ranking by raw score, in [0, 1].

    The denominator is ``sum(n_positive)`` (unscored positives are misses;
    cuvr.py:260-275). ``"gallery-order"`` orders tied pairs row by row (query
    order), then by gallery position, the earlier first. The expected rule uses the closed form per tie group (``a`` pairs above, ``n``
    tied, ``r`` positives tied, ``b`` positives above):
    ``(r/n) * sum_{k=1..n} (b + 1 + (k-1)(r-1)/(n-1)) / (a+k)``.
    """
    scores, relevant, valid, n_positive, _ = _arrays(scores, relevant, valid, n_positive, ties)
    total = int(n_positive.sum())
    if total == 0:
        return 0.0
    flat = scores[valid].astype(np.float64)
    rel = relevant[valid]
    if ties != "expected":  # the gallery order is a stable sort of the pairs, which lie row by row in ``flat``
        ap = average_precision_rows(flat[None], rel[None], ties="stable" if ties == "gallery-order" else ties)[0]
        return float(np.nan_to_num(ap) * rel.sum() / total)
    ordered = np.sort(flat)  # ascending
    values, r = np.unique(flat[rel], return_counts=True)  # ascending
    n = np.searchsorted(ordered, values, side="right") - np.searchsorted(ordered, values, side="left")
    a = (flat.size - np.searchsorted(ordered, values, side="right")).astype(np.float64)
    b = (r[::-1].cumsum()[::-1] - r).astype(np.float64)  # positives strictly above each value
    s0 = _harmonic_spans(a, n)  # sum_{k=1..n} 1/(a+k)
    s1 = n - (a + 1) * s0  # sum_k (k-1)/(a+k)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(n > 1, (r - 1) / np.maximum(n - 1, 1) * s1, 0.0)
    return float(((r / n) * ((b + 1) * s0 + spread)).sum() / total)


def _harmonic_spans(a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``sum_{k=1..n_i} 1 / (a_i + k)`` for each group, summed term by term (one array of all terms)."""
    n = n.astype(np.int64)
    starts = np.cumsum(n) - n
    k = np.arange(int(n.sum())) - np.repeat(starts, n) + 1
    terms = 1.0 / (np.repeat(a, n) + k)
    return np.add.reduceat(terms, starts) if terms.size else np.zeros(n.shape)


def random_baseline(n_positive, n_ranked, *, ks=KS) -> tuple[np.ndarray, np.ndarray]:
    """Exact expected AP ``(Q,)`` and R@k ``(Q, len(ks))`` of a uniformly random ranking.

    ``n_positive`` (``|G_q|``) positives among ``n_ranked`` ranked videos
    (query excluded). E[AP] = ``(H_N + (R-1)(N-H_N)/(N-1)) / N``
    (``sova_lib.metrics.random_ranking_ap``); E[R@k] = ``min(k, N) / N``. A
    query without positives gets 0.
    """
    r = np.asarray(n_positive, dtype=np.int64)
    n = np.asarray(n_ranked, dtype=np.int64)
    ap = np.zeros(r.shape)
    has = r > 0
    if has.any():
        ap[has] = random_ranking_ap(r[has], n[has])
    recall = np.stack([np.where(has, np.minimum(k, n) / np.maximum(n, 1), 0.0) for k in ks], axis=1)
    return ap, recall


def parse_official(answer: str) -> int:
    """1 when ``"Yes"`` (case-sensitive) occurs anywhere in the answer, else 0 (multi_image_comparison.py:177-179)."""
    return int("Yes" in answer)


def parse_strict(answer: str) -> int | None:
    """1 / 0 when the answer's first word is yes / no (any case, surrounding punctuation ignored); None otherwise."""
    words = answer.strip().split()
    first = words[0].strip(".,:;!?*\"'`()[]").lower() if words else ""
    return {"yes": 1, "no": 0}.get(first)


def qa_accuracy(predictions, labels) -> float:
    """Percent of questions whose prediction (1 yes / 0 no) equals the label; ``(M,)`` each."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.shape != labels.shape or predictions.ndim != 1 or predictions.size == 0:
        raise ValueError("predictions and labels must be non-empty 1-D arrays of one length")
    return float(100 * np.mean(predictions == labels))


def reranking_score(kept_positive, kept_negative) -> float:
    """Reranking Score: the mean over pairs of ``2*p - n - 1`` (``(P,)`` 0/1 each).

    (kept, removed) +1; (kept, kept) 0; (removed, removed) -1; (removed,
    kept) -2 (paper, Sec. 4.1). It equals ``2*TPR - FPR - 1``.
    """
    p, n = np.asarray(kept_positive, dtype=np.int64), np.asarray(kept_negative, dtype=np.int64)
    if p.shape != n.shape or p.ndim != 1 or p.size == 0:
        raise ValueError("kept_positive and kept_negative must be non-empty 1-D arrays of one length")
    if not (np.isin(p, (0, 1)).all() and np.isin(n, (0, 1)).all()):
        raise ValueError("predictions must be 0 or 1")
    return float(np.mean(2 * p - n - 1))
