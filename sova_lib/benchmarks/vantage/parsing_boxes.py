"""Answer parsers of the box-answer tasks: referring expressions, object localization, single-object tracking.

Boxes come back on the models' 0-1000 grid as ``(x1, y1, x2, y2)``; the
metrics convert them to pixels. Every parser returns ``None`` for an answer
it cannot read and never raises on any string. The two modes read answers
the same way here, except that ``official`` keeps a referring-expression
box with a ``NaN`` or infinite number, as the harness does (the metric then
clips it as the harness does), where ``strict`` leaves it out. A JSON
integer too large for a float reads as +-inf (``parsing.float_of``; the
harness stops there).
"""
from __future__ import annotations

import json
import math
import re
from contextlib import suppress
from typing import NamedTuple

from sova_lib.benchmarks.vantage.parsing import check_mode, float_of

__all__ = ["PERSON_LABELS", "Detection", "parse_localization", "parse_refex", "parse_sot", "swap_yxyx"]

_NUM = r"-?\d+(?:\.\d+)?"
# The referring-expression scorer's box pattern: any run of digits, dots and minus signs as a number
# (harness ``vantage2d/grounding_2d_dataset.py:336-351``); a run that is not a number is skipped.
_LOOSE_BOX = re.compile(r"\[\s*([-\d.]+)\s*,\s*([-\d.]+)\s*,\s*([-\d.]+)\s*,\s*([-\d.]+)\s*\]")

#: Labels the object-localization scorer counts as a person, compared after ``strip().lower()``
#: (harness ``vantage2d/astro_2d_dataset.py:30,115-135``); an answer with no label counts too.
PERSON_LABELS = frozenset({"person", "people", "pedestrian"})


def swap_yxyx(box):
    """``(y1, x1, y2, x2)`` -> ``(x1, y1, x2, y2)`` (a submission with ``box_coord_order = "yxyx"``)."""
    return (box[1], box[0], box[3], box[2]) if box is not None else None


def _is_num(v) -> bool:
    return isinstance(v, (int, float))  # bool counts, as the harness's isinstance test lets it


def _four(value) -> tuple[float, ...] | None:
    """The first four entries of a list whose first four are numbers (harness ``value[:4]`` rule)."""
    if isinstance(value, list) and len(value) >= 4 and all(_is_num(x) for x in value[:4]):
        return tuple(float_of(x) for x in value[:4])
    return None


def _list_of_fours(value) -> list[tuple[float, ...]]:
    """``[b[:4] for b in value if ...]`` of the harness; an entry without a length ends the answer (it raises there)."""
    out = []
    for b in value:
        if not hasattr(b, "__len__"):
            raise TypeError("entry without a length")
        if len(b) >= 4 and all(_is_num(x) for x in b[:4]):
            out.append(tuple(float_of(x) for x in b[:4]))
    return out


def _refex_dict_boxes(d) -> list[tuple[float, ...]] | None:
    """Boxes of one JSON object (harness ``grounding_2d_dataset.py:311-333``); ``None`` when it names none,
    ``IndexError`` when it names an empty list of them (the harness indexes ``extracted[0]``).

    Keys ``bbox``, ``bbox_2d``, ``bounding_box``, ``box``, ``coordinates`` in
    that order: four numbers, or a list of such lists; then ``box_2d``
    (``[y1, x1, y2, x2]``, swapped to x-first); then ``x1, y1, x2, y2`` and
    ``xmin, ymin, xmax, ymax`` keys.
    """
    if not isinstance(d, dict):
        return None
    for key in ("bbox", "bbox_2d", "bounding_box", "box", "coordinates"):
        boxes = _box_list(d[key], exact=False) if isinstance(d.get(key), list) else None
        if boxes is not None:
            if not boxes:
                raise IndexError("empty box list")
            return boxes
    box = _four(d.get("box_2d"))
    if box is not None:
        return [swap_yxyx(box)]
    for keys in (("x1", "y1", "x2", "y2"), ("xmin", "ymin", "xmax", "ymax")):
        if all(k in d for k in keys):
            vals = [d[k] for k in keys]
            if not all(_is_num(v) for v in vals):
                raise TypeError("non-numeric corner")  # the harness fails on the arithmetic that follows
            return [tuple(float_of(v) for v in vals)]
    return None


def _json_part(text: str, first: str, last: str) -> str | None:
    """The JSON part of an answer as the harness cuts it: the text of a ```` ```json ```` block (to the end when
    unclosed), else from the first of the ``first`` characters the text holds (tried in order) to the last of the
    ``last`` ones; ``None`` without them (``grounding_2d_dataset.py:368-384``, ``vantage2d/utils.py:124-163``)."""
    if "```json" in text:
        start = text.find("```json") + 7
        end = text.find("```", start)
        return (text[start:end] if end != -1 else text[start:]).strip()
    start = next((text.find(c) for c in first if c in text), -1)
    end = next((text.rfind(c) for c in last if c in text), -1)
    return text[start:end + 1] if start != -1 and end != -1 else None


def _box_list(val: list, exact: bool = True) -> list[tuple[float, ...]] | None:
    """A list value as the harness reads boxes from it: a list of lists through ``_list_of_fours``; exactly four
    numbers (``exact=False``: at least four, the first four) as one box; ``None`` for anything else."""
    if val and isinstance(val[0], list):
        return _list_of_fours(val)
    box = _four(val) if not exact or len(val) == 4 else None
    return None if box is None else [box]


def _refex_json_boxes(data) -> list[tuple[float, ...]]:
    """Boxes of the parsed JSON value (harness ``grounding_2d_dataset.py:388-441``, same branch order)."""
    if isinstance(data, list) and data and isinstance(data[0], dict):
        for val in data[0].values():  # {"query": [boxes]} answers: the first list value of the first object
            if isinstance(val, list) and (boxes := _box_list(val, exact=False)) is not None:
                return boxes
    if isinstance(data, list):
        if (boxes := _box_list(data)) is not None:
            return boxes
        if data and isinstance(data[0], dict):
            out = [box for item in data for box in _refex_dict_boxes(item) or []]
            if out:
                return out
        if data and isinstance(data[0], str):
            out = [box for s in data for box in _loose_boxes(s)]
            if out:
                return out
    if isinstance(data, dict):
        if isinstance(data.get("bboxes"), list) and (boxes := _box_list(data["bboxes"])) is not None:
            return boxes
        found = _refex_dict_boxes(data)
        if found is not None:
            return found
    return []


def _loose_boxes(text: str) -> list[tuple[float, ...]]:
    """Every ``[a, b, c, d]`` of numbers in ``text``; a run of digits too long for a float reads as ``inf`` and
    its box is skipped, as the harness's ``int(inf)`` raises there (``grounding_2d_dataset.py:345-350``)."""
    out = []
    for m in _LOOSE_BOX.finditer(text):
        try:
            box = tuple(float(m.group(k)) for k in range(1, 5))
        except ValueError:
            continue
        if all(math.isfinite(v) for v in box):
            out.append(box)
    return out


def parse_refex(text: str, mode: str = "official") -> list[tuple[float, ...]] | None:
    """Every box of a referring-expression answer (harness ``vantage2d/grounding_2d_dataset.py:354-449``).

    Both modes read as the harness does: every ``[a, b, c, d]`` of four
    numbers in the text, in order; when there is none, the JSON of a
    ```` ```json ```` block (else from the first ``{``, or ``[``, to the last
    ``}``, or ``]``) read by ``_refex_json_boxes``, which also takes
    ``{"x1", "y1", "x2", "y2"}`` objects and Gemini's ``box_2d`` (y first).
    JSON's ``NaN``, ``Infinity`` and ``1e999`` are numbers there
    (``isinstance(x, (int, float))``, line 319): ``official`` keeps such a
    box (the metric clips it, ``metrics_boxes.to_pixels``), ``strict`` leaves
    it out. Boxes are returned x-first on the 0-1000 grid; ``None`` when
    there is none. Examples: "[[100,100,150,300],[600,600,700,700]]" gives
    two boxes; '{"x1": 10, "y1": 20, "x2": 30, "y2": 40}' gives
    ``[(10, 20, 30, 40)]``; '{"bbox_2d": [NaN, 100, 300, 300]}' gives
    ``[(nan, 100, 300, 300)]`` (``strict``: ``None``).
    """
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    boxes = _loose_boxes(text)
    if boxes:
        return boxes
    body = _json_part(text, "{[", "}]")
    if body is None:
        return None
    try:
        boxes = _refex_json_boxes(json.loads(body))
    except (ValueError, IndexError, KeyError, TypeError, RecursionError):
        return None
    if mode == "strict":
        boxes = [b for b in boxes if all(math.isfinite(v) for v in b)]
    return boxes or None


class Detection(NamedTuple):
    """One box of an object-localization answer: ``box`` on the 0-1000 grid as written, ``label`` after the
    harness's person mapping, ``score`` as written (the sort key: a number, or text, ``null``, ... as the
    answer gives it; 1.0 without one) and ``yx`` (``box`` is ``[y1, x1, y2, x2]``)."""

    box: tuple[float, ...]
    label: str
    score: object = 1.0
    yx: bool = False

    def xyxy(self) -> tuple[float, ...]:
        """The box x-first."""
        return swap_yxyx(self.box) if self.yx else self.box


def person_label(label) -> str:
    """``"person"`` for no label or a person word, else the label stripped and lower-cased
    (harness ``astro_2d_dataset.py:115-135``)."""
    if label is None or isinstance(label, (list, tuple, dict)):
        return "person"
    label = str(label).strip().lower()
    return "person" if label in PERSON_LABELS else label


def _loc_box(value) -> tuple[float, ...] | None:
    """A box of an object-localization answer (harness ``astro_2d_dataset.py:39-88``).

    A list of at least four numbers or numeric strings (the first four); or
    an object holding one under ``bbox``, ``box``, ``pred_bbox``, ``bbox_2d``
    or ``box_2d`` (taken as written), or ``x1..y2`` / ``xmin..ymax`` keys.
    """
    def four(vals):
        try:
            return tuple(float_of(v) for v in vals)
        except (TypeError, ValueError):
            return None

    candidates = [value]
    if isinstance(value, dict):
        candidates = [value.get(key) for key in ("bbox", "box", "pred_bbox", "bbox_2d", "box_2d")]
        candidates += [[value[k] for k in keys] for keys in (("x1", "y1", "x2", "y2"), ("xmin", "ymin", "xmax", "ymax"))
                       if all(k in value for k in keys)]
    boxes = (four(v[:4]) for v in candidates if isinstance(v, (list, tuple)) and len(v) >= 4)
    return next((box for box in boxes if box is not None), None)


def parse_localization(text: str, mode: str = "official") -> list[Detection] | None:
    """The boxes of an object-localization answer (harness ``vantage2d/astro_2d_dataset.py:490-536``).

    The JSON value (harness ``vantage2d/utils.py:124-163``: the text of a
    ```` ```json ```` block, to the end when unclosed, else from the first
    ``[`` to the last ``]``) as a list (an object is a list of one). A list
    entry is a box labelled person; an object entry takes its box from the
    first of ``bbox_2d``, ``box_2d`` (``[y1, x1, y2, x2]``, so ``yx`` is set)
    and ``bbox`` it has (an unreadable one drops the entry), its ``label`` through ``person_label`` and its ``score`` (else
    ``confidence``, else 1) as written (``astro_2d_dataset.py:532-536``;
    the metric sorts by it). Other entries are left out, and so is a box with
    a number that is not finite (the harness stops on its ``int(nan)``,
    ``vantage2d/utils.py:67-72``). Both modes read alike. ``None`` when no JSON value reads; ``[]`` when it holds no box.
    Example: '[{"box_2d": [10, 20, 30, 40], "label": "Pedestrian"}]' gives
    ``[Detection((10, 20, 30, 40), "person", 1.0, yx=True)]``.
    """
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    body = _json_part(text, "[", "]")
    try:
        value = None if body is None else json.loads(body)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    out = []
    for entry in value:
        if isinstance(entry, list):
            box = _loc_box(entry)
            if box is not None:
                out.append(Detection(box, "person"))
        elif isinstance(entry, dict):
            key = next((k for k in ("bbox_2d", "box_2d", "bbox") if k in entry), None)
            box = _loc_box(entry[key]) if key is not None else None
            if box is None:
                continue
            score = entry.get("score", entry.get("confidence", 1.0))
            out.append(Detection(box, person_label(entry.get("label", "person")), score, key == "box_2d"))
    return [d for d in out if all(math.isfinite(v) for v in d.box)]


#: A quoted ``"frame_k": [a, b, c, d]`` (harness ``vantage_sot.py:239-243``): the fallback where no JSON object loads.
_SOT_FRAME = re.compile(rf'"frame_?(\d+)"\s*:\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*\]')


def _sot_clipped(values) -> tuple[float, ...] | None:
    """The box clipped to [0, 1000] as the harness writes it (``max(0, min(v, 1000))``, so NaN is 0), ``None``
    when it has no positive width and height (``vantage_sot.py:258-262,332-344``)."""
    box = [max(0.0, min(v, 1000.0)) for v in values]
    return tuple(box) if box[2] > box[0] and box[3] > box[1] else None


def parse_sot(text: str, n_frames: int, mode: str = "official") -> dict[int, tuple[float, ...] | None] | None:
    """Boxes of a tracking answer, ``{k: box or None}`` for ``k = 1 .. n_frames - 1`` (harness ``vantage_sot.py:266-346``).

    As the harness reads it, in both modes (the spec names no strict rule
    here): the stripped text loses its code fences (a line's leading
    ```` ``` ```` or ```` ```json ```` and a line's trailing ```` ``` ````); it
    is read as JSON, else from its first ``{`` to its last ``}``. A JSON
    object: each key's first run of digits is the frame (``"frame_1"``,
    ``"frame1"``, ``"1"``; keys without digits or outside 1 .. N-1 are
    skipped, a later key wins); a value that is no list of at least four
    ``float``-readable values is ``None``, else its first four are clipped to
    [0, 1000] and a degenerate box is ``None``. Otherwise each quoted
    ``"frame_k": [a, b, c, d]`` counts, the first valid one per frame. A frame
    the answer does not give is ``None``; ``None`` when no frame is read at all.
    Example: ``'{"frame_1": [-10, 0, 1200, 50]}'`` -> ``{1: (0.0, 0.0, 1000.0, 50.0), 2: None, ...}``.
    """
    mode = check_mode(mode)
    if not isinstance(text, str) or not text:
        return None
    body = re.sub(r"^```(?:json)?\s*", "", text.strip(), flags=re.MULTILINE)
    body = re.sub(r"\s*```\s*$", "", body, flags=re.MULTILINE).strip()
    parsed = None
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError:
        m = re.search(r"\{[\s\S]*\}", body)
        if m:
            with suppress(json.JSONDecodeError):
                parsed = json.loads(m.group())
    found: dict[int, tuple[float, ...] | None] = {}
    if not isinstance(parsed, dict):
        for m in _SOT_FRAME.finditer(body):
            k = int(m.group(1))
            if 1 <= k < n_frames and k not in found:
                box = _sot_clipped([float(m.group(j)) for j in range(2, 6)])
                if box is not None:
                    found[k] = box
    else:
        for key, value in parsed.items():
            m = re.search(r"(\d+)", str(key))
            k = int(m.group(1)) if m else 0
            if not 1 <= k < n_frames:
                continue
            try:
                found[k] = _sot_clipped([float_of(v) for v in value[:4]]) if (
                    isinstance(value, (list, tuple)) and len(value) >= 4) else None
            except (ValueError, TypeError):
                found[k] = None
    if not found:
        return None
    return {k: found.get(k) for k in range(1, n_frames)}

