"""What the runner describes: an ``Item`` (a video, part of one, or an image) and how its frames are loaded."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sova_lib.video.frames import Sampling, sample_frames

__all__ = ["IMAGE_SUFFIXES", "Item", "effective_rate", "load_item"]

logger = logging.getLogger(__name__)
_CAPPED: set = set()  # (requested fps, video fps) pairs already warned about

#: File suffixes read as single images (``is_video=False``); anything else is a video.
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp"})


@dataclass(frozen=True)
class Item:
    """One thing to describe: a video or image file and its stable ``id``.

    ``window`` (first, last frame, inclusive), ``crop`` (x1, y1, x2, y2 in
    pixels, x2/y2 exclusive) and ``reverse`` select part of a video, so
    frames can come from a cut clip or straight from a long source video
    (see ``sova_lib.benchmarks.sovabench.clips.items``). ``is_video=None`` decides by the file suffix
    (``IMAGE_SUFFIXES``). ``error``: a reason known before loading (a
    planned clip with no region, a source video not found); the runner
    records it in ``errors.jsonl`` and never loads the item.
    """

    id: int | str
    path: Path
    window: tuple[int, int] | None = None
    crop: tuple[int, int, int, int] | None = None
    reverse: bool = False
    is_video: bool | None = None
    error: str | None = None

    @property
    def video(self) -> bool:
        return Path(self.path).suffix.lower() not in IMAGE_SUFFIXES if self.is_video is None else self.is_video


def load_item(item: Item, sampling: Sampling | float) -> tuple[list, tuple[float, ...], bool]:
    """Frames of ``item``: ``(RGB PIL images, timestamps in s, is_video)``.

    A video is sampled as ``sampling`` says (``sova_lib.video.Sampling``; a number is a rate: that many frames
    per second of video with the paper's sampler, ``sova_lib.video.sample_frames``); an image is one frame with no
    timestamp. An ``fps`` above the video's own frame rate is capped at that
    rate, with a warning (once per rate and video frame rate): sampling faster
    than the video only repeats frames. The sampler's own repeats (a 1-frame
    clip gives that frame twice) are kept. Raises ``FileNotFoundError`` for a missing file and the
    decoder's error for an unreadable one. An item's known ``error`` is its callers' to record: they never
    load such an item.
    """
    path = Path(item.path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if not item.video:
        from PIL import Image

        with Image.open(path) as img:
            return [img.convert("RGB")], (), False

    sampling = sampling if isinstance(sampling, Sampling) else Sampling(float(sampling))
    frames = sample_frames(path, sampling, window=item.window, crop=item.crop, reverse=item.reverse, cap_rate=True)
    fps = sampling.fps
    if fps is not None and fps > frames.fps:  # capped before decoding: no frame beyond the video's own rate was read
        key = (float(fps), float(frames.fps))
        if key not in _CAPPED:
            _CAPPED.add(key)
            logger.warning("--fps %g is above the frame rate of %s (%g fps): sampling at %g fps instead "
                           "(warned once per rate)", fps, path.name, frames.fps, frames.fps)
    return list(frames.images), tuple(float(t) for t in frames.timestamps), True


def effective_rate(items, fps: float) -> float:
    """The sampling rate a run at ``fps`` really uses: ``fps``, or the highest frame rate of its videos if lower.

    ``load_item`` caps ``fps`` at each video's own rate, so a run asking more
    than any of its videos has samples at most the highest of their rates; the
    cache key records that rate, so asking 1000 fps of 30 fps clips shares the
    30 fps cache. Videos are probed in order until one is at least as fast as
    ``fps`` (one probe in the usual case); unreadable or missing files and
    images are skipped. ``fps`` when no video can be probed. A video's container
    header (PyAV, a tenth of a second) answers the usual case; the decoder,
    whose import (torch) takes seconds, is loaded only for a video slower than
    ``fps``, so a run finds its cache folder, and a second run that another
    holds it, before anything slow. A lowered rate is logged as a warning.
    """
    from sova_lib.video.frames import probe

    rates = []
    for item in items:
        if item.error is not None or not item.video or not Path(item.path).is_file():
            continue
        if _header_rate(item.path) >= fps:  # the usual case, told without loading the decoder
            return fps
        try:
            rate = float(probe(item.path).fps)
        except Exception:  # noqa: BLE001 - an unreadable file is that item's error later, not this probe's
            continue
        if rate >= fps:
            return fps
        rates.append(rate)
    rate = max(rates, default=fps)
    if rate < fps:
        logger.warning("--fps %g is above every video's own frame rate; sampling (and the cache key) use %g fps",
                       fps, rate)
    return rate



def _header_rate(path) -> float:
    """The average frame rate in a video's container header (PyAV), or 0.0 when it cannot be read."""
    try:
        import av

        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate
            return float(rate) if rate else 0.0
    except Exception:  # noqa: BLE001 - any failure: the full probe decides
        return 0.0
