"""The transformers backend on tiny random models of several architectures (``tests/tiny_vlm*.py``).

Gemma 3, Idefics3 and LLaVA take a clip's frames as images and run everywhere. The
video-processor architectures (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, SmolVLM2,
LLaVA-OneVision, InternVL in its -HF format, VideoLLaMA3) need
an importable torchvision and are skipped, with that reason, where it is not.
The models are random: the tests check what reaches the model (frames, tokens,
BOS, padding) and that batching changes nothing, never the text's quality.
"""
from __future__ import annotations

import json
import shutil

import pytest

from sova_lib.describe.backends.transformers import TransformersDescriber
from sova_lib.describe.contract import DescribeRequest
from sova_lib.describe.item import Item
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import describe_items
from sova_lib.video.frames import example_videos
from tests import tiny_vlm, tiny_vlm_zoo
from tests.paths import DATA

BUILDERS = {**tiny_vlm_zoo.BUILDERS, "llava": tiny_vlm.build_tiny_llava, **tiny_vlm_zoo.VIDEO_BUILDERS,
            "qwen2.5-vl": tiny_vlm.build_tiny_qwen2_5_vl, "qwen3-vl": tiny_vlm.build_tiny_qwen3_vl}
IMAGE_PATH = ["gemma3", "idefics3", "llava"]
VIDEO_PATH = ["qwen2-vl", "qwen2.5-vl", "qwen3-vl", "smolvlm", "llava-onevision", "internvl", "videollama3"]
ALL = IMAGE_PATH + VIDEO_PATH
#: Architectures whose chat template writes BOS itself.
BOS_IN_TEMPLATE = ["gemma3", "idefics3"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    built = {}

    def get(name):
        if name not in built:
            built[name] = BUILDERS[name](tmp_path_factory.mktemp(name))
        return built[name]

    return get


@pytest.fixture(scope="module")
def frames():
    from PIL import Image

    return [Image.open(DATA / "vtest_frames" / f"frame_00{i}0.png").convert("RGB") for i in "012"]


def clip(frames, id="clip", times=(0.0, 1.0, 2.0)):
    return DescribeRequest(id, list(frames), "Briefly classify the actions.", "Watch the motion.", True, tuple(times))


class ProcessorSpy:
    """Stands in for a processor: records each call's keyword arguments and delegates."""

    def __init__(self, processor):
        self.processor, self.calls = processor, []

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        return self.processor(**kwargs)

    def __getattr__(self, name):
        return getattr(self.processor, name)


def spy(describer):
    engine = describer.load()._engine
    engine.processor = ProcessorSpy(engine.processor)
    return engine.processor.calls


def pixels(image):
    import numpy as np

    return np.asarray(image.convert("RGB"))


@pytest.mark.parametrize("name", ALL)
def test_the_samplers_frames_reach_the_processor_unchanged(folders, frames, name):
    import numpy as np

    describer = TransformersDescriber(model=str(folders(name)), max_new_tokens=3, device="cpu")
    calls = spy(describer)
    repeated = [frames[0], frames[0], frames[1], frames[2], frames[2]]  # the sampler's repeats, kept
    describer.describe([clip(repeated, times=(0.0, 0.0, 0.1, 0.2, 0.2))])
    (call,) = calls
    seen = call["videos"][0][0] if "videos" in call else call["images"][0]
    assert len(seen) == 5
    assert all(np.array_equal(pixels(a), pixels(b)) for a, b in zip(seen, repeated))
    if "videos" in call:
        assert call["do_sample_frames"] is False
        assert call["video_metadata"][0][0]["frames_indices"] == [0, 0, 100, 200, 200]


@pytest.mark.parametrize("name", ALL)
def test_batched_equals_one_at_a_time_for_images_and_videos(folders, frames, name):
    folder = folders(name)
    single = TransformersDescriber(model=str(folder), max_new_tokens=4, device="cpu")
    batched = TransformersDescriber(model=str(folder), max_new_tokens=4, device="cpu", batch_size=2)
    requests = [clip(frames, "three"), clip(frames[1:], "two", (0.0, 1.0)),
                DescribeRequest("still", frames[2:], "Describe the image.", None, False),
                DescribeRequest("still2", frames[:1], "Describe the image briefly.", None, False)]
    alone = [single.describe([r])[0] for r in requests]
    assert all(isinstance(text, str) for text in alone)
    assert batched.describe(requests) == alone
    assert single.describe(requests) == alone  # deterministic


def test_smolvlm_batches_videos_of_one_length_so_each_prompt_counts_its_own_frames(folders, frames):
    """SmolVLM's processor writes a batch's padded frame count into every video's prompt: a two-frame clip
    batched with a three-frame one was told of "three frames". Videos are batched by frame count instead."""
    describer = TransformersDescriber(model=str(folders("smolvlm")), max_new_tokens=4, device="cpu", batch_size=2)
    calls = spy(describer)
    requests = [clip(frames, "a3"), clip(frames[1:], "b2", (0.0, 1.0)), clip(frames, "c3"),
                clip(frames[:2], "d2", (0.0, 1.0))]
    batched = describer.describe(requests)
    assert [[len(video[0]) for video in call["videos"]] for call in calls] == [[3, 3], [2, 2]]
    single = TransformersDescriber(model=str(folders("smolvlm")), max_new_tokens=4, device="cpu")
    assert batched == [single.describe([request])[0] for request in requests]
    engine = describer._engine
    for pair, count in (([requests[1], requests[3]], "two"), ([requests[0], requests[2]], "three")):
        prompts = engine.processor.tokenizer.batch_decode(engine.inputs(pair)["input_ids"])
        assert all(f"series of {count} frames" in prompt for prompt in prompts)


@pytest.mark.parametrize("name", ALL)
def test_a_one_frame_clip_from_a_real_video_through_the_runner(folders, tmp_path, name):
    video = shutil.copy(example_videos()[0], tmp_path / "v.mp4")
    describer = TransformersDescriber(model=str(folders(name)), max_new_tokens=3, device="cpu")
    calls = spy(describer)
    items = [Item("one-frame", video, window=(5, 5)), Item("whole", video)]
    summary = describe_items(describer, items, tmp_path / "cache", prompt="Describe.", fps=1.0,
                             run=RunOptions(show_progress=False, verbose=False))
    assert summary.done + summary.failed == 2
    records = [json.loads(line) for line in (summary.folder / "descriptions.jsonl").read_text().splitlines()]
    assert all(r["text"].strip() for r in records) and len(records) == summary.done
    # a random tiny model may answer nothing: that item fails as an empty answer, never as anything else
    assert set(summary.failures.values()) <= {"the describer gave an empty answer"}
    sizes = sorted(len(c["videos"][0][0]) if "videos" in c else len(c["images"][0]) for c in calls)
    assert sizes == [2, 7]  # frames [0, 0] of the 1-frame clip; 60 frames at 10 fps, 1 fps: n = 7


@pytest.mark.parametrize("name", BOS_IN_TEMPLATE)
def test_one_bos_exactly_as_apply_chat_template_tokenizes(folders, frames, name):
    describer = TransformersDescriber(model=str(folders(name)), max_new_tokens=2, device="cpu")
    engine = describer.load()._engine
    tokenizer = engine.processor.tokenizer
    bos = tokenizer.bos_token_id
    assert tokenizer("x").input_ids[0] == bos  # the tokenizer adds BOS on its own ...
    request = clip(frames[:2], times=(0.0, 1.0))
    assert describer.render_prompt(request).startswith(tokenizer.bos_token)  # ... and so does the template
    ids = engine.inputs([request])["input_ids"][0].tolist()
    assert ids[0] == bos and ids[1] != bos and ids.count(bos) == 1
    conversation = engine.conversation(request)
    images = iter(request.frames)
    for message in conversation:
        for part in message["content"]:
            if part["type"] == "image":
                part["image"] = next(images)
    reference = engine.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True,
                                                     return_dict=True)["input_ids"]
    assert ids == list(reference[0] if isinstance(reference[0], list) else reference)
