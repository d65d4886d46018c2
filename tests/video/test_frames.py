from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from sova_lib.video.frames import (
    Sampling,
    VideoInfo,
    evenly_spaced,
    example_videos,
    probe,
    read_frames,
    sample_frames,
    sample_indices,
)
from tests.helpers_video import decode_all, frame_arrays, numbered_frames, read_number, write_video

BACKENDS = ["decord", "pyav"]
VTEST = Path(os.environ.get("SOVA_SHARED", "/work/shared")) / "data" / "video" / "vtest.avi"


# ---------------------------------------------------------------- sampler

@pytest.mark.parametrize("num_frames, fps, rate, expected", [
    (10, 10, 1, [0, 9]),                      # n = round(1) + 1 = 2
    (1, 10, 1, [0, 0]),                       # n is at least 2: the single frame twice
    (2, 30, 1, [0, 1]),
    (25, 10, 1, [0, 12, 24]),                 # round(2.5) = 2 (half to even)
    (35, 10, 1, [0, 8, 17, 26, 34]),          # round(3.5) = 4; rint(8.5) = 8, rint(25.5) = 26
    (95, 29.97, 1, [0, 31, 63, 94]),          # r = 30, round(3.17) = 3
    (95, 29.97, 3, [0, 9, 19, 28, 38, 47, 56, 66, 75, 85, 94]),  # round(9.5) = 10
    (95, 29.97, 5, [0, 6, 12, 18, 24, 29, 35, 41, 47, 53, 59, 65, 70, 76, 82, 88, 94]),  # 23.5 -> 24, 70.5 -> 70
    (95, 29.97, 7, [0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 56, 60, 64, 68, 73, 77, 81, 85, 90, 94]),
    (20, 7.5, 1, [0, 10, 19]),                # r = round(7.5) = 8, round(2.5) = 2, rint(9.5) = 10
    (5, 2.5, 1, [0, 2, 4]),                   # r = round(2.5) = 2
    (3, 10, 30, [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]),  # rate above fps: frames repeat
    (30, 15, 7, [0, 2, 4, 6, 8, 10, 12, 15, 17, 19, 21, 23, 25, 27, 29]),  # float tie: 14.500000000000002 -> 15
    (4, 0.3, 1, [0, 1, 2, 2, 3]),             # r = round(0.3) = 0 is clamped to 1; n = 5; rint(1.5) = 2
])
def test_sample_indices_hand_computed(num_frames, fps, rate, expected):
    got = sample_indices(num_frames, fps, rate)
    assert got.dtype == np.int64
    assert got.tolist() == expected


def _round_half_even(x: Fraction) -> int:
    floor = x.numerator // x.denominator
    rem = x - floor
    return floor + (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and floor % 2 == 1))


def test_sample_indices_against_exact_arithmetic():
    """Exact rational arithmetic agrees except at exact .5 ties that float64 shifts by one."""
    ties = 0
    for num_frames in range(1, 200):
        for fps in (7.5, 10, 12.5, 25, 29.97, 30):
            for rate in (0.5, 1, 3, 5, 7):
                got = sample_indices(num_frames, fps, rate)
                r = max(_round_half_even(Fraction(fps)), 1)
                n = max(_round_half_even(Fraction(num_frames) / r * Fraction(rate)) + 1, 2)
                assert len(got) == n
                assert got[0] == 0 and got[-1] == num_frames - 1 and np.all(np.diff(got) >= 0)
                for i, g in enumerate(got):
                    exact = Fraction(i * (num_frames - 1), n - 1)
                    if g != _round_half_even(exact):
                        assert exact.denominator == 2 and abs(g - exact) == Fraction(1, 2)
                        ties += 1
    assert 0 < ties < 200  # the float ties exist and are rare


def test_evenly_spaced_is_the_samplers_rule_for_a_given_count():
    """The same points as ``sample_indices`` for its own count, and exact arithmetic up to float .5 ties."""
    assert evenly_spaced(100, 8).tolist() == [0, 14, 28, 42, 57, 71, 85, 99]
    assert evenly_spaced(60, 3).tolist() == [0, 30, 59] and evenly_spaced(9, 1).tolist() == [0]
    assert evenly_spaced(3, 5).tolist() == [0, 0, 1, 2, 2]  # more frames than the clip has: repeats
    for num_frames in range(1, 120):
        for fps, rate in ((10, 1), (29.97, 3), (7.5, 5)):
            paper = sample_indices(num_frames, fps, rate)
            assert evenly_spaced(num_frames, len(paper)).tolist() == paper.tolist()
        for count in range(2, 20):
            for i, g in enumerate(evenly_spaced(num_frames, count)):
                exact = Fraction(i * (num_frames - 1), count - 1)
                assert g == _round_half_even(exact) or (exact.denominator == 2 and abs(g - exact) == Fraction(1, 2))


def test_sampling_fixed_count_and_cap():
    paper = [0, 10, 20, 30, 39, 49, 59]  # 60 frames at 10 fps, 1 frame per second
    assert Sampling().indices(60, 10.0).tolist() == paper == sample_indices(60, 10.0, 1.0).tolist()
    assert Sampling(fps=None, frames=4).indices(60, 10.0).tolist() == [0, 20, 39, 59]
    assert Sampling(max_frames=3).indices(60, 10.0).tolist() == [0, 30, 59]  # capped: evenly over the whole clip
    assert Sampling(max_frames=7).indices(60, 10.0).tolist() == paper  # at the cap: unchanged
    assert Sampling(fps=50.0).indices(6, 10.0, cap_rate=True).tolist() == sample_indices(6, 10.0, 10.0).tolist()
    assert Sampling().cache_fields() == {} and Sampling(fps=2.0, max_frames=5).cache_fields() == {"max_frames": 5}
    assert Sampling(fps=None, frames=8).cache_fields() == {"frames": 8}
    for bad in (dict(frames=4), dict(fps=None, frames=4, max_frames=2), dict(fps=None, frames=0), dict(fps=None),
                dict(max_frames=0), dict(fps=0.0)):
        with pytest.raises(ValueError):
            Sampling(**bad)


def test_sample_frames_with_a_sampling_reads_those_frames():
    lawn = next(v for v in example_videos() if v.name.startswith("vtest_lawn"))
    got = sample_frames(lawn, Sampling(fps=None, frames=4))
    assert got.indices.tolist() == [0, 20, 39, 59] and len(got.images) == 4
    assert got.timestamps.tolist() == [0.0, 2.0, 3.9, 5.9]


@pytest.mark.parametrize("args", [(0, 10, 1), (-3, 10, 1), (10, 0, 1), (10, -1, 1), (10, 10, 0),
                                  (10, 10, -1), (10, float("nan"), 1), (2.5, 10, 1)])
def test_sample_indices_rejects_bad_input(args):
    with pytest.raises(ValueError):
        sample_indices(*args)


# ---------------------------------------------------------------- synthetic video

@pytest.fixture(scope="module")
def numbered(tmp_path_factory):
    """A 40-frame H.264 video (GOP 6 with B-frames, so reads must seek) at 10 fps whose frames show their number."""
    path = tmp_path_factory.mktemp("video") / "numbered.mp4"
    write_video(path, numbered_frames(40), fps=10, crf=18, options={"g": "6", "bf": "2"})
    return path


def test_numbered_video_roundtrip(numbered):
    frames = decode_all(numbered)
    assert [read_number(f) for f in frames] == list(range(40))


@pytest.mark.parametrize("backend", BACKENDS)
def test_probe(numbered, backend):
    assert probe(numbered, backend) == VideoInfo(num_frames=40, fps=10.0, width=96, height=64)


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_reverse_crop_pixel_exact(numbered, backend):
    full = decode_all(numbered)
    # window (5, 29): F = 25 at 10 fps -> n = round(2.5) + 1 = 3 -> clip indices [0, 12, 24]
    got = sample_frames(numbered, window=(5, 29), backend=backend)
    assert got.indices.tolist() == [0, 12, 24]
    assert got.source_indices.tolist() == [5, 17, 29]
    assert np.allclose(got.timestamps, [0.0, 1.2, 2.4])
    assert [read_number(a) for a in frame_arrays(got)] == [5, 17, 29]
    for a, src in zip(frame_arrays(got), [5, 17, 29]):
        assert np.array_equal(a, full[src])

    rev = sample_frames(numbered, window=(5, 29), reverse=True, backend=backend)
    assert rev.indices.tolist() == [0, 12, 24]
    assert rev.source_indices.tolist() == [29, 17, 5]  # clip frame k is source frame end - k
    assert [read_number(a) for a in frame_arrays(rev)] == [29, 17, 5]

    crop = (10, 3, 50, 40)  # x1, y1, x2, y2 (exclusive)
    cropped = sample_frames(numbered, rate=3, window=(5, 29), crop=crop, backend=backend)
    assert cropped.indices.tolist() == [0, 3, 6, 9, 12, 15, 18, 21, 24]  # n = round(7.5) + 1 = 9
    assert cropped.images[0].size == (40, 37)
    for a, src in zip(frame_arrays(cropped), cropped.source_indices):
        assert np.array_equal(a, full[src][3:40, 10:50])


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_and_crop_are_clamped(numbered, backend):
    got = sample_frames(numbered, window=(-10, 1000), crop=(-5, -5, 500, 20), backend=backend)
    # F = 40 -> n = round(4.0) + 1 = 5: rint([0, 9.75, 19.5, 29.25, 39]) = [0, 10, 20, 29, 39]
    assert got.source_indices.tolist() == [0, 10, 20, 29, 39]
    assert got.images[0].size == (96, 20)


def test_window_clamp_indices_are_the_whole_video(numbered):
    whole = sample_frames(numbered, backend="pyav")
    clamped = sample_frames(numbered, window=(-10, 1000), backend="pyav")
    assert whole.source_indices.tolist() == clamped.source_indices.tolist() == [0, 10, 20, 29, 39]


def test_empty_window_or_crop_raise(numbered):
    with pytest.raises(ValueError, match="outside"):
        sample_frames(numbered, window=(100, 200), backend="pyav")
    with pytest.raises(ValueError, match="ends before"):
        sample_frames(numbered, window=(20, 10), backend="pyav")
    with pytest.raises(ValueError, match="empty"):
        sample_frames(numbered, crop=(200, 0, 300, 10), backend="pyav")


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_frames_any_order_with_repeats(numbered, backend):
    order = [33, 2, 2, 17, 39, 0, 33]
    assert [read_number(a) for a in read_frames(numbered, order, backend=backend)] == order
    with pytest.raises(IndexError, match="outside the 40 frames"):
        read_frames(numbered, [40], backend=backend)


@pytest.mark.parametrize("count, fps, expected", [
    (95, 29.97, [0, 31, 63, 94]),  # r = 30, n = round(3.17) + 1 = 4
    (20, 7.5, [0, 10, 19]),        # r = round(7.5) = 8, n = round(2.5) + 1 = 3, rint(9.5) = 10
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_non_integer_frame_rates(tmp_path, count, fps, expected, backend):
    path = write_video(tmp_path / "v.mp4", numbered_frames(count, 64, 32), fps=fps, crf=18)
    got = sample_frames(path, backend=backend)
    assert got.fps == pytest.approx(fps, abs=1e-9)
    assert got.indices.tolist() == expected
    assert [read_number(a) for a in frame_arrays(got)] == expected
    assert np.allclose(got.timestamps, np.asarray(expected) / fps)


# ---------------------------------------------------------------- real excerpts

def test_example_videos():
    paths = example_videos()
    assert [p.name for p in paths] == ["vtest_lawn_0600-0659.mp4", "vtest_square_0000-0049_half.mp4",
                                       "vtest_walkway_0200-0259.mp4"]
    assert sum(p.stat().st_size for p in paths) < 400_000
    assert [probe(p) for p in paths] == [VideoInfo(60, 10.0, 384, 288), VideoInfo(50, 10.0, 384, 288),
                                         VideoInfo(60, 10.0, 384, 288)]


def test_real_excerpt_window_reverse_crop_pixel_exact():
    path = example_videos()[2]
    full = decode_all(path)
    assert len(full) == 60
    got = sample_frames(path, rate=2, window=(10, 49), reverse=True, crop=(100, 50, 300, 250))
    # F = 40 at 10 fps, rate 2 -> n = 9: rint(linspace(0, 39, 9)) = [0, 5, 10, 15, 20, 24, 29, 34, 39]
    assert got.indices.tolist() == [0, 5, 10, 15, 20, 24, 29, 34, 39]
    assert got.source_indices.tolist() == [49 - k for k in got.indices]
    for a, src in zip(frame_arrays(got), got.source_indices):
        assert np.array_equal(a, full[src][50:250, 100:300])


@pytest.mark.skipif(not VTEST.is_file(), reason="vtest.avi not present")
def test_excerpt_matches_its_source_frames():
    """The walkway excerpt is frames 200-259 of vtest.avi cropped to (384, 160, 768, 448) (README)."""
    src = read_frames(VTEST, [200, 230, 259], crop=(384, 160, 768, 448))
    ours = read_frames(example_videos()[2], [0, 30, 59])
    for a, b in zip(src, ours):
        mse = np.mean((a.astype(float) - b) ** 2)
        assert 10 * np.log10(255 ** 2 / mse) > 30  # PSNR in dB after H.264 at crf 28
    wrong = read_frames(VTEST, [240], crop=(384, 160, 768, 448))[0]
    assert np.mean((wrong.astype(float) - ours[0]) ** 2) > 4 * np.mean((src[0].astype(float) - ours[0]) ** 2)


def test_frames_len_images_and_info():
    got = sample_frames(example_videos()[1])
    assert len(got) == 6 and got.indices.tolist() == [0, 10, 20, 29, 39, 49]
    arrays = frame_arrays(got)
    assert all(a.shape == (288, 384, 3) and a.dtype == np.uint8 for a in arrays)
    assert got.info == VideoInfo(50, 10.0, 384, 288)


def test_read_frames_empty_list(numbered):
    assert read_frames(numbered, []) == []
