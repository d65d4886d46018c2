from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from PIL import Image

from sova_lib.describe.backends.motion import MOTION_VERSION, MotionDescriber, analyse_motion, render_motion
from sova_lib.describe.contract import DescribeRequest, make_describer
from sova_lib.video.frames import example_videos, sample_frames
from tests.helpers_video import write_video

FPS = 10


def scene(xs, width=160, height=120, box=(16, 28), y=50, seed=0) -> list[np.ndarray]:
    """A red box at x positions ``xs`` (one frame each) over a textured, shaded background."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 8, (height, width, 1)).repeat(3, axis=2)
    ramp = np.linspace(0, 60, width)[None, :, None]
    background = np.clip(100 + noise + ramp, 0, 255).astype(np.uint8)
    frames = []
    for x in xs:
        frame = background.copy()
        frame[y:y + box[1], int(x):int(x) + box[0]] = (200, 40, 40)
        frames.append(frame)
    return frames


LEFT = np.linspace(130, 10, 40)  # 120 px in 3.9 s: 30.8 px/s, 0.192 frame widths per second
STILL_THEN_RIGHT = [20] * 15 + list(np.linspace(20, 130, 25))  # still for 1.5 s, then moves right
STILL_LONG_THEN_RIGHT = [20] * 25 + list(np.linspace(20, 130, 15))  # still for most of the clip
TIMES = np.arange(40) / FPS


def test_moving_left_and_its_reverse():
    forward = analyse_motion(scene(LEFT), TIMES)
    assert len(forward.objects) == 1
    obj = forward.objects[0]
    assert obj.direction == "from right to left" and obj.kind == "object"
    assert obj.speed_px_s == pytest.approx(120 / 3.9, rel=0.05)
    assert obj.starts_at is None and obj.stops_at is None
    assert render_motion(forward) == [
        "A moving object travels from right to left at about 0.19 frame widths per second (31 px/s)."]

    backward = analyse_motion(scene(LEFT)[::-1], TIMES)
    assert [o.direction for o in backward.objects] == ["from left to right"]
    assert backward.objects[0].speed_px_s == pytest.approx(obj.speed_px_s, rel=1e-6)


def test_moving_left_at_one_frame_per_second():
    frames, times = scene(LEFT)[::10], TIMES[::10]
    assert [o.direction for o in analyse_motion(frames, times).objects] == ["from right to left"]
    assert [o.direction for o in analyse_motion(frames[::-1], times).objects] == ["from left to right"]


@pytest.mark.parametrize("xs, start", [(STILL_THEN_RIGHT, 1.5), (STILL_LONG_THEN_RIGHT, 2.5)])
def test_still_then_moves_starts_and_reverse_stops(xs, start):
    """The long case has the box in the median background: found through its ghost."""
    got = analyse_motion(scene(xs), TIMES)
    assert len(got.objects) == 1
    obj = got.objects[0]
    assert obj.direction == "from left to right"
    assert obj.starts_at == pytest.approx(start, abs=0.1) and obj.stops_at is None
    text = render_motion(got)
    assert text[0] == (f"A moving object travels from left to right at about {obj.speed_rel:.2f} frame widths per second "
                       f"({obj.speed_px_s:.0f} px/s); it is still at first and starts moving at about "
                       f"{obj.starts_at:.1f} s.")
    assert f"Motion starts at about {obj.starts_at:.1f} s." in text

    rev = analyse_motion(scene(xs)[::-1], TIMES)
    assert len(rev.objects) == 1
    assert rev.objects[0].direction == "from right to left"
    assert rev.objects[0].starts_at is None
    assert rev.objects[0].stops_at == pytest.approx(3.9 - start, abs=0.1)
    assert any(line.startswith("Motion stops at about") for line in render_motion(rev))


@pytest.mark.parametrize("xs, start", [(STILL_THEN_RIGHT, 1.5), (STILL_LONG_THEN_RIGHT, 2.5)])
def test_starts_at_one_frame_per_second(xs, start):
    # frames at 0, 1, 2, 3 s: the start lies between the last still and the first moved frame
    got = analyse_motion(scene(xs)[::10], TIMES[::10])
    assert [o.starts_at for o in got.objects] == [start]


def test_several_objects_one_sentence_each_and_a_count_by_direction():
    from sova_lib.describe.backends.motion import MotionAnalysis, MovingObject

    left = MovingObject("person", "from right to left", (0.9, 0.5), (0.1, 0.5), 40.0, 0.25, 0.0, 4.0, stops_at=3.0)
    right = MovingObject("object", "from left to right", (0.1, 0.5), (0.9, 0.5), 20.0, 0.125, 0.0, 4.0,
                         size_trend="receding")
    gone = MovingObject("object", "", (0.5, 0.5), (0.5, 0.5), 0.0, 0.0, 2.0, 2.0, starts_at=2.0)
    lines = render_motion(MotionAnalysis([left, left, right, gone], 0.0, 4.0, 9))
    assert lines == [
        "A person moves from right to left at about 0.25 frame widths per second (40 px/s); "
        "it stops at about 3.0 s and stays still.",
        "A person moves from right to left at about 0.25 frame widths per second (40 px/s); "
        "it stops at about 3.0 s and stays still.",
        "A moving object travels from left to right at about 0.12 frame widths per second (20 px/s); "
        "it shrinks in the frame, as if moving away from the camera.",
        "An object that was still leaves its place at about 2.0 s.",
        "Of 4 moving objects, 2 travel from right to left, 1 from left to right, 1 leaves its place.",
    ]
    back = MovingObject("person", "from left to right", (0.1, 0.5), (0.9, 0.5), 40.0, 0.25, 0.0, 4.0, starts_at=1.0)
    mirrored = render_motion(MotionAnalysis([back, back, right, gone], 0.0, 4.0, 9))
    assert set(mirrored) & set(lines) == {lines[2], lines[3]}  # only the sentences of the same motion are shared


def test_no_motion_and_single_frame():
    still = scene([40] * 10)
    assert render_motion(analyse_motion(still, TIMES[:10])) == ["No motion is detected."]
    assert render_motion(analyse_motion(still[:1], [0.0])) == ["A single frame shows no motion."]


def test_describer_contract_ignores_prompt_and_is_deterministic():
    describer = make_describer("motion", min_area=0.002)
    assert isinstance(describer, MotionDescriber)
    assert describer.max_batch_size == 1 and describer.max_concurrency >= 1
    config = describer.config()
    assert config["version"] == MOTION_VERSION and config["min_area"] == 0.002 and config["backend"] == "motion"
    images = [Image.fromarray(a) for a in scene(LEFT)]
    a = DescribeRequest(id=1, frames=images, prompt="Describe this video.", timestamps=tuple(TIMES))
    b = DescribeRequest(id=2, frames=images, prompt="Briefly classify the actions occurring in this video.",
                        system_prompt="You are an expert.", timestamps=tuple(TIMES))
    texts = describer.describe([a]) + describer.describe([b]) + describer.describe([a])
    assert texts[0] == texts[1] == texts[2]
    assert texts[0].startswith("A moving object travels from right to left")


def test_unknown_option_is_an_error():
    with pytest.raises(TypeError, match="min_aera"):
        MotionDescriber(min_aera=0.1)


def test_thread_safe():
    describer = MotionDescriber()
    requests = [DescribeRequest(id=i, frames=[Image.fromarray(a) for a in scene(xs)], prompt="",
                                timestamps=tuple(TIMES))
                for i, xs in enumerate([LEFT, STILL_THEN_RIGHT, LEFT[::-1], STILL_LONG_THEN_RIGHT])]
    sequential = [describer.describe([r])[0] for r in requests]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda r: describer.describe([r])[0], requests))
    assert parallel == sequential
    assert len(set(sequential)) == 4


def test_encoded_video_forward_and_reversed(tmp_path):
    """Through H.264 and the paper's sampler at 1 fps; reverse=True flips the direction."""
    path = write_video(tmp_path / "left.mp4", scene(LEFT), fps=FPS)
    describer = MotionDescriber()
    for reverse, direction in [(False, "from right to left"), (True, "from left to right")]:
        frames = sample_frames(path, rate=1, reverse=reverse)
        assert frames.indices.tolist() == [0, 10, 20, 29, 39]  # F = 40: n = round(4.0) + 1 = 5
        request = DescribeRequest(id=0, frames=frames.images, prompt="", timestamps=tuple(frames.timestamps))
        analysis = analyse_motion(request.frames, request.timestamps, **dataclasses.asdict(describer.options))
        assert [o.direction for o in analysis.objects] == [direction]


def test_vtest_excerpts():
    """Real footage: described without error; the walkway's pedestrians walk right to left."""
    describer = MotionDescriber()
    texts = {}
    for path in example_videos():
        frames = sample_frames(path, rate=1)
        request = DescribeRequest(id=path.stem, frames=frames.images, prompt="Describe this video.",
                                  timestamps=tuple(frames.timestamps))
        texts[path.stem] = describer.describe([request])[0]
        lines = texts[path.stem].split("\n")
        assert lines and all(line.strip() and line.endswith(".") for line in lines)
        assert lines != ["No motion is detected."]
    walkway = sample_frames(example_videos()[2], rate=1)
    objects = analyse_motion(walkway.images, walkway.timestamps).objects
    assert len(objects) >= 3
    assert sum(o.direction == "from right to left" for o in objects) >= 3
    assert sum(o.kind == "person" for o in objects) >= 2


def test_no_frames_is_an_error():
    with pytest.raises(ValueError, match="at least one frame"):
        analyse_motion([])
