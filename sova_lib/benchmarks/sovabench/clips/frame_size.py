"""Whether a source video is the one its annotations were drawn on: its frame must hold their boxes.

No file states the size of the frame the annotations were drawn on: a KPF geometry line is a box, not a frame
(``kpf``), and neither dataset has one frame size. MEVA's ground videos come from "a variety of commercial,
off-the-shelf cameras", camera G639's rotated (Kitware/mevadata, ``resources/README-meva-kf1-data.txt``, section
1.0); VIRAT's are 1080p or 720p, by scene (VIRAT Video Dataset Release 2.0 introduction, section 2.1). So the size is
read from the annotations themselves: how far right and down their boxes reach (:func:`rows_reach` of a clip
manifest's rows, ``kpf_index.VideoIndex.reach`` of a video's annotation index), which a video's frame, read from its
header (:func:`header_size`), must hold within ``SIZE_SLACK`` (:func:`size_mismatch`). ``clips sources`` checks each
video found with its annotations; ``clips extract`` and the items of a clip manifest (``items.manifest_items``) refuse
to crop a video that fails, clip by clip, before decoding a frame.
"""
from __future__ import annotations

from typing import Sequence

__all__ = ["SIZE_SLACK", "header_size", "rows_reach", "size_mismatch"]

#: How far past a source video's frame its annotated boxes may reach (a fraction of its width and height) before
#: the video is taken for another than the annotated one: annotated boxes pass the frame's edge by a few pixels
#: (``plan``), a stand-in or a resized copy by a multiple of its size (a 320x176 copy of a 1920x1080 video: 6x).
SIZE_SLACK = 1.25


def rows_reach(rows: Sequence) -> tuple[int, int]:
    """How far right and down the regions of ``rows`` (clip manifest rows with a region) reach: their largest
    ``x2`` and ``y2``."""
    return max(r.x2 for r in rows), max(r.y2 for r in rows)


def header_size(path) -> tuple[int, int] | None:
    """``(width, height)`` of the first video stream of the file ``path``, as its header (PyAV) declares it, no frame
    decoded; None when it cannot be read (the decoder says why, later)."""
    import av

    try:
        with av.open(str(path)) as container:
            context = container.streams.video[0].codec_context
            return (context.width, context.height) if context.width and context.height else None
    except Exception:  # noqa: BLE001  (any file PyAV cannot read)
        return None


def size_mismatch(width: int, height: int, reach: tuple[int, int]) -> str | None:
    """Why a ``width x height`` source video is not the one its annotations were drawn on: their boxes reach
    ``reach`` (the largest ``x2``, ``y2``: :func:`rows_reach` of its rows, or ``kpf_index.VideoIndex.reach``), past
    its frame by more than ``SIZE_SLACK`` of it (module docstring); None when they fit."""
    x, y = reach
    if x <= width * SIZE_SLACK and y <= height * SIZE_SLACK:
        return None
    return (f"the video is {width}x{height}, but its annotated boxes reach {x}x{y}: it is not the annotated video "
            "(a stand-in or a resized copy?); put the original under --video-root")
