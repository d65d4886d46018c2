"""Prompts and frame plans of the VANTAGE-Bench tasks, and a describer backend run over their items, caching the
raw answers like descriptions.

``describe_task(describer, task, items, cache_dir, media_root=...)`` renders
each item's prompt (``render_prompt``), loads its images in order
(``load_media``) and drives the one runner loop
(``sova_lib.describe.runner.describe_items``), so resuming, concurrency,
error records and the manifest are the same as for descriptions. The cache
key covers the backend and its config, the task, its instruction text and
the frame plan (the folder's hash); each cache line's id is
``<item id>@<first 12 hex digits of the rendered prompt's SHA-256>``, so an
item whose prompt changed is asked again and never reuses an old answer.
``cached_answers`` reads the answers back by item id.

Images per task: a video task sends ``n_frames`` frames at
``uniform_frame_plan`` (in time order) of the file its TSV names, found as
the harness's loader finds it (``inputs.video_file``: a temporal stem gets
``.mp4``) under ``media_root``, the folder of the task's videos; an image task sends its image;
tracking sends the target cut out of frame 0, frame 0 with the target boxed,
then frames 1 .. N-1.

``render_prompt(item, n_frames)`` gives the text sent
with an item's images. The instruction texts below are this library's
wording of each task's answer format (spec section 1); the harness's own
``build_prompt`` strings are not quoted in the spec, so scores of answers to
these prompts are comparable with each other, not yet with the leaderboard.
What follows the harness exactly is the framing of frame-list backends
(``video_base.py:89-136``): the sentence "You are provided with {n} frames
uniformly sampled from the video." precedes the question, and event
verification then sends its question without the system prompt
(``vantage_event_verification.py:165-172``).

The frame plan: ``uniform_frame_plan(F, n)`` takes frame ``int(i * F / (n + 1))``
for i = 1..n (F = 90, n = 8 gives 10, 20, ..., 80).

The other route: ``prompts``, a prompts file (``sova_lib.describe.prompt_file``,
written from the harness by ``harness_prompts``), gives every item its exact
messages and frame plan; each item is asked exactly that, its frames chosen
by ``plan_frames``, and the file's SHA-256 enters the cache key (each
answer's id carries its record's digest). ``ROUTES`` names the two; the
run's manifest records which one made the answers.
"""
from __future__ import annotations

import hashlib
import json
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from sova_lib.benchmarks.vantage.inputs import VantageItem, video_file
from sova_lib.describe.cache import DescriptionCache
from sova_lib.describe.prompt_file import ItemPrompt, PromptFile

if TYPE_CHECKING:
    from sova_lib.describe.contract import Describer
    from sova_lib.describe.run_cache import RunOptions, RunSummary

__all__ = ["DEFAULT_FRAMES", "FRAME_PREFIX", "INSTRUCTIONS", "ROUTES", "VIDEO_TASKS", "FramePlanError", "RenderedPrompt",
           "cache_id", "cached_answers", "describe_task", "load_media", "media_path", "plan_frames", "render_prompt",
           "uniform_frame_plan"]

#: Frames sent per video by default (spec section 1).
DEFAULT_FRAMES = 8
#: Tasks whose input is a video.
VIDEO_TASKS = frozenset({"vqa", "event_verification", "temporal", "dvc"})
#: What a frame-list backend reads before the question (harness ``video_base.py``).
FRAME_PREFIX = "You are provided with {n} frames uniformly sampled from the video."

#: Where a run's prompts come from: this library's own wording (``render_prompt``), or a prompts file (the
#: harness's own prompts, ``harness_prompts``). Recorded in the manifest and the submission's metadata.
ROUTES = ("library-prompts", "prompts-file")

#: Answer-format instruction per task (this library's wording; see the module docstring).
INSTRUCTIONS = {
    "vqa": "Answer with the option's letter from the given choices directly, as 'Answer: X'.",
    "event_verification": "Answer Yes or No.",
    "temporal": ('Give the start and end time of the event as JSON {"start": "mm:ss.ss", "end": "mm:ss.ss"}.'),
    "dvc": ('Describe every event in the video in time order as a JSON list '
            '[{"start": seconds, "end": seconds, "caption": "..."}].'),
    "refex": ("Give the bounding box of the object the sentence refers to as [x1, y1, x2, y2], "
              "with coordinates from 0 to 1000 relative to the image width and height."),
    "pointing": "Answer with the letter of the correct point (A, B, C or D).",
    "astro": ('Detect every person in the image. Answer with ```json [{"bbox_2d": [x1, y1, x2, y2], '
              '"label": "person"}, ...]``` with coordinates from 0 to 1000 relative to the image width and height.'),
    "sot": ("The first image is the target, cut out of frame 0. The next image is frame 0 with the target boxed at "
            "{init}. Then come frames 1 to {last}. Give the target's box in every later frame as JSON "
            '{{"frame_1": [x1, y1, x2, y2] or null, ...}} with coordinates from 0 to 1000; null when the target '
            "is not visible."),
}


@dataclass(frozen=True)
class RenderedPrompt:
    """What is sent with an item's images: ``text`` and the image ``layout`` (a short description of the image
    order, part of the cache key); no task sends a system prompt (see the module text)."""

    text: str
    layout: str

    @property
    def sha256(self) -> str:
        """SHA-256 of the prompt and layout: it names the cached answer, so a changed prompt is never reused."""
        blob = json.dumps([self.text, None, self.layout], ensure_ascii=False)  # None: the system prompt's place
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def uniform_frame_plan(num_frames: int, n: int = DEFAULT_FRAMES) -> list[int]:
    """Source frame indices ``int(i * num_frames / (n + 1))``, i = 1..n (harness ``video_base.py:89-136``)."""
    if num_frames < 1 or n < 1:
        raise ValueError("need at least one source frame and one frame to send")
    return [int(i * num_frames / (n + 1)) for i in range(1, n + 1)]


def render_prompt(item: VantageItem, n_frames: int = DEFAULT_FRAMES) -> RenderedPrompt:
    """The prompt of ``item`` for a backend that receives ``n_frames`` frames (videos) or the item's image(s)."""
    task = item.task
    if task == "sot":
        n = len(item.media)
        init = "[" + ", ".join(f"{v:g}" for v in item.extra["init_bbox"]) + "]"
        text = INSTRUCTIONS["sot"].format(init=init, last=n - 1)
        return RenderedPrompt(text, f"target crop, boxed frame 0, frames 1-{n - 1}")
    video = task in VIDEO_TASKS
    parts = [FRAME_PREFIX.format(n=n_frames) if video else "", item.question,
             "\n".join(item.options), INSTRUCTIONS[task]]
    # Frame-list backends drop event verification's system prompt (harness behaviour).
    return RenderedPrompt("\n".join(p for p in parts if p), f"{n_frames} video frames" if video else "one image")


def cache_id(item: VantageItem, prompt: RenderedPrompt | ItemPrompt) -> str:
    """The id of ``item``'s answer in the cache: ``<item id>@<prompt SHA-256, 12 hex digits>``."""
    return f"{item.id}@{prompt.sha256[:12]}"


class FramePlanError(ValueError):
    """A prompts file's frame plan that a video cannot follow (``plan_frames``)."""


def plan_frames(plan: dict, num_frames: int, video_fps: float, n_frames: int = DEFAULT_FRAMES) -> list[int]:
    """The source frames a prompts file's ``plan`` asks for, in a video of ``num_frames`` frames at ``video_fps``.

    ``indices`` as given (each below ``num_frames``); else ``nframe`` frames
    by the uniform rule (harness ``video_base.py:135-136``, as
    ``uniform_frame_plan``); else ``fps`` frames a second: ``int(F / f * fps)``
    frames at ``int(i * f / fps)`` (``video_base.py:94-105``, f the video's
    rate); else ``n_frames`` by the uniform rule. ``ValueError`` when an index
    is past the video's end, the plan asks for more frames than the video holds
    (``nframe`` above its frames, ``fps`` above its rate) or gives no frame.
    """
    if plan.get("indices"):
        late = [i for i in plan["indices"] if i >= num_frames]
        if late:
            raise FramePlanError(f"the frame plan asks for frame {late[0]}, past the video's {num_frames} frames")
        return list(plan["indices"])
    if (plan.get("nframe") or 0) > 0:
        if int(plan["nframe"]) > num_frames:
            raise FramePlanError(f"the frame plan asks for {int(plan['nframe'])} frames, more than the video's "
                             f"{num_frames}")
        return uniform_frame_plan(num_frames, int(plan["nframe"]))
    if (plan.get("fps") or 0) > 0:
        if plan["fps"] > video_fps:
            raise FramePlanError(f"the frame plan asks for {plan['fps']:g} frames a second, more than the video's "
                             f"{video_fps:g}")
        step = video_fps / plan["fps"]
        indices = [int(i * step) for i in range(int(num_frames / video_fps * plan["fps"]))]
        if not indices:
            raise FramePlanError(f"the frame plan's fps {plan['fps']} gives no frame of a {num_frames}-frame video")
        return indices
    return uniform_frame_plan(num_frames, n_frames)


def media_path(media_root, name: str) -> Path:
    """The file ``name`` (an item's media path, relative) under ``media_root`` (default: the working folder);
    ``ValueError`` for a path that is absolute or, resolved (links followed), lies outside that folder."""
    root = Path(media_root if media_root is not None else ".")
    path = root / name
    if Path(name).is_absolute() or not path.resolve().is_relative_to(root.resolve()):
        raise ValueError(f"media path {name!r} is not under the media root {root} (it must be relative, without "
                         "'..' out of it)")
    return path


def _item_media(media_root, item: VantageItem) -> Path:
    """The media file of ``item`` under ``media_root``; a video task's TSV name is first made a file name as the
    harness's loader makes it (``inputs.video_file``), under the folder of the task's videos."""
    name = video_file(item.task, item.media[0]) if item.task in VIDEO_TASKS else item.media[0]
    try:
        return media_path(media_root, name)
    except ValueError as err:
        raise ValueError(f"item {item.id}: {err}") from None


def load_media(item: VantageItem, media_root, n_frames: int = DEFAULT_FRAMES,
               plan: dict | None = None) -> tuple[list, tuple, bool]:
    """``(RGB PIL images, timestamps in s, is_video)`` of ``item``, in the order they are sent; a video's frames
    by ``plan`` (a prompts file's frame plan, ``plan_frames``) when one is given.

    Raises ``FileNotFoundError`` for a missing file and the decoder's errors
    for an unreadable one (the runner records them as the item's failure).
    """
    from PIL import Image, ImageDraw

    from sova_lib.video.frames import probe, read_frames, to_rgb_image

    if item.task in VIDEO_TASKS:
        path = _item_media(media_root, item)
        if not path.is_file():
            hint = (" (a temporal TSV names each video by its bare stem: the harness appends .mp4, "
                    "vantage_temporal.py:313)" if item.task == "temporal" and item.media[0].endswith(".mp4") else "")
            raise FileNotFoundError(f"no such video: {path}{hint}")
        info = probe(path)
        indices = plan_frames(plan or {}, info.num_frames, info.fps, n_frames)  # no plan: the uniform rule
        frames = [to_rgb_image(a) for a in read_frames(path, indices)]
        return frames, tuple(i / info.fps for i in indices), True
    images = []
    for name in item.media:
        path = media_path(media_root, name)
        if not path.is_file():
            raise FileNotFoundError(f"no such image: {path}")
        with Image.open(path) as img:
            images.append(img.convert("RGB"))
    if item.task != "sot":
        return images, (), False
    first = images[0]
    w, h = first.size
    x1, y1, x2, y2 = (int(v * size / 1000) for v, size in zip(item.extra["init_bbox"], (w, h, w, h)))
    box = (x1, y1, max(x2, x1 + 1), max(y2, y1 + 1))
    boxed = first.copy()
    ImageDraw.Draw(boxed).rectangle(box, outline=(255, 0, 0), width=max(2, w // 300))
    return [first.crop(box), boxed, *images[1:]], (), False


def _item_prompt(item: VantageItem, n_frames: int, prompts: PromptFile | None) -> RenderedPrompt | ItemPrompt:
    return render_prompt(item, n_frames) if prompts is None else prompts.prompts[str(item.id)]


def describe_task(describer: Describer, task: str, items: Sequence[VantageItem], cache_dir, *, media_root=None,
                  n_frames: int = DEFAULT_FRAMES, run: RunOptions | None = None,
                  prompts: PromptFile | None = None) -> RunSummary:
    """Ask ``describer`` every item of ``task``; answers go to a description cache folder under ``cache_dir``.

    ``run``: retries, progress bar and printing, as for ``describe_items`` (``RunOptions``). ``prompts``: a
    prompts file holding exactly one record per item (``PromptFileError`` names a missing or extra id): each
    item is asked its record's messages, with the frames of its record's plan (``n_frames`` where it has none).
    """
    from sova_lib.describe.contract import PromptedDescriber  # the runner here: scoring cached answers never loads it
    from sova_lib.describe.item import Item
    from sova_lib.describe.prompts import Prompt
    from sova_lib.describe.runner import LocalEngine, describe_items

    items = [it for it in items if it.task == task]
    if not items:
        raise ValueError(f"no {task} items to describe")
    if prompts is not None:
        prompts.check_ids([it.id for it in items])
    fields, by_id = {}, {}
    for it in items:
        prompt = _item_prompt(it, n_frames, prompts)
        key = cache_id(it, prompt)
        by_id[key] = it
        fields[key] = {"prompt": prompt.text} if prompts is None else prompt.request_fields()
    if prompts is None:
        settings = {"task": task, "instruction": INSTRUCTIONS[task], "frame_prefix": FRAME_PREFIX,
                    "frames": n_frames if task in VIDEO_TASKS else None,
                    "frame_plan": "int(i*F/(n+1)), i=1..n" if task in VIDEO_TASKS else "item images in order"}
        template = Prompt(f"vantage-{task}", INSTRUCTIONS[task], INSTRUCTIONS[task])  # no system prompt
    else:
        settings = {"task": task, "route": ROUTES[1], "prompts": prompts.settings(),
                    "frames": n_frames if task in VIDEO_TASKS else None,
                    "frame_plan": "each record's plan, else int(i*F/(n+1)), i=1..n"}
        text = f"prompts file sha256 {prompts.sha256}"
        template = Prompt(f"vantage-{task}-prompts-file", text, text)
    wrapped = PromptedDescriber(describer, fields, "vantage", settings)
    runner_items = [Item(key, _item_media(media_root, it), is_video=it.task in VIDEO_TASKS)
                    for key, it in by_id.items()]

    def loader(item, fps):
        rid = str(by_id[item.id].id)
        plan = None if prompts is None else prompts.prompts[rid].frames
        try:
            return load_media(by_id[item.id], media_root, n_frames, plan)
        except FramePlanError as err:  # the item's failure, naming its record
            raise FramePlanError(f"{prompts.path}, line {prompts.lines[rid]}: {err}") from None

    # No sampling rate: videos get a fixed number of frames, named by the sampler version.
    return describe_items(wrapped, runner_items, cache_dir, prompt=template, fps=None,
                          sampler_version=f"vantage-uniform-{n_frames}", crop_source="none",
                          engine=LocalEngine(loader), run=run,
                          details={"benchmark": "vantage", "route": ROUTES[0 if prompts is None else 1], **settings,
                                   **({} if prompts is None else {"prompts_file": str(prompts.path)})})


def cached_answers(folder, items: Sequence[VantageItem], n_frames: int = DEFAULT_FRAMES,
                   prompts: PromptFile | None = None) -> dict[str, str]:
    """Item id -> cached raw answer, for the items whose current prompt (``prompts``: its record) has an answer
    in ``folder``."""
    with closing(DescriptionCache(folder).open()) as cache:
        done = dict(cache.done)
    asked = [it for it in items if prompts is None or str(it.id) in prompts.prompts]
    return {it.id: done[key] for it in asked if (key := cache_id(it, _item_prompt(it, n_frames, prompts))) in done}
