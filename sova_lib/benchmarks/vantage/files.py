"""The leaderboard's submission JSONL, as the VANTAGE-Bench harness writes and reads it.

Submission, one object per ground-truth id (harness ``emit.py`` lines 227-240)::

    {"id": <leaderboard id>, "task": <canonical task string>,
     "conversations": [{"from": "assistant", "value": "<raw answer>"}],
     "metadata": {"model": ..., "box_coord_order": "xyxy" or "yxyx", "extra": {}}}

The ground-truth JSONL is ``sova_lib.benchmarks.vantage.ground_truth``'s
(``GroundTruth``, ``GroundTruthSet``, ``read_ground_truth``); ``tasks`` builds the ids and names the tasks; ``submissions``
checks a file.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from sova_lib.benchmarks.vantage.inputs import VantageDataError, jsonl_objects
from sova_lib.benchmarks.vantage.submissions import InvalidSubmission, check_submission
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, task_key
from sova_lib.storage import json_line, write_text

__all__ = ["read_submission", "write_submission"]


def write_submission(path, task: str, answers: Mapping[str, str], *, model: str, box_coord_order: str = "xyxy",
                     expected_ids: Iterable[str] | None = None) -> Path:
    """Write the leaderboard's submission JSONL for ``task`` (any accepted name), then check it.

    ``answers``: leaderboard id (``tasks.submission_id``) -> raw answer text,
    written in that order exactly as the harness's emitter writes records.
    The written file is checked with ``submissions.check_submission`` against
    ``expected_ids`` (every id that needs an answer; ``None``: ids and shapes
    only) and ``InvalidSubmission`` lists its problems when it fails; the
    file stays on disk for inspection.
    """
    if box_coord_order not in ("xyxy", "yxyx"):
        raise ValueError("box_coord_order must be 'xyxy' or 'yxyx'")
    canonical = CANONICAL_TASKS[task_key(task)]
    path = write_text(path, "".join(
        json_line({"id": key, "task": canonical, "conversations": [{"from": "assistant", "value": str(text)}],
                   "metadata": {"model": model, "box_coord_order": box_coord_order, "extra": {}}})
        for key, text in answers.items()))
    problems = check_submission(path, task, expected_ids)
    if problems:
        raise InvalidSubmission(path, problems)
    return path


def _assistant_text(rec: dict, path, line: int) -> str:
    """The assistant answer: the ``value`` of the turn ``from`` the assistant (JSON text when it is not a string)."""
    turns = rec.get("conversations")
    if not isinstance(turns, list):
        raise VantageDataError(path, line, "conversations", "expected a list of {from, value} turns")
    for turn in turns:
        if isinstance(turn, dict) and turn.get("from") == "assistant" and "value" in turn:
            value = turn["value"]
            return value if isinstance(value, str) else json.dumps(value)
    raise VantageDataError(path, line, "conversations", "no turn from 'assistant' with a 'value'")


def read_submission(path) -> tuple[dict[str, str], dict]:
    """``(answers, info)`` of a submission JSONL: id -> raw answer, and ``{task, model, box_coord_order}``.

    ``task`` is the library key of the file's task, read from the canonical
    task string every record carries. Every line must share one task, model
    and box order; an id may appear once.
    """
    path = Path(path)
    answers: dict[str, str] = {}
    info: dict = {}
    for line, rec in jsonl_objects(path):
        for key in ("id", "task"):
            if key not in rec:
                raise VantageDataError(path, line, key, "missing")
        if rec["task"] not in CANONICAL_TASKS.values():
            raise VantageDataError(path, line, "task", f"{rec['task']!r} is not a canonical task string "
                                                       f"({', '.join(CANONICAL_TASKS.values())})")
        this_task = task_key(rec["task"])
        meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
        this = {"task": this_task, "model": meta.get("model"), "box_coord_order": meta.get("box_coord_order", "xyxy")}
        if this["box_coord_order"] not in ("xyxy", "yxyx"):
            raise VantageDataError(path, line, "metadata.box_coord_order", "expected 'xyxy' or 'yxyx'")
        if info and this != info:
            raise VantageDataError(path, line, "task", f"expected {info}, got {this}: one task and model per file")
        info = this
        if str(rec["id"]) in answers:
            raise VantageDataError(path, line, "id", f"id {rec['id']} appears twice")
        answers[str(rec["id"])] = _assistant_text(rec, path, line)
    return answers, info

