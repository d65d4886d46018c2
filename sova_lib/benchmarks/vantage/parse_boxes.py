"""Answer parsers of the box-answer tasks: referring expressions, object localization, single-object tracking.

Boxes come back on the models' 0-1000 grid as ``(x1, y1, x2, y2)``; the
metrics convert them to pixels. Every parser returns ``None`` for an answer
it cannot read and never raises on any string. The two modes read answers
the same way here (the harness's failure behaviour is in the metrics).
"""
from __future__ import annotations

import json
import re

from sova_lib.benchmarks.vantage.boxes import clamp_box, valid_box
from sova_lib.benchmarks.vantage.parse_text import _json_objects, check_mode

__all__ = ["PERSON_LABELS", "parse_localization", "parse_refex", "parse_sot", "swap_yxyx"]

_NUM = r"-?\d+(?:\.\d+)?"
_BOX = re.compile(rf"\[\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*\]")

#: Labels the object-localization scorer counts as a person (an answer with no label counts too).
PERSON_LABELS = frozenset({"person", "people", "pedestrian"})


def swap_yxyx(box):
    """``(y1, x1, y2, x2)`` -> ``(x1, y1, x2, y2)`` (a submission with ``box_coord_order = "yxyx"``)."""
    return (box[1], box[0], box[3], box[2]) if box is not None else None


def _box_of(value) -> tuple[float, ...] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return tuple(float(v) for v in value)
    return None


def _boxes_in_json(value, out: list) -> None:
    box = _box_of(value)
    if box is not None:
        out.append(box)
    elif isinstance(value, dict):
        for v in value.values():
            _boxes_in_json(v, out)
    elif isinstance(value, list):
        for v in value:
            _boxes_in_json(v, out)


def parse_refex(text: str, mode: str = "parity") -> list[tuple[float, ...]] | None:
    """Every box of a referring-expression answer (harness ``grounding_2d_dataset.py:354-449``).

    Each ``[a, b, c, d]`` of four numbers anywhere in the text, in order;
    when there is none, the four-number lists inside any JSON value of the
    text. Boxes are returned as written (0-1000 grid); ``None`` when there is
    no box. Example: "[[100,100,150,300],[600,600,700,700]]" gives two boxes.
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    boxes = [tuple(float(v) for v in m.groups()) for m in _BOX.finditer(text)]
    if not boxes:
        for value in _json_objects(text):
            _boxes_in_json(value, boxes)
            if boxes:
                break
    return boxes or None


def _fenced_json(text: str):
    m = re.search(r"```(?:json)?\s*(.*?)```", text, flags=re.DOTALL | re.IGNORECASE)
    if m:
        body = m.group(1)
    else:
        first, last = text.find("["), text.rfind("]")
        if first < 0 or last <= first:
            return None
        body = text[first:last + 1]
    try:
        return json.loads(body)
    except ValueError:
        return None


def parse_localization(text: str, mode: str = "parity") -> list[tuple[tuple[float, ...], str | None]] | None:
    """``(box, label)`` pairs of an object-localization answer (harness ``astro_2d_dataset.py``).

    The JSON of a fenced ```` ```json ```` block, else of the text from its
    first ``[`` to its last ``]``: a list of ``{"bbox_2d": [x1, y1, x2, y2],
    "label": ...}``. Entries without a four-number ``bbox_2d`` are left out;
    ``label`` is lower-cased (``None`` when absent). ``None`` when no JSON list reads.
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    value = _fenced_json(text)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    out = []
    for entry in value:
        if not isinstance(entry, dict):
            continue
        box = _box_of(entry.get("bbox_2d"))
        if box is None:
            continue
        label = entry.get("label")
        out.append((box, label.strip().lower() if isinstance(label, str) else None))
    return out


def _sot_box(value) -> tuple[float, ...] | None:
    box = _box_of(value)
    return None if box is None or not valid_box(box) else clamp_box(box)


def parse_sot(text: str, n_frames: int, mode: str = "parity") -> dict[int, tuple[float, ...] | None] | None:
    """Boxes of a tracking answer, ``{k: box or None}`` for ``k = 1 .. n_frames - 1`` (harness ``vantage_sot.py:266-346``).

    Code fences are stripped; a JSON object ``{"frame_k": [x1, y1, x2, y2] or
    null}`` is read first, else each ``frame_k: [..]`` / ``frame_k: null`` is
    found by a regular expression. Coordinates are clipped to [0, 1000]; a
    degenerate box becomes ``None``, as does a frame the answer does not
    mention. ``None`` when no frame is mentioned at all.
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    body = re.sub(r"```(?:json)?", "", text, flags=re.IGNORECASE)
    found: dict[int, tuple[float, ...] | None] = {}
    for value in _json_objects(body):
        if isinstance(value, dict):
            for key, box in value.items():
                m = re.fullmatch(r"\s*frame_?(\d+)\s*", str(key), flags=re.IGNORECASE)
                if m:
                    found[int(m.group(1))] = _sot_box(box)
            if found:
                break
    if not found:
        pattern = rf"frame_?(\d+)\"?\s*:\s*(null|None|{_BOX.pattern})"
        for m in re.finditer(pattern, body, flags=re.IGNORECASE):
            box = None if m.group(3) is None else tuple(float(m.group(k)) for k in range(3, 7))
            found[int(m.group(1))] = None if box is None else _sot_box(box)
    if not found:
        return None
    return {k: found.get(k) for k in range(1, n_frames)}
