"""What a VANTAGE-Bench metric returns (``Score``), its bootstrap interval, and the metrics of the
answer-per-item tasks: accuracy (VQA, pointing), Macro F1 (event verification) and temporal IoU.

A metric function returns a ``Score``: the primary value in [0, 1], named
secondary values, and what the bootstrap needs: per-unit values when the
primary is their plain mean, else ``stat(weights)``. Inputs are the ground
truths and the parsed answers of one task, item by item (``None`` = an
answer the parser could not read). Every function is pure (spec section 2).

Bootstrap (paper appendix G.1): the resampling unit is the task's item (a
tracklet for tracking, a video for dense captioning). Each of
``n_resamples`` resamples draws ``n`` units with replacement from a
``numpy.random.Generator``; the statistic is recomputed with the task's own
aggregation, and the interval is the 2.5th and 97.5th percentile of the
resampled statistics (``half_width = (hi - lo) / 2``).

* A plain mean over units (accuracy, RefEx mIoU, SODA_c, Success AUC) goes
  through the core ``sova_lib.metrics.bootstrap_ci``.
* Any other statistic (Macro F1 and pooled F1 re-summed from per-unit
  counts, a video-macro mean) is written as ``stat(weights)``, where
  ``weights`` is a ``(B, n)`` array of how often each unit was drawn in each
  resample, and ``bootstrap_weighted`` evaluates it in chunks of resamples
  (the same draws as ``bootstrap_ci`` for one chunk: the unit is the same).
  ``stat(np.ones((1, n)))`` is the point estimate, so the interval and the
  score come from one function.

``metrics`` is one named module in the core and in each benchmark with metrics of its own
(``sova_lib.metrics``, ``sova_lib.benchmarks.muvr.metrics``, ``sova_lib.benchmarks.vantage.metrics``): the
benchmark's metrics as pure functions over arrays, with shapes, tie rule and denominators in each docstring.
This one holds VANTAGE-Bench's.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sova_lib.benchmarks.vantage.parsing import check_mode
from sova_lib.metrics import bootstrap_ci

__all__ = ["DEFAULT_RESAMPLES", "Score", "accuracy", "bootstrap_weighted", "interval", "iou_matrix", "macro_f1",
           "macro_f1_counts", "resample_weights", "temporal_iou"]

#: Resamples per interval, as in the paper (appendix G.1).
DEFAULT_RESAMPLES = 10_000


def resample_weights(n: int, rng: np.random.Generator, size: int) -> np.ndarray:
    """``(size, n)`` counts: how often each of ``n`` units is drawn in each of ``size`` resamples of ``n`` draws."""
    idx = rng.integers(0, n, size=(size, n))
    flat = (idx + np.arange(size)[:, None] * n).ravel()
    return np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)


def bootstrap_weighted(stat: Callable[[np.ndarray], np.ndarray], n: int, rng: np.random.Generator, *,
                       n_resamples: int = DEFAULT_RESAMPLES, chunk: int = 1000) -> tuple[float, float]:
    """95% percentile interval of ``stat`` over ``n_resamples`` resamples of ``n`` units.

    ``stat`` maps ``(B, n)`` draw counts to ``(B,)`` statistics; a resample
    whose statistic is undefined (``nan``, e.g. no scorable unit drawn) is
    left out. Returns ``(low, high)`` in the units of ``stat``.
    """
    if n < 1:
        raise ValueError("a bootstrap needs at least one unit")
    sizes = [min(chunk, n_resamples - start) for start in range(0, n_resamples, chunk)]
    stats = np.concatenate([np.asarray(stat(resample_weights(n, rng, size)), dtype=np.float64) for size in sizes])
    stats = stats[np.isfinite(stats)]
    if not stats.size:
        return float("nan"), float("nan")
    low, high = np.quantile(stats, [0.025, 0.975])
    return float(low), float(high)


@dataclass
class Score:
    """A metric's output on one task.

    ``value``: the primary metric in [0, 1]. ``secondary``: other metrics in
    [0, 1] (counts and rates named as such). ``n_units``: the resampling
    units (items, videos or tracklets) the statistic is computed over.
    ``unit_values``: ``(n_units,)`` per-unit values when ``value`` is their
    mean, else ``None`` and ``stat`` maps ``(B, n_units)`` draw counts to
    ``(B,)`` statistics. ``notes``: what was skipped or counted, in words.
    """

    value: float
    secondary: dict = field(default_factory=dict)
    n_units: int = 0
    unit_values: np.ndarray | None = None
    stat: Callable[[np.ndarray], np.ndarray] | None = None
    notes: list = field(default_factory=list)


def interval(score: Score, rng: np.random.Generator,
             n_resamples: int = DEFAULT_RESAMPLES) -> tuple[float, float] | None:
    """The 95% percentile bootstrap interval of ``score.value`` (in [0, 1]), or ``None`` with no unit."""
    if score.n_units == 0:
        return None
    if score.unit_values is not None:
        return bootstrap_ci(np.asarray(score.unit_values, dtype=np.float64), rng, n_resamples=n_resamples)
    return bootstrap_weighted(score.stat, score.n_units, rng, n_resamples=n_resamples)


def iou_matrix(a, b, dims: int = 1) -> np.ndarray:
    """IoU of every interval ``(start, end)`` (``dims=1``) or box ``(x1, y1, x2, y2)`` (``dims=2``) of ``a``
    (``(M, 2 dims)``) with every one of ``b`` (``(N, 2 dims)``): an ``(M, N)`` array.

    Per axis the overlap is max(0, min(ends) - max(starts)) and a side max(0, end - start); I = the product of
    the overlaps (a box: width x height, continuous, no "+1" pixel), U = the product of the sides of each,
    summed, minus I; IoU = I / U, and 0 when U = 0 (a pair whose union has no length or area). An interval
    with a ``nan`` or infinite time has IoU 0 with every finite one, as in the harness's scalar arithmetic
    (``vantage_dvc.py:26-29``).
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, 2 * dims)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 2 * dims)
    with np.errstate(invalid="ignore", divide="ignore"):
        overlap = np.minimum(a[:, None, dims:], b[None, :, dims:]) - np.maximum(a[:, None, :dims], b[None, :, :dims])
        inter = np.prod(np.clip(overlap, 0, None), axis=2)
        size_a, size_b = (np.prod(np.clip(x[:, dims:] - x[:, :dims], 0, None), axis=1) for x in (a, b))
        union = size_a[:, None] + size_b[None, :] - inter
        return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def accuracy(truth: Sequence[str], answers: Sequence[str | None]) -> Score:
    """Share of items whose parsed letter equals the truth; an unreadable answer is wrong (both modes).

    ``truth`` and ``answers``: ``(N,)`` letters. Denominator: all ``N`` items.
    """
    if len(truth) != len(answers):
        raise ValueError(f"{len(truth)} truths but {len(answers)} answers")
    correct = np.array([a is not None and a == t for t, a in zip(truth, answers)], dtype=np.float64)
    return Score(float(correct.mean()) if correct.size else float("nan"), n_units=correct.size, unit_values=correct)


def macro_f1_counts(truth_index: np.ndarray, pred_index: np.ndarray, n_classes: int, weights: np.ndarray,
                    labels: Sequence[int] | None = None) -> np.ndarray:
    """Macro F1 of weighted items, for each row of ``weights`` (``(B, N)``): ``(B,)`` values.

    ``truth_index`` / ``pred_index``: ``(N,)`` class numbers in ``0 .. n_classes-1``.
    Per class c: TP, FP, FN are the weighted counts; F1 = 2TP / (2TP + FP + FN)
    (0 when the denominator is 0, as scikit-learn's ``zero_division=0``).
    ``labels=None`` averages over the classes present in truth or answers of
    each resample; else over ``labels``.
    """
    pair = np.asarray(truth_index) * n_classes + np.asarray(pred_index)
    conf = (weights @ np.eye(n_classes * n_classes)[pair]).reshape(-1, n_classes, n_classes)  # [b, truth, pred]
    tp = np.diagonal(conf, axis1=1, axis2=2)
    fn = conf.sum(axis=2) - tp
    fp = conf.sum(axis=1) - tp
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)
    if labels is not None:
        return f1[:, list(labels)].mean(axis=1)
    present = (tp + fp + fn) > 0
    with np.errstate(invalid="ignore"):
        return np.where(present, f1, 0.0).sum(axis=1) / present.sum(axis=1)


def macro_f1(truth: Sequence[str], answers: Sequence[str | None], mode: str = "official") -> Score:
    """Macro F1 of yes/no answers (event verification): ``macro_f1_counts`` with every item counted once, the
    value scikit-learn's ``f1_score(..., average="macro", zero_division=0)`` gives, as the harness computes it.

    ``official`` (harness ``vantage_event_verification.py:222-227``): items
    with an unreadable answer are dropped; the average runs over the labels
    present in truth or answers (all "yes" on both sides gives 1.0); with no
    readable answer at all the value is 0.
    ``strict``: every item counts, an unreadable answer is the label
    ``"invalid"``, and the average runs over ``["no", "yes"]``.
    Truth y,y,n,n with answers yes,no,no,None: 0.6667 (official), 0.5833 (strict).
    """
    mode = check_mode(mode)
    if len(truth) != len(answers):
        raise ValueError(f"{len(truth)} truths but {len(answers)} answers")
    truth = [str(t).strip().lower() for t in truth]
    classes = ["no", "yes", "invalid"]
    if mode == "official":
        keep = [k for k, a in enumerate(answers) if a is not None]
        t, p = [truth[k] for k in keep], [answers[k] for k in keep]
        fixed = None
    else:
        t, p = truth, [a if a is not None else "invalid" for a in answers]
        fixed = [0, 1]
    ti = np.array([classes.index(x) if x in classes else 2 for x in t], dtype=int)
    pi = np.array([classes.index(x) for x in p], dtype=int)
    # no readable answer at all: the harness reports 0 (vantage_event_verification.py:229-231)
    empty = 0.0 if mode == "official" else float("nan")
    value = float(macro_f1_counts(ti, pi, 3, np.ones((1, len(t))), labels=fixed)[0]) if t else empty
    dropped = len(truth) - len(t)
    notes = [f"{dropped} unreadable answers dropped (harness behaviour)"] if dropped else []
    return Score(value, n_units=len(t), stat=lambda w: macro_f1_counts(ti, pi, 3, w, labels=fixed), notes=notes,
                 secondary={"share_yes_answers": float(np.mean([x == "yes" for x in p])) if p else float("nan")})


def _video_macro(values: np.ndarray, groups: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mean over groups (videos) of each group's weighted mean, for each row of ``weights``."""
    names, inverse = np.unique(groups, return_inverse=True)
    member = np.eye(names.size)[inverse]  # (N, videos): which video each item is of
    sums, counts = weights @ (member * values[:, None]), weights @ member
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), 0.0)
        return means.sum(axis=1) / (counts > 0).sum(axis=1)


def _clamped(span, d) -> tuple[float, float]:
    """``span`` with both ends clamped to [0, d], sorted."""
    return tuple(sorted(min(max(float(v), 0.0), float(d)) for v in span))


def temporal_iou(truth: Sequence[tuple[float, float]], answers: Sequence[tuple[float, float] | None],
                 durations: Sequence[float], videos: Sequence[str], mode: str = "official") -> Score:
    """Temporal-localization mIoU: the mean over videos of each video's mean IoU (harness ``vantage_temporal.py:560``).

    ``truth``: ``(N,)`` GT ``(start, end)`` in seconds; ``answers``: parsed
    ``(start, end)`` or ``None``; ``durations``: ``(N,)`` GT video lengths d
    (the harness's default is 30 s); ``videos``: ``(N,)`` video names. An answer
    and its GT are clamped to [0, d] and sorted, as the harness reads both
    back (``vantage_temporal.py:540-542``). An unreadable answer is the whole video
    ``[0, d]`` in ``official`` and IoU 0 in ``strict``. Secondary: R@0.5 (video
    macro), and the item means of IoU and R@0.5 (spec section 8, gap 2).
    """
    mode = check_mode(mode)
    n = len(truth)
    if not n == len(answers) == len(durations) == len(videos):
        raise ValueError("truth, answers, durations and videos must have one length")
    iou = np.zeros(n)
    for k, (gt, ans, d) in enumerate(zip(truth, answers, durations)):
        if ans is None and mode == "strict":
            continue
        # official: an unreadable answer is the whole video
        iou[k] = iou_matrix([_clamped(gt, d)], [_clamped(ans or (0.0, d), d)])[0, 0]
    groups = np.asarray([str(v) for v in videos])
    hit = (iou >= 0.5).astype(np.float64)
    one = np.ones((1, n))
    secondary = {
        "R@0.5": float(_video_macro(hit, groups, one)[0]) if n else float("nan"),
        "mIoU_item_mean": float(iou.mean()) if n else float("nan"),
        "R@0.5_item_mean": float(hit.mean()) if n else float("nan"),
        "n_videos": int(np.unique(groups).size),
    }
    value = float(_video_macro(iou, groups, one)[0]) if n else float("nan")
    return Score(value, secondary, n_units=n, stat=lambda w: _video_macro(iou, groups, w))

