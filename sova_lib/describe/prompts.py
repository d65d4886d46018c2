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

One rule for every entry point: ``resolve_prompt(spec)`` turns a string into a
``Prompt``, and ``sova describe --prompt``, ``describe_items(prompt=...)`` and
every benchmark's ``describe`` all go through it. The default everywhere is
``general``. A single word (letters, digits, ``-`` and ``_``, any case) is a
preset name: an unknown one (``"genral"``, ``"General"``) is an error that
lists the presets, never an instruction. Anything else (a sentence, with
spaces or punctuation) is free text, sent for videos and images alike:
``resolve_prompt("What moves left?")``. ``custom_prompt(text)`` makes a
free-text ``Prompt`` from any text, a single word included, so code that
holds an instruction of its own never has it taken for a preset name.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

__all__ = ["DEFAULT_PROMPT", "PROMPTS", "Prompt", "SOVABENCH_SYSTEM_PROMPT", "custom_prompt", "resolve_prompt"]

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

#: The preset used when no prompt is given (``sova describe`` without ``--prompt``, ``describe_items``).
DEFAULT_PROMPT = "general"

_NAME_LIKE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def resolve_prompt(spec: str | Prompt = DEFAULT_PROMPT, system_prompt: str | None = None) -> Prompt:
    """Turn a preset name or free text into a ``Prompt`` (the one rule of the module docstring).

    ``spec`` is a preset name, a sentence of free text, or a ``Prompt`` (returned as it is, with
    ``system_prompt`` applied). ``system_prompt``, when given (the ``--system-prompt`` option), replaces
    the preset's system prompt, or goes with free text; an empty string means no system prompt.

    Raises ``ValueError`` for an empty ``spec`` and for a single word that is not a preset (a mistyped
    name), listing the presets.
    """
    if isinstance(spec, Prompt):
        return spec if system_prompt is None else replace(spec, system_prompt=system_prompt or None)
    text = spec.strip()
    if not text:
        raise ValueError("the prompt is empty: give a preset name or an instruction")
    if text in PROMPTS:
        return PROMPTS[text] if system_prompt is None else replace(PROMPTS[text], system_prompt=system_prompt or None)
    if _NAME_LIKE.match(text):
        close = difflib.get_close_matches(text.lower(), list(PROMPTS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"unknown prompt preset {text!r}.{hint} Presets: {', '.join(PROMPTS)}. "
            "An instruction of your own is a sentence, e.g. 'Describe the vehicles.' (in Python, or a single "
            "word: custom_prompt(text))"
        )
    return custom_prompt(spec, system_prompt)


def custom_prompt(text: str, system_prompt: str | None = None) -> Prompt:
    """A free-text ``Prompt`` named ``"custom"``: ``text`` for videos and images alike, never read as a preset
    name. ``system_prompt``: ``None`` or ``""`` for none. Raises ``ValueError`` for an empty ``text``."""
    if not text.strip():
        raise ValueError("the prompt is empty: give a preset name or an instruction")
    return Prompt("custom", text, text, system_prompt or None)
