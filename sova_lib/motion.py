"""A classical, training-free motion describer (OpenCV): a CPU baseline, not an MLLM.

``MotionDescriber`` implements the describer contract of ``sova_lib.describe``
(registered as ``"motion"``). It ignores the instruction and the system prompt:
whatever it is asked, it describes the motion it measures in the request's
frames, as short template sentences, one per line::

    A person moves from right to left at about 0.08 frame widths per second (31 px/s).
    It is still at first and starts moving at about 1.5 s.
    A moving object travels from left to right and downwards at about 0.15 frame widths per second (57 px/s).
    It stops at about 3.5 s and stays still.
    Motion starts at about 1.5 s.
    2 moving objects are seen.

or ``No motion is detected.`` (``render_motion`` holds every template).

It is a real baseline for the temporal-direction (intra-pair) protocol and the
describer the CPU quickstart runs. Its output says nothing about appearance.

Method (``analyse_motion``), for a fixed camera:

1. Frames are downscaled so their longer side is at most ``work_size`` px and
   blurred; the background is the per-pixel temporal median of the frames.
2. Foreground: pixels whose largest RGB difference to the background exceeds
   ``diff_threshold`` (0-255), cleaned by morphological opening and closing;
   connected components of at least ``min_area`` (fraction of the frame area, and 16 px)
   are blobs.
3. Ghosts: a blob whose outline has stronger edges in the background than in
   the frame is where a still object *was* (it sits in the median background
   and has moved away). A ghost that appears part-way and stays marks where an
   object started moving; one that is there from the start and vanishes marks
   where an object came to rest.
4. Blobs are linked frame to frame by greedy nearest-centroid matching (gated
   at ``max_speed`` frame diagonals per second and an area ratio of
   ``max_area_ratio``; one missed frame allowed).
5. A track is moving when its net displacement (first to last position, or
   from/to the ghost it left or reached) exceeds ``min_travel`` (fraction of
   the diagonal). It "starts moving" when it stays within ``still_radius`` of
   its first position for at least two frames and ``min_still`` seconds (or a
   ghost shows it was parked there), and "stops" symmetrically at the end; the
   time given is the midpoint between the last frame at rest and the first
   frame in motion, so a time-reversed clip gives mirrored times. Direction is
   the net displacement (left/right, up/down in the image), speed is net
   displacement over moving time, and a size change by more than
   ``scale_change`` is reported as approaching or receding "as if" (it is
   only a cue).
6. Each moving track's largest view (a padded crop of the full-resolution
   frame, resized so the blob is 160 px tall) is scanned by OpenCV's HOG
   person detector; a detection over the blob's centre with a score above
   ``hog_threshold`` makes it "a person".

Deterministic (no randomness; the same frames give the same text). Stateless
and thread-safe: ``describe`` may be called from several threads at once, so
``max_concurrency`` is the number of CPU cores.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["MOTION_VERSION", "MovingObject", "MotionAnalysis", "MotionDescriber", "analyse_motion",
           "render_motion"]

MOTION_VERSION = "1"


@dataclass(frozen=True)
class MovingObject:
    """One moving object. Positions are fractions of the frame width/height (0 = left/top).

    ``kind``: "person" or "object". ``direction``: e.g. "from left to right",
    "downwards", "from right to left and upwards", or "" when unknown.
    ``speed_px_s``: net displacement over moving time in source pixels per
    second; ``speed_rel``: the same in frame widths per second. ``starts_at``
    / ``stops_at``: seconds, or None when it is already moving at the start /
    still moving at the end. ``first_seen`` / ``last_seen``: seconds.
    ``scale``: its blob area late in its track over early in it (``_scale``);
    ``size_trend``: "approaching" or "receding" when ``scale`` passes the
    describer's ``scale_change`` (a cue only), else "".
    """

    kind: str
    direction: str
    start: tuple[float, float]
    end: tuple[float, float]
    speed_px_s: float
    speed_rel: float
    first_seen: float
    last_seen: float
    starts_at: float | None = None
    stops_at: float | None = None
    scale: float = 1.0
    size_trend: str = ""


@dataclass(frozen=True)
class MotionAnalysis:
    """What ``analyse_motion`` measured: the moving objects and the clip's time span (s)."""

    objects: list[MovingObject] = field(default_factory=list)
    clip_start: float = 0.0
    clip_end: float = 0.0
    num_frames: int = 0

    @property
    def motion_start(self) -> float | None:
        times = [o.starts_at if o.starts_at is not None else o.first_seen for o in self.objects]
        return min(times) if times else None

    @property
    def motion_end(self) -> float | None:
        times = [o.stops_at if o.stops_at is not None else o.last_seen for o in self.objects]
        return max(times) if times else None


@dataclass
class _Blob:
    k: int  # frame number in the request
    cx: float
    cy: float
    box: tuple[int, int, int, int]  # x, y, w, h in work pixels
    area: float
    ghost: bool


#: Option -> default (see ``MotionDescriber``).
_DEFAULTS = dict(work_size=320, diff_threshold=30.0, min_area=0.002, max_speed=0.4, max_area_ratio=3.0,
                 still_radius=0.03, min_travel=0.06, min_still=0.5, scale_change=1.5, hog_threshold=0.3,
                 max_objects=5, detect_people=True)


def _prepare(frames, work_size: int):
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


def _find_blobs(stack: np.ndarray, p: dict) -> list[list[_Blob]]:
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
            g_frame = float(grad[y:y + bh, x:x + bw][outline].mean()) if outline.any() else 0.0
            g_back = float(grad_bg[y:y + bh, x:x + bw][outline].mean()) if outline.any() else 0.0
            blobs.append(_Blob(k, float(centroids[i][0]), float(centroids[i][1]), (x, y, bw, bh),
                               float(area), ghost=g_back > g_frame))
        out.append(blobs)
    return out


def _link(blobs_per_frame: list[list[_Blob]], times: np.ndarray, diag: float, p: dict) -> list[list[_Blob]]:
    """Greedy nearest-centroid tracking; a track may miss one frame.

    A blob may join a track when it lies within ``max(max_speed * dt, 0.05)``
    frame diagonals of the track's last blob and their areas differ by less
    than ``max_area_ratio``; the closest pairs are joined first.
    """
    tracks: list[list[_Blob]] = []
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


def _still_head(track: list[_Blob], anchor: _Blob, radius: float, tight: float, diag: float) -> tuple[int, int]:
    """``(run, last)``: how many blobs from the start stay within ``radius`` of ``anchor``, and the
    index of the last of them still within ``tight`` of it (where it was last seen at rest)."""
    dist = [np.hypot(b.cx - anchor.cx, b.cy - anchor.cy) / diag for b in track]
    run = next((i for i, d in enumerate(dist) if d > radius), len(track))
    last = max((i for i in range(run) if dist[i] <= tight), default=0)
    return run, last


def _scale(track: list[_Blob]) -> float:
    """Median blob area over the last third of the track over that of the first third (1.0 under 3 blobs)."""
    if len(track) < 3:
        return 1.0
    third = max(1, len(track) // 3)
    return float(np.median([b.area for b in track[-third:]]) / np.median([b.area for b in track[:third]]))


def _direction(dx: float, dy: float) -> str:
    horizontal = "from left to right" if dx > 0 else "from right to left"
    vertical = "downwards" if dy > 0 else "upwards"
    if abs(dx) >= 2 * abs(dy):
        return horizontal
    if abs(dy) >= 2 * abs(dx):
        return vertical
    return f"{horizontal} and {vertical}"


def _is_person(arrays, blob: _Blob, scale: float, threshold: float) -> bool:
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


def _ghost_events(ghosts: list[list[_Blob]], n: int, radius: float, diag: float) -> list[tuple[str, int, _Blob]]:
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


def analyse_motion(frames: Sequence, timestamps: Sequence[float] | None = None, **options) -> MotionAnalysis:
    """Measure the moving objects in ``frames`` (RGB PIL images or H x W x 3 uint8 arrays, time order).

    ``timestamps``: seconds of each frame (default: one frame per second).
    ``options``: see ``MotionDescriber``. One frame gives no objects; none raises ``ValueError``.
    Start and stop times are midpoints between the last frame at rest and the
    first frame in motion (or the reverse), so a time-reversed clip gives
    mirrored times.
    """
    p = {**_DEFAULTS, **options}
    n = len(frames)
    if n == 0:
        raise ValueError("analyse_motion needs at least one frame, got none")
    times = np.asarray(timestamps if timestamps is not None and len(timestamps) == n else np.arange(n), float)
    if n < 2:
        return MotionAnalysis([], float(times[0]), float(times[0]), n)
    arrays, stack, (width, height), scale = _prepare(frames, int(p["work_size"]))
    wh, ww = stack.shape[1:3]
    diag = float(np.hypot(ww, wh))
    radius, tight = p["still_radius"], p["still_radius"] / 4
    blobs = _find_blobs(stack, p)
    real = _link([[b for b in bs if not b.ghost] for bs in blobs], times, diag, p)
    ghosts = _link([[b for b in bs if b.ghost] for bs in blobs], times, diag, p)
    events = _ghost_events(ghosts, n, radius, diag)
    near = max(p["max_speed"] * float(np.median(np.diff(times))), 0.1)  # ghost-to-track radius
    mid = lambda i, j: float(times[i] + times[j]) / 2  # noqa: E731

    def match(kind: str, k: int, blob: _Blob):
        for e in events:
            if e[0] == kind and abs(e[1] - k) <= 1 and np.hypot(blob.cx - e[2].cx, blob.cy - e[2].cy) / diag <= near:
                return e
        return None

    objects, used = [], set()
    for t in real:
        dep = match("departs", t[0].k, t[0]) if t[0].k > 0 else None
        arr = match("arrives", t[-1].k + 1, t[-1]) if t[-1].k < n - 1 else None
        if len(t) < 2 and dep is None and arr is None:
            continue
        first, last = (dep[2] if dep else t[0]), (arr[2] if arr else t[-1])
        if np.hypot(last.cx - first.cx, last.cy - first.cy) / diag <= p["min_travel"]:
            continue
        starts_at = stops_at = None
        if dep:
            starts_at = mid(dep[1] - 1, dep[1])
        elif t[0].k == 0:
            run, i = _still_head(t, t[0], radius, tight, diag)
            if run >= 2 and times[t[run - 1].k] - times[0] >= p["min_still"] and i + 1 < len(t):
                starts_at = mid(t[i].k, t[i + 1].k)
        if arr:
            stops_at = mid(arr[1] - 1, arr[1])
        elif t[-1].k == n - 1:
            back = t[::-1]
            run, i = _still_head(back, back[0], radius, tight, diag)
            if run >= 2 and times[-1] - times[back[run - 1].k] >= p["min_still"] and i + 1 < len(back):
                stops_at = mid(back[i + 1].k, back[i].k)
        used.update(id(e) for e in (dep, arr) if e)
        dx, dy = (last.cx - first.cx) / scale, (last.cy - first.cy) / scale
        begin = starts_at if starts_at is not None else float(times[t[0].k])
        end = stops_at if stops_at is not None else float(times[t[-1].k])
        speed = float(np.hypot(dx, dy)) / max(end - begin, 1e-9)
        size = _scale(t)
        person = bool(p["detect_people"]) and _is_person(arrays, max(t, key=lambda b: (b.area, -b.k)), scale,
                                                          p["hog_threshold"])
        objects.append(MovingObject(
            kind="person" if person else "object", direction=_direction(dx, dy),
            start=(first.cx / ww, first.cy / wh), end=(last.cx / ww, last.cy / wh),
            speed_px_s=speed, speed_rel=speed / width, first_seen=float(times[t[0].k]),
            last_seen=float(times[t[-1].k]), starts_at=starts_at, stops_at=stops_at, scale=size,
            size_trend="approaching" if size >= p["scale_change"] else
            "receding" if size <= 1 / p["scale_change"] else ""))
    # A still object that left (or arrived) between two frames with no track of its motion.
    for e in events:
        kind, k, g = e
        ends = [o.start if kind == "departs" else o.end for o in objects]
        if id(e) in used or any(np.hypot((x - g.cx / ww) * ww, (y - g.cy / wh) * wh) / diag <= near
                                for x, y in ends):
            continue  # already told by a track that left from (or came to rest at) that place
        pos, when = (g.cx / ww, g.cy / wh), mid(k - 1, k)
        objects.append(MovingObject("object", "", pos, pos, 0.0, 0.0, when, when,
                                    starts_at=when if kind == "departs" else None,
                                    stops_at=when if kind == "arrives" else None))
    objects.sort(key=lambda o: (-abs(o.end[0] - o.start[0]) - abs(o.end[1] - o.start[1]), o.first_seen))
    objects = sorted(objects[: int(p["max_objects"])], key=lambda o: (o.first_seen, o.start))
    return MotionAnalysis(objects, float(times[0]), float(times[-1]), n)


def _seconds(t: float) -> str:
    return f"{t:.1f} s"


def render_motion(analysis: MotionAnalysis) -> list[str]:
    """Template sentences for ``analysis``, one per line of the answer."""
    if analysis.num_frames < 2:
        return ["A single frame shows no motion."]
    if not analysis.objects:
        return ["No motion is detected."]
    lines = []
    for o in analysis.objects:
        subject = "A person" if o.kind == "person" else "A moving object"
        if not o.direction:
            if o.starts_at is not None:
                lines.append(f"An object that was still leaves its place at about {_seconds(o.starts_at)}.")
            else:
                lines.append(f"An object arrives and stops at about {_seconds(o.stops_at)}.")
            continue
        verb = "moves" if o.kind == "person" else "travels"
        lines.append(f"{subject} {verb} {o.direction} at about {o.speed_rel:.2f} frame widths per second "
                     f"({o.speed_px_s:.0f} px/s).")
        if o.starts_at is not None:
            lines.append(f"It is still at first and starts moving at about {_seconds(o.starts_at)}.")
        if o.stops_at is not None:
            lines.append(f"It stops at about {_seconds(o.stops_at)} and stays still.")
        if o.size_trend == "approaching":
            lines.append("It grows larger in the frame, as if approaching the camera.")
        elif o.size_trend == "receding":
            lines.append("It shrinks in the frame, as if moving away from the camera.")
    start, end = analysis.motion_start, analysis.motion_end
    if start is not None and start > analysis.clip_start:
        lines.append(f"Motion starts at about {_seconds(start)}.")
    if end is not None and end < analysis.clip_end:
        lines.append(f"Motion stops at about {_seconds(end)}.")
    if len(analysis.objects) > 1:
        lines.append(f"{len(analysis.objects)} moving objects are seen.")
    return lines


class MotionDescriber:
    """The classical motion describer (registry name ``"motion"``); not an MLLM.

    It ignores the prompt and system prompt and always describes motion (see
    the module docstring for the method). Options (keyword only; unknown names
    raise ``TypeError``):

    * ``work_size`` (320): longer side, in px, the frames are analysed at;
    * ``diff_threshold`` (30): difference to the background (0-255) that counts as foreground;
    * ``min_area`` (0.002): smallest blob, as a fraction of the frame area;
    * ``max_speed`` (0.4): fastest motion followed, in frame diagonals per second (at least 0.05 per step);
    * ``max_area_ratio`` (3): largest change of a blob's area between frames of one track;
    * ``still_radius`` (0.03) / ``min_travel`` (0.06): fractions of the diagonal for "still" and "moved";
    * ``min_still`` (0.5): seconds an object must stay put to "start" or "stop";
    * ``scale_change`` (1.5): area ratio reported as approaching/receding;
    * ``hog_threshold`` (0.3): HOG person-detector score for "a person"; ``detect_people`` (True);
    * ``max_objects`` (5): most objects described, those that travel farthest.

    ``max_batch_size`` is 1; ``describe`` is stateless and thread-safe, so
    ``max_concurrency`` is the number of CPU cores.
    """

    name = "motion"
    max_batch_size = 1

    def __init__(self, **options):
        unknown = sorted(set(options) - set(_DEFAULTS))
        if unknown:
            raise TypeError(f"unknown motion describer option(s) {unknown}; known: {sorted(_DEFAULTS)}")
        self.options = {**_DEFAULTS, **options}
        self.max_concurrency = os.cpu_count() or 1

    def config(self) -> dict:
        import cv2

        return {"backend": self.name, "model": "classical-motion", "version": MOTION_VERSION,
                "opencv": cv2.__version__, **self.options}

    def analyse(self, request) -> MotionAnalysis:
        return analyse_motion(list(request.frames), list(request.timestamps) or None, **self.options)

    def describe(self, requests) -> list[str]:
        return ["\n".join(render_motion(self.analyse(r))) for r in requests]
