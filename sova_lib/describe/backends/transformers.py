"""Describe images and videos with a local Hugging Face vision-language model.

``TransformersDescriber`` (registered as the ``transformers`` backend) has two
paths, chosen by ``family``:

``"image-text-to-text"`` (the default)
    The models that transformers supports natively through ``AutoProcessor`` +
    ``AutoModelForImageTextToText``: Qwen2-VL, Qwen2.5-VL, Qwen3-VL,
    InternVL3.5 in its ``-hf`` form, LLaVA-OneVision, Video-LLaVA-hf, LLaVA
    and the like. Each request becomes one chat: the system prompt as a system
    message, then a user turn holding the visual input and the instruction,
    rendered with the processor's own chat template (a request with text
    ``parts`` holds one text entry per part, the visual input before part
    ``media_at``). A video is passed as a
    video (its list of frames) together with its timestamps, and with
    ``do_sample_frames=False``, so the processor neither resamples the frames
    nor guesses their times (see ``video_metadata``). Decoding is greedy
    (``do_sample=False``, ``num_beams=1``) for at most ``max_new_tokens`` new
    tokens; other settings in the model's own ``generation_config.json`` (a
    ``repetition_penalty``, for instance) apply, as they do in vLLM, unless
    ``generate_kwargs`` overrides them. Only the new tokens are decoded, without
    special tokens.

``"minicpm-v"``
    The remote-code chat API of MiniCPM-V (``openbmb/MiniCPM-V-4_5``, the
    paper's best describer): see ``sova_lib.describe.backends.minicpm``. Chosen
    automatically for ``openbmb/MiniCPM-V*`` ids and for folders whose
    ``config.json`` says ``"model_type": "minicpmv"``.

Video input, batching and what each family needs:

* ``video_input="auto"`` passes videos as videos when the processor has a
  video processor, else as their frames, one image each in time order (the
  only way an image-only model such as LLaVA-1.5 can see a clip).
  ``"video"`` and ``"images"`` force one or the other.
* Video processors in transformers 5 need ``torchvision``; without it the
  processors of video-capable families (Qwen-VL, LLaVA-OneVision,
  InternVL-hf, ...) do not even load. The error says so.
* Qwen-VL's frame budget: ``cap_pixels_per_frame=True`` (the default) asks
  the video processors that take it (Qwen2-VL, Qwen2.5-VL and Qwen3-VL in
  transformers 5.2x) to size frames as the Qwen-VL reference processing
  (qwen-vl-utils) does: besides the processor's own per-frame bounds
  (``size``: ``shortest_edge`` / ``longest_edge``, the ``min_pixels`` /
  ``max_pixels`` of ``processor_kwargs``), each frame gets at most an even
  share of one video's pixel budget (Qwen2/2.5-VL: ``max_video_tokens`` =
  128000 tokens' pixels x 0.9, two frames per temporal patch;
  qwen-vl-utils' ``VIDEO_TOTAL_PIXELS``), so a long clip at 1 fps shrinks
  its frames instead of growing without bound. ``False`` keeps every frame
  at the per-frame bound alone. The frame cap of the reference processing
  (``FPS_MAX_FRAMES`` = 768) is ``--max-frames 768`` here: the frames come
  from the paper's sampler, not the processor's. The values a run used are
  in its manifest (``run.video_pixels``); docs/gpu.md has the numbers.
* ``batch_size > 1`` generates a batch at once with left padding. Qwen2-VL,
  Qwen2-VL, Qwen2.5-VL and Qwen3-VL flatten visual patches, so clips with
  different frame counts share a batch; other families batch a video only
  with videos of the same frame count (see ``_ImageTextToText._groups``): their
  processors pad a batch's videos to its longest, which changes SmolVLM2's
  prompt and which LLaVA-OneVision and Video-LLaVA cannot batch at all.
  When a batch fails and its items then succeed one at a time, the describer
  keeps going one at a time for that kind of input (and logs it once). The
  MiniCPM-V chat path describes one item at a time.

Defaults: ``dtype="auto"`` is bfloat16 on a GPU and float32 on the CPU;
``device="auto"`` is ``cuda`` when available, else ``cpu``. The model loads on
the first ``describe`` call (or ``load()``), so ``config()`` is cheap. Which
family, commit, device and dtype a model gets, and the advice when it does not
load, come from ``sova_lib.describe.backends.transformers_models``.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from sova_lib.describe.backends.minicpm import MiniCPMVChat
from sova_lib.describe.backends.transformers_models import (
    explain_load_error,
    preflight,
    resolve_device,
    resolve_dtype,
    resolve_family,
    resolve_revision,
    weights_fingerprint,
)
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest, given_options, option
from sova_lib.fingerprint import local_folder
from sova_lib.hub import offline_mode
from sova_lib.video.frames import to_rgb_image

__all__ = ["TransformersDescriber", "TransformersOptions", "video_metadata"]

logger = logging.getLogger(__name__)

_VIDEO_INPUTS = ("auto", "video", "images")
#: Model types whose processors flatten each video into patches with its own grid (``video_grid_thw``): videos
#: of different frame counts share a batch and give the answers they give alone.
MIXED_LENGTH_VIDEOS = frozenset({"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"})


def video_metadata(timestamps: Sequence[float], width: int, height: int) -> dict:
    """Video metadata for already sampled frames, in the form transformers' processors read.

    ``timestamps`` are the frames' times in seconds. They are written on a
    millisecond clock: ``fps=1000`` and ``frames_indices`` = round(1000 * t),
    so ``frames_indices / fps`` gives each frame's time back (to 1 ms) for the
    processors that print times into the prompt (Qwen3-VL). The clip is taken
    to last until one frame interval (the median spacing) after its last
    frame, so ``n / duration`` = 1 / spacing is the sampling rate that
    Qwen2.5-VL turns into its temporal position step. Without timestamps the
    frames are taken as one second apart (the paper's default rate), with a
    warning. Repeated times (the sampler's repeated frames) are allowed and
    kept; decreasing ones are not.
    """
    times = [float(t) for t in timestamps]
    gaps = [b - a for a, b in zip(times, times[1:])]
    if any(gap < 0 for gap in gaps):
        raise ValueError(f"frame timestamps must not decrease; got {times}")
    # The paper's sampler repeats frames when it asks for more than the clip has (a 1-frame clip gives
    # frames [0, 0]; a rate above the video's): repeats are shown as sampled, and the spacing is that of
    # the distinct times (1 s when there is only one).
    steps = sorted(gap for gap in gaps if gap > 0)
    step = steps[len(steps) // 2] if steps else 1.0
    indices = [int(round(t * 1000.0)) for t in times]
    total = max(int(round((times[-1] + step) * 1000.0)) if times else 1000, indices[-1] + 1 if indices else 1)
    return {"total_num_frames": total, "fps": 1000.0, "duration": total / 1000.0, "frames_indices": indices,
            "width": width, "height": height}


@dataclass(frozen=True)
class TransformersOptions:
    """The options of the transformers describer (``sova_lib.describe.contract.backend_options``)."""

    model: str = option(help="hub id (Qwen/Qwen2.5-VL-7B-Instruct) or local folder", flag="NAME")
    revision: str | None = option(None, "branch, tag or commit; the manifest records the commit when known")
    max_new_tokens: int = option(1024, "answer length limit in tokens", flag="N")
    dtype: str = option("auto", "auto (bfloat16 on GPU, float32 on CPU), bfloat16, float16 or float32")
    device: str = option("auto", "auto, cpu, cuda, cuda:1, ...")
    batch_size: int = option(1, "items the model takes per call, on either engine; not part of the cache key, so a "
                                "run resumes with another batch size (e.g. a lower one after running out of memory)",
                             flag="N")
    family: str | None = option(None, "image-text-to-text or minicpm-v; default from the model id")
    device_map: str | dict | None = option(None, "auto spreads a model too large for one GPU over every visible "
                                                 "GPU (accelerate); also balanced, sequential or a JSON object as "
                                                 "from_pretrained takes it; overrides device", flag="MAP")
    trust_remote_code: bool | None = option(None, "run the model's own code (default: true for MiniCPM-V only)")
    attn_implementation: str | None = option(None, "e.g. sdpa or flash_attention_2; default: the library's choice")
    processor_kwargs: dict | None = option(None, "a JSON object passed to AutoProcessor.from_pretrained (e.g. "
                                                 "{\"max_pixels\": 401408})")
    video_input: str = option("auto", "auto, video or images (how a video reaches the processor)")
    cap_pixels_per_frame: bool = option(True, "the Qwen-VL reference's pixel budget per video")
    frame_packing: int | None = option(None, "MiniCPM-V only: frames its resampler compresses together (sends "
                                             "their temporal ids)")
    generate_kwargs: dict | None = option(None, "a JSON object of extra keyword arguments for generate (or "
                                                "MiniCPM-V's chat)")
    cache_dir: str | None = option(None, "a Hugging Face cache folder other than the default")


class TransformersDescriber:
    """A local Hugging Face vision-language model behind the describer contract.

    ``options``: ``TransformersOptions`` (those of ``sova describe --backend transformers``), or its fields as
    keywords. ``device_map`` overrides ``device``; ``video_input`` and ``cap_pixels_per_frame`` are the module docstring's;
    ``frame_packing`` is ``sova_lib.describe.backends.minicpm``'s.
    """

    name = "transformers"
    max_concurrency = 1
    Options = TransformersOptions

    def __init__(self, options: TransformersOptions | None = None, **given: Any):
        self.options = o = given_options(self.Options, options, given, "the transformers backend")
        if not o.model:
            raise ValueError("the transformers backend needs a model: a hub id or a local folder (--model)")
        for name, value in (("max_new_tokens", o.max_new_tokens), ("batch_size", o.batch_size)):
            if value is None or int(value) < 1:  # None: e.g. --backend-option batch_size=null
                raise ValueError(f"{name} must be at least 1, got {value}")
        if o.video_input not in _VIDEO_INPUTS:
            raise ValueError(f"video_input must be one of {list(_VIDEO_INPUTS)}, got {o.video_input!r}")
        self.model = str(local_folder(o.model) or o.model)  # a folder as one path, however it was spelled
        self.family = resolve_family(self.model, o.family)
        if self.family == "minicpm-v" and int(o.batch_size) != 1:
            raise ValueError("the MiniCPM-V chat path describes one item at a time: use batch_size=1 "
                             "(for throughput, serve the model with vLLM and use the openai backend)")
        if o.frame_packing is not None and self.family != "minicpm-v":
            raise ValueError("frame_packing applies to the MiniCPM-V chat path only")
        self.max_new_tokens = int(o.max_new_tokens)
        self.batch_size = self.max_batch_size = int(o.batch_size)
        self.device = resolve_device(o.device)
        self.dtype = resolve_dtype(o.dtype, self.device)
        self.trust_remote_code = (self.family == "minicpm-v") if o.trust_remote_code is None else bool(o.trust_remote_code)
        self._engine: Any = None
        #: set by ``stop()``, cleared by ``load()``: a generate in flight ends after its current step
        self.stopping = threading.Event()

    def config(self) -> dict:
        """Every setting that changes the text (hashed into the cache key); no secrets."""
        o = self.options
        config = {
            "backend": self.name,
            "model": self.model,
            "revision": resolve_revision(self.model, o.revision, o.cache_dir),
            "family": self.family,
            "dtype": self.dtype,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy" if self.family == "image-text-to-text" else "chat(sampling=False)",
            "video_input": o.video_input if self.family == "image-text-to-text" else "images",
        }
        if self.family == "image-text-to-text":  # a no-op for processors without it (run_info says which)
            config["cap_pixels_per_frame"] = bool(o.cap_pixels_per_frame)
        optional = {"processor_kwargs": dict(o.processor_kwargs or {}), "generate_kwargs": dict(o.generate_kwargs or {}),
                    "frame_packing": None if o.frame_packing is None else int(o.frame_packing),
                    "attn_implementation": o.attn_implementation}
        return {**config, **{k: v for k, v in optional.items() if v not in (None, {}, "")}}  # set ones only

    def fingerprint(self) -> dict:
        """What the weights are, for the cache key: a local folder's content digest, a hub id's commit
        (``transformers_models.weights_fingerprint``)."""
        return weights_fingerprint(self.model, self.options.revision, self.options.cache_dir)

    def run_info(self) -> dict:
        """How the model runs (manifest, not the cache key: batched answers equal one-at-a-time answers, so a run
        resumes with another batch size): batch size, device, device_map."""
        info: dict = {"batch_size": self.batch_size, "device": self.device}
        if self.options.device_map is not None:
            info["device_map"] = self.options.device_map
        model = getattr(self._engine, "model", None)
        if hasattr(model, "parameters"):
            info["devices_used"] = sorted({str(p.device) for p in model.parameters()})
        pixels = getattr(self._engine, "video_pixels", None)
        if pixels:
            info["video_pixels"] = pixels
        return info

    def load(self) -> "TransformersDescriber":
        """Load the model now (``describe`` does it on first use); the runner calls it before each run, which
        undoes a ``stop()`` of an earlier run."""
        self.stopping.clear()
        if self._engine is None:
            preflight(self.model, revision=self.options.revision, cache_dir=self.options.cache_dir)
            engine = MiniCPMVChat(self) if self.family == "minicpm-v" else _ImageTextToText(self)
            engine.load()
            self._engine = engine
        return self

    def render_prompt(self, request: DescribeRequest) -> str:
        """The chat-templated text of ``request`` as the model reads it (before visual tokens expand)."""
        return self.load()._engine.render([request])[0]

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        """One answer per request, in order (module docstring for batching)."""
        requests = list(requests)
        for request in requests:
            if not request.frames:
                raise ValueError(f"request {request.id!r} has no frames: give the video's frames or the image")
        return self.load()._engine.describe(requests)

    def stop(self) -> None:
        """End the run's calls early (the runner's ``stop()`` hook, on Ctrl-C or a stopped run): a ``generate`` in
        flight stops after its current decoding step and its call raises, so no cut-short answer is ever returned
        as a description. The next ``load()`` (the next run) clears it."""
        self.stopping.set()

    def out_of_memory(self, error: Exception, count: int) -> DescriberEnvironmentError:
        """The run's end when the device runs out of memory (either engine): every later item would too, so no item
        is blamed."""
        import torch

        torch.cuda.empty_cache()  # a no-op where CUDA never started
        detail = " ".join(str(error).split())[:200]
        return DescriberEnvironmentError(
            f"{self.model} ran out of memory on {self.device} describing {count} item(s) at once "
            f"(batch_size={self.batch_size}; {type(error).__name__}: {detail}): lower --batch-size, give "
            "fewer or smaller frames (--fps, or processor_kwargs max_pixels), use dtype=bfloat16, or spread the "
            "model over every GPU with --device-map auto")

    def from_pretrained_kwargs(self) -> dict:
        """Keyword arguments shared by every ``from_pretrained`` call of this describer."""
        return {"revision": self.options.revision, "trust_remote_code": self.trust_remote_code,
                "cache_dir": self.options.cache_dir or None, "local_files_only": offline_mode()}

    def load_error(self, what: str, error: Exception) -> Exception:
        """An error that says why ``what`` (e.g. ``"model"``) did not load and what to do."""
        o = self.options
        return explain_load_error(what, error, model=self.model, revision=o.revision, cache_dir=o.cache_dir,
                                  device=self.device if o.device_map is None else "the GPUs")


def _video_pixels(processor, cap: bool) -> dict:
    """How the video processor sizes frames: its per-frame bounds in pixels (``min_pixels``, ``max_pixels``: its
    ``size``), and, where it takes ``cap_pixels_per_frame`` (the Qwen-VL families), that setting and its
    ``max_video_tokens``; ``{}`` when it has no such sizes."""
    video = getattr(processor, "video_processor", None)
    size = getattr(video, "size", None) or {}
    size = dict(size) if not hasattr(size, "shortest_edge") else {"shortest_edge": size.shortest_edge,
                                                                   "longest_edge": size.longest_edge}
    found = {}
    if size.get("shortest_edge") is not None and size.get("longest_edge") is not None:
        found = {"min_pixels": int(size["shortest_edge"]), "max_pixels": int(size["longest_edge"])}
    if hasattr(video, "cap_pixels_per_frame"):
        found.update(cap_pixels_per_frame=cap, max_video_tokens=getattr(video, "max_video_tokens", None))
    return found


class _ImageTextToText:
    """The ``AutoProcessor`` + ``AutoModelForImageTextToText`` path (module docstring)."""

    def __init__(self, owner: TransformersDescriber):
        self.owner = owner
        self.processor: Any = None
        self.model: Any = None
        self.videos_as_videos = False
        #: how video frames are sized, once loaded: the video processor's bounds and budget (``video_pixels()``)
        self.video_pixels: dict = {}
        #: kind of input ("video" or "image") -> whether batching works for it
        self.can_batch = {"video": True, "image": True}

    def load(self) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        owner, o = self.owner, self.owner.options
        common = owner.from_pretrained_kwargs()
        try:
            self.processor = AutoProcessor.from_pretrained(owner.model, **common, **(o.processor_kwargs or {}))
        except Exception as error:
            raise owner.load_error("processor", error) from error
        tokenizer = getattr(self.processor, "tokenizer", None)
        if tokenizer is None:
            raise DescriberEnvironmentError(
                f"the processor of {owner.model!r} has no tokenizer: is it a vision-language model?")
        tokenizer.padding_side = "left"
        has_video = getattr(self.processor, "video_processor", None) is not None
        if o.video_input == "video" and not has_video:
            raise DescriberEnvironmentError(
                f"{owner.model!r} has no video processor: use video_input='images' or 'auto'")
        self.videos_as_videos = has_video and o.video_input != "images"
        self.video_pixels = _video_pixels(self.processor, bool(o.cap_pixels_per_frame)) if self.videos_as_videos else {}

        kwargs = dict(common, dtype=getattr(torch, owner.dtype), attn_implementation=o.attn_implementation or None)
        # accelerate (a dependency) places the weights: a device_map as given, or the one device off the CPU
        # (from_pretrained loads onto the CPU without one)
        if o.device_map is not None or owner.device != "cpu":
            kwargs["device_map"] = owner.device if o.device_map is None else o.device_map
        try:
            self.model = AutoModelForImageTextToText.from_pretrained(owner.model, **kwargs).eval()
        except Exception as error:
            raise owner.load_error("model", error) from error
        generation = self.model.generation_config
        if getattr(generation, "pad_token_id", None) is None:
            generation.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def _kind(self, request: DescribeRequest) -> str:
        return "video" if request.is_video and self.videos_as_videos else "image"

    def conversation(self, request: DescribeRequest) -> list[dict]:
        """System message (if any) + one user turn: the video or the images, then the instruction."""
        messages = []
        if request.system_prompt:
            messages.append({"role": "system", "content": [{"type": "text", "text": request.system_prompt}]})
        if self._kind(request) == "video":
            content = [{"type": "video"}]
        else:
            content = [{"type": "image"} for _ in request.frames]
        texts = [{"type": "text", "text": part} for part in request.parts or (request.prompt,)]
        at = request.media_at if request.parts else 0
        messages.append({"role": "user", "content": texts[:at] + content + texts[at:]})
        return messages

    def render(self, requests: Sequence[DescribeRequest]) -> list[str]:
        conversations = [self.conversation(request) for request in requests]
        return list(self.processor.apply_chat_template(conversations, add_generation_prompt=True, tokenize=False))

    def inputs(self, requests: Sequence[DescribeRequest]):
        """The processor's tensors for ``requests`` (one kind of input), on the model's device."""
        import torch

        texts = self.render(requests)
        kwargs: dict = {"text": texts, "padding": True, "return_tensors": "pt"}
        # As apply_chat_template(tokenize=True) does: a template that renders BOS itself must not get a
        # second one from the tokenizer (Gemma 3, Idefics3 and other Llama-style tokenizers add one).
        bos = getattr(self.processor.tokenizer, "bos_token", None)
        if bos and all(text.startswith(bos) for text in texts):
            kwargs["add_special_tokens"] = False
        frames = [[to_rgb_image(frame) for frame in request.frames] for request in requests]
        if self._kind(requests[0]) == "video":
            kwargs["videos"] = [[clip] for clip in frames]
            kwargs["video_metadata"] = [[video_metadata(request.timestamps or range(len(clip)), *clip[0].size)]
                                        for request, clip in zip(requests, frames)]
            kwargs["do_sample_frames"] = False
            if "cap_pixels_per_frame" in self.video_pixels:
                kwargs["cap_pixels_per_frame"] = self.video_pixels["cap_pixels_per_frame"]
            for request in requests:
                if request.is_video and not request.timestamps:
                    logger.warning("request %r carries no timestamps: its frames are taken as 1 s apart", request.id)
        else:
            kwargs["images"] = frames
        inputs = self.processor(**kwargs).to(self.model.device)
        for key, value in inputs.items():
            if key.startswith("pixel_values") and isinstance(value, torch.Tensor) and value.is_floating_point():
                inputs[key] = value.to(self.model.dtype)
        return inputs

    def generate(self, requests: Sequence[DescribeRequest]) -> list[str]:
        import torch
        from transformers import StoppingCriteriaList

        settings = {"do_sample": False, "num_beams": 1, "max_new_tokens": self.owner.max_new_tokens}
        settings.update(self.owner.options.generate_kwargs or {})

        def stopped(input_ids, scores, **kwargs):  # every sequence is done once the describer's stop() was called
            return torch.full((input_ids.shape[0],), self.owner.stopping.is_set(), dtype=torch.bool,
                              device=input_ids.device)

        settings["stopping_criteria"] = StoppingCriteriaList([*settings.get("stopping_criteria", ()), stopped])
        try:
            inputs = self.inputs(requests)
            with torch.inference_mode():
                output = self.model.generate(**inputs, **settings)
        except torch.OutOfMemoryError as error:
            raise self.owner.out_of_memory(error, len(requests)) from None
        if self.owner.stopping.is_set():  # the answers may be cut short: none of them is a description
            raise DescriberEnvironmentError(f"{self.owner.model}: the run was stopped")
        new_tokens = output[:, inputs["input_ids"].shape[1]:]
        texts = self.processor.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        return [text.strip() for text in texts]

    def describe(self, requests: list[DescribeRequest]) -> list[str]:
        answers: dict[int, str] = {}  # position -> answer
        for kind, positions in self._groups(requests):
            for start in range(0, len(positions), self.owner.batch_size):
                chunk = positions[start:start + self.owner.batch_size]
                answers.update(zip(chunk, self._describe_chunk(kind, [requests[i] for i in chunk])))
        return [answers[i] for i in range(len(requests))]

    def _groups(self, requests: list[DescribeRequest]) -> list[tuple[str, list[int]]]:
        """The positions that may share a batch: the images, and the videos of each frame count.

        Most processors pad a batch's videos to its longest. SmolVLM's then writes that padded count into every
        video's prompt ("series of three frames" before a two-frame clip: transformers 5.24,
        ``processing_smolvlm.py`` ``replace_video_token``, ``pixel_values.shape[1]``), and LLaVA-OneVision and
        Video-LLaVA stack a batch's videos into one tensor; videos of one length give these families the answers
        they give one at a time. The Qwen-VL families (``MIXED_LENGTH_VIDEOS``) flatten each video into patches
        with its own grid, so their videos of any length share a batch.
        """
        mixed = getattr(self.model.config, "model_type", None) in MIXED_LENGTH_VIDEOS
        groups: dict[tuple[str, int], list[int]] = {}
        for i, request in enumerate(requests):
            kind = self._kind(request)
            groups.setdefault((kind, len(request.frames) if kind == "video" and not mixed else 0), []).append(i)
        return [(kind, positions) for (kind, _), positions in groups.items()]

    def _describe_chunk(self, kind: str, chunk: list[DescribeRequest]) -> list[str]:
        if len(chunk) == 1 or not self.can_batch[kind]:
            return [text for request in chunk for text in self.generate([request])]
        try:
            return self.generate(chunk)
        except DescriberEnvironmentError:
            raise
        except Exception as error:
            batch_error = error
        # A failing batch: an item may be bad (then the single call below raises
        # and the runner records it) or the model cannot batch this input.
        texts = [text for request in chunk for text in self.generate([request])]
        self.can_batch[kind] = False
        logger.warning("%s cannot batch these %s inputs (%s: %s); describing them one at a time from now on",
                       self.owner.model, kind, type(batch_error).__name__, batch_error)
        return texts
