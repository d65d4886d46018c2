"""Box and interval geometry shared by the VANTAGE-Bench metrics.

Boxes are ``(x1, y1, x2, y2)`` with ``x2 > x1`` and ``y2 > y1`` in one
coordinate space (pixels, or the 0-1000 grid the models answer in); areas are
continuous (no "+1" pixel convention). Intervals are ``(start, end)`` in
seconds. All functions are pure.
"""
from __future__ import annotations

import numpy as np

__all__ = ["box_iou", "box_iou_matrix", "clamp_box", "interval_iou", "interval_iou_matrix", "image_size", "to_pixels",
           "valid_box"]


def valid_box(box) -> bool:
    """True when ``box`` has four finite numbers and a positive width and height."""
    try:
        x1, y1, x2, y2 = (float(v) for v in box)
    except (TypeError, ValueError):
        return False
    return bool(np.isfinite([x1, y1, x2, y2]).all() and x2 > x1 and y2 > y1)


def box_iou(a, b) -> float:
    """IoU of two boxes: intersection area / union area; 0 when the union is empty."""
    return float(box_iou_matrix([a], [b])[0, 0])


def box_iou_matrix(a, b) -> np.ndarray:
    """IoU of every box of ``a`` (``(M, 4)``) with every box of ``b`` (``(N, 4)``): an ``(M, N)`` array.

    A pair whose union has no area scores 0.
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = np.clip(a[:, 2] - a[:, 0], 0, None) * np.clip(a[:, 3] - a[:, 1], 0, None)
    area_b = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def clamp_box(box, low: float = 0.0, high: float = 1000.0) -> tuple[float, ...] | None:
    """``box`` with every coordinate clipped to ``[low, high]``; ``None`` when the result is degenerate.

    Example: ``[-10, 0, 1200, 50]`` on the 0-1000 grid gives ``(0, 0, 1000, 50)``.
    """
    clipped = tuple(float(min(max(float(v), low), high)) for v in box)
    return clipped if valid_box(clipped) else None


def to_pixels(box, width: float, height: float, *, floor: bool = False) -> tuple[float, ...] | None:
    """A 0-1000 grid box in pixels of a ``width`` x ``height`` image, clipped to the image.

    ``x * width / 1000`` and ``y * height / 1000`` (``floor=True`` truncates
    to ``int`` as the object-localization scorer does). ``None`` when the
    clipped box is degenerate.
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    xs = [x1 * width / 1000.0, x2 * width / 1000.0]
    ys = [y1 * height / 1000.0, y2 * height / 1000.0]
    if floor:
        xs, ys = [float(int(v)) for v in xs], [float(int(v)) for v in ys]
    px = (min(max(xs[0], 0.0), width), min(max(ys[0], 0.0), height),
          min(max(xs[1], 0.0), width), min(max(ys[1], 0.0), height))
    return px if valid_box(px) else None


def interval_iou(a, b) -> float:
    """Temporal IoU of two intervals ``(start, end)``.

    I = max(0, min(ends) - max(starts)); U = max(0, e_a - s_a) + max(0, e_b - s_b) - I;
    IoU = I / U, and 0 when U = 0.
    """
    return float(interval_iou_matrix([a], [b])[0, 0])


def interval_iou_matrix(a, b) -> np.ndarray:
    """Temporal IoU of every interval of ``a`` (``(M, 2)``) with every one of ``b`` (``(N, 2)``)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 2)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 2)
    inter = np.clip(np.minimum(a[:, None, 1], b[None, :, 1]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    union = np.clip(a[:, 1] - a[:, 0], 0, None)[:, None] + np.clip(b[:, 1] - b[:, 0], 0, None)[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def image_size(extra: dict, default: tuple[float, float]) -> tuple[float, float]:
    """``(width, height)`` of an item from its ``metadata.extra``: ``image_width`` / ``image_height`` (the
    harness's keys, ``adapter_grounding.py:77-78``) or ``width`` / ``height``; each one missing takes its
    ``default`` (the harness falls back to 1000 x 1000 for referring expressions, ``grounding_2d_dataset.py:815-825``,
    and to 640 x 480 for object localization when the image does not open, ``astro_2d_dataset.py:480-487``)."""
    out = []
    for keys, fallback in ((("image_width", "width"), default[0]), (("image_height", "height"), default[1])):
        value = next((extra[k] for k in keys if isinstance(extra.get(k), (int, float))
                      and not isinstance(extra.get(k), bool)), None)
        out.append(float(value) if value is not None else float(fallback))
    return out[0], out[1]
