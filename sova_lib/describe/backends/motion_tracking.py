"""Blobs and tracks for the motion describer: the image measurements behind ``sova_lib.describe.backends.motion``.

Steps 1-4 and 6 of the method in ``sova_lib.describe.backends.motion``'s docstring, on frames
downscaled to "work" pixels: ``prepare_frames`` (downscale and blur),
``find_blobs`` (foreground blobs against the temporal-median background, each
marked as a real object or a ghost, where a still object was),
``link_blobs`` (greedy nearest-centroid tracks), ``ghost_events`` (where
still objects left or came to rest), ``still_head`` (how long a track stays
put), ``area_scale`` (growth of a track's blob) and ``is_person`` (OpenCV's
HOG person detector over a blob). ``analyse_motion`` in ``sova_lib.describe.backends.motion``
turns their output into moving objects. ``p`` is the describer's option
dict (``sova_lib.describe.backends.motion.MotionDescriber``). Deterministic and stateless.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Blob", "area_scale", "find_blobs", "ghost_events", "is_person", "link_blobs", "prepare_frames",
           "still_head"]


@dataclass
class Blob:
    """One connected foreground component in one frame, in work pixels; ``ghost``: where a still object was."""

    k: int  # frame number in the request
    cx: float
    cy: float
    box: tuple[int, int, int, int]  # x, y, w, h in work pixels
    area: float
    ghost: bool


def prepare_frames(frames, work_size: int):
    """``(arrays, stack, (width, height), scale)`` of ``frames`` (RGB PIL images or H x W x 3 uint8 arrays).

    ``arrays``: the frames as full-resolution uint8 arrays (a frame of another
    size than the first is resized to it); ``stack``: uint8, shape
    ``(n, h, w, 3)``, the frames downscaled so the longer side is at most
    ``work_size`` px and Gaussian-blurred (5 x 5); ``(width, height)``: the
    source size; ``scale``: work pixels per source pixel (at most 1).
    """
    import cv2

    arrays = [np.asarray(f.convert("RGB") if hasattr(f, "convert") else f, dtype=np.uint8) for f in frames]
    h, w = arrays[0].shape[:2]
    scale = min(1.0, work_size / max(h, w))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    work = []
    for a in arrays:
        if a.shape[:2] != (h, w):
            a = cv2.resize(a, (w, h), interpolation=cv2.INTER_AREA)
        if scale < 1.0:
            a = cv2.resize(a, size, interpolation=cv2.INTER_AREA)
        work.append(cv2.GaussianBlur(a, (5, 5), 0))
    return arrays, np.stack(work), (w, h), size[0] / w


def _gradient(img: np.ndarray) -> np.ndarray:
    import cv2

    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float32)
    return cv2.magnitude(cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))


def find_blobs(stack: np.ndarray, p: dict) -> list[list[Blob]]:
    """Foreground blobs of each frame of ``stack`` (``prepare_frames``), one list per frame.

    Foreground: pixels whose largest RGB difference to the per-pixel temporal
    median exceeds ``p["diff_threshold"]``, opened (3 x 3) and closed (7 x 7);
    a blob is a connected component of at least ``p["min_area"]`` of the
    frame and 16 px. It is a ghost when the background has stronger edges
    along its outline than the frame.
    """
    import cv2

    background = np.median(stack, axis=0).astype(np.uint8)
    grad_bg = _gradient(background)
    n, h, w = stack.shape[:3]
    min_pixels = max(p["min_area"] * h * w, 16.0)  # at least 16 work pixels
    open_k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    close_k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))
    out = []
    for k in range(n):
        diff = np.abs(stack[k].astype(np.int16) - background.astype(np.int16)).max(axis=2)
        mask = (diff > p["diff_threshold"]).astype(np.uint8)
        mask = cv2.morphologyEx(cv2.morphologyEx(mask, cv2.MORPH_OPEN, open_k), cv2.MORPH_CLOSE, close_k)
        count, labels, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
        grad = _gradient(stack[k])
        blobs = []
        for i in range(1, count):
            x, y, bw, bh, area = (int(v) for v in stats[i])
            if area < min_pixels:
                continue
            comp = (labels[y:y + bh, x:x + bw] == i).astype(np.uint8)
            outline = cv2.morphologyEx(comp, cv2.MORPH_GRADIENT, open_k).astype(bool)
            ghost = outline.any() and grad_bg[y:y + bh, x:x + bw][outline].mean() > grad[y:y + bh, x:x + bw][outline].mean()
            blobs.append(Blob(k, float(centroids[i][0]), float(centroids[i][1]), (x, y, bw, bh),
                               float(area), ghost=bool(ghost)))
        out.append(blobs)
    return out


def link_blobs(blobs_per_frame: list[list[Blob]], times: np.ndarray, diag: float, p: dict) -> list[list[Blob]]:
    """Greedy nearest-centroid tracking; a track may miss one frame.

    A blob may join a track when it lies within ``max(max_speed * dt, 0.05)``
    frame diagonals of the track's last blob and their areas differ by less
    than ``max_area_ratio``; the closest pairs are joined first.
    """
    tracks: list[list[Blob]] = []
    max_log_area = np.log(p["max_area_ratio"])
    for k, blobs in enumerate(blobs_per_frame):
        live = [t for t in tracks if k - t[-1].k <= 2]
        pairs = []
        for ti, t in enumerate(live):
            last = t[-1]
            gate = max(p["max_speed"] * float(times[k] - times[last.k]), 0.05)
            for bi, b in enumerate(blobs):
                dist = np.hypot(b.cx - last.cx, b.cy - last.cy) / diag
                log_area = abs(np.log(b.area / last.area))
                if dist <= gate and log_area <= max_log_area:
                    pairs.append((dist + 0.25 * log_area, ti, bi))
        used_t, used_b = set(), set()
        for _, ti, bi in sorted(pairs):
            if ti not in used_t and bi not in used_b:
                live[ti].append(blobs[bi])
                used_t.add(ti)
                used_b.add(bi)
        tracks.extend([b] for bi, b in enumerate(blobs) if bi not in used_b)
    return tracks


def still_head(track: list[Blob], anchor: Blob, radius: float, tight: float, diag: float) -> tuple[int, int]:
    """``(run, last)``: how many blobs from the start stay within ``radius`` of ``anchor``, and the
    index of the last of them still within ``tight`` of it (where it was last seen at rest)."""
    dist = [np.hypot(b.cx - anchor.cx, b.cy - anchor.cy) / diag for b in track]
    run = next((i for i, d in enumerate(dist) if d > radius), len(track))
    last = max((i for i in range(run) if dist[i] <= tight), default=0)
    return run, last


def area_scale(track: list[Blob]) -> float:
    """Median blob area over the last third of the track over that of the first third (1.0 under 3 blobs)."""
    if len(track) < 3:
        return 1.0
    third = max(1, len(track) // 3)
    return float(np.median([b.area for b in track[-third:]]) / np.median([b.area for b in track[:third]]))


def is_person(arrays, blob: Blob, scale: float, threshold: float) -> bool:
    """Whether OpenCV's HOG person detector finds a person over the blob's centre.

    The blob's box (with a margin) is cut from the full-resolution frame and
    resized so the blob is 160 px tall (a person fills 96 of the detector's
    128 px window), then scanned at several scales.
    """
    import cv2

    x, y, w, h = (v / scale for v in blob.box)
    frame = arrays[blob.k]
    x1, x2 = int(max(0, x - 0.5 * w - 8)), int(min(frame.shape[1], x + 1.5 * w + 8))
    y1, y2 = int(max(0, y - 0.25 * h - 8)), int(min(frame.shape[0], y + 1.25 * h + 8))
    factor = float(np.clip(160 / max(h, 1.0), 0.25, 4.0))
    crop = cv2.resize(frame[y1:y2, x1:x2], (max(1, round((x2 - x1) * factor)), max(1, round((y2 - y1) * factor))),
                      interpolation=cv2.INTER_LINEAR)
    pad_x, pad_y = max(0, 80 - crop.shape[1]) // 2 + 8, max(0, 144 - crop.shape[0]) // 2 + 8
    crop = cv2.copyMakeBorder(crop, pad_y, pad_y, pad_x, pad_x, cv2.BORDER_REPLICATE)
    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
    rects, _ = hog.detectMultiScale(crop, hitThreshold=threshold, winStride=(8, 8), padding=(8, 8), scale=1.1)
    cx, cy = (x + w / 2 - x1) * factor + pad_x, (y + h / 2 - y1) * factor + pad_y
    return any(rx <= cx <= rx + rw and ry <= cy <= ry + rh for rx, ry, rw, rh in rects)


def ghost_events(ghosts: list[list[Blob]], n: int, radius: float, diag: float) -> list[tuple[str, int, Blob]]:
    """Where still objects left or came to rest, from stationary ghost tracks.

    ``("departs", k, blob)``: a ghost seen from frame k to the end (the object
    left between frames k - 1 and k). ``("arrives", k, blob)``: a ghost seen
    from the start to frame k - 1 (the object came to rest between k - 1 and k).
    """
    events = []
    for g in ghosts:
        if any(np.hypot(b.cx - g[0].cx, b.cy - g[0].cy) / diag > radius for b in g):
            continue  # ghosts do not move
        if g[0].k > 0 and g[-1].k == n - 1:
            events.append(("departs", g[0].k, g[0]))
        elif g[0].k == 0 and g[-1].k < n - 1:
            events.append(("arrives", g[-1].k + 1, g[-1]))
    return events
