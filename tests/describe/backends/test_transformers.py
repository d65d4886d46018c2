"""Tests of the transformers describer backend (``sova_lib.describe.backends.transformers``, ``sova_lib.describe.backends.minicpm``).

The models here are tiny and randomly initialised (``tests/tiny_vlm.py``),
built offline and loaded from a folder exactly as a hub id would be. Their
text is noise: these tests check the wiring (prompts, frames, timestamps,
padding, decoding, determinism), never the quality of a description.

The LLaVA tests take a clip's frames as images; the Qwen-VL tests pass videos
as videos, through transformers' video processors (torchvision).
"""
from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sova_lib.describe.backends.minicpm import chat_arguments, temporal_ids  # noqa: E402
from sova_lib.describe.backends.transformers import TransformersDescriber, video_metadata  # noqa: E402
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest, make_describer  # noqa: E402
from tests.paths import DATA

FRAMES_DIR = DATA / "vtest_frames"
SYSTEM = "You are an expert video analysis model specialized in action recognition."
VIDEO_PROMPT = "Briefly classify the actions occurring in this video."
IMAGE_PROMPT = "Describe the image."
CONFIG_KEYS = {"backend", "model", "revision", "family", "dtype", "max_new_tokens", "decoding",
               "video_input", "cap_pixels_per_frame"}


@pytest.fixture(scope="module")
def frames():
    """Frames 0, 10, 20 of OpenCV's vtest.avi (10 fps): 0 s, 1 s, 2 s, as 64x48 RGB images."""
    from PIL import Image

    paths = sorted(FRAMES_DIR.glob("frame_*.png"))
    assert [p.name for p in paths] == ["frame_0000.png", "frame_0010.png", "frame_0020.png"]
    return [Image.open(p).convert("RGB") for p in paths]


@pytest.fixture(scope="module")
def requests(frames):
    """Two videos of different lengths (so a batch needs padding) and one image."""
    return [
        DescribeRequest(id="v3", frames=frames, prompt=VIDEO_PROMPT, system_prompt=SYSTEM, timestamps=(0.0, 1.0, 2.0)),
        DescribeRequest(id="v2", frames=frames[1:], prompt="Describe this video.", timestamps=(0.0, 1.0)),
        DescribeRequest(id="img", frames=frames[2:], prompt=IMAGE_PROMPT, is_video=False),
    ]


def _spy_generate(describer):
    """Record the inputs of every ``generate`` call of a loaded describer's model."""
    model = describer.load()._engine.model
    calls = []
    original = model.generate

    def generate(**inputs):
        calls.append(inputs)
        return original(**inputs)

    model.generate = generate
    return calls


# --- helpers that need no model -------------------------------------------

def test_video_metadata_puts_timestamps_on_a_millisecond_clock():
    from transformers.video_utils import VideoMetadata

    meta = video_metadata([0.0, 1.0, 2.0], width=64, height=48)
    assert meta == {"total_num_frames": 3000, "fps": 1000.0, "duration": 3.0, "frames_indices": [0, 1000, 2000],
                    "width": 64, "height": 48}
    # transformers reads it back as the same times and a 1 frame/s sampling rate
    parsed = VideoMetadata(**meta)
    assert parsed.timestamps == [0.0, 1.0, 2.0] and parsed.sampled_fps == pytest.approx(1.0)


def test_video_metadata_keeps_uneven_times_of_the_papers_sampler():
    import numpy as np

    # 95 frames at 10 fps sampled at 1 fps: n = round(9.5) + 1 = 11 frames at rint(linspace(0, 94, 11))
    indices = np.rint(np.linspace(0, 94, 11)).astype(int)
    times = (indices / 10).tolist()
    assert indices.tolist() == [0, 9, 19, 28, 38, 47, 56, 66, 75, 85, 94]
    meta = video_metadata(times, width=8, height=8)
    assert [i / meta["fps"] for i in meta["frames_indices"]] == pytest.approx(times, abs=1e-9)
    assert meta["total_num_frames"] == 10300  # last frame at 9.4 s + the median gap of 0.9 s, in ms
    with pytest.raises(ValueError, match="must not decrease"):
        video_metadata([1.0, 1.0, 0.5], width=8, height=8)


def test_video_metadata_keeps_the_samplers_repeated_frames():
    # a 1-frame clip: the sampler gives frames [0, 0]; spacing unknown, so 1 s
    assert video_metadata([0.0, 0.0], width=8, height=8)["frames_indices"] == [0, 0]
    assert video_metadata([0.0, 0.0], width=8, height=8)["total_num_frames"] == 1000
    # F = 3 at 10 fps sampled at 30 fps: [0, 0, 0, 1, 1, 1, 1, 2, 2, 2] / 10; distinct spacing 0.1 s
    times = [i / 10 for i in [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]]
    meta = video_metadata(times, width=8, height=8)
    assert meta["frames_indices"] == [0, 0, 0, 100, 100, 100, 100, 200, 200, 200]
    assert meta["total_num_frames"] == 300 and meta["duration"] == 0.3


def test_config_without_loading_and_option_checks():
    describer = make_describer("transformers", model="Qwen/Qwen2.5-VL-7B-Instruct", max_new_tokens=64,
                               device="cpu", batch_size=4)
    config = describer.config()
    assert set(config) == CONFIG_KEYS
    assert config["model"] == "Qwen/Qwen2.5-VL-7B-Instruct" and config["dtype"] == "float32"
    assert config["max_new_tokens"] == 64 and config["family"] == "image-text-to-text"
    assert describer.run_info()["batch_size"] == 4  # recorded per run, outside the key: a run resumes with another
    assert describer.max_batch_size == 4 and describer.max_concurrency == 1 and describer._engine is None
    assert TransformersDescriber(model="m/x", device="cuda").dtype == "bfloat16"
    default = TransformersDescriber(model="m/x", device="cpu")
    assert (default.max_new_tokens, default.batch_size, default.dtype) == (1024, 1, "float32")
    assert TransformersDescriber(model="m/x", device="cuda", dtype="float16").config()["dtype"] == "float16"
    minicpm = TransformersDescriber(model="openbmb/MiniCPM-V-4_5", device="cpu", frame_packing=3)
    assert minicpm.config()["family"] == "minicpm-v" and minicpm.config()["frame_packing"] == 3
    assert minicpm.trust_remote_code is True
    for bad, match in [({"dtype": "int8"}, "dtype"), ({"batch_size": 0}, "batch_size"),
                       ({"max_new_tokens": 0}, "max_new_tokens"), ({"video_input": "gif"}, "video_input"),
                       ({"frame_packing": 2}, "MiniCPM-V")]:
        with pytest.raises(ValueError, match=match):
            TransformersDescriber(model="m/x", device="cpu", **bad)
    with pytest.raises(ValueError, match="one item at a time"):
        TransformersDescriber(model="openbmb/MiniCPM-V-4_5", device="cpu", batch_size=2)


def test_model_missing_offline_says_what_to_do(tmp_path, monkeypatch, frames):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    describer = TransformersDescriber(model="sova-tests/not-in-any-cache", device="cpu", cache_dir=str(tmp_path))
    with pytest.raises(OSError) as error:
        describer.describe([DescribeRequest(id=1, frames=frames[:1], prompt=IMAGE_PROMPT, is_video=False)])
    message = str(error.value)
    assert "sova-tests/not-in-any-cache" in message and "HF_HUB_OFFLINE=1" in message
    assert "hf download sova-tests/not-in-any-cache" in message and str(tmp_path) in message
    with pytest.raises(DescriberEnvironmentError, match=r"\(path\).*Fix: no usable model folder"):
        TransformersDescriber(model=str(tmp_path / "nowhere"), device="cpu").load()


def test_a_request_without_frames_is_refused():
    with pytest.raises(ValueError, match="no frames"):
        TransformersDescriber(model="m/x", device="cpu").describe([DescribeRequest(id=7, frames=[], prompt="x")])


# --- a real (tiny) LLaVA on the CPU: videos reach it as their frames ------

@pytest.fixture(scope="module")
def llava_folder(tmp_path_factory):
    from tests.tiny_vlm import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


@pytest.fixture(scope="module")
def llava(llava_folder):
    return TransformersDescriber(model=str(llava_folder), max_new_tokens=6, device="cpu").load()


def test_llava_answers_every_request_deterministically(llava, requests):
    first = llava.describe(requests)
    assert len(first) == 3 and all(isinstance(text, str) and text for text in first)
    assert llava.describe(requests) == first
    assert llava.describe(requests[::-1]) == first[::-1]


def test_llava_batch_of_two_equals_one_at_a_time(llava_folder, llava, requests):
    batched = TransformersDescriber(model=str(llava_folder), max_new_tokens=6, device="cpu", batch_size=2)
    calls = _spy_generate(batched)
    # two image-kind requests of different lengths (3 frames + system prompt, 2 frames) share one batch
    assert batched.describe(requests[:2]) == llava.describe(requests[:2])
    assert len(calls) == 1 and calls[0]["input_ids"].shape[0] == 2
    mask = calls[0]["attention_mask"]
    assert mask[1, 0] == 0 and mask[:, -1].tolist() == [1, 1]  # the shorter prompt is padded on the left


def test_llava_prompt_reaching_the_model(llava, requests):
    assert llava.render_prompt(requests[0]) == (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        f"<|im_start|>user\n<image><image><image>{VIDEO_PROMPT}<|im_end|>\n<|im_start|>assistant\n")
    calls = _spy_generate(llava)
    llava.describe(requests[:1])
    tokenizer = llava._engine.processor.tokenizer
    ids = calls[0]["input_ids"][0].tolist()
    text = tokenizer.decode(ids)
    assert f"<|im_start|>system\n{SYSTEM}<|im_end|>" in text and f"{VIDEO_PROMPT}<|im_end|>" in text
    assert ids.count(tokenizer.convert_tokens_to_ids("<image>")) == 3 * 16  # three frames of 16 patches
    assert tuple(calls[0]["pixel_values"].shape) == (3, 3, 32, 32)
    assert calls[0]["do_sample"] is False and calls[0]["max_new_tokens"] == 6


def test_llava_image_request_has_no_system_message(llava, requests):
    image = requests[2]
    assert llava.render_prompt(image) == (
        f"<|im_start|>user\n<image>{IMAGE_PROMPT}<|im_end|>\n<|im_start|>assistant\n")
    [text] = llava.describe([image])
    assert isinstance(text, str) and text == llava.describe([image])[0]


def test_llava_cannot_take_videos_as_videos(llava_folder):
    with pytest.raises(DescriberEnvironmentError, match="no video processor"):
        TransformersDescriber(model=str(llava_folder), device="cpu", video_input="video").load()


def test_running_out_of_memory_while_describing_stops_the_run(llava_folder, tmp_path):
    """An out-of-memory error in ``generate`` (a batch too large for the GPU) ends the run as an environment
    error, one line with the fix, before any item is recorded as failed: every later item would fail the same."""
    import torch

    from sova_lib.describe.item import Item
    from sova_lib.describe.run_cache import RunOptions
    from sova_lib.describe.runner import describe_items

    describer = TransformersDescriber(model=str(llava_folder), max_new_tokens=2, device="cpu", batch_size=2)
    model = describer.load()._engine.model

    def out_of_memory(**inputs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 139.80 GiB total)")

    model.generate = out_of_memory
    frames = sorted(FRAMES_DIR.glob("frame_*.png"))
    items = [Item(f"still{k}", str(path)) for k, path in enumerate(frames)]
    with pytest.raises(DescriberEnvironmentError) as stopped:
        describe_items(describer, items, tmp_path / "cache", prompt=IMAGE_PROMPT,
                       run=RunOptions(show_progress=False, verbose=False))
    message = str(stopped.value)
    assert "\n" not in message  # the runner takes what its loaders have ready: one item or two
    assert re.match(re.escape(f"{llava_folder} ran out of memory on cpu describing ") + r"[12] item\(s\) at once "
                    r"\(batch_size=2; OutOfMemoryError: CUDA out of memory\.", message), message
    assert message.endswith("lower --batch-size, give fewer or smaller frames (--fps, or processor_kwargs "
                            "max_pixels), use dtype=bfloat16, or spread the model over every GPU with --device-map "
                            "auto")
    assert [p.read_text() for p in (tmp_path / "cache").rglob("errors.jsonl")] in ([], [""])  # no item blamed


# --- real (tiny) Qwen-VL models: videos as videos, with their timestamps ---

@pytest.fixture(scope="module")
def qwen25_folder(tmp_path_factory):
    from tests.tiny_vlm import build_tiny_qwen2_5_vl

    return build_tiny_qwen2_5_vl(tmp_path_factory.mktemp("tiny-qwen2.5-vl"))


def test_qwen2_5_vl_batches_videos_of_different_lengths(qwen25_folder, requests):
    single = TransformersDescriber(model=str(qwen25_folder), max_new_tokens=6, device="cpu")
    batched = TransformersDescriber(model=str(qwen25_folder), max_new_tokens=6, device="cpu", batch_size=2)
    calls = _spy_generate(batched)
    first = single.describe(requests)
    assert len(first) == 3 and all(isinstance(text, str) and text for text in first)
    assert single.describe(requests) == first
    assert batched.describe(requests) == first
    video_call, image_call = calls
    assert video_call["input_ids"].shape[0] == 2 and video_call["attention_mask"][1, 0] == 0
    # 3 frames (padded to 4) and 2 frames, 2-frame temporal patches of 4x4 patches: (2 + 1) * 16 rows
    assert video_call["video_grid_thw"].tolist() == [[2, 4, 4], [1, 4, 4]]
    assert tuple(video_call["pixel_values_videos"].shape) == (48, 3 * 2 * 14 * 14)
    # the frames are 1 s apart, so each 2-frame patch spans 2 s (not resampled, not guessed)
    assert video_call["second_per_grid_ts"].tolist() == [2.0, 2.0]
    assert image_call["image_grid_thw"].tolist() == [[1, 4, 4]]


def test_qwen3_vl_sees_the_requests_timestamps(tmp_path_factory, frames):
    from tests.tiny_vlm import build_tiny_qwen3_vl

    folder = build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny-qwen3-vl"))
    describer = TransformersDescriber(model=str(folder), max_new_tokens=4, device="cpu")
    calls = _spy_generate(describer)
    clip = DescribeRequest(id="late", frames=frames, prompt=VIDEO_PROMPT, system_prompt=SYSTEM,
                           timestamps=(4.0, 6.0, 8.0))
    [text] = describer.describe([clip])
    assert isinstance(text, str)
    prompt = describer._engine.processor.tokenizer.decode(calls[0]["input_ids"][0])
    # Qwen3-VL prints the mean time of each 2-frame patch: (4 + 6) / 2 and (8 + 8) / 2
    assert "<5.0 seconds>" in prompt and "<8.0 seconds>" in prompt and "<0.5 seconds>" not in prompt
    assert SYSTEM in prompt and VIDEO_PROMPT in prompt
    assert calls[0]["video_grid_thw"].tolist() == [[2, 2, 2]]  # all 3 frames kept (no resampling)


# --- MiniCPM-V chat path: the wiring, checked with a fake model -----------

class FakeMiniCPMV:
    """A stand-in for MiniCPM-V's remote-code model: records ``chat`` calls, answers a fixed text."""

    def __init__(self):
        self.calls = []
        self.moved_to = None

    def eval(self):
        return self

    def to(self, device):
        self.moved_to = device
        return self

    def chat(self, **kwargs):
        self.calls.append(kwargs)
        return f"  fake answer {len(self.calls)}\n"


class FakeTokenizer:
    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        assert tokenize is False and add_generation_prompt is True
        return "|".join(f"{m['role']}:{m['content']}" for m in messages)


@pytest.fixture()
def fake_minicpm(monkeypatch):
    import transformers

    fake, loads = FakeMiniCPMV(), []

    def loader(result):
        def from_pretrained(model, **kwargs):
            loads.append((result, model, kwargs))
            return {"model": fake, "tokenizer": FakeTokenizer(), "processor": "fake processor"}[result]
        return from_pretrained

    for name, result in [("AutoModel", "model"), ("AutoTokenizer", "tokenizer"), ("AutoProcessor", "processor")]:
        monkeypatch.setattr(getattr(transformers, name), "from_pretrained", loader(result))
    # the id is not in any local cache: skip the check that would stop it before from_pretrained
    monkeypatch.setattr("sova_lib.describe.backends.transformers.preflight", lambda *args, **kwargs: None)
    return fake, loads


def test_minicpm_v_chat_wiring_with_a_fake_model(fake_minicpm, requests, frames):
    import torch

    fake, loads = fake_minicpm
    describer = make_describer("transformers", model="openbmb/MiniCPM-V-4_5", revision="r1", max_new_tokens=1024,
                               device="cpu")
    assert describer.family == "minicpm-v"
    assert describer.describe(requests) == ["fake answer 1", "fake answer 2", "fake answer 3"]
    assert [load[0] for load in loads] == ["model", "tokenizer", "processor"]
    for _, model, kwargs in loads:
        assert model == "openbmb/MiniCPM-V-4_5" and kwargs["revision"] == "r1" and kwargs["trust_remote_code"] is True
    assert loads[0][2]["dtype"] is torch.float32 and loads[0][2]["attn_implementation"] == "sdpa"
    assert fake.moved_to == "cpu"

    video, short, image = fake.calls
    assert video["msgs"] == [{"role": "user", "content": [*frames, VIDEO_PROMPT]}]
    assert video["system_prompt"] == SYSTEM and video["sampling"] is False and video["max_new_tokens"] == 1024
    assert video["use_image_id"] is False and video["max_slice_nums"] == 1 and "temporal_ids" not in video
    assert video["processor"] == "fake processor" and isinstance(video["tokenizer"], FakeTokenizer)
    assert short["system_prompt"] == "" and len(short["msgs"][0]["content"]) == 3
    assert image["msgs"][0]["content"] == [frames[2], IMAGE_PROMPT]
    assert "use_image_id" not in image and "max_slice_nums" not in image

    assert describer.render_prompt(requests[0]) == (
        f"system:{SYSTEM}|user:(<image>./</image>)\n(<image>./</image>)\n(<image>./</image>)\n{VIDEO_PROMPT}")


def test_minicpm_v_frame_packing_and_generate_kwargs(fake_minicpm, requests):
    fake, _ = fake_minicpm
    describer = TransformersDescriber(model="openbmb/MiniCPM-V-4_5", device="cpu", frame_packing=2,
                                      generate_kwargs={"num_beams": 1, "repetition_penalty": 1.0})
    describer.describe(requests[:1])
    [call] = fake.calls
    assert call["temporal_ids"] == [[0, 10], [20]]
    assert call["num_beams"] == 1 and call["repetition_penalty"] == 1.0
    assert describer.config()["generate_kwargs"] == {"num_beams": 1, "repetition_penalty": 1.0}


def test_minicpm_v_running_out_of_memory_stops_the_run(fake_minicpm, requests):
    import torch

    fake, _ = fake_minicpm

    def out_of_memory(**kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

    fake.chat = out_of_memory
    describer = TransformersDescriber(model="openbmb/MiniCPM-V-4_5", device="cpu")
    with pytest.raises(DescriberEnvironmentError) as stopped:
        describer.describe(requests)
    assert str(stopped.value) == (
        "openbmb/MiniCPM-V-4_5 ran out of memory on cpu describing 1 item(s) at once (batch_size=1; OutOfMemoryError: "
        "CUDA out of memory. Tried to allocate 8.00 GiB): lower --batch-size, give fewer or smaller frames (--fps, or "
        "processor_kwargs max_pixels), use dtype=bfloat16, or spread the model over every GPU with --device-map auto")


def test_temporal_ids_on_the_tenth_of_a_second_scale(requests):
    assert temporal_ids([0.0, 1.0, 2.0, 3.0, 4.05], 2) == [[0, 10], [20, 30], [40]]
    assert temporal_ids([0.25, 0.5], 1) == [[2], [5]]
    with pytest.raises(ValueError):
        temporal_ids([0.0], 0)
    arguments = chat_arguments(requests[1], 16, frame_packing=3)
    assert arguments["temporal_ids"] == [[0, 10]] and arguments["max_new_tokens"] == 16


def test_a_model_that_cannot_batch_falls_back_to_one_at_a_time(llava_folder, llava, requests):
    describer = TransformersDescriber(model=str(llava_folder), max_new_tokens=6, device="cpu", batch_size=2).load()
    engine = describer._engine
    generate, sizes = engine.generate, []

    def no_batches(chunk):
        sizes.append(len(chunk))
        if len(chunk) > 1:
            raise ValueError("cannot stack videos of different lengths")
        if chunk[0].id == "broken":
            raise RuntimeError("a bad item")
        return generate(chunk)

    engine.generate = no_batches
    assert describer.describe(requests[:2]) == llava.describe(requests[:2])
    assert sizes == [2, 1, 1] and engine.can_batch == {"video": True, "image": False}
    assert describer.describe(requests[:2]) == llava.describe(requests[:2]) and sizes[3:] == [1, 1]
    # an item that fails alone still raises, so the runner can record it
    engine.can_batch["image"] = True
    broken = DescribeRequest(id="broken", frames=requests[0].frames, prompt="x")
    with pytest.raises(RuntimeError, match="a bad item"):
        describer.describe([requests[0], broken])
    assert engine.can_batch["image"] is True


def test_device_map_auto_loads_through_accelerate_and_answers_the_same(llava_folder, llava, requests):
    spread = TransformersDescriber(model=str(llava_folder), max_new_tokens=6, device="cpu", device_map="auto")
    assert "device_map" not in spread.config()  # where the weights sit does not change the text's key
    assert spread.describe(requests) == llava.describe(requests)
    info = spread.run_info()
    assert info["device_map"] == "auto" and info["devices_used"] == ["cpu"]


@pytest.mark.parametrize(("option", "value"), [("batch_size", None), ("batch_size", 0), ("max_new_tokens", None),
                                               ("max_new_tokens", -1)])
def test_a_count_below_1_or_null_is_refused_in_one_line(option, value):
    with pytest.raises(ValueError, match=f"^{option} must be at least 1, got {value}$"):
        TransformersDescriber(model="some/model", **{option: value})


def test_qwen2_5_vl_applies_the_reference_pixel_budget_and_records_it(qwen25_folder, frames, tmp_path):
    """Six 64x48 frames of a tiny Qwen2.5-VL (28..3136 pixels a frame) and a budget of 4 tokens per video.

    Uncapped: 48x64 rounds to 56x56 (3136 pixels, within the bound): a 3 x 4 x 4 grid. Capped as qwen-vl-utils
    caps: the budget is int(4 * 28 * 28 * 0.9) = 2822 pixels, two frames a temporal patch, so a frame may have
    max(min(3136, 2822 * 2 // 6), int(784 * 1.05)) = 940 pixels: 48x64 shrinks to 28x28, a 3 x 2 x 2 grid.
    """
    import json

    from sova_lib.describe.item import Item
    from sova_lib.describe.run_cache import RunOptions
    from sova_lib.describe.runner import describe_items
    from sova_lib.video import example_videos

    request = DescribeRequest(id="v", frames=frames * 2, prompt=VIDEO_PROMPT, timestamps=(0.0, 1.0, 2.0, 3.0, 4.0, 5.0))
    grids = {}
    for cap in (True, False):
        describer = TransformersDescriber(model=str(qwen25_folder), max_new_tokens=1, device="cpu",
                                          cap_pixels_per_frame=cap, processor_kwargs={"max_video_tokens": 4})
        grids[cap] = describer.load()._engine.inputs([request])["video_grid_thw"].tolist()
        assert describer.config()["cap_pixels_per_frame"] is cap
        assert describer.run_info()["video_pixels"] == {"min_pixels": 784, "max_pixels": 3136,
                                                        "cap_pixels_per_frame": cap, "max_video_tokens": 4}
    assert grids == {True: [[3, 2, 2]], False: [[3, 4, 4]]}

    default = TransformersDescriber(model=str(qwen25_folder), max_new_tokens=1, device="cpu")
    video = next(p for p in example_videos() if "lawn" in p.name)
    summary = describe_items(default, [Item("lawn", video)], tmp_path, prompt="general",
                             run=RunOptions(show_progress=False, verbose=False))
    manifest = json.loads((summary.folder / "manifest.json").read_text())
    assert manifest["describer"]["cap_pixels_per_frame"] is True  # on by default, and in the key
    assert manifest["run"]["video_pixels"] == {"min_pixels": 784, "max_pixels": 3136, "cap_pixels_per_frame": True,
                                               "max_video_tokens": 128000}
