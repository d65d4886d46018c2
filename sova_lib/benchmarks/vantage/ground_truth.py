"""The ground-truth JSONL (the answer key), as the VANTAGE-Bench harness writes and reads it.

Ground truth, one object per line (the records the harness's adapters read,
``vlmeval/dataset/utils/vantagebench/adapter_*.py``)::

    {"id": <leaderboard id>, "task": <canonical task string>, "media": ..., "category": ...,
     "conversations": [..., {"from": "gpt", "value": V}], "metadata": {"extra": {...}}}

``V`` is JSON text (a JSON value is read too) holding, per task: the letter
(vqa, pointing; ``extra.question_id`` for pointing, ``extra.task_type`` for
vqa); "Yes"/"No" (event verification); ``{"start", "end"}`` with
``extra.duration`` in seconds (temporal; 30 when absent, adapter_temporal.py
lines 66-71); a list of ``{start, end, caption}`` (dvc; an event without a
caption is left out and a missing time is 0 s, as the harness reads its key,
vantage_dvc.py lines 240-250, each with a note); a list of pixel
boxes ``[x1, y1, x2, y2]`` with ``extra.image_width`` / ``image_height``
(referring expressions, adapter_grounding.py lines 73-78); a list of
``{"label", "bbox"}`` pixel objects with ``extra.image_filename``,
``image_path`` and ``min_bbox_area`` (object localization, adapter_astro.py
lines 74-130: each label lower-cased as the harness's KITTI reader returns
it, an object without ``label`` or ``bbox`` left out; the metric keeps
persons only); ``{frame_id: box or null}`` with ``extra.frame_ids``, the
anchor first (tracking, adapter_sot.py lines 58-95).

Object localization's image size is that of the image at ``extra.image_path``
when it opens (the harness reads it there alone), else ``image_width`` /
``image_height`` (with a note). Without any size, referring expressions take
1000 x 1000 and object localization 640 x 480, as the harness does
(grounding_2d_dataset.py lines 813-822, astro_2d_dataset.py lines
481-489), with a note.

``submissions`` reads and writes the submission JSONL; ``tasks`` builds the ids
and names the tasks.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sova_lib.benchmarks.vantage.inputs import VantageDataError, jsonl_objects, turn_value
from sova_lib.benchmarks.vantage.parsing import parse_time
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, task_key

__all__ = ["GroundTruth", "GroundTruthSet", "read_ground_truth"]


@dataclass(frozen=True)
class GroundTruth:
    """One item's answer key. ``value`` by task: letter; "yes"/"no"; ``(start, end)`` s; a list of
    ``(start, end, caption)``; a list of pixel boxes (referring expressions) or of ``{"label", "bbox"}`` objects
    with pixel boxes (object localization, the label lower-cased); ``{k: box or None}`` for frames k = 1 .. N-1.
    ``extra``: the record's ``metadata.extra`` plus ``duration`` (temporal), ``width``/``height`` in pixels
    (referring expressions, object localization), ``min_bbox_area`` (object localization: the file's first record's, as the
    harness takes it) and ``n_frames`` (tracking)."""

    id: str
    task: str
    value: Any
    media: str = ""
    category: str = ""
    extra: dict = field(default_factory=dict, compare=False)


def _box(value, path, line) -> list[float]:
    if isinstance(value, dict):
        value = value.get("bbox_2d", value.get("bbox"))
    if not (isinstance(value, list) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value)):
        raise VantageDataError(path, line, "value", f"expected a box [x1, y1, x2, y2], got {value!r}")
    return [float(v) for v in value]


#: The one-word answers: the case they are read in, the words allowed, and what the error says is expected
#: (case, spaces and a final period ignored).
_WORDS = {"vqa": (str.upper, ("A", "B", "C", "D"), "an option letter A-D"),
          "pointing": (str.upper, ("A", "B", "C", "D"), "an option letter A-D"),
          "event_verification": (str.lower, ("yes", "no"), "Yes or No")}


def _events(value, counts: Counter, path, line: int) -> list[tuple]:
    """dvc: the ``(start, end, caption)`` events; counts dropped events and zero times in ``counts``.

    As the harness reads its answer key (vantage_dvc.py lines 240-250): the
    caption is "caption", else "description"; an event with neither is left
    out (counted, with a note); a missing or empty time is 0 s; a time is
    seconds, m:s or h:m:s in full. A caption is kept as it is, text or any
    other JSON value, as the harness keeps it (``:251-254``); it is scored by
    its JSON text (``metrics_captions.caption_text``).
    """
    if not isinstance(value, list):
        raise VantageDataError(path, line, "value", "expected a list of {start, end, caption} events")
    events = []
    for ev in value:
        if not isinstance(ev, dict):
            raise VantageDataError(path, line, "value", f"event {ev!r} is not a {{start, end, caption}} object")
        caption = ev.get("caption") or ev.get("description") or ""
        if not caption:
            counts["dropped_events"] += 1
            continue
        times = []
        for k in ("start", "end"):
            raw_time = ev.get(k)
            if raw_time is None or (isinstance(raw_time, str) and not raw_time.strip()):
                counts["zero_times"] += 1
                seconds = 0.0
            elif (seconds := parse_time(raw_time, "strict")) is None:
                raise VantageDataError(path, line, "value", f"event {ev!r}: {k} {raw_time!r} is not a time")
            times.append(seconds)
        events.append((times[0], times[1], caption))
    return events


def _boxes(task: str, value, counts: Counter, path, line: int) -> list:
    """refex: the pixel boxes ``[x1, y1, x2, y2]``; astro: the ``{"label", "bbox"}`` objects the harness keeps,
    counting skipped objects.

    The harness writes each {"label", "bbox"} object as a KITTI line and
    reads the label back lower-cased (adapter_astro.py lines 62-95,
    vantage2d/utils.py lines 99-121): a null label is "none", and an object
    lacking "label" or a four-number "bbox" is not written at all.
    """
    if task == "refex" and isinstance(value, list) and value and isinstance(value[0], (int, float)):
        value = [value]  # one box stored flat (grounding_2d_dataset.py lines 801-804)
    if not isinstance(value, list):
        raise VantageDataError(path, line, "value", "expected a list of pixel boxes")
    if task == "refex":
        return [_box(b, path, line) for b in value]
    kept = []
    for v in value:
        if not (isinstance(v, dict) and "label" in v and isinstance(v.get("bbox"), (list, tuple))
                and len(v["bbox"]) >= 4):
            counts["skipped"] += 1
            continue
        kept.append({"label": str(v["label"]).lower(), "bbox": _box(list(v["bbox"][:4]), path, line)})
    return kept


def _track(value, extra: dict, path, line: int) -> dict:
    """sot: ``{k: box or None}`` for frames k = 1 .. N-1 of ``extra['frame_ids']`` (the anchor is frame 0); sets
    ``extra['n_frames']`` to N."""
    ids = extra.get("frame_ids")
    if not isinstance(ids, list) or len(ids) < 2:
        raise VantageDataError(path, line, "metadata.extra.frame_ids", "expected the frame ids, anchor first")
    extra["n_frames"] = len(ids)
    if not isinstance(value, dict):
        raise VantageDataError(path, line, "value", "expected {frame_id: box or null}")
    boxes = {k: value.get(str(fid), value.get(f"frame_{k}")) for k, fid in enumerate(ids[1:], start=1)}
    return {k: None if box is None else _box(box, path, line) for k, box in boxes.items()}


def _gt_value(task: str, raw, extra: dict, counts: Counter, path, line: int):
    """The task's GT value from the JSONL ``value`` (JSON text or a JSON value); what it leaves out is counted in
    ``counts``."""
    if task in _WORDS:
        case, allowed, expected = _WORDS[task]
        word = case(str(raw).strip()).rstrip(".")
        if word not in allowed:
            raise VantageDataError(path, line, "value", f"expected {expected}, got {raw!r}")
        return word
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError as err:
            raise VantageDataError(path, line, "value", f"expected JSON for a {task} answer ({err})") from None
    if task == "temporal":  # (start, end) in seconds from {"start", "end"}
        start, end = (parse_time(value.get(k), "strict") if isinstance(value, dict) else None for k in ("start", "end"))
        if start is None or end is None:
            raise VantageDataError(path, line, "value", f"expected {{\"start\", \"end\"}} times, got {raw!r}")
        return (start, end)
    if task == "dvc":
        return _events(value, counts, path, line)
    if task in ("refex", "astro"):
        return _boxes(task, value, counts, path, line)
    return _track(value, extra, path, line)


#: Image size the harness assumes when a record gives none and no image opens.
_FALLBACK_SIZE = {"refex": (1000.0, 1000.0), "astro": (640.0, 480.0)}


def _image_size(task: str, extra: dict, path, line: int) -> str:
    """Set ``extra['width']`` / ``extra['height']``; return where they came from: image, harness, fallback.

    Object localization takes the size of the image at ``extra.image_path`` first, as the harness does (it
    opens that image and never reads ``image_width``, astro_2d_dataset.py lines 478-489); where it does not
    open here, ``image_width`` / ``image_height`` stand for it.
    """
    image = extra.get("image_path")
    if task == "astro" and isinstance(image, str) and image and Path(image).is_file():
        from PIL import Image, ImageOps

        with Image.open(image) as img:
            w, h = ImageOps.exif_transpose(img.convert("RGB")).size
        extra["width"], extra["height"] = float(w), float(h)
        return "image"
    if "image_width" in extra or "image_height" in extra:
        w, h = extra.get("image_width"), extra.get("image_height")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (w, h)):
            raise VantageDataError(path, line, "metadata.extra.image_width",
                                   f"expected the image size in pixels, got {w!r} x {h!r}")
        extra["width"], extra["height"] = float(w), float(h)
        return "harness"
    extra["width"], extra["height"] = _FALLBACK_SIZE[task]
    return "fallback"


class GroundTruthSet(dict):
    """``read_ground_truth``'s result: id -> ``GroundTruth`` in file order, with ``notes`` (one line each) on
    what the file needed that the harness's layout does not (left-out parts, assumed image sizes), set by
    ``read_ground_truth``."""

    notes: list[str]


#: What ``read_ground_truth``'s notes say after the count of each kind of record it counted, in this order.
_NOTES = (
    ("skipped", "object-localization objects have no label or no [x1, y1, x2, y2] \"bbox\" and are left out, "
                "as the harness leaves them out"),
    ("dropped_events", "dense-captioning events have no caption and are left out, as the harness leaves them out"),
    ("zero_times", "dense-captioning event times are missing or empty and read as 0 s, as the harness reads them"),
    ("unopened", "object-localization images at metadata.extra.image_path do not open here; the size the record "
                 "gives is used instead (the harness opens the image)"),
)


def read_ground_truth(path, task: str | None = None) -> GroundTruthSet:
    """The GT records of a JSONL file, by id (file order kept).

    The task is ``task`` (any name ``tasks.task_key`` accepts) or, per line,
    the canonical task string of the record's ``task`` field.
    Raises ``VantageDataError`` naming the file, line and field of the first
    malformed record; ``.notes`` of the result says what was left out or
    assumed.
    """
    path = Path(path)
    out = GroundTruthSet()
    counts: Counter = Counter()
    fixed = task_key(task) if task is not None else None
    for line, rec in jsonl_objects(path):
        if "id" not in rec:
            raise VantageDataError(path, line, "id", "missing")
        if fixed is None and rec.get("task") not in CANONICAL_TASKS.values():
            raise VantageDataError(path, line, "task", f"unknown task {rec.get('task')!r}; pass the task, one of "
                                                       f"{tuple(CANONICAL_TASKS)} or its canonical string")
        this = fixed or task_key(rec["task"])
        meta = rec.get("metadata") or {}
        extra = dict(meta.get("extra") or {}) if isinstance(meta, dict) else {}
        value = _gt_value(this, turn_value(rec, "gpt", path, line, last=True), extra, counts, path, line)
        if this == "temporal":  # what the task's metric reads (GroundTruth.extra; tracking's n_frames: _track)
            extra["duration"] = 30.0 if extra.get("duration") is None else float(extra["duration"])
        if this in ("refex", "astro"):  # and where image sizes came from
            where = _image_size(this, extra, path, line)
            counts[where] += 1
            counts["unopened"] += this == "astro" and where == "harness" and bool(extra.get("image_path"))
        key = str(rec["id"])
        if key in out:
            raise VantageDataError(path, line, "id", f"id {key} appears twice")
        out[key] = GroundTruth(key, this, value, str(rec.get("media", "")), str(rec.get("category", "")), extra)
    astro = [g for g in out.values() if g.task == "astro"]
    for g in astro:  # the first record's, for the whole file (adapter_astro.py lines 123-130)
        g.extra["min_bbox_area"] = int(astro[0].extra.get("min_bbox_area", 0) or 0)
    out.notes = [f"{path}: {counts[name]} {text}" for name, text in _NOTES if counts[name]]
    if counts["fallback"]:
        w, h = _FALLBACK_SIZE[next(iter(out.values())).task]
        out.notes.append(f"{path}: {counts['fallback']} records give no image size; {w:g} x {h:g} assumed, "
                         "as the harness does")
    return out
