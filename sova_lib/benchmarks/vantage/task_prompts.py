"""Prompts and frame plans of the VANTAGE-Bench tasks.

``render_prompt(item, n_frames)`` gives the text (and system prompt) sent
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
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from sova_lib.benchmarks.vantage.inputs import VantageItem

__all__ = ["DEFAULT_FRAMES", "FRAME_PREFIX", "INSTRUCTIONS", "RenderedPrompt", "render_prompt", "uniform_frame_plan"]

#: Frames sent per video by default (spec section 1).
DEFAULT_FRAMES = 8
#: What a frame-list backend reads before the question (harness ``video_base.py``).
FRAME_PREFIX = "You are provided with {n} frames uniformly sampled from the video."

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
    """What is sent with an item's images: ``text``, ``system_prompt`` (or ``None``) and the image ``layout``
    (a short description of the image order, part of the cache key)."""

    text: str
    system_prompt: str | None
    layout: str

    @property
    def sha256(self) -> str:
        """SHA-256 of the prompt and layout: it names the cached answer, so a changed prompt is never reused."""
        blob = json.dumps([self.text, self.system_prompt, self.layout], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def uniform_frame_plan(num_frames: int, n: int = DEFAULT_FRAMES) -> list[int]:
    """Source frame indices ``int(i * num_frames / (n + 1))``, i = 1..n (harness ``video_base.py:89-136``)."""
    if num_frames < 1 or n < 1:
        raise ValueError("need at least one source frame and one frame to send")
    return [int(i * num_frames / (n + 1)) for i in range(1, n + 1)]


def _options(item: VantageItem) -> str:
    if item.task == "pointing":
        return "\n".join(f"{letter}. {text}" for letter, text in zip("ABCD", item.options))
    return "\n".join(item.options)


def render_prompt(item: VantageItem, n_frames: int = DEFAULT_FRAMES) -> RenderedPrompt:
    """The prompt of ``item`` for a backend that receives ``n_frames`` frames (videos) or the item's image(s)."""
    task = item.task
    if task in ("vqa", "event_verification", "temporal", "dvc"):
        parts = [FRAME_PREFIX.format(n=n_frames), item.question]
        if task == "vqa":
            parts.append(_options(item))
        parts.append(INSTRUCTIONS[task])
        # Frame-list backends drop event verification's system prompt (harness behaviour).
        return RenderedPrompt("\n".join(p for p in parts if p), None, f"{n_frames} video frames")
    if task == "sot":
        n = len(item.media)
        init = "[" + ", ".join(f"{v:g}" for v in item.extra["init_bbox"]) + "]"
        text = INSTRUCTIONS["sot"].format(init=init, last=n - 1)
        return RenderedPrompt(text, None, f"target crop, boxed frame 0, frames 1-{n - 1}")
    parts = [item.question, _options(item) if task == "pointing" else "", INSTRUCTIONS[task]]
    return RenderedPrompt("\n".join(p for p in parts if p), None, "one image")
