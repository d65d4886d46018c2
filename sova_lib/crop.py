"""Cropping: a clip shows only the region its actors occupy (SOVABench paper, Section 3; spec section 6, steps 3-5).

"We identify the participating objects for each activity and define a spatial region of interest enclosing all
actors throughout the activity": the whole crop path, in the order it runs, on ``(x1, y1, x2, y2)`` pixel boxes
whose ``x2``/``y2`` edges are exclusive (width ``x2 - x1``):

1. ``union_box(boxes)``: a track's region, the smallest whole-pixel box that holds every one of its boxes,
   ``(min x1, min y1, max x2, max y2)`` with ``x1``/``y1`` rounded down and ``x2``/``y2`` up; no padding. Clip
   planning (``sova_lib.benchmarks.sovabench.clips``) gives it an activity's actors' counted boxes.
2. ``clamp(region, width, height)``: the region inside a ``width x height`` frame (some annotated MEVA boxes pass
   the edge of their 1920x1080 frame; a plan made without the video keeps them as annotated).
3. ``crop(frame, region)``: the frame's pixels inside the clamped region.

The clip cutter (``clips.extract``) and the frame reader (``sova_lib.video.sample_frames``) crop with these.
"""
from __future__ import annotations

import numpy as np

__all__ = ["clamp", "crop", "union_box"]


def union_box(boxes) -> tuple[int, int, int, int]:
    """The smallest whole-pixel box holding all ``boxes`` (``(n, 4)`` rows ``x1, y1, x2, y2``); ``ValueError`` if none."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if not len(boxes):
        raise ValueError("the union of no box is undefined")
    x1, y1 = np.floor(boxes[:, :2].min(axis=0))
    x2, y2 = np.ceil(boxes[:, 2:].max(axis=0))
    return int(x1), int(y1), int(x2), int(y2)


def clamp(region, width: int, height: int) -> tuple[int, int, int, int]:
    """``region`` rounded to whole pixels and cut to a ``width x height`` frame; ``ValueError`` when none is left."""
    x1, y1, x2, y2 = (int(round(v)) for v in region)
    x1, x2 = min(max(x1, 0), width), min(max(x2, 0), width)
    y1, y2 = min(max(y1, 0), height), min(max(y2, 0), height)
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"the region {tuple(region)} is empty inside the {width}x{height} frame")
    return x1, y1, x2, y2


def crop(frame: np.ndarray, region) -> np.ndarray:
    """The pixels of ``frame`` (an ``H x W x C`` array) inside ``region`` clamped to it, as a contiguous array."""
    height, width = frame.shape[:2]
    x1, y1, x2, y2 = clamp(region, width, height)
    return np.ascontiguousarray(frame[y1:y2, x1:x2])
