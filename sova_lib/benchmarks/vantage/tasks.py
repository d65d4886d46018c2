"""The VANTAGE-Bench task registry: one ``Task`` record per task format.

Each record names how to read the task's public items (``load``), render an
item's prompt (``prompt``), read an answer (``parse(text, mode, gt)``),
score parsed answers against ground truth (``metric(gts, parsed, mode,
similarity)`` -> ``Score``), and the bootstrap's resampling unit.
``score_answers`` (``scoring.py``) runs the chain for any task.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sova_lib.benchmarks.vantage import metrics_basic as mb
from sova_lib.benchmarks.vantage import metrics_tracking as mt
from sova_lib.benchmarks.vantage.boxes import image_size
from sova_lib.benchmarks.vantage.inputs import read_items
from sova_lib.benchmarks.vantage.parse_boxes import parse_localization, parse_refex, parse_sot
from sova_lib.benchmarks.vantage.parse_text import parse_choice, parse_dvc, parse_pointing, parse_temporal, parse_yes_no
from sova_lib.benchmarks.vantage.prompts import render_prompt
from sova_lib.benchmarks.vantage.soda import soda_c

__all__ = ["TASKS", "Task", "get_task"]


@dataclass(frozen=True)
class Task:
    """One task format. ``metric`` names the primary metric as the paper does; ``unit`` is the resampling unit;
    ``boxes``: answers hold boxes (swapped for a ``yxyx`` submission); ``left_out(text, mode)``: how many parts of
    a readable answer the parser dropped (dense captioning: events with a bad time or no caption)."""

    key: str
    title: str
    metric: str
    unit: str
    tie_rule: str
    load: Callable[[Any], list]
    prompt: Callable
    parse: Callable[[str, str, Any], Any]
    score: Callable[..., Any]
    boxes: bool = False
    left_out: Callable[[str, str], int] | None = None


def _dvc_parse(text, mode, gt):
    parsed = parse_dvc(text, mode)
    return None if parsed is None else parsed[0]


def _dvc_left_out(text, mode):
    parsed = parse_dvc(text, mode)
    return 0 if parsed is None else parsed[1]


TASKS: dict[str, Task] = {t.key: t for t in (
    Task("vqa", "Video question answering", "accuracy", "item", "none (one letter per answer)",
         lambda p: read_items("vqa", p), render_prompt, lambda text, mode, gt: parse_choice(text, mode),
         lambda gts, parsed, mode, sim=None: mb.accuracy([g.value for g in gts], parsed)),
    Task("event_verification", "Event verification", "Macro F1", "item", "none (one label per answer)",
         lambda p: read_items("event_verification", p), render_prompt,
         lambda text, mode, gt: parse_yes_no(text, mode),
         lambda gts, parsed, mode, sim=None: mb.macro_f1([g.value for g in gts], parsed, mode)),
    Task("temporal", "Temporal localization", "mIoU", "item", "none (first interval of an answer)",
         lambda p: read_items("temporal", p), render_prompt,
         lambda text, mode, gt: parse_temporal(text, mode, gt.extra["duration"] if gt is not None else 30.0),
         lambda gts, parsed, mode, sim=None: mb.temporal_iou(
             [g.value for g in gts], parsed, [g.extra["duration"] for g in gts],
             [g.media or g.id for g in gts], mode)),
    Task("dvc", "Dense video captioning", "SODA_c", "video",
         "DP argmax ties go up, then left, then diagonal (harness backtracking)",
         lambda p: read_items("dvc", p), render_prompt, _dvc_parse,
         lambda gts, parsed, mode, sim=None: soda_c([g.value for g in gts], parsed, _need(sim), mode),
         left_out=_dvc_left_out),
    Task("refex", "2D referring expressions", "mIoU", "item", "none (maximum IoU over box pairs)",
         lambda p: read_items("refex", p), render_prompt, lambda text, mode, gt: parse_refex(text, mode),
         lambda gts, parsed, mode, sim=None: mb.refex_iou(
             [g.value for g in gts], parsed, [image_size(g.extra, (1000, 1000)) for g in gts], mode),
         boxes=True),
    Task("pointing", "2D spatial pointing", "accuracy", "item", "none (one letter per answer)",
         lambda p: read_items("pointing", p), render_prompt, lambda text, mode, gt: parse_pointing(text, mode),
         lambda gts, parsed, mode, sim=None: mb.accuracy([g.value for g in gts], parsed)),
    Task("astro", "2D object localization", "F1@0.5", "image",
         "greedy in answer order; equal IoU takes the earlier GT box",
         lambda p: read_items("astro", p), render_prompt, lambda text, mode, gt: parse_localization(text, mode),
         lambda gts, parsed, mode, sim=None: mt.localization_f1(
             [_objects(g) for g in gts], parsed, [image_size(g.extra, (640, 480)) for g in gts], mode,
             min_area=int(gts[0].extra.get("min_bbox_area", 0)) if gts else 0),
         boxes=True),
    Task("sot", "Single object tracking", "Success AUC", "tracklet", "none (IoU >= threshold counts)",
         lambda p: read_items("sot", p), render_prompt,
         lambda text, mode, gt: parse_sot(text, gt.extra["n_frames"] if gt is not None else 2, mode),
         lambda gts, parsed, mode, sim=None: mt.sot_success(
             [g.value for g in gts], parsed, [g.extra["n_frames"] for g in gts], mode),
         boxes=True),
)}


def _objects(gt) -> list:
    """An object-localization GT item's objects for ``metrics_tracking.gt_person_boxes``: ``{"label", "bbox"}``
    where the file gives a label (``extra["labels"]``, ``records.read_ground_truth``), else the plain box (a person)."""
    labels = gt.extra.get("labels") or [None] * len(gt.value)
    return [box if label is None else {"label": label, "bbox": box} for box, label in zip(gt.value, labels)]


def _need(similarity):
    if similarity is None:
        raise ValueError("SODA_c needs a caption similarity (captions.BertScoreSimilarity for the leaderboard's)")
    return similarity


def get_task(key: str) -> Task:
    """The registered task ``key``; ``ValueError`` listing the tasks otherwise."""
    if key not in TASKS:
        raise ValueError(f"unknown VANTAGE-Bench task {key!r}; choose one of {sorted(TASKS)}")
    return TASKS[key]
