"""A classical, training-free motion describer (OpenCV): a CPU baseline, not an MLLM.

``MotionDescriber`` implements the describer contract of ``sova_lib.describe.contract``
(registered as ``"motion"``). It ignores the instruction and the system prompt:
whatever it is asked, it describes the motion it measures in the request's
frames, as short template sentences, one per line::

    A person moves from right to left at about 0.08 frame widths per second (31 px/s); it is still at first and starts moving at about 1.5 s.
    A moving object travels from left to right and downwards at about 0.15 frame widths per second (57 px/s); it stops at about 3.5 s and stays still.
    Motion starts at about 1.5 s.
    Of 2 moving objects, 1 travels from left to right and downwards, 1 from right to left.

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
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from sova_lib.describe.backends.motion_tracking import (
    Blob,
    area_scale,
    find_blobs,
    ghost_events,
    is_person,
    link_blobs,
    prepare_frames,
    still_head,
)
from sova_lib.describe.contract import given_options, option

__all__ = ["MOTION_VERSION", "MovingObject", "MotionAnalysis", "MotionDescriber", "MotionOptions", "analyse_motion", "render_motion"]

MOTION_VERSION = "2"


# Field lists of the same shape, deliberately: MovingObject and evaluation.Result are each a plain record of their own
# numbers (a scan for repeated code pairs them; they share no logic).
@dataclass(frozen=True)
class MovingObject:
    """One moving object. Positions are fractions of the frame width/height (0 = left/top).

    ``kind``: "person" or "object". ``direction``: e.g. "from left to right",
    "downwards", "from right to left and upwards", or "" when unknown.
    ``speed_px_s``: net displacement over moving time in source pixels per
    second; ``speed_rel``: the same in frame widths per second. ``starts_at``
    / ``stops_at``: seconds, or None when it is already moving at the start /
    still moving at the end. ``first_seen`` / ``last_seen``: seconds.
    ``scale``: its blob area late in its track over early in it (``motion_tracking.area_scale``);
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


@dataclass(frozen=True)
class MotionOptions:
    """The options of the motion describer (``sova_lib.describe.contract.backend_options``)."""

    work_size: int = option(320, "longer side, in px, the frames are analysed at")
    diff_threshold: float = option(30.0, "difference to the background (0-255) that counts as foreground")
    min_area: float = option(0.002, "smallest blob, as a fraction of the frame area")
    max_speed: float = option(0.4, "fastest motion followed, in frame diagonals per second (at least 0.05 per step)")
    max_area_ratio: float = option(3.0, "largest change of a blob's area between frames of one track")
    still_radius: float = option(0.03, "fraction of the diagonal an object stays within to be still")
    min_travel: float = option(0.06, "fraction of the diagonal an object travels to have moved")
    min_still: float = option(0.5, "seconds an object must stay put to start or stop")
    scale_change: float = option(1.5, "area ratio reported as approaching or receding")
    hog_threshold: float = option(0.3, "HOG person-detector score for 'a person'")
    max_objects: int = option(5, "most objects described, those that travel farthest")
    detect_people: bool = option(True, "run the HOG person detector (false: every mover is 'an object')")


def _direction(dx: float, dy: float) -> str:
    horizontal = "from left to right" if dx > 0 else "from right to left"
    vertical = "downwards" if dy > 0 else "upwards"
    if abs(dx) >= 2 * abs(dy):
        return horizontal
    if abs(dy) >= 2 * abs(dx):
        return vertical
    return f"{horizontal} and {vertical}"


def analyse_motion(frames: Sequence, timestamps: Sequence[float] | None = None, **options) -> MotionAnalysis:
    """Measure the moving objects in ``frames`` (RGB PIL images or H x W x 3 uint8 arrays, time order).

    ``timestamps``: seconds of each frame (default: one frame per second).
    ``options``: see ``MotionDescriber``. One frame gives no objects; none raises ``ValueError``.
    Start and stop times are midpoints between the last frame at rest and the
    first frame in motion (or the reverse), so a time-reversed clip gives
    mirrored times.
    """
    p = asdict(MotionOptions(**options))
    n = len(frames)
    if n == 0:
        raise ValueError("analyse_motion needs at least one frame, got none")
    times = np.asarray(timestamps if timestamps is not None and len(timestamps) == n else np.arange(n), float)
    if n < 2:
        return MotionAnalysis([], float(times[0]), float(times[0]), n)
    scene = _Scene(p, frames, times)
    blobs = find_blobs(scene.stack, p)
    real = link_blobs([[b for b in bs if not b.ghost] for bs in blobs], times, scene.diag, p)
    ghosts = link_blobs([[b for b in bs if b.ghost] for bs in blobs], times, scene.diag, p)
    events = ghost_events(ghosts, n, scene.radius, scene.diag)
    objects, used = [], set()
    for t in real:
        dep = scene.match(events, "departs", t[0].k, t[0]) if t[0].k > 0 else None
        arr = scene.match(events, "arrives", t[-1].k + 1, t[-1]) if t[-1].k < n - 1 else None
        found = scene.track_object(t, dep, arr)
        if found is not None:
            used.update(id(e) for e in (dep, arr) if e)
            objects.append(found)
    objects += scene.untracked_events(events, used, objects)
    objects.sort(key=lambda o: (-abs(o.end[0] - o.start[0]) - abs(o.end[1] - o.start[1]), o.first_seen))
    objects = sorted(objects[: int(p["max_objects"])], key=lambda o: (o.first_seen, o.start))
    return MotionAnalysis(objects, float(times[0]), float(times[-1]), n)


class _Scene:
    """What ``analyse_motion`` measured of one clip, and the steps that turn tracks and ghosts into objects.

    ``p``: the options; ``arrays``: the frames; ``stack``: the frames at working
    size (``prepare_frames``); ``times``: seconds per frame; ``ww`` x ``wh``:
    working size (``diag`` its diagonal, ``scale`` working / original,
    ``width`` the original width); ``radius`` and ``tight``: the still radii;
    ``near``: how close (fraction of ``diag``) a ghost must be to a track's end
    to belong to it.
    """

    def __init__(self, p: dict, frames: Sequence, times: np.ndarray):
        self.p, self.times, self.n = p, times, len(times)
        self.arrays, self.stack, (self.width, _), self.scale = prepare_frames(frames, int(p["work_size"]))
        self.wh, self.ww = self.stack.shape[1:3]
        self.diag = float(np.hypot(self.ww, self.wh))
        self.radius, self.tight = p["still_radius"], p["still_radius"] / 4
        self.near = max(p["max_speed"] * float(np.median(np.diff(times))), 0.1)  # ghost-to-track radius

    def mid(self, i: int, j: int) -> float:
        return float(self.times[i] + self.times[j]) / 2

    def match(self, events, kind: str, k: int, blob: Blob):
        """The ghost event of ``kind`` at frame ``k`` (+-1) near ``blob``, or None."""
        return next((e for e in events if e[0] == kind and abs(e[1] - k) <= 1
                     and np.hypot(blob.cx - e[2].cx, blob.cy - e[2].cy) / self.diag <= self.near), None)

    def rest_ends(self, t, event, forward: bool) -> float | None:
        """When track ``t`` stops being at rest: at its ghost ``event``, else, when it is there from the clip's
        first frame, after a still head of at least ``min_still`` s; None when neither. ``forward=False`` reads
        the track and the clip backwards: when ``t`` comes to rest (at its ghost, or for a still tail)."""
        if event:
            return self.mid(event[1] - 1, event[1])
        seq, edge = (t, 0) if forward else (t[::-1], self.n - 1)
        if seq[0].k != edge:
            return None
        run, i = still_head(seq, seq[0], self.radius, self.tight, self.diag)
        held = self.times[seq[run - 1].k] - self.times[edge]
        if run >= 2 and (held if forward else -held) >= self.p["min_still"] and i + 1 < len(seq):
            return self.mid(seq[i].k, seq[i + 1].k)
        return None

    def track_object(self, t, dep, arr) -> MovingObject | None:
        """The object of track ``t`` (with its departure and arrival ghosts), or None if it hardly moves."""
        p, times, ww, wh, scale = self.p, self.times, self.ww, self.wh, self.scale
        if len(t) < 2 and dep is None and arr is None:
            return None
        first, last = (dep[2] if dep else t[0]), (arr[2] if arr else t[-1])
        if np.hypot(last.cx - first.cx, last.cy - first.cy) / self.diag <= p["min_travel"]:
            return None
        starts_at, stops_at = self.rest_ends(t, dep, forward=True), self.rest_ends(t, arr, forward=False)
        dx, dy = (last.cx - first.cx) / scale, (last.cy - first.cy) / scale
        begin = starts_at if starts_at is not None else float(times[t[0].k])
        end = stops_at if stops_at is not None else float(times[t[-1].k])
        speed = float(np.hypot(dx, dy)) / max(end - begin, 1e-9)
        size = area_scale(t)
        person = bool(p["detect_people"]) and is_person(self.arrays, max(t, key=lambda b: (b.area, -b.k)), scale,
                                                          p["hog_threshold"])
        return MovingObject(
            kind="person" if person else "object", direction=_direction(dx, dy),
            start=(first.cx / ww, first.cy / wh), end=(last.cx / ww, last.cy / wh),
            speed_px_s=speed, speed_rel=speed / self.width, first_seen=float(times[t[0].k]),
            last_seen=float(times[t[-1].k]), starts_at=starts_at, stops_at=stops_at, scale=size,
            size_trend="approaching" if size >= p["scale_change"] else
            "receding" if size <= 1 / p["scale_change"] else "")

    def untracked_events(self, events, used: set, objects: list) -> list[MovingObject]:
        """A still object that left (or arrived) between two frames with no track of its motion."""
        ww, wh, out = self.ww, self.wh, []
        for e in events:
            kind, k, g = e
            ends = [o.start if kind == "departs" else o.end for o in objects + out]
            if id(e) in used or any(np.hypot((x - g.cx / ww) * ww, (y - g.cy / wh) * wh) / self.diag <= self.near
                                    for x, y in ends):
                continue  # already told by a track that left from (or came to rest at) that place
            pos, when = (g.cx / ww, g.cy / wh), self.mid(k - 1, k)
            out.append(MovingObject("object", "", pos, pos, 0.0, 0.0, when, when,
                                    starts_at=when if kind == "departs" else None,
                                    stops_at=when if kind == "arrives" else None))
        return out


def _seconds(t: float) -> str:
    return f"{t:.1f} s"


def _object_sentence(o: MovingObject) -> str:
    """One sentence per object: what it is, where it goes, how fast, and its own start, stop and size change."""
    if not o.direction:
        if o.starts_at is not None:
            return f"An object that was still leaves its place at about {_seconds(o.starts_at)}."
        return f"An object arrives and stops at about {_seconds(o.stops_at)}."
    subject, verb = ("A person", "moves") if o.kind == "person" else ("A moving object", "travels")
    parts = [f"{subject} {verb} {o.direction} at about {o.speed_rel:.2f} frame widths per second "
             f"({o.speed_px_s:.0f} px/s)"]
    if o.starts_at is not None:
        parts.append(f"it is still at first and starts moving at about {_seconds(o.starts_at)}")
    if o.stops_at is not None:
        parts.append(f"it stops at about {_seconds(o.stops_at)} and stays still")
    if o.size_trend == "approaching":
        parts.append("it grows larger in the frame, as if approaching the camera")
    elif o.size_trend == "receding":
        parts.append("it shrinks in the frame, as if moving away from the camera")
    return "; ".join(parts) + "."


def _summary_sentence(objects: list[MovingObject]) -> str:
    """How many of the objects (two or more) go each way.

    E.g. "Of 5 moving objects, 4 travel from right to left, 1 upwards.".
    """
    ways = Counter(o.direction or ("leaves its place" if o.starts_at is not None else "arrives and stops")
                   for o in objects)
    told = []
    for k, (way, n) in enumerate(sorted(ways.items(), key=lambda kv: (-kv[1], kv[0]))):
        moving = way not in ("leaves its place", "arrives and stops")
        told.append(f"{n} {'travels' if n == 1 else 'travel'} {way}" if moving and k == 0 else f"{n} {way}")
    return f"Of {len(objects)} moving objects, {', '.join(told)}."


def render_motion(analysis: MotionAnalysis) -> list[str]:
    """Template sentences for ``analysis``, one per line of the answer.

    One sentence per object carries everything about it (direction, speed,
    start, stop, size change), so two answers share a sentence only where
    they tell the same motion; with several objects a last sentence counts
    them by direction. No sentence is common to every clip.
    """
    if analysis.num_frames < 2:
        return ["A single frame shows no motion."]
    if not analysis.objects:
        return ["No motion is detected."]
    lines = [_object_sentence(o) for o in analysis.objects]
    start = min(o.first_seen if o.starts_at is None else o.starts_at for o in analysis.objects)
    end = max(o.last_seen if o.stops_at is None else o.stops_at for o in analysis.objects)
    if start > analysis.clip_start:
        lines.append(f"Motion starts at about {_seconds(start)}.")
    if end < analysis.clip_end:
        lines.append(f"Motion stops at about {_seconds(end)}.")
    if len(analysis.objects) > 1:
        lines.append(_summary_sentence(analysis.objects))
    return lines


class MotionDescriber:
    """The classical motion describer (registry name ``"motion"``); not an MLLM.

    It ignores the prompt and system prompt and always describes motion (see
    the module docstring for the method). ``options``: ``MotionOptions``, or its fields as keywords (an unknown name
    raises ``TypeError``).

    ``max_batch_size`` is 1; ``describe`` is stateless and thread-safe, so
    ``max_concurrency`` is the number of CPU cores.
    """

    name = "motion"
    max_batch_size = 1
    Options = MotionOptions

    def __init__(self, options: MotionOptions | None = None, **given):
        self.options = given_options(self.Options, options, given, "the motion backend")
        self.max_concurrency = os.cpu_count() or 1

    def config(self) -> dict:
        import cv2

        return {"backend": self.name, "model": "classical-motion", "version": MOTION_VERSION,
                "opencv": cv2.__version__, **asdict(self.options)}

    def describe(self, requests) -> list[str]:
        return ["\n".join(render_motion(analyse_motion(r.frames, list(r.timestamps) or None, **asdict(self.options))))
                for r in requests]
