"""The private ground-truth JSONL and the leaderboard's submission JSONL (spec section 3).

Ground truth, one object per line::

    {"id": ..., "media": ..., "category": ..., "conversations": [..., {"from": "gpt", "value": V}],
     "metadata": {"extra": {...}}}

where ``V`` (JSON text or a JSON value) is, per task: the letter (vqa,
pointing); "Yes"/"No" (event_verification); ``{"start", "end"}`` with
``extra.duration`` in seconds (temporal; 30 when absent); a list of
``{start, end, caption}`` (dvc); ``{frame_id: box or null}`` with
``extra.frame_ids``, frame 0 first (sot); and, for the box tasks, a list of
pixel boxes ``[x1, y1, x2, y2]`` (or ``{"bbox_2d": box}``) with
``extra.width``/``extra.height`` (refex, astro; the release documents no
layout for these two, so this is the library's).

Submission, one object per GT id::

    {"id": ..., "task": ..., "conversations": [{"from": "assistant", "value": "<raw answer>"}],
     "metadata": {"model": ..., "box_coord_order": "xyxy" or "yxyx"}}
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sova_lib.benchmarks.vantage.inputs import VantageDataError
from sova_lib.benchmarks.vantage.parse_text import parse_time

__all__ = ["GroundTruth", "read_ground_truth", "read_submission", "write_submission"]

_TASKS = ("vqa", "event_verification", "temporal", "dvc", "refex", "pointing", "astro", "sot")


@dataclass(frozen=True)
class GroundTruth:
    """One item's answer key. ``value`` by task: letter; "yes"/"no"; ``(start, end)`` s; a list of
    ``(start, end, caption)``; a list of pixel boxes; ``{k: box or None}`` for frames k = 1 .. N-1.
    ``extra``: ``duration``, ``width``/``height``, ``n_frames``, ... ."""

    id: str
    task: str
    value: Any
    media: str = ""
    category: str = ""
    extra: dict = field(default_factory=dict, compare=False)


def _lines(path: Path):
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except ValueError as err:
                raise VantageDataError(path, number, None, f"not a JSON object ({err})") from None
            if not isinstance(rec, dict):
                raise VantageDataError(path, number, None, "not a JSON object")
            yield number, rec


def _value_of(rec: dict, speaker: str, path, line: int):
    turns = rec.get("conversations")
    if not isinstance(turns, list):
        raise VantageDataError(path, line, "conversations", "expected a list of {from, value} turns")
    for turn in reversed(turns):
        if isinstance(turn, dict) and turn.get("from") == speaker and "value" in turn:
            return turn["value"]
    raise VantageDataError(path, line, "conversations", f"no turn from {speaker!r} with a 'value'")


def _box(value, path, line) -> list[float]:
    if isinstance(value, dict):
        value = value.get("bbox_2d", value.get("bbox"))
    if not (isinstance(value, list) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value)):
        raise VantageDataError(path, line, "value", f"expected a box [x1, y1, x2, y2], got {value!r}")
    return [float(v) for v in value]


def _gt_value(task: str, raw, extra: dict, path, line: int):
    """The task's GT value from the JSONL ``value`` (JSON text or a JSON value)."""
    value = raw
    if isinstance(raw, str) and task not in ("vqa", "pointing", "event_verification"):
        try:
            value = json.loads(raw)
        except ValueError as err:
            raise VantageDataError(path, line, "value", f"expected JSON for a {task} answer ({err})") from None
    if task in ("vqa", "pointing"):
        letter = str(raw).strip().upper().rstrip(".")
        if letter not in ("A", "B", "C", "D"):
            raise VantageDataError(path, line, "value", f"expected an option letter A-D, got {raw!r}")
        return letter
    if task == "event_verification":
        word = str(raw).strip().lower().rstrip(".")
        if word not in ("yes", "no"):
            raise VantageDataError(path, line, "value", f"expected Yes or No, got {raw!r}")
        return word
    if task == "temporal":
        start, end = (parse_time(value.get(k), "strict") if isinstance(value, dict) else None for k in ("start", "end"))
        if start is None or end is None:
            raise VantageDataError(path, line, "value", f"expected {{\"start\", \"end\"}} times, got {raw!r}")
        return (start, end)
    if task == "dvc":
        if not isinstance(value, list):
            raise VantageDataError(path, line, "value", "expected a list of {start, end, caption} events")
        events = []
        for ev in value:
            start, end = (parse_time(ev.get(k), "strict") if isinstance(ev, dict) else None for k in ("start", "end"))
            if start is None or end is None or not isinstance(ev.get("caption"), str):
                raise VantageDataError(path, line, "value", f"event {ev!r} lacks start, end or caption")
            events.append((start, end, ev["caption"]))
        return events
    if task in ("refex", "astro"):
        if not isinstance(value, list):
            raise VantageDataError(path, line, "value", "expected a list of pixel boxes")
        for key in ("width", "height"):
            if not isinstance(extra.get(key), (int, float)):
                raise VantageDataError(path, line, f"metadata.extra.{key}", "expected the image size in pixels")
        return [_box(b, path, line) for b in value]
    ids = extra.get("frame_ids")
    if not isinstance(ids, list) or len(ids) < 2:
        raise VantageDataError(path, line, "metadata.extra.frame_ids", "expected the frame ids, anchor first")
    if not isinstance(value, dict):
        raise VantageDataError(path, line, "value", "expected {frame_id: box or null}")
    boxes = {}
    for k, fid in enumerate(ids[1:], start=1):
        box = value.get(str(fid), value.get(f"frame_{k}"))
        boxes[k] = None if box is None else _box(box, path, line)
    return boxes


def read_ground_truth(path, task: str | None = None) -> dict[str, GroundTruth]:
    """The GT records of a JSONL file, by id (file order kept).

    The task is ``task`` or, per line, the record's ``task`` field or its
    ``category`` when that names a task. Raises ``VantageDataError`` naming
    the file, line and field of the first malformed record.
    """
    path = Path(path)
    out: dict[str, GroundTruth] = {}
    for line, rec in _lines(path):
        if "id" not in rec:
            raise VantageDataError(path, line, "id", "missing")
        this = task or rec.get("task") or rec.get("category")
        if this not in _TASKS:
            raise VantageDataError(path, line, "task", f"unknown task {this!r}; pass the task, one of {_TASKS}")
        meta = rec.get("metadata") or {}
        extra = dict(meta.get("extra") or {}) if isinstance(meta, dict) else {}
        value = _gt_value(this, _value_of(rec, "gpt", path, line), extra, path, line)
        if this == "temporal":
            extra["duration"] = float(extra.get("duration", 30.0))
        if this == "sot":
            extra["n_frames"] = len(extra["frame_ids"])
        key = str(rec["id"])
        if key in out:
            raise VantageDataError(path, line, "id", f"id {key} appears twice")
        out[key] = GroundTruth(key, this, value, str(rec.get("media", "")), str(rec.get("category", "")), extra)
    return out


def write_submission(path, task: str, answers: Mapping[str, str], *, model: str,
                     box_coord_order: str = "xyxy") -> Path:
    """Write the leaderboard's submission JSONL: one line per id of ``answers`` (id -> raw answer text)."""
    if box_coord_order not in ("xyxy", "yxyx"):
        raise ValueError("box_coord_order must be 'xyxy' or 'yxyx'")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for key, text in answers.items():
            rec = {"id": key, "task": task, "conversations": [{"from": "assistant", "value": text}],
                   "metadata": {"model": model, "box_coord_order": box_coord_order}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


def read_submission(path) -> tuple[dict[str, str], dict]:
    """``(answers, info)`` of a submission JSONL: id -> raw answer, and ``{task, model, box_coord_order}``.

    Every line must share one task, model and box order; an id may appear once.
    """
    path = Path(path)
    answers: dict[str, str] = {}
    info: dict = {}
    for line, rec in _lines(path):
        for key in ("id", "task"):
            if key not in rec:
                raise VantageDataError(path, line, key, "missing")
        meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
        this = {"task": rec["task"], "model": meta.get("model"), "box_coord_order": meta.get("box_coord_order", "xyxy")}
        if this["box_coord_order"] not in ("xyxy", "yxyx"):
            raise VantageDataError(path, line, "metadata.box_coord_order", "expected 'xyxy' or 'yxyx'")
        if info and this != info:
            raise VantageDataError(path, line, "task", f"expected {info}, got {this}: one task and model per file")
        info = this
        value = _value_of(rec, "assistant", path, line)
        if str(rec["id"]) in answers:
            raise VantageDataError(path, line, "id", f"id {rec['id']} appears twice")
        answers[str(rec["id"])] = value if isinstance(value, str) else json.dumps(value)
    return answers, info
