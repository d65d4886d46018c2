"""Metrics of the answer-per-item tasks: accuracy (VQA, pointing), Macro F1 (event verification),
temporal IoU (temporal localization) and referring-expression IoU.

Inputs are the ground truths and the parsed answers of one task, item by
item (``None`` = an answer the parser could not read). Every function is
pure and returns a ``Score`` whose values are in [0, 1] (spec section 2).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sova_lib.benchmarks.vantage.boxes import box_iou_matrix, interval_iou, to_pixels
from sova_lib.benchmarks.vantage.parse_text import check_mode
from sova_lib.benchmarks.vantage.result import Score

__all__ = ["accuracy", "macro_f1", "macro_f1_counts", "refex_iou", "temporal_iou"]


def accuracy(truth: Sequence[str], answers: Sequence[str | None]) -> Score:
    """Share of items whose parsed letter equals the truth; an unreadable answer is wrong (both modes).

    ``truth`` and ``answers``: ``(N,)`` letters. Denominator: all ``N`` items.
    """
    if len(truth) != len(answers):
        raise ValueError(f"{len(truth)} truths but {len(answers)} answers")
    correct = np.array([a is not None and a == t for t, a in zip(truth, answers)], dtype=np.float64)
    return Score(float(correct.mean()) if correct.size else float("nan"), n_units=correct.size, unit_values=correct)


def macro_f1_counts(truth_index: np.ndarray, pred_index: np.ndarray, n_classes: int, weights: np.ndarray,
                    labels: Sequence[int] | None = None) -> np.ndarray:
    """Macro F1 of weighted items, for each row of ``weights`` (``(B, N)``): ``(B,)`` values.

    ``truth_index`` / ``pred_index``: ``(N,)`` class numbers in ``0 .. n_classes-1``.
    Per class c: TP, FP, FN are the weighted counts; F1 = 2TP / (2TP + FP + FN)
    (0 when the denominator is 0, as scikit-learn's ``zero_division=0``).
    ``labels=None`` averages over the classes present in truth or answers of
    each resample; else over ``labels``.
    """
    pair = np.asarray(truth_index) * n_classes + np.asarray(pred_index)
    onehot = np.zeros((pair.size, n_classes * n_classes))
    onehot[np.arange(pair.size), pair] = 1.0
    conf = (weights @ onehot).reshape(-1, n_classes, n_classes)  # [b, truth, pred]
    tp = np.diagonal(conf, axis1=1, axis2=2)
    fn = conf.sum(axis=2) - tp
    fp = conf.sum(axis=1) - tp
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)
    if labels is not None:
        return f1[:, list(labels)].mean(axis=1)
    present = (tp + fp + fn) > 0
    with np.errstate(invalid="ignore"):
        return np.where(present, f1, 0.0).sum(axis=1) / present.sum(axis=1)


def macro_f1(truth: Sequence[str], answers: Sequence[str | None], mode: str = "parity") -> Score:
    """Macro F1 of yes/no answers (event verification), by scikit-learn.

    ``parity`` (harness ``vantage_event_verification.py:222-227``): items
    with an unreadable answer are dropped; the average runs over the labels
    present in truth or answers (all "yes" on both sides gives 1.0); with no
    readable answer at all the value is 0.
    ``strict``: every item counts, an unreadable answer is the label
    ``"invalid"``, and the average runs over ``["no", "yes"]``.
    Truth y,y,n,n with answers yes,no,no,None: 0.6667 (parity), 0.5833 (strict).
    """
    from sklearn.metrics import f1_score  # heavy (seconds): imported when used, so `sova --help` stays fast

    check_mode(mode)
    if len(truth) != len(answers):
        raise ValueError(f"{len(truth)} truths but {len(answers)} answers")
    truth = [str(t).strip().lower() for t in truth]
    classes = ["no", "yes", "invalid"]
    if mode == "parity":
        keep = [k for k, a in enumerate(answers) if a is not None]
        t, p = [truth[k] for k in keep], [answers[k] for k in keep]
        labels = sorted(set(t) | set(p))
        # no readable answer at all: the harness reports 0 (vantage_event_verification.py:229-231)
        value = float(f1_score(t, p, labels=labels, average="macro", zero_division=0)) if t else 0.0
        fixed = None
    else:
        t, p = truth, [a if a is not None else "invalid" for a in answers]
        value = float(f1_score(t, p, labels=["no", "yes"], average="macro", zero_division=0)) if t else float("nan")
        fixed = [0, 1]
    ti = np.array([classes.index(x) if x in classes else 2 for x in t], dtype=int)
    pi = np.array([classes.index(x) for x in p], dtype=int)

    def stat(weights: np.ndarray) -> np.ndarray:
        return macro_f1_counts(ti, pi, 3, weights, labels=fixed)

    dropped = len(truth) - len(t)
    notes = [f"{dropped} unreadable answers dropped (harness behaviour)"] if dropped else []
    return Score(value, n_units=len(t), stat=stat, notes=notes,
                 secondary={"share_yes_answers": float(np.mean([x == "yes" for x in p])) if p else float("nan")})


def _video_macro(values: np.ndarray, groups: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mean over groups (videos) of each group's weighted mean, for each row of ``weights``."""
    names, inverse = np.unique(groups, return_inverse=True)
    member = np.zeros((values.size, names.size))
    member[np.arange(values.size), inverse] = 1.0
    sums, counts = weights @ (member * values[:, None]), weights @ member
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), 0.0)
        return means.sum(axis=1) / (counts > 0).sum(axis=1)


def _clamped(interval, d) -> tuple[float, float]:
    """``interval`` with both ends clamped to [0, d], sorted."""
    s, e = sorted(min(max(float(v), 0.0), float(d)) for v in interval)
    return s, e


def temporal_iou(truth: Sequence[tuple[float, float]], answers: Sequence[tuple[float, float] | None],
                 durations: Sequence[float], videos: Sequence[str], mode: str = "parity") -> Score:
    """Temporal-localization mIoU: the mean over videos of each video's mean IoU (harness ``vantage_temporal.py:560``).

    ``truth``: ``(N,)`` GT ``(start, end)`` in seconds; ``answers``: parsed
    ``(start, end)`` or ``None``; ``durations``: ``(N,)`` GT video lengths d
    (the harness's default is 30 s); ``videos``: ``(N,)`` video names. An answer
    and its GT are clamped to [0, d] and sorted, as the harness reads both
    back (``vantage_temporal.py:540-542``). An unreadable answer is the whole video
    ``[0, d]`` in ``parity`` and IoU 0 in ``strict``. Secondary: R@0.5 (video
    macro), and the item means of IoU and R@0.5 (spec section 8, gap 2).
    """
    check_mode(mode)
    n = len(truth)
    if not n == len(answers) == len(durations) == len(videos):
        raise ValueError("truth, answers, durations and videos must have one length")
    iou = np.zeros(n)
    for k, (gt, ans, d) in enumerate(zip(truth, answers, durations)):
        if ans is None:
            if mode == "strict":
                continue
            ans = (0.0, d)
        iou[k] = interval_iou(_clamped(gt, d), _clamped(ans, d))
    groups = np.asarray([str(v) for v in videos])
    hit = (iou >= 0.5).astype(np.float64)
    one = np.ones((1, n))
    secondary = {
        "R@0.5": float(_video_macro(hit, groups, one)[0]) if n else float("nan"),
        "mIoU_item_mean": float(iou.mean()) if n else float("nan"),
        "R@0.5_item_mean": float(hit.mean()) if n else float("nan"),
        "n_videos": int(np.unique(groups).size),
    }
    value = float(_video_macro(iou, groups, one)[0]) if n else float("nan")
    return Score(value, secondary, n_units=n, stat=lambda w: _video_macro(iou, groups, w))


def refex_iou(truth_boxes: Sequence[Sequence[Sequence[float]]], answers: Sequence[list | None],
              sizes: Sequence[tuple[float, float]], mode: str = "parity") -> Score:
    """Referring-expression mIoU and Acc@0.25/0.5/0.75 (harness ``grounding_2d_dataset.py:779-872``).

    ``truth_boxes``: per item, its GT boxes in pixels ``(x1, y1, x2, y2)``;
    ``answers``: per item, the parsed 0-1000 boxes or ``None``; ``sizes``:
    per item ``(width, height)``. Each answer box goes to pixels
    (``x * W / 1000``), is clipped to the image and dropped when degenerate.
    An item scores the maximum IoU over (answer box, GT box) pairs, 0 without
    a box. mIoU = item mean; Acc@t = share of items with IoU >= t. Extra boxes
    can only raise an item's score, so ``boxes_per_answer`` is reported too.
    """
    check_mode(mode)
    scores = np.zeros(len(truth_boxes))
    n_boxes = []
    for k, (gt, ans, (w, h)) in enumerate(zip(truth_boxes, answers, sizes)):
        px = [b for b in (to_pixels(box, w, h) for box in ans or []) if b is not None]
        n_boxes.append(len(ans or []))
        if px and len(gt):
            scores[k] = float(box_iou_matrix(px, gt).max())
    secondary = {f"Acc@{t}": float((scores >= t).mean()) if scores.size else float("nan") for t in (0.25, 0.5, 0.75)}
    secondary["boxes_per_answer"] = float(np.mean(n_boxes)) if n_boxes else float("nan")
    return Score(float(scores.mean()) if scores.size else float("nan"), secondary, n_units=scores.size,
                 unit_values=scores)
