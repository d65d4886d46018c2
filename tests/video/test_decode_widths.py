"""Decoded frames always have the size the container declares, on both backends and at any width.

``decord2`` 3.4.0 on CPUs with AVX-512 fails ``get_batch`` at widths 32, 48, 96 and 144 px and returns
4-channel frames on a single read; the decord reader checks every batch and falls back to PyAV. These
tests pass on any x86-64 CPU: where decord decodes correctly nothing falls back, elsewhere the fallback
gives the same frames (and one warning). The fallback itself is checked with a simulated bad decoder.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from sova_lib.video import decode
from sova_lib.video.decode import DecoderFallbackWarning, VideoError, open_video
from sova_lib.video.frames import sample_frames
from tests.helpers_video import frame_arrays, write_video

HEIGHT, FRAMES, BLOCK = 32, 4, 8


def _frames(width: int) -> list[np.ndarray]:
    """Frame k: a white block at column k * 8 on black, so each frame says its number at any width >= 32."""
    out = []
    for k in range(FRAMES):
        img = np.zeros((HEIGHT, width, 3), np.uint8)
        img[8:24, k * BLOCK:(k + 1) * BLOCK] = 255
        out.append(img)
    return out


def _number(frame: np.ndarray) -> int:
    means = [frame[10:22, k * BLOCK + 2:(k + 1) * BLOCK - 2].mean() for k in range(FRAMES)]
    return int(np.argmax(means))


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("widths")
    return {w: write_video(folder / f"w{w}.mp4", _frames(w), fps=4, crf=10) for w in (32, 48, 64, 96, 144, 176, 1920)}


@pytest.mark.parametrize("backend", ["decord", "pyav"])
@pytest.mark.parametrize("width", [32, 48, 64, 96, 144, 176, 1920])
def test_frames_have_the_declared_size_at_every_width(videos, backend, width):
    reader = open_video(videos[width], backend)
    try:
        assert (reader.info.width, reader.info.height, reader.info.num_frames) == (width, HEIGHT, FRAMES)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batch = reader.read([3, 0, 2])
            single = reader.read([1])
    finally:
        reader.close()
    for frames in (batch, single):
        for index, frame in frames.items():
            assert frame.shape == (HEIGHT, width, 3) and frame.dtype == np.uint8
            assert _number(frame) == index
    fallbacks = [w for w in caught if issubclass(w.category, DecoderFallbackWarning)]
    assert len(fallbacks) <= 1  # none where decord decodes this width correctly; once where it does not
    assert all(str(videos[width]) in str(w.message) for w in fallbacks)


class _BadBatch:
    def __init__(self, array):
        self.array = array

    def asnumpy(self):
        return self.array


@pytest.mark.parametrize("fault", ["four channels", "wrong width", "error"])
def test_decord_fault_falls_back_to_pyav_with_one_warning(videos, monkeypatch, fault):
    path = videos[96]
    reader = open_video(path, "decord")

    def get_batch(indices):
        if fault == "error":
            raise RuntimeError("Check failed: from_size == to_size")
        shape = (len(indices), 64, 96, 4) if fault == "four channels" else (len(indices), HEIGHT, 80, 3)
        return _BadBatch(np.zeros(shape, np.uint8))

    monkeypatch.setattr(reader._vr, "get_batch", get_batch, raising=False)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = reader.read([0, 3])
            second = reader.read([1, 2])
    finally:
        reader.close()
    assert {i: _number(f) for i, f in {**first, **second}.items()} == {0: 0, 1: 1, 2: 2, 3: 3}
    assert all(f.shape == (HEIGHT, 96, 3) for f in {**first, **second}.values())
    (only,) = [w for w in caught if issubclass(w.category, DecoderFallbackWarning)]
    assert str(path) in str(only.message) and "decoding this file with PyAV instead" in str(only.message)


def test_sample_frames_through_a_faulty_decord_gives_pyav_frames(videos, monkeypatch):
    real = decode.DecordReader.read

    def faulty(self, indices):
        self._vr = type("Broken", (), {"get_batch": lambda _, i: _BadBatch(np.zeros((len(i), 64, 96, 4), np.uint8))})()
        return real(self, indices)

    monkeypatch.setattr(decode.DecordReader, "read", faulty)
    with pytest.warns(DecoderFallbackWarning, match="w96.mp4"):
        got = sample_frames(videos[96], rate=4, backend="decord")
    reference = sample_frames(videos[96], rate=4, backend="pyav")
    assert got.source_indices.tolist() == reference.source_indices.tolist()
    assert [_number(a) for a in frame_arrays(got)] == [_number(a) for a in frame_arrays(reference)] == [0, 1, 2, 2, 3]
    assert all(np.array_equal(a, b) for a, b in zip(frame_arrays(got), frame_arrays(reference)))


def test_fallback_that_cannot_open_names_both(videos, monkeypatch):
    reader = open_video(videos[64], "decord")
    monkeypatch.setattr(reader._vr, "get_batch", lambda i: (_ for _ in ()).throw(RuntimeError("boom")), raising=False)

    def no_pyav(path):
        raise VideoError(f"cannot open video {path} with PyAV: simulated")

    monkeypatch.setattr(decode, "PyAVReader", no_pyav)
    with pytest.raises(VideoError, match=r"decord returned an error \(boom\) for .*w64.mp4; .*simulated"):
        reader.read([0])
