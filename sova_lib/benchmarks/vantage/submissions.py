"""The leaderboard's submission JSONL: written and read as the VANTAGE-Bench harness does, and checked as the
leaderboard checks it.

Submission, one object per ground-truth id (harness ``emit.py`` lines 227-240)::

    {"id": <leaderboard id>, "task": <canonical task string>,
     "conversations": [{"from": "assistant", "value": "<raw answer>"}],
     "metadata": {"model": ..., "box_coord_order": "xyxy" or "yxyx", "extra": {}}}

``write_submission`` writes one and checks it, ``read_submission`` reads one
back. ``check_submission(path, task, expected_ids)`` returns one line per
problem, each naming the file, the line and the id, and an empty list for a
file the leaderboard accepts. The rules are those of the harness's two
validators (``vlmeval/dataset/utils/vantagebench/validate.py`` lines
119-189, the server-side check; ``scripts/validate_submission.py`` lines
306-390, the pre-upload check):

- every non-blank line is one JSON object with ``id``, ``task``,
  ``conversations`` and ``metadata``;
- ``id`` is a non-empty string of the task's shape (``tasks.ID_PATTERNS``)
  and appears once;
- ``task`` is the canonical task string (``video_qa``, ..., never the short
  key);
- ``conversations`` holds a ``{"from": "assistant", "value": <string>}`` turn;
- ``metadata.box_coord_order``, where given, is ``xyxy`` or ``yxyx`` and the
  same on every line (the scorer reads it from the first record only);
- with ``expected_ids`` (the ground truth's or the public items' ids): each
  of them has a record and no record has another id.

The leaderboard's files use the ids of ``tasks.submission_id``
(``vtest_lawn_0600-0659__q_000000``); ``api.evaluate_answers`` stops a scoring
whose answers name none of the ground truth's ids. The ground-truth JSONL is
``ground_truth``'s.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from sova_lib.benchmarks.vantage.inputs import VantageDataError, jsonl_objects, turn_value
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, ID_PATTERNS, task_key
from sova_lib.storage import json_line, lines, read_text, write_text

__all__ = ["InvalidSubmission", "check_submission", "read_submission", "write_submission"]


class InvalidSubmission(ValueError):
    """A submission the leaderboard would refuse; ``problems`` holds one line per problem."""

    def __init__(self, path, problems: list[str]):
        self.path, self.problems = str(path), list(problems)
        super().__init__(f"{path} is not a valid VANTAGE-Bench submission ({len(problems)} problem"
                         f"{'s' if len(problems) != 1 else ''}; first: {problems[0]})")


def _turn_problem(turns) -> str | None:
    if not isinstance(turns, list) or not turns:
        return "'conversations' must be a non-empty list of turns"
    for turn in turns:
        if isinstance(turn, dict) and turn.get("from") == "assistant":
            if isinstance(turn.get("value"), str):
                return None
            return "the assistant turn's 'value' must be a string (the raw answer text)"
    return "no {\"from\": \"assistant\", \"value\"} turn"


def check_submission(path, task: str, expected_ids: Iterable[str] | None = None) -> list[str]:  # noqa: C901 - one check after another, as the leaderboard makes them
    """The problems of submission ``path`` for ``task`` (any accepted task name), one line each; [] if valid."""
    path = Path(path)
    key = task_key(task)
    want_task, pattern = CANONICAL_TASKS[key], ID_PATTERNS[key]
    problems: list[str] = []
    seen: dict[str, int] = {}
    first_order: tuple[int, str] | None = None
    for number, raw in lines(read_text(path)):
        where = f"{path}, line {number}"
        try:
            rec = json.loads(raw)
        except ValueError as err:
            problems.append(f"{where}: not valid JSON ({err})")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        rid = rec.get("id")
        if not isinstance(rid, str) or not rid:
            problems.append(f"{where}: 'id' must be a non-empty string, got {rid!r}")
            continue
        where = f"{where}, id {rid}"
        first = seen.setdefault(rid, number)
        if first != number:
            problems.append(f"{where}: id appears again (first on line {first})")
        if rec.get("task") != want_task:
            problems.append(f"{where}: task {rec.get('task')!r}; the leaderboard needs {want_task!r}")
        if not pattern.match(rid):
            problems.append(f"{where}: id does not have the {want_task} shape {pattern.pattern}")
        turn = _turn_problem(rec.get("conversations"))
        if turn:
            problems.append(f"{where}: {turn}")
        meta = rec.get("metadata")
        if not isinstance(meta, dict):
            problems.append(f"{where}: 'metadata' must be an object ({{model, box_coord_order, extra}})")
            continue
        order = meta.get("box_coord_order", "xyxy")
        if order not in ("xyxy", "yxyx"):
            problems.append(f"{where}: metadata.box_coord_order must be 'xyxy' or 'yxyx', got {order!r}")
        elif first_order is None:
            first_order = (number, order)
        elif order != first_order[1]:
            problems.append(f"{where}: metadata.box_coord_order {order!r} differs from line {first_order[0]}'s "
                            f"{first_order[1]!r} (the scorer reads the first record's for the whole file)")
    if not seen and not problems:
        problems.append(f"{path}: no record")
    if expected_ids is not None:
        expected = set(expected_ids)
        problems += [f"{path}, id {rid}: no record for this ground-truth id" for rid in sorted(expected - set(seen))]
        problems += [f"{path}, line {seen[rid]}, id {rid}: not an id of the ground truth"
                     for rid in sorted(set(seen) - expected)]
    return problems


def write_submission(path, task: str, answers: Mapping[str, str], *, model: str, box_coord_order: str = "xyxy",
                     expected_ids: Iterable[str] | None = None, extra: dict | None = None) -> Path:
    """Write the leaderboard's submission JSONL for ``task`` (any accepted name), then check it.

    ``answers``: leaderboard id (``tasks.submission_id``) -> raw answer text,
    written in that order exactly as the harness's emitter writes records;
    ``extra`` goes to each record's ``metadata.extra`` (free-form there: the
    harness's checks read ``model`` and ``box_coord_order`` only).
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
                   "metadata": {"model": model, "box_coord_order": box_coord_order, "extra": extra or {}}})
        for key, text in answers.items()))
    problems = check_submission(path, task, expected_ids)
    if problems:
        raise InvalidSubmission(path, problems)
    return path


def read_submission(path) -> tuple[dict[str, str], dict]:
    """``(answers, info)`` of a submission JSONL: id -> raw answer, and ``{task, model, box_coord_order,
    fingerprint}``.

    ``task`` is the library key of the file's task, read from the canonical
    task string every record carries; ``fingerprint`` the weights' fingerprint
    that ``api.submit`` keeps in ``metadata.extra`` (``None`` where there is
    none, as in the harness's own files). Every line must share one task,
    model, box order and fingerprint; an id may appear once.
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
        meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
        extra = meta.get("extra") if isinstance(meta.get("extra"), dict) else {}
        this = {"task": task_key(rec["task"]), "model": meta.get("model"),
                "box_coord_order": meta.get("box_coord_order", "xyxy"), "fingerprint": extra.get("fingerprint")}
        if this["box_coord_order"] not in ("xyxy", "yxyx"):
            raise VantageDataError(path, line, "metadata.box_coord_order", "expected 'xyxy' or 'yxyx'")
        if info and this != info:
            raise VantageDataError(path, line, "task", f"expected {info}, got {this}: one task and model per file")
        info = this
        if str(rec["id"]) in answers:
            raise VantageDataError(path, line, "id", f"id {rec['id']} appears twice")
        value = turn_value(rec, "assistant", path, line)  # the raw answer; JSON text when it is not a string
        answers[str(rec["id"])] = value if isinstance(value, str) else json.dumps(value)
    return answers, info

