"""Video access: the paper's frame sampler, crop and frame windows, decoding.

``frames`` holds the sampler (``sample_indices``; ``Sampling`` adds a fixed
count and a cap, ``evenly_spaced``), frame reading
(``sample_frames``, ``probe``) and the bundled example videos; ``decode``
the two decoders (decord, PyAV) behind them.
"""
from __future__ import annotations

from sova_lib.video.decode import BACKENDS, VideoError, VideoInfo
from sova_lib.video.frames import (
    SAMPLER_VERSION,
    Frames,
    Sampling,
    evenly_spaced,
    example_videos,
    probe,
    sample_frames,
    sample_indices,
)

__all__ = ["BACKENDS", "SAMPLER_VERSION", "Frames", "Sampling", "VideoError", "VideoInfo", "evenly_spaced",
           "example_videos", "probe", "sample_frames", "sample_indices"]
