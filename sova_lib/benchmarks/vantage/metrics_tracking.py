"""Metrics of the box-set tasks: object-localization F1 and single-object-tracking Success AUC / freeze rate.

Pure functions over GT and parsed answers (spec section 2); values in [0, 1].
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sova_lib.benchmarks.vantage.boxes import box_iou, box_iou_matrix, to_pixels
from sova_lib.benchmarks.vantage.parse_boxes import PERSON_LABELS
from sova_lib.benchmarks.vantage.parse_text import check_mode
from sova_lib.benchmarks.vantage.result import Score

__all__ = ["OL_THRESHOLDS", "SUCCESS_THRESHOLDS", "localization_f1", "match_greedy", "sot_success", "sot_tracklet",
           "success_curve"]

#: IoU thresholds of the object-localization mean F1: 0.50, 0.55, ..., 0.95.
OL_THRESHOLDS = np.round(np.linspace(0.5, 0.95, 10), 2)
#: IoU thresholds of Success AUC: 0, 0.05, ..., 1 (21 values).
SUCCESS_THRESHOLDS = np.linspace(0.0, 1.0, 21)


def match_greedy(pred_boxes, gt_boxes) -> list[float]:
    """IoU of each answer box with the GT box it takes; 0 for a box that takes none.

    Answer boxes, in answer order, each take the not yet taken GT box of
    largest IoU, provided that IoU is above 0 (equal IoU: the earlier GT box).
    Matching does not depend on a threshold; a match counts as a true
    positive at threshold t when its IoU >= t.
    """
    if not len(pred_boxes):
        return []
    if not len(gt_boxes):
        return [0.0] * len(pred_boxes)
    iou = box_iou_matrix(pred_boxes, gt_boxes)
    free = np.ones(iou.shape[1], dtype=bool)
    out = []
    for row in iou:
        cand = np.where(free, row, -1.0)
        j = int(np.argmax(cand))
        if cand[j] > 0:
            free[j] = False
            out.append(float(row[j]))
        else:
            out.append(0.0)
    return out


def localization_f1(truth_boxes: Sequence[Sequence[Sequence[float]]], answers: Sequence[list | None],
                    sizes: Sequence[tuple[float, float]], mode: str = "parity") -> Score:
    """Pooled object-localization F1 at IoU 0.5, and the mean F1 over 0.50:0.05:0.95 (harness ``astro_2d_dataset.py:369-418``).

    ``truth_boxes``: per image its GT person boxes in pixels; ``answers``: per
    image the parsed ``(box, label)`` pairs (0-1000 grid) or ``None``
    (no boxes, in both modes); ``sizes``: ``(width, height)``. Answer boxes
    labelled person/people/pedestrian or unlabelled are kept, converted to
    pixels by ``int(v / 1000 * W)`` and clipped; degenerate ones are dropped.
    Per image ``match_greedy``; TP, FP, FN are summed over images and
    F1 = 2TP / (2TP + FP + FN) (0 when that is 0). Resampling unit: the
    image; intervals re-sum the per-image counts.
    """
    check_mode(mode)
    counts = np.zeros((len(truth_boxes), len(OL_THRESHOLDS), 3))  # per image, threshold: TP, FP, FN
    for k, (gt, ans, (w, h)) in enumerate(zip(truth_boxes, answers, sizes)):
        kept = [box for box, label in ans or [] if label is None or label in PERSON_LABELS]
        px = [b for b in (to_pixels(box, w, h, floor=True) for box in kept) if b is not None]
        ious = np.asarray(match_greedy(px, gt))
        tp = (ious[None, :] >= OL_THRESHOLDS[:, None]).sum(axis=1) if ious.size else np.zeros(len(OL_THRESHOLDS))
        counts[k, :, 0], counts[k, :, 1], counts[k, :, 2] = tp, len(px) - tp, len(gt) - tp

    def f1(weights: np.ndarray) -> np.ndarray:  # (B, n) -> (B, thresholds)
        tp, fp, fn = np.moveaxis(np.tensordot(weights, counts, axes=(1, 0)), -1, 0)
        denom = 2 * tp + fp + fn
        return np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)

    point = f1(np.ones((1, len(truth_boxes))))[0] if len(truth_boxes) else np.full(len(OL_THRESHOLDS), np.nan)
    secondary = {"F1_mean_0.50:0.95": float(point.mean()), "F1@0.95": float(point[-1])}
    return Score(float(point[0]), secondary, n_units=len(truth_boxes), stat=lambda w: f1(w)[:, 0])


def success_curve(ious, *, inclusive: bool = True) -> np.ndarray:
    """Success(t) for the 21 ``SUCCESS_THRESHOLDS``: the share of ``ious`` (``(K,)``, K >= 1) that are >= t
    (``inclusive=False``: > t, the OTB toolkit's rule). Success AUC is its mean."""
    ious = np.asarray(ious, dtype=np.float64)[:, None]
    hits = ious >= SUCCESS_THRESHOLDS[None, :] if inclusive else ious > SUCCESS_THRESHOLDS[None, :]
    return hits.mean(axis=0)


def sot_tracklet(truth: Mapping[int, Sequence[float] | None], answer: Mapping[int, Sequence[float] | None] | None,
                 n_frames: int, *, inclusive: bool = True) -> dict | None:
    """Success AUC, null rate and freeze rate of one tracklet (harness ``vantage_sot.py:420-513``).

    Frames ``k = 1 .. n_frames - 1`` (frame 0 is the initial box). A GT
    ``None`` means the target is absent: absent + no box is skipped; absent +
    box scores 0; present + no box scores 0; else the box IoU.
    Success(t) = share of scored frames with IoU >= t (``inclusive=False``:
    IoU > t, the OTB toolkit's rule) for the 21 ``SUCCESS_THRESHOLDS``;
    AUC = their mean. ``null_rate`` = scored frames without a box / scored
    frames. A freeze is a GT-present frame whose box has IoU >= 0.95 with the
    box of the previous GT-present frame (the initial box never counts);
    ``freeze_rate`` = freezes / max(1, boxes on scored frames - 1).
    Returns ``None`` when no frame is scored (the harness stops on such a tracklet).
    """
    answer = answer or {}
    ious, nulls, n_box, freezes = [], 0, 0, 0
    previous: tuple | None = None
    have_previous = False
    for k in range(1, n_frames):
        gt, box = truth.get(k), answer.get(k)
        if gt is None and box is None:
            continue
        if box is not None:
            n_box += 1
        else:
            nulls += 1
        ious.append(0.0 if gt is None or box is None else box_iou(box, gt))
        if gt is not None:
            if box is not None and have_previous and previous is not None and box_iou(box, previous) >= 0.95:
                freezes += 1
            previous, have_previous = box, True
    if not ious:
        return None
    return {"auc": float(success_curve(ious, inclusive=inclusive).mean()), "null_rate": nulls / len(ious),
            "freeze_rate": freezes / max(1, n_box - 1), "n_scored_frames": len(ious)}


def sot_success(truth: Sequence[Mapping], answers: Sequence[Mapping | None], n_frames: Sequence[int],
                mode: str = "parity", *, inclusive: bool = True) -> Score:
    """Success AUC over tracklets: the mean of per-tracklet AUC (resampling unit: the tracklet).

    ``truth``: per tracklet ``{k: GT box or None}``; ``answers``: per tracklet
    the parsed ``{k: box or None}`` or ``None`` (every frame without a box, in
    both modes); ``n_frames``: frames per tracklet, frame 0 included. A
    tracklet with no scored frame is left out and counted. Secondary: the
    mean null rate and mean freeze rate.
    """
    check_mode(mode)
    rows = [sot_tracklet(t, a, n, inclusive=inclusive) for t, a, n in zip(truth, answers, n_frames)]
    kept = [r for r in rows if r is not None]
    auc = np.array([r["auc"] for r in kept])
    secondary = {"null_rate": float(np.mean([r["null_rate"] for r in kept])) if kept else float("nan"),
                 "freeze_rate": float(np.mean([r["freeze_rate"] for r in kept])) if kept else float("nan")}
    notes = [f"{len(rows) - len(kept)} tracklets without a scored frame left out"] if len(kept) < len(rows) else []
    return Score(float(auc.mean()) if auc.size else float("nan"), secondary, n_units=auc.size, unit_values=auc,
                 notes=notes)
