"""Blobs and tracks under the motion describer (sova_lib.describe.backends.motion_tracking), on hand-made frames and blobs."""
import numpy as np
import pytest

from sova_lib.describe.backends.motion_tracking import (
    Blob,
    area_scale,
    find_blobs,
    ghost_events,
    link_blobs,
    prepare_frames,
    still_head,
)

P = dict(diff_threshold=30.0, min_area=0.002, max_speed=0.4, max_area_ratio=3.0)


def _blob(k, cx, cy, area=100.0, ghost=False):
    return Blob(k, float(cx), float(cy), (int(cx) - 5, int(cy) - 5, 10, 10), float(area), ghost)


def test_prepare_frames_downscales_and_blurs():
    frames = [np.full((60, 100, 3), 40 * k, np.uint8) for k in range(4)]
    arrays, stack, size, scale = prepare_frames(frames, work_size=50)
    assert size == (100, 60) and scale == 0.5 and stack.shape == (4, 30, 50, 3) and stack.dtype == np.uint8
    assert [int(s[10, 10, 0]) for s in stack] == [0, 40, 80, 120]  # flat frames stay flat
    assert all(a is not None and a.shape == (60, 100, 3) for a in arrays)
    assert prepare_frames(frames, work_size=500)[3] == 1.0  # never upscaled


def test_find_blobs_follows_a_moving_square_with_no_ghosts():
    frames = []
    for k in range(5):
        f = np.full((60, 120, 3), 90, np.uint8)
        f[20:36, 10 + 20 * k:26 + 20 * k] = 250  # a 16 x 16 square, 20 px to the right each frame
        frames.append(f)
    _, stack, _, scale = prepare_frames(frames, work_size=320)
    assert scale == 1.0
    blobs = find_blobs(stack, P)
    assert [len(b) for b in blobs] == [1, 1, 1, 1, 1]
    for k, (b,) in enumerate(blobs):
        assert not b.ghost and b.k == k
        assert b.cx == pytest.approx(17.5 + 20 * k, abs=0.5) and b.cy == pytest.approx(27.5, abs=0.5)


def test_find_blobs_marks_where_a_still_object_was_as_a_ghost():
    """A textured patch present in the last 3 of 5 frames is in the median background: in the first two it is missing
    from the frame, so that place differs from the background with weaker edges in the frame: a ghost."""
    patch = np.zeros((20, 20, 3), np.uint8)
    patch[:10, :10] = patch[10:, 10:] = 255  # 2 x 2 checkerboard: strong edges, far from the grey
    frames = []
    for k in range(5):
        f = np.full((64, 96, 3), 128, np.uint8)
        if k >= 2:
            f[20:40, 30:50] = patch
        frames.append(f)
    _, stack, _, _ = prepare_frames(frames, work_size=320)
    blobs = find_blobs(stack, P)
    assert [len(b) for b in blobs] == [1, 1, 0, 0, 0]
    assert all(b.ghost for b in blobs[0] + blobs[1])
    assert (blobs[0][0].cx, blobs[0][0].cy) == pytest.approx((39.5, 29.5), abs=0.5)


def test_link_blobs_nearest_first_one_missed_frame_and_gates():
    times = np.arange(6, dtype=float)
    diag = 100.0  # gate: max(0.2 * dt, 0.05) diagonals = 20 px per second
    frames = [
        [_blob(0, 10, 10), _blob(0, 80, 80)],
        [_blob(1, 20, 10), _blob(1, 75, 80)],
        [_blob(2, 78, 80)],                       # the first object is missed in frame 2
        [_blob(3, 40, 10), _blob(3, 70, 80, area=400)],  # area x4: refused, starts a new track
        [_blob(4, 99, 10)],                       # 59 px in one second: too far, a new track
        [],
    ]
    tracks = link_blobs(frames, times, diag, {**P, "max_speed": 0.2})
    got = sorted([(b.k, b.cx) for b in t] for t in tracks)
    assert got == [[(0, 10.0), (1, 20.0), (3, 40.0)], [(0, 80.0), (1, 75.0), (2, 78.0)], [(3, 70.0)], [(4, 99.0)]]


def test_still_head_area_scale_and_ghost_events():
    track = [_blob(k, x, 50) for k, x in enumerate([10, 10.5, 11, 30, 50])]
    # radius 0.03 * 100 = 3 px holds the first 3 blobs; tight 0.75 px holds the first two
    assert still_head(track, track[0], 0.03, 0.0075, 100.0) == (3, 1)
    assert area_scale(track[:2]) == 1.0
    growing = [_blob(k, 0, 0, area=a) for k, a in enumerate([100, 110, 150, 200, 390, 400])]
    assert area_scale(growing) == pytest.approx(395 / 105)
    departs = [_blob(k, 20, 20, ghost=True) for k in range(2, 6)]
    arrives = [_blob(k, 70, 70, ghost=True) for k in range(0, 4)]
    moving = [_blob(k, 10 + 10 * k, 90, ghost=True) for k in range(0, 3)]
    events = ghost_events([departs, arrives, moving], 6, 0.03, 100.0)
    assert [(kind, k, b.cx) for kind, k, b in events] == [("departs", 2, 20.0), ("arrives", 4, 70.0)]
