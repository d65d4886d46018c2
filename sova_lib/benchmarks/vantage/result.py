"""What a VANTAGE-Bench metric returns (``Score``) and what a scored task reports (``VantageResult``).

A metric function returns a ``Score``: the primary value in [0, 1], named
secondary values, and what the bootstrap needs (per-unit values when the
primary is their plain mean, else ``stat(weights)``; see ``bootstrap``).
``VantageResult`` adds the task, the mode, the parse counts and the interval,
with every value reported x100 as the paper does.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sova_lib.benchmarks.vantage.bootstrap import DEFAULT_RESAMPLES, bootstrap_mean, bootstrap_weighted
from sova_lib.benchmarks.vantage.ids import CANONICAL_TASKS, HARNESS_KEYS
from sova_lib.records import make_record

__all__ = ["BENCHMARK", "Score", "VantageResult", "interval", "result_record"]

#: The ``benchmark`` field of a VANTAGE-Bench record (``result_record``).
BENCHMARK = "VANTAGE-Bench"


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


def interval(score: Score, rng: np.random.Generator, n_resamples: int = DEFAULT_RESAMPLES,
             confidence: float = 0.95) -> tuple[float, float] | None:
    """The percentile bootstrap interval of ``score.value`` (in [0, 1]), or ``None`` with no unit."""
    if score.n_units == 0:
        return None
    if score.unit_values is not None:
        return bootstrap_mean(score.unit_values, rng, n_resamples=n_resamples, confidence=confidence)
    if score.stat is None:
        raise ValueError("a Score needs unit_values or stat for an interval")
    return bootstrap_weighted(score.stat, score.n_units, rng, n_resamples=n_resamples, confidence=confidence)


@dataclass
class VantageResult:
    """One task scored in one mode. Values are x100 (the paper's scale).

    ``parse_rate`` = ``n_parsed / n_items``: the share of answers the task's
    parser could read. ``n_scored``: units that entered the statistic (in
    ``parity`` some tasks drop unreadable ones). ``ci``: 95% percentile
    bootstrap interval over ``ci_unit`` resamples, ``(low, high)`` x100, and
    ``half_width`` its half length. ``tie_rule``: how ties are broken where the
    metric has any.
    """

    task: str
    metric: str
    value: float
    mode: str
    n_items: int
    n_parsed: int
    n_scored: int
    ci_unit: str
    tie_rule: str
    ci: tuple[float, float] | None = None
    n_resamples: int = 0
    secondary: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def parse_rate(self) -> float:
        return self.n_parsed / self.n_items if self.n_items else float("nan")

    @property
    def half_width(self) -> float | None:
        return None if self.ci is None else (self.ci[1] - self.ci[0]) / 2

    @property
    def canonical_task(self) -> str:
        """The task's canonical string (``video_qa``, ...), as the harness's files name it."""
        return CANONICAL_TASKS[self.task]

    def to_json(self) -> dict:
        """A JSON-ready dict of every field, with ``canonical_task``, ``harness_key``, ``parse_rate`` and
        ``half_width``."""
        return {
            "task": self.task, "canonical_task": self.canonical_task, "harness_key": HARNESS_KEYS[self.task],
            "metric": self.metric, "value": self.value, "mode": self.mode,
            "n_items": self.n_items, "n_parsed": self.n_parsed, "parse_rate": self.parse_rate,
            "n_scored": self.n_scored, "ci": list(self.ci) if self.ci else None, "half_width": self.half_width,
            "ci_unit": self.ci_unit, "n_resamples": self.n_resamples, "tie_rule": self.tie_rule,
            "secondary": self.secondary, "notes": list(self.notes),
        }


def result_record(result: VantageResult, *, kind: str, source: str, cache: str | None = None,
                  model: str | None = None, similarity: str | None = None, seed: int | None = None) -> dict:
    """The ``sova_lib.records`` record of one scored task (one row of ``figures/results.csv``).

    ``benchmark`` is ``VANTAGE-Bench``; ``protocol`` the canonical task
    string and the mode (``video_qa (parity)``), so each task and mode has a
    file of its own; ``metric``, ``value`` and the interval as scored (x100);
    ``n_queries`` the ground-truth items; ``per_class`` the secondary values
    (rates x100, counts as they are); ``ties`` the task's tie rule;
    ``encoder`` the caption similarity (dense captioning); ``note`` the parse
    rate and every note of the result. ``kind``, ``source``, ``cache`` and
    ``model`` say what was scored (``cache``: a short name of the answers,
    which names the file).
    """
    low, high = result.ci or (None, None)
    per_class = {k: (round(float(v), 2) if isinstance(v, float) else v) for k, v in result.secondary.items()}
    note = "; ".join([f"parsed {result.n_parsed}/{result.n_items} answers, {result.n_scored} "
                      f"{result.ci_unit}s scored", *result.notes])
    return make_record(kind=kind, source=source, benchmark=BENCHMARK,
                       protocol=f"{result.canonical_task} ({result.mode})", metric=result.metric,
                       value=result.value, ci_low=low, ci_high=high, n_queries=result.n_items, per_class=per_class,
                       ties=result.tie_rule, bootstrap=result.n_resamples, seed=seed if result.ci else None,
                       encoder=similarity, cache=cache, model=model, note=note)
