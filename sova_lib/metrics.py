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

  ``"expected"`` (default)
      the expected AP over all orderings of each group of tied items, each
      ordering equally likely (tie-aware AP). Independent of gallery order:
      a scorer that gives every item the same score gets exactly the AP of a
      random ranking (``random_ranking_ap``).
  ``"optimistic"`` / ``"pessimistic"``
      relevant items first / last within each tie: the upper and lower bound
      of AP over all tie orderings. Their difference is how much the ties
      alone can move a score.
  ``"stable"``
      tied items keep their gallery order (a stable sort by descending
      score). Not a default: when the gallery is sorted by class (as
      SOVABench's files are), tied items come out grouped by class and a
      scorer that says nothing scores far above chance.

``metrics`` is one named module in the core and in each benchmark with metrics of its own
(``sova_lib.metrics``, ``sova_lib.benchmarks.muvr.metrics``, ``sova_lib.benchmarks.vantage.metrics``): the
benchmark's metrics as pure functions over arrays, with shapes, tie rule and denominators in each docstring.
This one holds SOVABench's retrieval metrics, which the other benchmarks reuse.
"""
from __future__ import annotations

import numpy as np

__all__ = ["TIE_RULES", "average_precision", "average_precision_rows", "average_precision_rules",
           "average_precision_with_missing", "bootstrap_ci", "paired_bootstrap_ci", "mean_ap", "pair_map", "prevalence",
           "random_ranking_ap"]

TIE_RULES = ("expected", "optimistic", "pessimistic", "stable")

#: The rules ``average_precision_rules`` computes from one sort of each row.
_RANK_RULES = ("expected", "optimistic", "pessimistic")


def _checked(scores, relevant, valid):
    scores = np.asarray(scores)
    relevant = np.asarray(relevant, dtype=bool)
    if scores.ndim != 2 or relevant.shape != scores.shape:
        raise ValueError(f"scores and relevant must be (Q, N) arrays of one shape, got {scores.shape} and {relevant.shape}")
    valid = np.ones(scores.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    if valid.shape != scores.shape:
        raise ValueError(f"valid has shape {valid.shape}, expected {scores.shape}")
    if not np.isfinite(scores).all() and not np.isfinite(scores[valid]).all():
        raise ValueError("scores must be finite for every valid gallery entry")
    return scores, relevant & valid, valid


def average_precision_rows(
    scores: np.ndarray,
    relevant: np.ndarray,
    valid: np.ndarray | None = None,
    *,
    ties: str = "expected",
) -> np.ndarray:
    """AP of each query row.

    Parameters
    ----------
    scores : (Q, N) float array, finite where ``valid``.
    relevant : (Q, N) bool array; entries outside ``valid`` are ignored.
    valid : (Q, N) bool array or None (all valid). Mark each query's own
        entry False.
    ties : one of ``TIE_RULES`` (see the module docstring; default ``"expected"``).

    Returns
    -------
    (Q,) float64 array of AP values in [0, 1]; ``nan`` for a row without a
    valid relevant item.
    """
    if ties not in TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; choose one of {TIE_RULES}")
    if ties == "stable":
        return _stable_ap(*_checked(scores, relevant, valid))
    return average_precision_rules(scores, relevant, valid, rules=(ties,))[ties]


def average_precision_rules(scores, relevant, valid=None, *, rules=_RANK_RULES) -> dict:
    """AP of each query row under several of the rules ``expected``, ``optimistic``, ``pessimistic`` at once.

    Shapes and meaning as in ``average_precision_rows``; returns
    ``{rule: (Q,) float64}``. Each row is sorted once. For a relevant item
    with ``a`` valid items scored strictly above it, ``n`` valid items tied
    with it (itself included), ``b`` relevant items strictly above and ``r``
    relevant items in its tie (itself included), being the ``i``-th of those
    ``r`` in gallery order:

    * optimistic: precision ``(b + i) / (a + i)``;
    * pessimistic: precision ``(b + i) / (a + n - r + i)``;
    * expected: it lands on each of the tie's ``n`` positions ``a + k`` with
      probability ``1/n``, with ``b + 1 + (k-1)(r-1)/(n-1)`` relevant items at
      or above it in expectation, so its expected precision is
      ``(1/n) * [(b+1) * D + (r-1)/(n-1) * (n - (a+1) * D)]`` with
      ``D = sum_{k=1..n} 1/(a+k)`` (a difference of harmonic numbers).
    """
    unknown = [r for r in rules if r not in _RANK_RULES]
    if unknown:
        raise ValueError(f"unknown tie rule(s) {unknown}; choose from {_RANK_RULES}")
    scores, relevant, valid = _checked(scores, relevant, valid)
    q, n_cols = scores.shape
    out = {rule: np.full(q, np.nan) for rule in rules}
    if not relevant.any():
        return out
    counts, row_start, above, tied, rel_above, rel_tied, i = _tie_positions(scores, relevant, valid)
    precision = {}
    if "optimistic" in rules:
        precision["optimistic"] = (rel_above + i) / (above + i)
    if "pessimistic" in rules:
        precision["pessimistic"] = (rel_above + i) / (above + tied - rel_tied + i)
    if "expected" in rules:
        harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n_cols + 1))])
        d = harmonic[above + tied] - harmonic[above]
        spread = np.where(tied > 1, (rel_tied - 1) / np.maximum(tied - 1, 1), 0.0)
        precision["expected"] = ((rel_above + 1) * d + spread * (tied - (above + 1) * d)) / tied
    has = counts > 0
    for rule in rules:
        out[rule][has] = np.add.reduceat(precision[rule], row_start[has]) / counts[has]
    return out


def average_precision_with_missing(ap, n_scored, n_relevant_scored, n_missing, n_relevant_missing, *,
                                   ties: str = "expected") -> np.ndarray:
    """AP of each query once the gallery items it could not score are ranked last, as failures.

    All arguments are ``(Q,)`` arrays (they broadcast). A query ranked
    ``n_scored`` valid gallery items (``a``), ``n_relevant_scored`` of them
    relevant (``b``), and got ``ap`` from them (``nan`` when ``b == 0``);
    ``n_missing`` more valid gallery items (``n``), ``n_relevant_missing`` of
    them relevant (``r``), have no score. They are ranked below every scored
    item, tied among themselves, so the scored items' precisions are
    unchanged and AP becomes ``(b * ap + S) / (b + r)``, where ``S`` is the
    sum of the precisions of the ``r`` relevant items in that last block of
    ``n`` positions ``a + 1 .. a + n``. With ``H(x) = sum_{k=1..x} 1/k``:

    * ``"expected"`` (and ``"stable"``: a missing item has no score and no
      gallery order to keep): the expected value over all ``n!`` orders of
      the block, each equally likely. Each relevant item lands on position
      ``a + k`` with probability ``1/n``, with ``b + 1 + (k-1)(r-1)/(n-1)``
      relevant items at or above it in expectation, so
      ``S = (r/n) * [(b+1) * D + (r-1)/(n-1) * (n - (a+1) * D)]`` with
      ``D = H(a+n) - H(a)`` (the term with ``n - 1`` is 0 when ``n == 1``):
      ``average_precision_rules``'s tie formula for a tie of ``n`` items
      below ``a`` others;
    * ``"optimistic"``: relevant items first in the block,
      ``S = sum_{i=1..r} (b+i)/(a+i) = r - (a-b) * (H(a+r) - H(a))``;
    * ``"pessimistic"``: relevant items last in the block,
      ``S = sum_{i=1..r} (b+i)/(a+n-r+i) = r - (a+n-r-b) * (H(a+n) - H(a+n-r))``.

    Example: one relevant item scored first of two (``a=2, b=1, ap=1``) and
    two missing items, one relevant (``n=2, r=1``): the relevant one is 3rd
    (precision 2/3) or 4th (2/4) with equal chance, ``S = 7/12`` and
    ``AP = (1 + 7/12) / 2 = 19/24``. Returns ``(Q,)`` float64; ``nan`` where
    ``b + r == 0``; ``ap`` itself where ``r == 0``.
    """
    if ties not in TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; choose one of {TIE_RULES}")
    ap, a, b, n, r = np.broadcast_arrays(np.asarray(ap, dtype=np.float64), *(np.asarray(x, dtype=np.int64) for x in
                                                                               (n_scored, n_relevant_scored, n_missing,
                                                                                n_relevant_missing)))
    if (b > a).any() or (r > n).any() or (a < 0).any() or (n < 0).any() or (b < 0).any() or (r < 0).any():
        raise ValueError("need 0 <= n_relevant_scored <= n_scored and 0 <= n_relevant_missing <= n_missing")
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int((a + n).max(initial=0)) + 1))])
    a_, b_, n_, r_ = (x.astype(np.float64) for x in (a, b, n, r))
    if ties == "optimistic":
        block = r_ - (a_ - b_) * (harmonic[a + r] - harmonic[a])
    elif ties == "pessimistic":
        block = r_ - (a_ + n_ - r_ - b_) * (harmonic[a + n] - harmonic[a + n - r])
    else:
        d = harmonic[a + n] - harmonic[a]
        spread = np.where(n > 1, (r_ - 1) / np.maximum(n_ - 1, 1), 0.0)
        block = r_ / np.maximum(n_, 1) * ((b_ + 1) * d + spread * (n_ - (a_ + 1) * d))
    scored = np.where(b > 0, b_ * np.nan_to_num(ap), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (scored + np.where(r > 0, block, 0.0)) / (b_ + r_)
    return np.where(r > 0, out, np.where(b > 0, ap, np.nan))


def _tie_positions(scores, relevant, valid) -> tuple:
    """Where each relevant item stands in its row: ``(counts, row_start, a, n, b, r, i)``.

    Inputs as ``_checked`` returns them, with at least one relevant item.
    The relevant items are grouped by row, best first, a tie in gallery
    order; ``counts`` ``(Q,)`` is each row's number of them and ``row_start``
    ``(Q,)`` the index of its first; ``a``, ``n``, ``b``, ``r``, ``i`` (int64,
    one per relevant item) are as in ``average_precision_rules``.
    """
    q = scores.shape[0]
    rows, cols = np.nonzero(relevant)
    # Negated scores sorted ascending per row; invalid entries are +inf, last, and never searched for.
    neg = np.where(valid, -scores, np.inf)
    keys = neg[rows, cols]
    ranked = np.sort(neg, axis=1)
    # Relevant items grouped by row (np.nonzero gives them so), best first within a row; stable, so a
    # tie keeps gallery order.
    order = np.lexsort((keys, rows))
    rows, keys = rows[order], keys[order]
    counts = np.bincount(rows, minlength=q)
    row_start = np.cumsum(counts) - counts
    above = np.empty(rows.size, dtype=np.int64)  # a: valid items strictly above
    tied = np.empty(rows.size, dtype=np.int64)  # n: valid items tied, itself included
    for row in np.flatnonzero(counts):
        part = slice(row_start[row], row_start[row] + counts[row])
        above[part] = np.searchsorted(ranked[row], keys[part], side="left")
        tied[part] = np.searchsorted(ranked[row], keys[part], side="right") - above[part]
    # Runs of equal (row, key) among the relevant items: b, r and i.
    new = np.ones(rows.size, dtype=bool)
    new[1:] = (rows[1:] != rows[:-1]) | (keys[1:] != keys[:-1])
    run_start = np.maximum.accumulate(np.where(new, np.arange(rows.size), 0))
    run_len = np.diff(np.append(np.flatnonzero(new), rows.size))
    rel_tied = np.repeat(run_len, run_len)  # r
    rel_above = run_start - row_start[rows]  # b
    i = np.arange(rows.size) - run_start + 1
    return counts, row_start, above, tied, rel_above, rel_tied, i


def _stable_ap(scores, relevant, valid):
    """AP with ties in gallery order: a stable argsort of each row (invalid entries last)."""
    key = np.where(valid, -scores.astype(np.float64), np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    rel = np.take_along_axis(relevant, order, axis=1)
    n_rel = rel.sum(axis=1)
    ranks = np.arange(1, scores.shape[1] + 1, dtype=np.float64)
    ap = (rel * np.cumsum(rel, axis=1) / ranks).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_rel > 0, ap / n_rel, np.nan)


def average_precision(scores, relevant, *, ties: str = "expected") -> float:
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


def bootstrap_ci(values: np.ndarray, rng: np.random.Generator, *, groups: np.ndarray | None = None,
                 n_resamples: int = 1000, confidence: float = 0.95) -> tuple[float, float]:
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
    groups = np.zeros(values.shape) if groups is None else np.asarray(groups)  # no groups: one group of all
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


def paired_bootstrap_ci(values_a: np.ndarray, values_b: np.ndarray, rng: np.random.Generator, *,
                        groups: np.ndarray | None = None, n_resamples: int = 1000,
                        confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the difference of two scorers' means over the same queries.

    ``values_a`` and ``values_b`` are the per-query scores ``(Q,)`` of two
    scorers on the same queries, in the same order. Each resample draws one
    set of queries (with replacement; within each group when ``groups`` is
    given, as ``bootstrap_ci`` does) and scores both scorers on it, so the
    interval is that of ``statistic(a) - statistic(b)`` over the same draws:
    a paired interval. The statistic is linear in the values, so this is
    ``bootstrap_ci`` of ``values_a - values_b`` with the same generator
    draws; a scorer compared with itself gets exactly ``(0.0, 0.0)``.
    Returns ``(low, high)`` in the units of the values.
    """
    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"the two scorers must have one value per query each, got shapes {a.shape} and {b.shape}")
    return bootstrap_ci(a - b, rng, groups=groups, n_resamples=n_resamples, confidence=confidence)
