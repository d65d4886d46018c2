"""Retrieval metrics: average precision, mAP, Pair-mAP and bootstrap intervals.

All functions are pure and work on NumPy arrays. Conventions shared by every
function here:

* A *query row* is one query's scores against a gallery, higher meaning more
  similar. ``valid`` marks the gallery entries that take part in the
  ranking; the query itself must be marked invalid (self-exclusion), so it is
  never in its own ranking and never counts as relevant.
* AP of one query: ``(1 / R) * sum over relevant items of precision at the
  item's rank``, where ``R`` is the number of valid relevant items. A query
  with ``R == 0`` has no AP (``nan``); protocols never produce one.
* Ties between scores are resolved by the ``ties`` rule:

  ``"stable"`` (default)
      tied items keep their gallery order (a stable sort by descending
      score). Deterministic, and what a plain ``sorted(..., reverse=True)``
      over the gallery gives.
  ``"expected"``
      the expected AP over all orderings of each group of tied items, each
      ordering equally likely (tie-aware AP). Independent of gallery order.
  ``"optimistic"`` / ``"pessimistic"``
      relevant items first / last within each tie: the upper and lower bound
      of AP over all tie orderings.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "TIE_RULES",
    "average_precision",
    "average_precision_rows",
    "bootstrap_ci",
    "mean_ap",
    "pair_map",
    "prevalence",
    "random_ranking_ap",
]

TIE_RULES = ("stable", "expected", "optimistic", "pessimistic")


def average_precision_rows(
    scores: np.ndarray,
    relevant: np.ndarray,
    valid: np.ndarray | None = None,
    *,
    ties: str = "stable",
) -> np.ndarray:
    """AP of each query row.

    Parameters
    ----------
    scores : (Q, N) float array, finite where ``valid``.
    relevant : (Q, N) bool array; entries outside ``valid`` are ignored.
    valid : (Q, N) bool array or None (all valid). Mark each query's own
        entry False.
    ties : one of ``TIE_RULES`` (see the module docstring).

    Returns
    -------
    (Q,) float64 array of AP values in [0, 1]; ``nan`` for a row without a
    valid relevant item.
    """
    scores = np.asarray(scores)
    relevant = np.asarray(relevant, dtype=bool)
    if scores.ndim != 2 or relevant.shape != scores.shape:
        raise ValueError(f"scores and relevant must be (Q, N) arrays of one shape, got {scores.shape} and {relevant.shape}")
    if ties not in TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; choose one of {TIE_RULES}")
    if valid is None:
        valid = np.ones(scores.shape, dtype=bool)
    else:
        valid = np.asarray(valid, dtype=bool)
        if valid.shape != scores.shape:
            raise ValueError(f"valid has shape {valid.shape}, expected {scores.shape}")
    if not np.isfinite(scores).all() and not np.isfinite(scores[valid]).all():
        raise ValueError("scores must be finite for every valid gallery entry")
    relevant = relevant & valid
    if ties == "stable" and scores.dtype == np.float32:
        return _stable_ap(scores, relevant, valid)
    # Invalid entries go last, below every valid score, and are never relevant.
    key = np.where(valid, scores.astype(np.float64), -np.inf)
    if ties in ("stable", "expected"):
        order = np.argsort(-key, axis=1, kind="stable")
    else:
        # lexsort sorts by the last key first: score descending, then relevance.
        first = 0 if ties == "optimistic" else 1
        rel_key = np.where(relevant, first, 1 - first)
        order = np.lexsort((rel_key, -key), axis=1)
    rel = np.take_along_axis(relevant, order, axis=1)
    n_rel = rel.sum(axis=1)
    ranks = np.arange(1, scores.shape[1] + 1, dtype=np.float64)
    hits = np.cumsum(rel, axis=1)
    if ties != "expected":
        ap = (rel * hits / ranks).sum(axis=1)  # optimistic or pessimistic order
    else:
        ap = _expected_ap_sums(np.take_along_axis(key, order, axis=1), rel, hits, ranks)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_rel > 0, ap / n_rel, np.nan)


def _ordinal(values: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Order-preserving int64 images of float32 ``values``, plus ``offset``.

    The IEEE-754 bits read as int32 order positive floats correctly; flipping
    the non-sign bits of negative ones orders those too. -0.0 is first made
    +0.0, so equal floats get equal integers.
    """
    bits = (values + np.float32(0.0)).view(np.int32)
    bits = bits ^ ((bits >> 31) & np.int32(0x7FFFFFFF))
    return np.add(bits, offset, dtype=np.int64)


def _stable_ap(scores, relevant, valid, *, max_tied: int = 8, rows_per_chunk: int = 256):
    """``_stable_ap_chunk`` over chunks of rows, on as many threads as cores (numpy releases the GIL)."""
    q = scores.shape[0]
    if q <= rows_per_chunk:
        return _stable_ap_chunk(scores, relevant, valid, max_tied=max_tied)
    import os
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(4, os.cpu_count() or 1))
    bounds = np.linspace(0, q, max(2, workers * 2) + 1).astype(int)
    with ThreadPoolExecutor(workers) as pool:
        parts = pool.map(lambda b: _stable_ap_chunk(scores[b[0]:b[1]], relevant[b[0]:b[1]], valid[b[0]:b[1]],
                                                     max_tied=max_tied), zip(bounds[:-1], bounds[1:]))
        return np.concatenate(list(parts))


def _stable_ap_chunk(scores, relevant, valid, *, max_tied: int = 8):
    """AP under the stable tie rule for float32 scores, vectorised over rows.

    Each row's negated scores are sorted once (invalid entries as +inf, last)
    and mapped to order-preserving integers offset by ``row * 2**32``, so all
    rows form one sorted array. The relevant items, keyed the same way and
    sorted (rows stay grouped; within a row, best score first, ties in gallery
    order), then find their ranks with one ``searchsorted``. A relevant item
    whose score ties with another moves behind its ties that come earlier in
    the gallery (counted one by one; a row with more than ``max_tied`` such
    items is ranked by a stable argsort instead). AP = mean over relevant
    items of (hits so far) / rank.
    """
    q, n = scores.shape
    out = np.full(q, np.nan)
    rows, cols = np.nonzero(relevant)
    if not rows.size:
        return out
    neg = np.where(valid, -scores, np.float32(np.inf))
    offset = np.arange(q, dtype=np.int64) << 32
    flat = _ordinal(np.sort(neg, axis=1), offset[:, None]).ravel()
    keys = _ordinal(neg[rows, cols], offset[rows])
    order = np.argsort(keys, kind="stable")
    keys, rows, cols = keys[order], rows[order], cols[order]
    first = np.searchsorted(flat, keys)
    above = first - rows * n
    tied = np.flatnonzero(flat[np.minimum(first + 1, flat.size - 1)] == keys)
    if tied.size:
        per_row = np.bincount(rows[tied], minlength=q)
        for k in tied[per_row[rows[tied]] <= max_tied]:
            row, col = rows[k], cols[k]
            above[k] += np.count_nonzero(neg[row, :col] == neg[row, col])
        for row in np.flatnonzero(per_row > max_tied):
            position = np.empty(n, dtype=np.int64)
            position[np.argsort(neg[row], kind="stable")] = np.arange(n)
            mine = rows == row
            above[mine] = position[cols[mine]]
    counts = np.bincount(rows, minlength=q)
    starts = np.cumsum(counts) - counts
    hits = np.arange(rows.size) - np.repeat(starts, counts) + 1  # ranks increase within each row
    has = counts > 0
    out[has] = np.add.reduceat(hits / (above + 1), starts[has]) / counts[has]
    return out


def _expected_ap_sums(sorted_key, rel, hits, ranks):
    """Sum over relevant items of expected precision, ties shuffled uniformly.

    For a tie group at 0-based positions ``a .. a+n-1`` holding ``r``
    relevant items, with ``b`` relevant items ranked before it, a relevant
    item of the group lands on position ``a+k-1`` (k = 1..n) with probability
    ``1/n`` and then has ``b + 1 + (k-1)(r-1)/(n-1)`` relevant items at or
    above it in expectation. The group contributes
    ``(r/n) * sum_k (b + 1 + (k-1)(r-1)/(n-1)) / (a+k)``.
    """
    q, n = sorted_key.shape
    pos = np.broadcast_to(np.arange(n), (q, n))
    new_group = np.ones((q, n), dtype=bool)
    new_group[:, 1:] = sorted_key[:, 1:] != sorted_key[:, :-1]
    start = np.maximum.accumulate(np.where(new_group, pos, 0), axis=1)
    end_mark = np.zeros((q, n), dtype=bool)
    end_mark[:, :-1] = new_group[:, 1:]
    end_mark[:, -1] = True
    # Index of the last position of each group, propagated backwards.
    end = np.minimum.accumulate(np.where(end_mark, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    size = end - start + 1
    hits_before = np.where(start > 0, np.take_along_axis(hits, np.maximum(start - 1, 0), axis=1), 0)
    r = np.take_along_axis(hits, end, axis=1) - hits_before
    k = pos - start + 1
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(size > 1, (k - 1) * (r - 1) / np.maximum(size - 1, 1), 0.0)
        term = (r / size) * (hits_before + 1 + spread) / ranks
    return np.where(r > 0, term, 0.0).sum(axis=1)


def average_precision(scores, relevant, *, ties: str = "stable") -> float:
    """AP of a single ranking (1-D ``scores`` and ``relevant`` of one length).

    Every entry takes part; remove the query itself before calling. Example:
    relevant items at ranks 1 and 3 of 4 give ``(1/1 + 2/3) / 2 = 0.8333``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    relevant = np.asarray(relevant, dtype=bool)
    if scores.ndim != 1 or relevant.shape != scores.shape:
        raise ValueError("scores and relevant must be 1-D arrays of one length")
    return float(average_precision_rows(scores[None], relevant[None], ties=ties)[0])


def mean_ap(ap: np.ndarray) -> float:
    """mAP: the mean of per-query AP values (``(Q,)``), in [0, 1]."""
    ap = np.asarray(ap, dtype=np.float64)
    if ap.size == 0:
        raise ValueError("mAP of no query is undefined")
    if np.isnan(ap).any():
        raise ValueError("some queries have no relevant item; their AP is undefined")
    return float(ap.mean())


def pair_map(ap_by_pair: dict) -> float:
    """Pair-mAP (SOVABench paper, Eq. 1): the mean over pairs of each pair's mAP.

    ``ap_by_pair`` maps a pair name to the (Q_p,) AP values of its queries.
    Every pair weighs the same, whatever its number of queries.
    """
    if not ap_by_pair:
        raise ValueError("Pair-mAP of no pair is undefined")
    return float(np.mean([mean_ap(v) for v in ap_by_pair.values()]))


def prevalence(query_labels: np.ndarray, gallery_labels: np.ndarray) -> np.ndarray:
    """Class prevalence ``n_c / N`` of each query's class in the gallery.

    The query is counted in both ``n_c`` and ``N`` (pass a gallery that holds
    it). The mean over queries is the paper's "Random" row (Table 4), which is
    *not* the expected AP of a random ranking (see ``random_ranking_ap``).
    Shapes: ``(Q,)`` and ``(N,)``; returns ``(Q,)``.
    """
    gallery_labels = np.asarray(gallery_labels)
    values, counts = np.unique(gallery_labels, return_counts=True)
    lookup = dict(zip(values.tolist(), counts.tolist()))
    n_c = np.array([lookup.get(q, 0) for q in np.asarray(query_labels).tolist()], dtype=np.float64)
    return n_c / gallery_labels.size


def random_ranking_ap(n_relevant, n_items) -> np.ndarray:
    """Exact expected AP of a uniformly random ranking.

    ``n_relevant`` relevant items among ``n_items`` ranked items (the query
    already excluded); arrays broadcast. The closed form is
    ``(1/N) * sum_{k=1..N} (1 + (k-1)(R-1)/(N-1)) / k``: position ``k`` holds
    a relevant item with probability ``R/N``, and then ``(k-1)(R-1)/(N-1)``
    other relevant items above it in expectation.
    """
    r = np.asarray(n_relevant, dtype=np.float64)
    n = np.asarray(n_items, dtype=np.float64)
    r, n = np.broadcast_arrays(r, n)
    out = np.empty(r.shape)
    for idx in np.ndindex(r.shape):
        big_n, big_r = int(n[idx]), r[idx]
        if big_n < 1 or not 0 < big_r <= big_n:
            raise ValueError(f"need 0 < n_relevant <= n_items, got {big_r} and {big_n}")
        k = np.arange(1, big_n + 1, dtype=np.float64)
        spread = (k - 1) * (big_r - 1) / (big_n - 1) if big_n > 1 else 0.0
        out[idx] = ((1 + spread) / k).sum() / big_n
    return out


def bootstrap_ci(
    values: np.ndarray,
    rng: np.random.Generator,
    *,
    groups: np.ndarray | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean over queries.

    ``values`` are per-query scores ``(Q,)``. Without ``groups`` the statistic
    is their mean (mAP) and queries are resampled with replacement. With
    ``groups`` (``(Q,)`` labels, e.g. each query's pair) queries are resampled
    within each group and the statistic is the mean of the group means
    (Pair-mAP). The same generator state gives the same interval.
    Returns ``(low, high)`` in the units of ``values``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("values must be a non-empty 1-D array")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if groups is None:
        idx = rng.integers(0, values.size, size=(n_resamples, values.size))
        stats = values[idx].mean(axis=1)
    else:
        groups = np.asarray(groups)
        if groups.shape != values.shape:
            raise ValueError("groups must have the shape of values")
        per_group = []
        for g in np.unique(groups):
            v = values[groups == g]
            idx = rng.integers(0, v.size, size=(n_resamples, v.size))
            per_group.append(v[idx].mean(axis=1))
        stats = np.mean(per_group, axis=0)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return float(low), float(high)
