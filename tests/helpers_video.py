"""Synthetic test videos whose frames say their own number, and a plain PyAV decoder.

A frame of ``numbered_frames`` carries its frame number in binary as a row of
``BITS`` black/white 8x8 blocks on a grey background, so the number survives
lossy compression and can be read back with ``read_number``.
"""
from __future__ import annotations

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
