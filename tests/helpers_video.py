"""Synthetic test videos whose frames say their own number, a plain PyAV decoder, and a writer of videos.

A frame of ``numbered_frames`` carries its frame number in binary as a row of
``BITS`` black/white 8x8 blocks on a grey background, so the number survives
lossy compression and can be read back with ``read_number``.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

BITS = 8
BLOCK = 8


def numbered_frames(count: int, width: int = 96, height: int = 64) -> list[np.ndarray]:
    """``count`` frames (H x W x 3 uint8); frame k shows k in binary (top row) and a colour ramp."""
    frames = []
    yy, xx = np.mgrid[0:height, 0:width]
    for k in range(count):
        img = np.full((height, width, 3), 128, dtype=np.uint8)
        img[..., 0] = (xx * 255 // max(width - 1, 1)).astype(np.uint8)  # red ramp left to right
        img[..., 2] = (yy * 255 // max(height - 1, 1)).astype(np.uint8)  # blue ramp top to bottom
        for b in range(BITS):
            value = 255 if (k >> b) & 1 else 0
            img[0:BLOCK, b * BLOCK:(b + 1) * BLOCK] = value
        frames.append(img)
    return frames


def frame_arrays(frames) -> list[np.ndarray]:
    """The images of a ``sova_lib.video.Frames`` as ``H x W x 3`` uint8 arrays."""
    return [np.asarray(img.convert("RGB"), dtype=np.uint8) for img in frames.images]


def read_number(frame: np.ndarray) -> int:
    """The frame number written by ``numbered_frames`` (frame must not be cropped at the top-left)."""
    k = 0
    for b in range(BITS):
        block = frame[1:BLOCK - 1, b * BLOCK + 1:(b + 1) * BLOCK - 1].astype(float)
        if block.mean() > 128:
            k |= 1 << b
    return k


def decode_all(path) -> list[np.ndarray]:
    """Every frame of the file in presentation order, by a plain sequential PyAV loop."""
    import av

    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def write_video(path, frames, fps: float, *, codec: str = "libx264", crf: int = 23,
                options: dict | None = None) -> Path:
    """Write ``frames`` (``H x W x 3`` uint8 arrays or RGB PIL images, all one size) to ``path`` with PyAV.

    ``codec``: any FFmpeg encoder PyAV carries (``"libx264"`` H.264, ``"mpeg4"``
    MPEG-4 part 2, ``"ffv1"`` lossless in ``.mkv``/``.avi``). ``crf`` applies to
    libx264 only (0 = lossless in 4:4:4, 23 = FFmpeg's default). ``fps`` may be
    non-integer: it is written as the nearest fraction with a denominator up to
    1001 (29.97 as 2997/100, 30000/1001 as itself). H.264 needs even width and
    height in 4:2:0; odd sizes raise ``ValueError``. Returns ``path``.
    """
    from fractions import Fraction

    import av

    arrays = [np.asarray(f.convert("RGB") if hasattr(f, "convert") else f, dtype=np.uint8) for f in frames]
    if not arrays:
        raise ValueError(f"no frames to write to {os.fspath(path)}")
    height, width = arrays[0].shape[:2]
    if any(a.shape != (height, width, 3) for a in arrays):
        raise ValueError(f"frames for {os.fspath(path)} must all be {height}x{width}x3 uint8")
    opts = dict(options or {})
    pix_fmt = "yuv420p"
    if codec in ("libx264", "h264"):
        opts.setdefault("crf", str(crf))
        if crf == 0:
            pix_fmt = "yuv444p"
    elif codec == "ffv1":
        pix_fmt = "yuv444p"
    if pix_fmt == "yuv420p" and (width % 2 or height % 2):
        raise ValueError(f"{codec} in 4:2:0 needs an even frame size, got {width}x{height} for {os.fspath(path)}")
    rate = Fraction(fps).limit_denominator(1001)
    path = Path(path)
    with av.open(os.fspath(path), "w") as container:
        stream = container.add_stream(codec, rate=rate, options=opts)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        for a in arrays:
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(a), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path
