"""Instructions given to a describer: the paper's presets and free text.

The presets are the exact texts of the SOVABench paper, Appendix B:

=============================== ======================================================
preset                          instruction (+ system prompt)
=============================== ======================================================
``general``                     "Describe this video." for a video, "Describe the
                                image." for an image; no system prompt
``task-aware``                  SOVABench: "Briefly classify the actions occurring in
                                this video." + the paper's system prompt
                                (``SOVABENCH_SYSTEM_PROMPT``)
``task-aware-spatialbench``     SpatialBench (images)
``task-aware-vsr``              VSR (images)
``task-aware-whatsup``          What's Up (images)
``task-aware-countbench``       CountBench (images)
``task-aware-visual7w-count``   Visual7W-Count (images)
=============================== ======================================================

Anything that is not a preset name is free text: ``resolve_prompt("What moves
left?")`` gives that instruction for videos and images alike. A single token
made of lower-case letters, digits, ``-`` and ``_`` (``"genral"``) is taken
for a mistyped preset name and rejected with the list of presets.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

__all__ = ["PROMPTS", "Prompt", "SOVABENCH_SYSTEM_PROMPT", "resolve_prompt"]

#: The system prompt of the paper's task-aware SOVABench configuration (Appendix B).
SOVABENCH_SYSTEM_PROMPT = (
    "You are an expert video analysis model specialized in action recognition. "
    "Focus on how subjects and objects change and move over time rather than on static "
    "appearances or backgrounds. Infer the actions by reasoning about motion, temporal "
    "progression, and interactions across the video frames."
)


@dataclass(frozen=True)
class Prompt:
    """An instruction with its video and image variants.

    ``video`` is sent with the frames of a video, ``image`` with a single
    image; ``system_prompt`` (``None`` for none) goes before both. ``name`` is
    the preset name, or ``"custom"`` for free text.
    """

    name: str
    video: str
    image: str
    system_prompt: str | None = None

    def text_for(self, is_video: bool) -> str:
        """The instruction for a video (``is_video=True``) or an image."""
        return self.video if is_video else self.image


_SOVABENCH = "Briefly classify the actions occurring in this video."
_SPATIAL_PAIRS = "List all pairwise spatial relations between objects in the image."
_COUNT = (
    "Describe the image in a short caption that accurately states the number of main objects "
    "(in words) and includes a brief descriptive phrase."
)


def _same(name: str, text: str) -> Prompt:
    return Prompt(name, text, text)


#: Preset name -> ``Prompt`` (paper, Appendix B).
PROMPTS: dict[str, Prompt] = {
    "general": Prompt("general", "Describe this video.", "Describe the image."),
    "task-aware": Prompt("task-aware", _SOVABENCH, _SOVABENCH, SOVABENCH_SYSTEM_PROMPT),
    "task-aware-spatialbench": _same(
        "task-aware-spatialbench",
        "List all spatial relationships between objects (e.g., position, size, distance, or "
        "orientation) in short sentences.",
    ),
    "task-aware-vsr": _same("task-aware-vsr", _SPATIAL_PAIRS),
    "task-aware-whatsup": _same("task-aware-whatsup", _SPATIAL_PAIRS),
    "task-aware-countbench": _same("task-aware-countbench", _COUNT),
    "task-aware-visual7w-count": _same("task-aware-visual7w-count", _COUNT),
}

_NAME_LIKE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def resolve_prompt(spec: str, system_prompt: str | None = None) -> Prompt:
    """Turn a preset name or free text into a ``Prompt``.

    ``spec`` is a preset name (see the module docstring) or free text.
    ``system_prompt``, when given (the ``--system-prompt`` option), replaces
    the preset's system prompt, or goes with free text; an empty string means
    no system prompt.

    Raises ``ValueError`` for an empty ``spec`` and for a single lower-case
    token that is not a preset (a mistyped name), naming the presets.
    """
    text = spec.strip()
    if not text:
        raise ValueError("the prompt is empty: give a preset name or an instruction")
    if text in PROMPTS:
        return PROMPTS[text] if system_prompt is None else replace(PROMPTS[text], system_prompt=system_prompt or None)
    if _NAME_LIKE.match(text):
        close = difflib.get_close_matches(text, list(PROMPTS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"unknown prompt preset {text!r}.{hint} Presets: {', '.join(PROMPTS)}. "
            "Free text must be an instruction with spaces or punctuation, e.g. 'Describe the vehicles.'"
        )
    return Prompt("custom", spec, spec, system_prompt or None)
