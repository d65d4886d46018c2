"""VANTAGE-Bench's names for its tasks and its submission ids, as the leaderboard reads them.

Three names per task: this library's short key (``TASKS``' keys, used in
the code and accepted on the command line), the harness's short key (the
member name inside the leaderboard's archive, ``grounding.jsonl`` for
referring expressions) and the canonical task string every submission and
ground-truth record carries (harness ``vlmeval/dataset/utils/vantagebench/
validate.py`` lines 38-47, ``emit.py`` lines 97-163):

===================  ====================  ===========================
library key          harness key           canonical task string
===================  ====================  ===========================
vqa                  vqa                   video_qa
event_verification   event_verification    event_verification
temporal             temporal              temporal_grounding
dvc                  dvc                   dense_video_captioning
refex                grounding             referring_expressions
pointing             pointing              spatial_pointing
astro                astro                 object_localization
sot                  sot                   single_object_tracking
===================  ====================  ===========================

Submission ids (harness ``id_rules.py``): ``<stem>__<tag>_<index:06d>``
with the tags ``q``, ``ev``, ``tg``, ``dvc`` (video tasks: the stem is the
TSV's ``video`` with one trailing ``.mp4`` removed, lines 17-22), ``rx``
(the annotation's ``image``), ``sp`` (the base name of ``image_path``) and
``ol`` (the image file's base name); the image stem drops one trailing
``.jpg``/``.jpeg``/``.png`` in any case (lines 69-80). Tracking ids are the
sequence folder's name, with the public dataset's spelling
``<prefix>__<frame>__obj<id>`` rewritten to ``<prefix>_<frame:07d>__obj<id>``
(lines 11-14, 125-156). ``ID_PATTERNS`` are the id shapes the harness's
``scripts/validate_submission.py`` (lines 76-85) requires.

The task registry (``TASKS``): one ``Task`` record per task format, naming
how to read an answer (``parse(text, mode, gt)``), score parsed answers
against ground truth (``score(gts, parsed, mode, similarity)`` -> ``Score``),
and the bootstrap's resampling unit. ``scoring.score_answers``
runs the chain for any task.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sova_lib.benchmarks.vantage.inputs import VantageItem
from sova_lib.benchmarks.vantage.metrics import accuracy, macro_f1, temporal_iou
from sova_lib.benchmarks.vantage.metrics_boxes import localization_f1, refex_iou, sot_success
from sova_lib.benchmarks.vantage.metrics_captions import soda_c
from sova_lib.benchmarks.vantage.parsing import parse_choice, parse_dvc, parse_pointing, parse_temporal, parse_yes_no
from sova_lib.benchmarks.vantage.parsing_boxes import parse_localization, parse_refex, parse_sot, swap_yxyx

__all__ = [
    "CANONICAL_TASKS", "HARNESS_KEYS", "ID_PATTERNS", "TASKS", "Task", "make_id",
    "sot_id", "submission_answers", "submission_id", "task_key"
]

#: Library key -> the canonical task string of submission and ground-truth records.
CANONICAL_TASKS = {
    "vqa": "video_qa",
    "event_verification": "event_verification",
    "temporal": "temporal_grounding",
    "dvc": "dense_video_captioning",
    "refex": "referring_expressions",
    "pointing": "spatial_pointing",
    "astro": "object_localization",
    "sot": "single_object_tracking",
}

#: Library key -> the harness's short key (the archive member ``<key>.jsonl``).
HARNESS_KEYS = {key: ("grounding" if key == "refex" else key) for key in CANONICAL_TASKS}

_TAGS = {"vqa": "q", "event_verification": "ev", "temporal": "tg", "dvc": "dvc", "refex": "rx", "pointing": "sp",
         "astro": "ol"}

#: Library key -> the id shape the leaderboard requires.
ID_PATTERNS = {key: re.compile(rf"^.+__{tag}_\d{{6}}$") for key, tag in _TAGS.items()}
ID_PATTERNS["sot"] = re.compile(r"^.+_\d{7}__obj.+$")

_ALIASES = {**{k: k for k in CANONICAL_TASKS}, **{v: k for k, v in HARNESS_KEYS.items()},
            **{v: k for k, v in CANONICAL_TASKS.items()}}
_SOT_PUBLIC = re.compile(r"^(?P<prefix>.+)__(?P<frame>\d+)__obj(?P<obj>.+)$")


def task_key(name: str) -> str:
    """The library key of a task named by its library key, harness key or canonical string; ``ValueError`` else."""
    if name not in _ALIASES:
        raise ValueError(f"unknown VANTAGE-Bench task {name!r}; choose one of {sorted(CANONICAL_TASKS)} "
                         f"or a canonical task string ({', '.join(CANONICAL_TASKS.values())})")
    return _ALIASES[name]


def sot_id(sequence: str) -> str:
    """A tracking sequence's id: its folder name, the public ``__<frame>__obj`` spelling made canonical."""
    m = _SOT_PUBLIC.match(str(sequence))
    if m is None:
        return str(sequence)
    return f"{m.group('prefix')}_{int(m.group('frame')):07d}__obj{m.group('obj')}"


def make_id(task: str, media: str, index) -> str:
    """The submission id of row ``index`` of ``task`` whose video or image is ``media`` (see the module text).

    ``index`` must be an integer or integer text (the TSV's ``index``; the
    list position for referring expressions); ``ValueError`` otherwise.
    Tracking takes the sequence name as ``media`` and ignores ``index``.
    """
    key = task_key(task)
    if key == "sot":
        return sot_id(media)
    try:
        number = int(index)
    except (TypeError, ValueError):
        raise ValueError(f"a {CANONICAL_TASKS[key]} id needs an integer index, got {index!r}") from None
    media = str(media)
    if key in ("vqa", "event_verification", "temporal", "dvc"):
        stem = media.removesuffix(".mp4")  # folders stay
    else:  # one trailing .jpg, .jpeg or .png, any case; pointing and object localization keep the base name only
        stem = re.sub(r"\.(?:jpe?g|png)\Z", "", os.path.basename(media) if key in ("pointing", "astro") else media,
                      flags=re.IGNORECASE)
    return f"{stem}__{_TAGS[key]}_{number:06d}"


def submission_id(item: VantageItem) -> str:
    """The leaderboard id of a public item (``inputs.read_items``)."""
    media = item.id if item.task == "sot" else item.media[0]  # tracking: the sequence's name
    return make_id(item.task, media, item.extra.get("position", item.id))  # refex: the list position


def submission_answers(items: Iterable[VantageItem], answers: Mapping[str, str]) -> dict[str, str]:
    """``answers`` keyed by item id -> the same answers keyed by leaderboard id, in item order.

    Items without an answer are left out. ``ValueError`` when two items share one leaderboard id.
    """
    out: dict[str, str] = {}
    owner: dict[str, str] = {}
    for it in items:
        key = submission_id(it)
        if key in owner:
            raise ValueError(f"items {owner[key]!r} and {it.id!r} both have the leaderboard id {key}")
        owner[key] = it.id
        if it.id in answers:
            out[key] = answers[it.id]
    return out


@dataclass(frozen=True)
class Task:
    """One task format. ``metric`` names the primary metric as the paper does; ``unit`` is the resampling unit;
    ``swap``: a parsed answer's boxes made x-first, for a ``yxyx`` submission (tasks whose answers hold boxes);
    ``left_out(parsed)``: how many parts of a readable answer the parser dropped (dense captioning: events with
    a bad time or no caption)."""

    key: str
    title: str
    metric: str
    unit: str
    tie_rule: str
    parse: Callable[[str, str, Any], Any]
    score: Callable[..., Any]
    swap: Callable[[Any], Any] | None = None
    left_out: Callable[[Any], int] | None = None


TASKS: dict[str, Task] = {t.key: t for t in (
    Task("vqa", "Video question answering", "accuracy", "item", "none (one letter per answer)",
         lambda text, mode, gt: parse_choice(text, mode),
         lambda gts, parsed, mode, sim=None: accuracy([g.value for g in gts], parsed)),
    Task("event_verification", "Event verification", "Macro F1", "item", "none (one label per answer)",
         lambda text, mode, gt: parse_yes_no(text, mode),
         lambda gts, parsed, mode, sim=None: macro_f1([g.value for g in gts], parsed, mode)),
    Task("temporal", "Temporal localization", "mIoU", "item", "none (first interval of an answer)",
         lambda text, mode, gt: parse_temporal(text, mode, gt.extra["duration"]),
         lambda gts, parsed, mode, sim=None: temporal_iou(
             [g.value for g in gts], parsed, [g.extra["duration"] for g in gts],
             [g.media or g.id for g in gts], mode)),
    Task("dvc", "Dense video captioning", "SODA_c", "video",
         "DP argmax ties go up, then left, then diagonal (harness backtracking)",
         lambda text, mode, gt: parse_dvc(text, mode),  # (events, n_bad) or None
         lambda gts, parsed, mode, sim=None: soda_c(
             [g.value for g in gts], [None if p is None else p[0] for p in parsed], sim, mode),
         left_out=lambda parsed: parsed[1]),
    Task("refex", "2D referring expressions", "mIoU", "item", "none (maximum IoU over box pairs)",
         lambda text, mode, gt: parse_refex(text, mode),
         lambda gts, parsed, mode, sim=None: refex_iou([g.value for g in gts], parsed, _sizes(gts)),
         swap=lambda boxes: [swap_yxyx(b) for b in boxes]),
    Task("pointing", "2D spatial pointing", "accuracy", "item", "none (one letter per answer)",
         lambda text, mode, gt: parse_pointing(text, mode),
         lambda gts, parsed, mode, sim=None: accuracy([g.value for g in gts], parsed)),
    Task("astro", "2D object localization", "F1@0.5", "image",
         "greedy in answer order; equal IoU takes the earlier GT box",
         lambda text, mode, gt: parse_localization(text, mode),
         lambda gts, parsed, mode, sim=None: localization_f1(
             [g.value for g in gts], parsed, _sizes(gts), mode, min_area=gts[0].extra.get("min_bbox_area", 0)),
         # every box is y-first, box_2d ones included: swapped once (astro_2d_dataset.py:503-530)
         swap=lambda detections: [d._replace(yx=True) for d in detections]),
    Task("sot", "Single object tracking", "Success AUC", "tracklet", "none (IoU >= threshold counts)",
         lambda text, mode, gt: parse_sot(text, gt.extra["n_frames"], mode),
         lambda gts, parsed, mode, sim=None: sot_success(
             [g.value for g in gts], parsed, [g.extra["n_frames"] for g in gts]),
         swap=lambda frames: {k: swap_yxyx(b) for k, b in frames.items()}),
)}


def _sizes(gts) -> list[tuple[float, float]]:
    """Each item's image ``(width, height)`` in pixels: ``extra["width"]`` / ``extra["height"]``, which
    ``ground_truth.read_ground_truth`` sets from the image, the record or the harness's fallback size."""
    return [(float(g.extra["width"]), float(g.extra["height"])) for g in gts]
