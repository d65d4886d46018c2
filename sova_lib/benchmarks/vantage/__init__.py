"""VANTAGE-Bench: eight fixed-camera task formats, their answer parsers and metrics.

Tasks (``TASKS``): video question answering (accuracy), event verification
(Macro F1), temporal localization (mIoU), dense video captioning (SODA_c),
2D referring expressions (mIoU), 2D spatial pointing (accuracy), 2D object
localization (F1@0.5) and single object tracking (Success AUC). Every score
is computed in one of two modes: ``official`` (the public harness's behaviour,
so numbers match the leaderboard; the default) or ``strict`` (every
unreadable answer scored as wrong or zero). Results record their mode and
parse rate, and carry an item-level bootstrap interval.

Modules, by concern: ``inputs`` (the public items: TSVs, RefEx annotations,
SOT folders), ``tasks`` (task names, leaderboard ids and the ``Task``
registry), ``parsing`` / ``parsing_boxes`` (answer parsers of the text and
the box tasks, and the modes), ``metrics`` (``Score``, the bootstrap, and
the per-item metrics), ``metrics_boxes`` (box geometry, RefEx IoU, object
localization F1, tracking Success AUC), ``metrics_captions`` (SODA_c and
caption similarities), ``ground_truth`` (the ground-truth JSONL in the
harness's layout), ``submissions`` (the submission JSONL, written, read and
checked as the leaderboard checks it), ``scoring`` (the chain and
``VantageResult``), ``run`` (each task's prompt and frame plan, and running a
describer), ``published`` (the paper's numbers beside
computed ones), ``hand_cases`` (the spec's hand-worked cases) and
``synthetic`` (a synthetic run in the harness's layout): teaching and tests;
``harness_prompts`` writes a prompts file from the user's checkout of the
harness (its own ``build_prompt``).
``api`` holds what ``sova vantage`` and the notebooks call: ``describe``,
``evaluate_answers``, ``submit``, ``validate``, ``score_folder``.
"""
from __future__ import annotations

from sova_lib.benchmarks.vantage.api import (
    NoAnswer,
    describe,
    evaluate_answers,
    run_plan,
    score_folder,
    submit,
    validate,
)
from sova_lib.benchmarks.vantage.harness_prompts import (
    HARNESS_CLASSES,
    PLAN_OPTIONS,
    VIDEO_INPUTS,
    HarnessDependencyMissing,
    harness_prompts,
)
from sova_lib.benchmarks.vantage.inputs import read_items
from sova_lib.benchmarks.vantage.metrics_captions import BERTSCORE_MODEL, SIMILARITIES, CaptionModelUnavailable
from sova_lib.benchmarks.vantage.parsing import MODES
from sova_lib.benchmarks.vantage.run import DEFAULT_FRAMES
from sova_lib.benchmarks.vantage.scoring import VantageResult
from sova_lib.benchmarks.vantage.submissions import InvalidSubmission
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, TASKS, task_key

__all__ = ["BERTSCORE_MODEL", "CANONICAL_TASKS", "DEFAULT_FRAMES", "HARNESS_CLASSES", "MODES", "PLAN_OPTIONS",
           "SIMILARITIES",
           "TASKS", "VIDEO_INPUTS", "CaptionModelUnavailable", "HarnessDependencyMissing", "InvalidSubmission",
           "NoAnswer", "VantageResult", "describe", "evaluate_answers", "harness_prompts", "read_items", "run_plan",
           "score_folder", "submit", "task_key", "validate"]
