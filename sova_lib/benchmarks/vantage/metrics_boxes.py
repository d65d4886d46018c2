"""Box geometry and the box metrics: referring-expression IoU, object-localization F1 and
single-object-tracking Success AUC / freeze rate.

Boxes are ``(x1, y1, x2, y2)`` with ``x2 > x1`` and ``y2 > y1`` in one
coordinate space (pixels, or the 0-1000 grid the models answer in); areas are
continuous (no "+1" pixel convention). Pure functions over GT and parsed
answers (spec section 2); values in [0, 1].
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sova_lib.benchmarks.vantage.metrics import Score, iou_matrix
from sova_lib.benchmarks.vantage.parsing import check_mode, float_of
from sova_lib.benchmarks.vantage.parsing_boxes import person_label

__all__ = ["OL_THRESHOLDS", "SUCCESS_THRESHOLDS", "box_iou", "gt_person_boxes",
           "localization_f1", "match_at_threshold", "refex_iou", "scale_box", "sot_success", "sot_tracklet",
           "success_curve", "to_pixels"]


def box_iou(a, b) -> float:
    """IoU of two boxes: intersection area / union area; 0 when the union is empty (``metrics.iou_matrix``)."""
    return float(iou_matrix([a], [b], dims=2)[0, 0])


def to_pixels(box, width: float, height: float) -> tuple[float, ...] | None:
    """A 0-1000 grid box in pixels of a ``width`` x ``height`` image, clipped to the image.

    ``x * width / 1000`` and ``y * height / 1000``, each clipped as the
    referring-expression scorer does, ``max(0.0, min(v, size))``
    (``grounding_2d_dataset.py:826-841``): with Python's ``min`` and ``max``
    a ``NaN`` becomes 0 and an infinity 0 or the size. ``None`` when the
    clipped box is degenerate.
    Example: ``(nan, 100, inf, 300)`` on 1000 x 1000 -> ``(0, 100, 1000, 300)``.
    """
    sizes = (width, height, width, height)
    px = tuple(max(0.0, min(float(v) * size / 1000.0, size)) for v, size in zip(box, sizes, strict=True))
    return px if px[2] > px[0] and px[3] > px[1] else None  # clipped, so finite


def refex_iou(truth_boxes: Sequence[Sequence[Sequence[float]]], answers: Sequence[list | None],
              sizes: Sequence[tuple[float, float]]) -> Score:
    """Referring-expression mIoU and Acc@0.25/0.5/0.75 (harness ``grounding_2d_dataset.py:779-872``).

    ``truth_boxes``: per item, its GT boxes in pixels ``(x1, y1, x2, y2)``;
    ``answers``: per item, the parsed 0-1000 boxes or ``None``; ``sizes``:
    per item ``(width, height)``. Each answer box goes to pixels
    (``x * W / 1000``), is clipped to the image and dropped when degenerate.
    An item scores the maximum IoU over (answer box, GT box) pairs, 0 without
    a box. mIoU = item mean; Acc@t = share of items with IoU >= t. Extra boxes
    can only raise an item's score, so ``boxes_per_answer`` is reported too. The modes differ in the parser only.
    """
    scores = np.zeros(len(truth_boxes))
    n_boxes = []
    for k, (gt, ans, (w, h)) in enumerate(zip(truth_boxes, answers, sizes)):
        px = [b for b in (to_pixels(box, w, h) for box in ans or []) if b is not None]
        n_boxes.append(len(ans or []))
        if px and len(gt):
            scores[k] = float(iou_matrix(px, gt, dims=2).max())
    secondary = {f"Acc@{t}": float((scores >= t).mean()) if scores.size else float("nan") for t in (0.25, 0.5, 0.75)}
    secondary["boxes_per_answer"] = float(np.mean(n_boxes)) if n_boxes else float("nan")
    return Score(float(scores.mean()) if scores.size else float("nan"), secondary, n_units=scores.size,
                 unit_values=scores)


#: IoU thresholds of the object-localization F1: 0.5 + 0.05 i, i = 0 .. 9, computed as the harness does
#: (``astro_2d_dataset.py:555``; 0.5 + 0.05 * 3 is 0.6500000000000001 there and here).
OL_THRESHOLDS = np.array([0.5 + 0.05 * i for i in range(10)])
#: IoU thresholds of Success AUC: 0, 0.05, ..., 1 (21 values).
SUCCESS_THRESHOLDS = np.linspace(0.0, 1.0, 21)


def scale_box(box, width: float, height: float) -> tuple[float, float, float, float]:
    """A 0-1000 grid box in pixels as the object-localization scorer computes it (harness ``vantage2d/utils.py:56-80``).

    Each coordinate becomes ``int(v / 1000 * size)`` (truncated toward 0, in
    that order of operations); then ``x1, y1`` are raised to 0 and ``x2, y2``
    lowered to the width and height. Nothing else is clipped and a degenerate
    box is kept (it can only be a false positive).
    Example: ``(-50, 100, 1200, 288)`` on 640 x 480 -> ``(0, 48, 640, 138)``.
    """
    x1, y1, x2, y2 = (int(float(v) / 1000 * size) for v, size in zip(box, (width, height) * 2, strict=True))
    return (float(max(x1, 0)), float(max(y1, 0)), float(min(x2, width)), float(min(y2, height)))


def _area(box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def gt_person_boxes(objects, min_area: float = 0.0) -> list[tuple[float, ...]]:
    """The GT boxes the object-localization scorer keeps (harness ``astro_2d_dataset.py:277-310,540-548``).

    ``objects``: one image's GT as ``ground_truth.read_ground_truth`` keeps it, each a box ``[x1, y1, x2, y2]``
    in pixels (a person) or a ``{"label", "bbox"}`` object (the reader has already left out an object without
    either, as the harness's KITTI writer does). Labels are lower-cased; person/people/pedestrian become person,
    and only persons with area >= ``min_area`` are kept (the ``dontcare``/``misc``/``ignore`` objects the
    harness's KITTI reader skips, ``vantage2d/utils.py:103-105``, are no persons either).
    """
    out = []
    for obj in objects:
        box, label = (obj["bbox"], obj["label"]) if isinstance(obj, dict) else (obj, "person")
        box = tuple(float(v) for v in box[:4])
        if person_label(str(label)) == "person" and _area(box) >= min_area:  # a null label is "none", as written
            out.append(box)
    return out


def match_at_threshold(pred_boxes, gt_boxes, threshold: float) -> int:
    """True positives of one image at one IoU threshold (harness ``astro_2d_dataset.py:369-418``).

    Answer boxes in the given order (the caller sorts them by score) each
    look for the not yet matched GT box of largest IoU, counting only IoU > 0
    and keeping the earlier GT box on equal IoU; the pair is a true positive,
    and the GT box is taken, only when that IoU >= ``threshold``; otherwise
    the answer box is a false positive and takes nothing. Matching is thus
    redone at each threshold.
    """
    if not len(pred_boxes) or not len(gt_boxes):
        return 0
    iou = iou_matrix(pred_boxes, gt_boxes, dims=2)
    free = np.ones(iou.shape[1], dtype=bool)
    tp = 0
    for row in iou:
        cand = np.where(free, row, 0.0)
        j = int(np.argmax(cand))
        if cand[j] > 0 and cand[j] >= threshold:
            free[j] = False
            tp += 1
    return tp


def _by_score(boxes: list, mode: str) -> list:
    """``(box, score)`` pairs sorted by score, highest first, equal scores in answer order.

    ``official`` sorts by the scores as written, as the harness does
    (``sorted(..., key=score, reverse=True)``, ``astro_2d_dataset.py:389``):
    text against text ("0.9" before "0.3", "10" before "9"), numbers against
    numbers (a ``NaN`` left where Python's sort leaves it). Where the harness
    stops (text against a number, ``null`` against anything), and in
    ``strict``, a score that is no number counts as 1.0.
    """
    if mode == "official":
        try:
            return sorted(boxes, key=lambda p: p[1], reverse=True)
        except TypeError:
            pass
    # a score that is a number (``bool`` too) as it is, any other 1.0
    return sorted(boxes, key=lambda p: float_of(p[1]) if isinstance(p[1], (int, float)) else 1.0, reverse=True)


def localization_f1(truth: Sequence[Sequence], answers: Sequence[list | None],
                    sizes: Sequence[tuple[float, float]], mode: str = "official", *, min_area: float = 0.0) -> Score:
    """Pooled object-localization F1 at IoU 0.5 and its mean over 0.50:0.05:0.95 (harness ``vantage2d/astro_2d_dataset.py:369-418,420-600``).

    ``truth``: per image its GT objects (see ``gt_person_boxes``; pixels);
    ``answers``: per image the parsed ``Detection``s (0-1000 grid) or
    ``None`` (no boxes, in both modes); ``sizes``: ``(width, height)``;
    ``min_area``: the smallest kept box area in pixels, GT and answers
    (``metadata.extra.min_bbox_area``, 0 by default). Answer boxes labelled
    person are put in pixels by ``scale_box`` (a degenerate box stays, as a
    false positive), those of area >= ``min_area`` kept and sorted by score,
    highest first (``_by_score``). Per image and threshold
    ``match_at_threshold``; TP, FP and the GT count are summed over images;
    P = TP / (TP + FP), R = TP / GT, F1 = 2PR / (P + R) (0 when undefined).
    Resampling unit: the image; intervals re-sum the per-image counts.
    """
    mode = check_mode(mode)
    counts = np.zeros((len(truth), len(OL_THRESHOLDS), 3))  # per image, threshold: TP, FP, GT
    n_boxes = 0
    for k, (gt, ans, (w, h)) in enumerate(zip(truth, answers, sizes)):
        gt_boxes = gt_person_boxes(gt, min_area)
        people = [(scale_box(d.xyxy(), w, h), d.score) for d in ans or [] if d.label == "person"]
        px = [box for box, _ in _by_score([p for p in people if _area(p[0]) >= min_area], mode)]
        n_boxes += len(px)
        for t, threshold in enumerate(OL_THRESHOLDS):
            tp = match_at_threshold(px, gt_boxes, threshold)
            counts[k, t] = (tp, len(px) - tp, len(gt_boxes))

    def f1(weights: np.ndarray) -> np.ndarray:  # (B, n) -> (B, thresholds)
        # precision, recall and F1 as the harness computes them (astro_2d_dataset.py:413-416), 0 when undefined
        tp, fp, n_gt = np.moveaxis(np.tensordot(weights, counts, axes=(1, 0)), -1, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(tp + fp > 0, tp / np.where(tp + fp > 0, tp + fp, 1), 0.0)
            r = np.where(n_gt > 0, tp / np.where(n_gt > 0, n_gt, 1), 0.0)
            return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)

    point = f1(np.ones((1, len(truth))))[0] if len(truth) else np.full(len(OL_THRESHOLDS), np.nan)
    secondary = {"F1_mean_0.50:0.95": float(np.mean(point)), "F1@0.95": float(point[-1]),
                 "n_answer_boxes": int(n_boxes)}
    return Score(float(point[0]), secondary, n_units=len(truth), stat=lambda w: f1(w)[:, 0])


def success_curve(ious, *, inclusive: bool = True) -> np.ndarray:
    """Success(t) for the 21 ``SUCCESS_THRESHOLDS``: the share of ``ious`` (``(K,)``, K >= 1) that are >= t
    (``inclusive=False``: > t, the OTB toolkit's rule). Success AUC is its mean."""
    ious = np.asarray(ious, dtype=np.float64)[:, None]
    hits = ious >= SUCCESS_THRESHOLDS[None, :] if inclusive else ious > SUCCESS_THRESHOLDS[None, :]
    return hits.mean(axis=0)


def sot_tracklet(truth: Mapping[int, Sequence[float] | None], answer: Mapping[int, Sequence[float] | None] | None,
                 n_frames: int) -> dict | None:
    """Success AUC, null rate and freeze rate of one tracklet (harness ``vantage_sot.py:420-513``).

    Frames ``k = 1 .. n_frames - 1`` (frame 0 is the initial box). A GT
    ``None`` means the target is absent: absent + no box is skipped; absent +
    box scores 0; present + no box scores 0; else the box IoU.
    Success(t) = share of scored frames with IoU >= t for the 21
    ``SUCCESS_THRESHOLDS`` (``success_curve``); AUC = their mean. ``null_rate`` = scored frames without a box / scored
    frames. A freeze is a GT-present frame whose box has IoU >= 0.95 with the
    last box given on an earlier GT-present frame, however many frames
    without a box lie between (``prev_pred`` changes only where a box is
    given, ``vantage_sot.py:466-472``; the initial box never counts), in both
    modes; ``freeze_rate`` = freezes / max(1, boxes on scored frames - 1).
    Returns ``None`` when no frame is scored (the harness stops on such a tracklet).
    """
    answer = answer or {}
    ious, n_box, freezes = [], 0, 0
    previous = None
    for k in range(1, n_frames):
        gt, box = truth.get(k), answer.get(k)
        if gt is None and box is None:
            continue
        n_box += box is not None
        ious.append(0.0 if gt is None or box is None else box_iou(box, gt))
        if gt is not None and box is not None:
            if previous is not None and box_iou(box, previous) >= 0.95:
                freezes += 1
            previous = box
    if not ious:
        return None
    return {"auc": float(success_curve(ious).mean()), "null_rate": (len(ious) - n_box) / len(ious),
            "freeze_rate": freezes / max(1, n_box - 1), "n_scored_frames": len(ious)}


def sot_success(truth: Sequence[Mapping], answers: Sequence[Mapping | None], n_frames: Sequence[int]) -> Score:
    """Success AUC over tracklets: the mean of per-tracklet AUC (resampling unit: the tracklet).

    ``truth``: per tracklet ``{k: GT box or None}``; ``answers``: per tracklet
    the parsed ``{k: box or None}`` or ``None`` (every frame without a box, in
    both modes); ``n_frames``: frames per tracklet, frame 0 included. A
    tracklet with no scored frame is left out and counted. Secondary: the
    mean null rate and mean freeze rate. Both modes score alike.
    """
    rows = [sot_tracklet(t, a, n) for t, a, n in zip(truth, answers, n_frames)]
    kept = [r for r in rows if r is not None]
    auc = np.array([r["auc"] for r in kept])
    secondary = {key: float(np.mean([r[key] for r in kept])) if kept else float("nan")
                 for key in ("null_rate", "freeze_rate")}
    notes = [f"{len(rows) - len(kept)} tracklets without a scored frame left out"] if len(kept) < len(rows) else []
    return Score(float(auc.mean()) if auc.size else float("nan"), secondary, n_units=auc.size, unit_values=auc,
                 notes=notes)

