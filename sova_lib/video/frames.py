"""Video access: the paper's frame sampler, probing and frame reading.

Decoding is ``sova_lib.video.decode``: two decoders (``backend="decord"``,
``"pyav"``, or ``"auto"``: decord, falling back to PyAV), which number
frames alike (frame ``i`` is the ``i``-th frame in presentation order,
counted from 0; the frame count is the number of video packets, not the
container header's claim) and return identical RGB pixels on the vendored
excerpts.

Clips. ``sample_frames(path, window=(start, end), reverse=..., crop=...)``
returns the frames that the sampler would pick from the clip cut from
``path`` (frames ``start..end`` inclusive, optionally played backwards,
optionally cropped), without writing that clip: frame ``k`` of the clip is
source frame ``start + k`` (or ``end - k`` when reversed).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from sova_lib.crop import crop as crop_frame
from sova_lib.video.decode import VideoInfo, decode_planned

__all__ = ["SAMPLER_VERSION", "VideoInfo", "Frames", "Sampling", "evenly_spaced", "sample_indices", "probe",
           "read_frames", "sample_frames", "example_videos", "to_rgb_image"]

#: Bumped whenever ``sample_indices`` or the frame numbering changes (a cache key part).
SAMPLER_VERSION = "1"


def sample_indices(num_frames: int, fps: float, rate: float = 1.0) -> np.ndarray:
    """The paper's frame sampler (spec section 5): which frames of a clip to show.

    ``num_frames`` is the clip's frame count F, ``fps`` its frame rate and
    ``rate`` the sampling rate s in frames per second. With ``r = round(fps)``
    (at least 1), ``n = max(round(F / r * s) + 1, 2)`` and the result is
    ``rint(linspace(0, F - 1, n))`` as int64, shape ``(n,)``, non-decreasing,
    first element 0 and last element F - 1.

    Rounding: Python's ``round`` and numpy's ``rint`` both round half to even,
    so fps 7.5 gives r = 8, fps 2.5 gives r = 2, fps 29.97 gives r = 30;
    F = 25 at 10 fps gives round(2.5) + 1 = 3 frames; F = 95 at 29.97 fps and
    s = 3 gives round(9.5) + 1 = 11 frames; a linspace point of 4.5 becomes
    frame 4. ``F / r * s`` is evaluated in that order, in float64, and the
    linspace points are numpy's float64 values, so a tie is decided by the
    float, as in the authors' numpy code: F = 30, n = 15 puts point 7 at
    14.500000000000002, which becomes frame 15, not 14.

    Edge cases, kept exactly as the formula gives them (the paper's models saw
    these frames):

    * F = 1: ``[0, 0]`` (n is at least 2, so the single frame appears twice);
    * whenever n > F (very short clips, or ``rate`` above the frame rate) some
      frames repeat, e.g. F = 3 at 10 fps and s = 30 gives ``[0, 0, 0, 1, 1, 1, 1, 2, 2, 2]``;
    * fps below 0.5 would round to r = 0; r is clamped to 1 instead.

    Raises ``ValueError`` for F < 1, fps <= 0 or rate <= 0 (and non-finite values).
    """
    if not np.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    if not np.isfinite(rate) or rate <= 0:
        raise ValueError(f"rate must be a positive number of frames per second, got {rate!r}")
    r = max(round(float(fps)), 1)
    n = max(round(num_frames / r * float(rate)) + 1, 2)
    return evenly_spaced(num_frames, n)  # which checks num_frames


def evenly_spaced(num_frames: int, count: int) -> np.ndarray:
    """``count`` frames of a clip of ``num_frames`` frames, evenly spaced: the paper's sampler rule for a given count.

    ``rint(linspace(0, F - 1, count))`` as int64, shape ``(count,)``, the same rounding as ``sample_indices``
    (half to even, decided by numpy's float64 points): the first and the last frame for ``count`` >= 2, frame 0
    alone for ``count`` = 1, repeats when ``count`` > F. F = 100 and count = 8 gives
    ``[0, 14, 28, 42, 57, 71, 85, 99]``. Raises ``ValueError`` for F < 1 or count < 1.
    """
    if int(num_frames) != num_frames or num_frames < 1:
        raise ValueError(f"num_frames must be an integer >= 1, got {num_frames!r}")
    if int(count) != count or count < 1:
        raise ValueError(f"the frame count must be an integer >= 1, got {count!r}")
    return np.rint(np.linspace(0, int(num_frames) - 1, int(count))).astype(np.int64)


@dataclass(frozen=True)
class Sampling:
    """Which frames of each clip a run shows (``sova describe --fps / --frames / --max-frames``).

    ``fps``: frames per second of video, the paper's sampler (``sample_indices``; default 1, no cap).
    ``frames``: a fixed count instead, evenly spaced over the clip (``evenly_spaced``); ``fps`` is then ``None``.
    ``max_frames``: a cap on the count the rate gives: a clip whose rate gives more frames gets
    ``evenly_spaced(F, max_frames)``, the count thinned evenly over the whole clip (as ``frames`` would), and a
    clip under the cap keeps the paper's frames exactly. ``cache_fields()`` are the cache key's fields beyond
    ``fps``: empty for the paper's default, so its cache folders keep their names.
    """

    fps: float | None = 1.0
    frames: int | None = None
    max_frames: int | None = None

    def __post_init__(self):
        if self.frames is not None:
            if self.fps is not None or self.max_frames is not None:
                raise ValueError("frames sets the frame count itself: give it without fps and max_frames")
            if int(self.frames) != self.frames or self.frames < 1:
                raise ValueError(f"frames must be a whole number of 1 or more, got {self.frames!r}")
        elif self.fps is None or not np.isfinite(self.fps) or self.fps <= 0:
            raise ValueError(f"fps must be a positive number of frames per second, got {self.fps!r}")
        if self.max_frames is not None and (int(self.max_frames) != self.max_frames or self.max_frames < 1):
            raise ValueError(f"max_frames must be a whole number of 1 or more, got {self.max_frames!r}")

    def indices(self, num_frames: int, video_fps: float, *, cap_rate: bool = False) -> np.ndarray:
        """The frames of a clip of ``num_frames`` frames at ``video_fps`` (``cap_rate``: a rate above the video's
        is lowered to it first)."""
        if self.frames is not None:
            return evenly_spaced(num_frames, self.frames)
        rate = min(self.fps, video_fps) if cap_rate else self.fps
        indices = sample_indices(num_frames, video_fps, rate)
        if self.max_frames is not None and len(indices) > self.max_frames:
            return evenly_spaced(num_frames, self.max_frames)
        return indices

    def cache_fields(self) -> dict:
        """``{"frames": N}`` and ``{"max_frames": N}`` where set (a cache key's fields beside ``fps``)."""
        return {k: int(v) for k, v in (("frames", self.frames), ("max_frames", self.max_frames)) if v is not None}



@dataclass(frozen=True)
class Frames:
    """Sampled frames of one clip.

    ``images``: RGB ``PIL.Image.Image`` objects in clip time order.
    ``indices``: int64, shape ``(n,)``, each frame's index within the clip (0 .. clip length - 1).
    ``timestamps``: float64, shape ``(n,)``, seconds from the clip start (``indices / fps``).
    ``fps``: the source frame rate. ``source_indices``: each frame's number in the source file.
    ``info``: the source video's ``VideoInfo``.
    """

    images: list
    indices: np.ndarray
    timestamps: np.ndarray
    fps: float
    source_indices: np.ndarray | None = None
    info: VideoInfo | None = None

    def __len__(self) -> int:
        return len(self.images)


def probe(path, backend: str = "auto") -> VideoInfo:
    """Frame count, frame rate and size of the video at ``path``.

    The frame count is the number of non-empty video packets (see
    ``sova_lib.video.decode``), not the container header's claim. Raises ``FileNotFoundError``
    for a missing file and ``VideoError`` for one that cannot be opened.
    """
    return decode_planned(path, backend, lambda info: [])[0]  # opened and checked, no frame decoded


def _clip_range(window, num_frames: int, path) -> tuple[int, int]:
    if window is None:
        return 0, num_frames - 1
    start, end = (int(v) for v in window)
    if end < start:
        raise ValueError(f"window {tuple(window)} ends before it starts (frames are inclusive: (start, end))")
    start, end = max(start, 0), min(end, num_frames - 1)
    if start > end:
        raise ValueError(f"window {tuple(window)} lies outside the {num_frames} frames of {os.fspath(path)}")
    return start, end


def _crop_all(arrays: list[np.ndarray], region, path) -> list[np.ndarray]:
    """``arrays`` cropped to ``region`` (``sova_lib.crop``; None: whole frames)."""
    if region is None:
        return arrays
    try:
        return [crop_frame(a, region) for a in arrays]
    except ValueError as err:
        raise ValueError(f"{os.fspath(path)}: {err}") from None


def read_frames(path, source_indices: Sequence[int], *, crop=None, backend: str = "auto") -> list[np.ndarray]:
    """Frames ``source_indices`` of the file (any order, repeats allowed) as ``H x W x 3`` uint8 arrays.

    ``crop`` as in ``sample_frames``. Raises ``IndexError`` for a frame number
    outside the video, and the errors of ``sample_frames``.
    """
    wanted = [int(i) for i in source_indices]

    def plan(info: VideoInfo) -> list[int]:
        bad = [i for i in wanted if not 0 <= i < info.num_frames]
        if bad:
            raise IndexError(f"frames {bad[:5]} are outside the {info.num_frames} frames of {os.fspath(path)}")
        return wanted

    if not wanted:
        return []
    _, _, decoded = decode_planned(path, backend, plan)
    return _crop_all([decoded[i] for i in wanted], crop, path)


def sample_frames(path, rate: float | Sampling = 1.0, *, window: tuple[int, int] | None = None,
                  crop: tuple[int, int, int, int] | None = None, reverse: bool = False,
                  backend: str = "auto", cap_rate: bool = False) -> Frames:
    """Sample a clip's frames with the paper's sampler (``sample_indices``) at ``rate`` frames per second, or as
    a ``Sampling`` says (a fixed count, a cap).

    ``window``: ``(start, end)`` inclusive frame numbers of the source video,
    clamped to it (``None``: the whole video). ``reverse``: the clip is the
    window played backwards. ``crop``: ``(x1, y1, x2, y2)`` pixel box, x2/y2
    exclusive, clamped to the frame (``None``: full frame). The sampler sees
    the clip exactly as if it had been cut to its own file: ``F = end - start + 1``
    at the source frame rate. ``Frames.source_indices`` gives each frame's
    number in the file. ``cap_rate``: a ``rate`` above the video's own frame
    rate is lowered to that rate before any frame is decoded (sampling faster
    than the video only repeats frames).

    Raises ``FileNotFoundError`` (missing file) or ``VideoError`` (cannot be
    decoded), both naming the path; ``ValueError`` for an empty window or crop.
    """
    from PIL import Image

    sampling = rate if isinstance(rate, Sampling) else Sampling(float(rate))
    chosen = {}

    def plan(info: VideoInfo) -> list[int]:
        start, end = _clip_range(window, info.num_frames, path)
        indices = sampling.indices(end - start + 1, info.fps, cap_rate=cap_rate)
        chosen["indices"] = indices
        return ((end - indices) if reverse else (start + indices)).tolist()

    info, source, decoded = decode_planned(path, backend, plan)
    indices = chosen["indices"]
    arrays = _crop_all([decoded[i] for i in source], crop, path)
    return Frames(
        images=[Image.fromarray(a) for a in arrays],
        indices=indices,
        timestamps=indices / info.fps,
        fps=info.fps,
        source_indices=np.asarray(source, dtype=np.int64),
        info=info,
    )


def example_videos() -> list[Path]:
    """The short real excerpts of OpenCV's ``vtest.avi`` shipped with the package (see their README)."""
    folder = resources.files("sova_lib") / "data" / "video"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".mp4"))


def to_rgb_image(frame):
    """A PIL RGB image from a PIL image or an HxWx3 uint8 array."""
    from PIL import Image

    if isinstance(frame, Image.Image):
        return frame if frame.mode == "RGB" else frame.convert("RGB")
    return Image.fromarray(frame).convert("RGB")
