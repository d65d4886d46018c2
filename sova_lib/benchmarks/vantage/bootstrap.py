"""Item-level bootstrap intervals for the VANTAGE-Bench metrics (paper appendix G.1).

The resampling unit is the task's item (a tracklet for tracking, a video for
dense captioning). Each of ``n_resamples`` resamples draws ``n`` units with
replacement from a ``numpy.random.Generator``; the statistic is recomputed
with the task's own aggregation, and the interval is the 2.5th and 97.5th
percentile of the resampled statistics (``half_width = (hi - lo) / 2``).

* A plain mean over units (accuracy, RefEx mIoU, SODA_c, Success AUC) goes
  through ``sova_lib.metrics.bootstrap_ci``.
* Any other statistic (Macro F1 and pooled F1 re-summed from per-unit
  counts, a video-macro mean) is written as ``stat(weights)``, where
  ``weights`` is a ``(B, n)`` array of how often each unit was drawn in each
  resample, and ``bootstrap_weighted`` evaluates it in chunks of resamples.
  ``stat(np.ones((1, n)))`` is the point estimate, so the interval and the
  score come from one function.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sova_lib.metrics import bootstrap_ci

__all__ = ["DEFAULT_RESAMPLES", "bootstrap_mean", "bootstrap_weighted", "resample_weights"]

#: Resamples per interval, as in the paper (appendix G.1).
DEFAULT_RESAMPLES = 10_000


def resample_weights(n: int, rng: np.random.Generator, size: int) -> np.ndarray:
    """``(size, n)`` counts: how often each of ``n`` units is drawn in each of ``size`` resamples of ``n`` draws."""
    idx = rng.integers(0, n, size=(size, n))
    flat = (idx + np.arange(size)[:, None] * n).ravel()
    return np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)


def bootstrap_weighted(stat: Callable[[np.ndarray], np.ndarray], n: int, rng: np.random.Generator, *,
                       n_resamples: int = DEFAULT_RESAMPLES, confidence: float = 0.95,
                       chunk: int = 1000) -> tuple[float, float]:
    """Percentile interval of ``stat`` over ``n_resamples`` resamples of ``n`` units.

    ``stat`` maps ``(B, n)`` draw counts to ``(B,)`` statistics; a resample
    whose statistic is undefined (``nan``, e.g. no scorable unit drawn) is
    left out. Returns ``(low, high)`` in the units of ``stat``.
    """
    if n < 1:
        raise ValueError("a bootstrap needs at least one unit")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    parts = []
    for start in range(0, n_resamples, chunk):
        parts.append(np.asarray(stat(resample_weights(n, rng, min(chunk, n_resamples - start))), dtype=np.float64))
    stats = np.concatenate(parts)
    stats = stats[np.isfinite(stats)]
    if not stats.size:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return float(low), float(high)


def bootstrap_mean(values, rng: np.random.Generator, *, n_resamples: int = DEFAULT_RESAMPLES,
                   confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean of per-unit ``values`` (``(n,)``): ``sova_lib.metrics.bootstrap_ci``."""
    return bootstrap_ci(np.asarray(values, dtype=np.float64), rng, n_resamples=n_resamples, confidence=confidence)
