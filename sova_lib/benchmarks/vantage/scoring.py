"""Score a task's raw answers against its ground truth: parse, count, score, bootstrap.

``score_answers(task, ground_truth, answers, mode=...)`` is the whole chain
for any registered task: ``official`` first puts the answers through the
harness's spreadsheet round trip (``spreadsheet.round_trip``), every GT id is
looked up in ``answers`` (a missing answer is an unreadable one), each answer
is parsed in ``mode``, the task's
metric scores the parsed answers, and an item-level bootstrap gives the 95%
interval. Malformed answers never raise: they are counted in the parse rate
and scored as the mode says.

``VantageResult`` is what a scored task reports: the task, the mode, the
parse counts and the interval, with every value x100 as the paper does;
``VantageResult.to_record`` turns it into a results record.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from sova_lib.benchmarks.vantage.ground_truth import GroundTruth
from sova_lib.benchmarks.vantage.metrics import DEFAULT_RESAMPLES, interval
from sova_lib.benchmarks.vantage.parsing import check_mode
from sova_lib.benchmarks.vantage.spreadsheet import round_trip
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, HARNESS_KEYS, TASKS, task_key
from sova_lib.records import make_record

__all__ = ["BENCHMARK", "VantageResult", "score_answers"]

#: The ``benchmark`` field of a VANTAGE-Bench record (``VantageResult.to_record``).
BENCHMARK = "VANTAGE-Bench"


@dataclass
class VantageResult:
    """One task scored in one mode. Values are x100 (the paper's scale).

    ``parse_rate`` = ``n_parsed / n_items``: the share of answers the task's
    parser could read. ``n_scored``: units that entered the statistic (in
    ``official`` some tasks drop unreadable ones). ``ci``: 95% percentile
    bootstrap interval over ``ci_unit`` resamples, ``(low, high)`` x100, and
    ``half_width`` its half length. ``tie_rule``: how ties are broken where the
    metric has any. ``ground_truth_notes``: what the answer key needed that the
    harness's layout does not (``GroundTruthSet.notes``), where it was read.
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
    ground_truth_notes: list = field(default_factory=list)
    context: dict = field(default_factory=dict, repr=False)  # record fields: what was scored and how

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

    def text(self) -> str:
        """The score as ``sova vantage evaluate`` prints it: task, metric, value, interval, parse rate, then each
        secondary value."""
        ci = f"  (95% CI {self.ci[0]:.2f}-{self.ci[1]:.2f}, {self.ci_unit}s)" if self.ci else ""
        return "\n".join([f"{self.canonical_task} ({self.task}): {self.metric} = {self.value:.2f}{ci}  "
                          f"[{self.mode}; parsed {self.n_parsed}/{self.n_items} = {100 * self.parse_rate:.1f}%]",
                          *(f"  {key:<24} {value:.4g}" for key, value in self.secondary.items())])

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

    def to_record(self, **fields) -> dict:
        """This score as one ``sova_lib.records`` record (one row of ``figures/results.csv``).

        ``benchmark`` is ``VANTAGE-Bench``; ``protocol`` the canonical task
        string and the mode (``video_qa (official)``), so each task and mode has a
        file of its own; ``metric``, ``value`` and the interval as scored (x100);
        ``n_queries`` the ground-truth items; ``per_class`` the secondary values
        (rates x100, counts as they are); ``ties`` the task's tie rule;
        ``bootstrap`` the resamples and ``seed`` their seed (kept only when
        there is an interval); ``encoder`` the caption ``similarity`` (dense
        captioning); ``note`` the parse counts (``"parsed N/M answers, K
        <unit>s scored"``) and every note of the result. ``kind``, ``source``
        and ``context`` (``cache``: a short name of the answers, which names
        the file; ``model``) say what was scored: ``self.context`` holds them as ``evaluate_answers`` knew them,
        and ``fields`` add to or replace them (``kind`` and ``source`` are required in one or the other).
        """
        context = {**self.context, **fields}
        if not {"kind", "source"} <= set(context):
            raise TypeError("to_record needs kind= and source=: what was scored (raw answers given as such)")
        kind, source = context.pop("kind"), context.pop("source")
        seed, similarity = context.pop("seed", None), context.pop("similarity", None)
        low, high = self.ci or (None, None)
        per_class = {k: (round(float(v), 2) if isinstance(v, float) else v) for k, v in self.secondary.items()}
        note = "; ".join([f"parsed {self.n_parsed}/{self.n_items} answers, {self.n_scored} "
                          f"{self.ci_unit}s scored", *self.notes])
        return make_record(kind=kind, source=source, benchmark=BENCHMARK,
                           protocol=f"{self.canonical_task} ({self.mode})", metric=self.metric,
                           value=self.value, ci_low=low, ci_high=high, n_queries=self.n_items, per_class=per_class,
                           ties=self.tie_rule, bootstrap=self.n_resamples, seed=seed if self.ci else None,
                           encoder=similarity, note=note, **context)


def score_answers(task: str, ground_truth: Mapping[str, GroundTruth] | list[GroundTruth],
                  answers: Mapping[str, str], *, mode: str = "official", similarity=None,
                  box_coord_order: str = "xyxy", rng: np.random.Generator | None = None,
                  n_resamples: int = DEFAULT_RESAMPLES) -> VantageResult:
    """Score raw ``answers`` (id -> text) of ``task`` (any name ``tasks.task_key`` accepts) against
    ``ground_truth`` in ``mode``.

    ``answers`` in the submission's order. ``official`` reads them as the
    harness's evaluators get them back from its spreadsheet
    (``spreadsheet.round_trip``; a note counts the answers it changed);
    ``strict`` reads them as written. ``similarity``: the caption similarity
    (dense captioning only). ``box_coord_order="yxyx"`` swaps answer boxes to
    x-first before scoring. ``rng``: the bootstrap's generator (``None``: no
    interval). Values are x100.
    """
    mode = check_mode(mode)
    task = task_key(task)
    spec = TASKS[task]
    gts = list(ground_truth.values()) if isinstance(ground_truth, Mapping) else list(ground_truth)
    if not gts:
        raise ValueError(f"no {task} ground truth to score against")
    wrong = [g.id for g in gts if g.task != task]
    if wrong:
        raise ValueError(f"ground truth of id {wrong[0]} is a {gts[0].task} item, not {task}")
    written = answers
    if mode == "official":
        answers = round_trip(answers)
    parsed = []  # in the order of gts
    for gt in gts:
        text = answers.get(gt.id)
        try:
            value = spec.parse(text, mode, gt) if isinstance(text, str) else None
        except Exception:  # noqa: BLE001 - a parser bug must not stop a scoring run; the answer counts as unread
            value = None
        if value is not None and spec.swap is not None and box_coord_order == "yxyx":
            value = spec.swap(value)
        parsed.append(value)
    score = spec.score(gts, parsed, mode, similarity)
    ci = interval(score, rng, n_resamples) if rng is not None and n_resamples > 0 else None
    notes = list(score.notes)
    changed = sum(answers[k] != v for k, v in written.items())
    if changed:
        notes.append(f"{changed} answers changed by the harness's spreadsheet round trip (read as the harness reads "
                     "them back: control characters as _xHHHH_ text, missing-value words as no answer, a leading "
                     "'=' as 0, text cut at 32,767 characters)")
    missing = sum(g.id not in answers for g in gts)
    if missing:
        notes.insert(0, f"{missing} of {len(gts)} GT ids have no answer (scored as unreadable)")
    if spec.left_out is not None:
        dropped = sum(spec.left_out(value) for value in parsed if value is not None)
        if dropped:
            notes.append(f"{dropped} parts of readable answers left out (unreadable time or no caption)")
    extra = set(answers) - {g.id for g in gts}
    if extra:
        notes.append(f"{len(extra)} answers have no GT id and were ignored")
    secondary = {k: (100.0 * v if isinstance(v, float) and not k.startswith("n_") and k != "boxes_per_answer" else v)
                 for k, v in score.secondary.items()}
    return VantageResult(task=task, metric=spec.metric, value=100.0 * score.value, mode=mode, n_items=len(gts),
                         n_parsed=sum(value is not None for value in parsed), n_scored=score.n_units,
                         ci_unit=spec.unit, tie_rule=spec.tie_rule,
                         ci=None if ci is None else (100.0 * ci[0], 100.0 * ci[1]),
                         n_resamples=n_resamples if ci is not None else 0, secondary=secondary, notes=notes)
