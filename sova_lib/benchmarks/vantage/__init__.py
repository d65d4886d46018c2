"""VANTAGE-Bench: eight fixed-camera task formats, their answer parsers and metrics.

Tasks (``TASKS``): video question answering (accuracy), event verification
(Macro F1), temporal localization (mIoU), dense video captioning (SODA_c),
2D referring expressions (mIoU), 2D spatial pointing (accuracy), 2D object
localization (F1@0.5) and single object tracking (Success AUC). Every score
is computed in one of two modes: ``parity`` (the public harness's behaviour,
so numbers match the leaderboard; the default) or ``strict`` (every
unreadable answer scored as wrong or zero). Results record their mode and
parse rate, and carry an item-level bootstrap interval.

Modules: ``inputs`` (public files), ``records`` (ground truth and
submission JSONL in the harness's layout), ``ids`` (task names and
leaderboard ids), ``validate`` (the leaderboard's checks of a submission),
``submission`` (matching answers to ground-truth ids), ``parse_text`` / ``parse_boxes`` (parsers), ``boxes``,
``metrics_basic``, ``metrics_tracking``, ``soda`` and ``captions``
(metrics), ``bootstrap``, ``result``, ``prompts``, ``tasks`` (registry),
``scoring`` (the chain), ``published`` (the paper's numbers), ``run``
(running a describer).
"""
from __future__ import annotations

from sova_lib.benchmarks.vantage.captions import BertScoreSimilarity, CaptionModelUnavailable, MeteorSimilarity
from sova_lib.benchmarks.vantage.ids import CANONICAL_TASKS, canonical_task, submission_answers, submission_id, task_key
from sova_lib.benchmarks.vantage.inputs import VantageDataError, VantageItem, read_items
from sova_lib.benchmarks.vantage.parse_text import MODES
from sova_lib.benchmarks.vantage.records import (
    GroundTruth,
    GroundTruthSet,
    read_ground_truth,
    read_submission,
    write_submission,
)
from sova_lib.benchmarks.vantage.result import VantageResult
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.submission import align_answers, expected_ids
from sova_lib.benchmarks.vantage.tasks import TASKS, Task, get_task
from sova_lib.benchmarks.vantage.validate import InvalidSubmission, check_submission

__all__ = [
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
    "align_answers",
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
