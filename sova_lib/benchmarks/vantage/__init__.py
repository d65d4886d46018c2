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
harness's layout), ``submissions`` (the submission JSONL, written, read and checked as the leaderboard
checks it), ``scoring`` (the chain
and ``VantageResult``), ``task_prompts`` (each task's prompt and frame plan), ``run`` (running a
describer), ``published`` (the paper's numbers beside computed ones),
``hand_cases`` (the spec's hand-worked cases) and ``synthetic`` (a synthetic
run in the harness's layout): teaching and tests. ``api`` holds what ``sova
vantage`` and the notebooks call: ``describe``, ``evaluate``, ``submit``,
``validate``, ``score_folder``.
"""
from __future__ import annotations

from sova_lib.benchmarks.vantage.api import Described, describe, evaluate, score_folder, submit, validate
from sova_lib.benchmarks.vantage.ground_truth import GroundTruth, GroundTruthSet, read_ground_truth
from sova_lib.benchmarks.vantage.inputs import VantageDataError, VantageItem, read_items
from sova_lib.benchmarks.vantage.metrics_captions import (
    BERTSCORE_MODEL,
    SIMILARITIES,
    BertScoreSimilarity,
    CaptionModelUnavailable,
    MeteorSimilarity,
)
from sova_lib.benchmarks.vantage.parsing import MODES
from sova_lib.benchmarks.vantage.scoring import VantageResult, score_answers
from sova_lib.benchmarks.vantage.submissions import (
    InvalidSubmission,
    check_answer_ids,
    check_submission,
    expected_ids,
    read_submission,
    write_submission,
)
from sova_lib.benchmarks.vantage.task_prompts import DEFAULT_FRAMES
from sova_lib.benchmarks.vantage.tasks import (
    CANONICAL_TASKS,
    TASKS,
    Task,
    canonical_task,
    get_task,
    submission_answers,
    submission_id,
    task_key,
)

__all__ = [
    "BERTSCORE_MODEL",
    "DEFAULT_FRAMES",
    "SIMILARITIES",
    "Described",
    "describe",
    "evaluate",
    "score_folder",
    "submit",
    "validate",
    "CANONICAL_TASKS",
    "MODES",
    "TASKS",
    "BertScoreSimilarity",
    "CaptionModelUnavailable",
    "GroundTruth",
    "GroundTruthSet",
    "InvalidSubmission",
    "MeteorSimilarity",
    "Task",
    "VantageDataError",
    "VantageItem",
    "VantageResult",
    "check_answer_ids",
    "canonical_task",
    "check_submission",
    "expected_ids",
    "get_task",
    "read_ground_truth",
    "read_items",
    "read_submission",
    "score_answers",
    "submission_answers",
    "submission_id",
    "task_key",
    "write_submission",
]
