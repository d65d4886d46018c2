"""Per-item prompts from a file: each item asked exactly the messages its record holds.

A prompts file is JSONL, one record per item::

    {"id": "17",
     "messages": [{"role": "system", "content": "..."},               # optional, first
                  {"role": "user", "content": ["...", "..."]}],       # one text, or its text parts in order
     "media_at": 0,                                                   # optional: the media go before user part k
     "frames": {"indices": [12, 24], "nframe": 8, "fps": 0, "max_frames": null,
                "max_pixels": null, "total_pixels": null}}            # optional: the frame plan

``id`` is the item's id (text, or an integer written as text). The user
message's parts are sent in order, the item's frames before part
``media_at`` (default 0: media first, then the text, as the VANTAGE-Bench
harness's messages put the video); a backend that takes one text gets the
parts joined by a line break. ``frames`` is the frame plan a benchmark's
describe command follows (``sova vantage describe``): the source frame
``indices`` when given, else ``nframe`` frames by the uniform rule, else
``fps``; the other keys are recorded. ``sova vantage harness-prompts``
writes such a file from the harness's own ``build_prompt``.

``read_prompt_file(path)`` reads the file's lines as ``storage.lines`` splits
them (at ``"\n"`` alone, so a text may hold U+2028, U+0085 or a form feed),
checks every record (UTF-8 text, a system message with its content, a frame
plan of finite numbers asking at most ``MAX_PLANNED_FRAMES`` frames and
``MAX_PLAN_FPS`` frames a second) and raises one ``PromptFileError``
listing one line per malformed record (file and line);
``PromptFile.check_ids`` names the first missing and the first extra id;
``PromptFile.asked`` wraps a describer to ask each item its record.
The file's SHA-256 enters the cache key, and each record's own digest names
its answer, so a changed file never reuses an old answer.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from sova_lib import storage

__all__ = ["FRAME_PLAN_KEYS", "MAX_PLANNED_FRAMES", "MAX_PLAN_FPS", "ItemPrompt", "PromptFile", "PromptFileError", "read_prompt_file"]

#: The keys a record's frame plan may hold.
FRAME_PLAN_KEYS = ("indices", "nframe", "fps", "max_frames", "min_pixels", "max_pixels", "total_pixels")
#: The most frames a record's plan may ask of one video (``indices``, ``nframe``, ``max_frames``).
MAX_PLANNED_FRAMES = 10_000
#: The highest frame rate a record's plan may ask for (``fps``), in frames a second.
MAX_PLAN_FPS = 1_000


class PromptFileError(ValueError):
    """A malformed prompts file, or one whose ids are not the items': ``problems`` holds one line per problem,
    each naming the file and line."""

    def __init__(self, path, problems: list[str]):
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} problem(s) in the prompts file" if len(problems) > 1
                         else problems[0])


@dataclass(frozen=True)
class ItemPrompt:
    """One record: the ``system`` text (``None``: no system message), the user message's text ``parts`` in
    order, ``media_at`` (the frames go before that part) and the ``frames`` plan (``{}``: none)."""

    system: str | None
    parts: tuple[str, ...]
    media_at: int = 0
    frames: dict = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        """The user parts as one text (line breaks between them), for a backend that takes one text."""
        return "\n".join(self.parts)

    @property
    def sha256(self) -> str:
        """SHA-256 of the messages, the media's place and the frame plan: it names the item's cached answer."""
        blob = json.dumps([self.system, list(self.parts), self.media_at, self.frames], ensure_ascii=False,
                          sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def request_fields(self) -> dict:
        """The ``DescribeRequest`` fields this record sets."""
        return {"prompt": self.text, "system_prompt": self.system, "parts": self.parts, "media_at": self.media_at}


@dataclass(frozen=True)
class PromptFile:
    """A read prompts file: ``prompts`` by item id (file order), the ``line`` of each id, and the file's ``sha256``."""

    path: Path
    sha256: str
    prompts: dict
    lines: dict

    def check_ids(self, ids) -> None:
        """``PromptFileError`` naming the first id of ``ids`` without a record and the first record of another id."""
        ids = [str(i) for i in ids]
        missing = [i for i in ids if i not in self.prompts]
        extra = [i for i in self.prompts if i not in set(ids)]
        problems = [f"{self.path}: no record for item id {missing[0]!r}{_more(missing)}"] if missing else []
        if extra:
            problems.append(f"{self.path}, line {self.lines[extra[0]]}: id {extra[0]!r} is no item of this "
                            f"run{_more(extra)}")
        if problems:
            raise PromptFileError(self.path, problems)

    def settings(self) -> dict:
        """What the cache key records of the file: its SHA-256 (its name changes no answer)."""
        return {"sha256": self.sha256}

    def asked(self, describer, items) -> tuple:
        """``(describer, prompt)`` of a run that asks each of ``items`` exactly its record (``check_ids`` first): a
        ``PromptedDescriber`` around ``describer``, and the prompt that names the file's SHA-256 in the key."""
        from sova_lib.describe.contract import PromptedDescriber
        from sova_lib.describe.prompts import Prompt

        self.check_ids([item.id for item in items])
        fields = {item.id: self.prompts[str(item.id)].request_fields() for item in items}
        text = f"prompts file sha256 {self.sha256}"
        return PromptedDescriber(describer, fields, "prompts", self.settings()), Prompt("prompts-file", text, text)


def _more(found: list) -> str:
    """`` (and N more)`` after the first of ``found``, when there are more."""
    return f" (and {len(found) - 1} more)" if len(found) > 1 else ""


def _text(value, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, not {type(value).__name__}")
    return value


def _frames(plan) -> dict:
    if not isinstance(plan, dict):
        raise ValueError("'frames' must be an object")
    unknown = sorted(set(plan) - set(FRAME_PLAN_KEYS))
    if unknown:
        raise ValueError(f"'frames' has unknown key {unknown[0]!r} (known: {', '.join(FRAME_PLAN_KEYS)})")
    indices = plan.get("indices")
    if indices is not None and not (isinstance(indices, list) and indices and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in indices)):
        raise ValueError("'frames.indices' must be a non-empty list of frame numbers (integers >= 0)")
    if indices is not None and len(indices) > MAX_PLANNED_FRAMES:
        raise ValueError(f"'frames.indices' lists {len(indices)} frames, more than {MAX_PLANNED_FRAMES}")
    for key in FRAME_PLAN_KEYS[1:]:
        value = plan.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value < 0):
            raise ValueError(f"'frames.{key}' must be a finite number >= 0 or null, not {value!r}")
    for key, most in (("nframe", MAX_PLANNED_FRAMES), ("max_frames", MAX_PLANNED_FRAMES), ("fps", MAX_PLAN_FPS)):
        if (plan.get(key) or 0) > most:
            raise ValueError(f"'frames.{key}' is {plan[key]!r}, more than {most}")
    return plan


def _record(rec) -> tuple[str, ItemPrompt]:
    """``(id, prompt)`` of one record; ``ValueError`` saying what is wrong."""
    if not isinstance(rec, dict):
        raise ValueError("not a JSON object")
    rid = rec.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or str(rid) == "":
        raise ValueError("'id' must be the item's id (text or an integer)")
    unknown = sorted(set(rec) - {"id", "messages", "media_at", "frames"})
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: id, messages, media_at, frames)")
    messages = rec.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a list of {role, content} messages")
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if roles not in (["user"], ["system", "user"]):
        raise ValueError(f"'messages' must be one user message, after at most one system message (roles: {roles})")
    system = _text(messages[0].get("content"), "the system message's content") if roles[0] == "system" else None
    content = messages[-1].get("content")
    parts = tuple(_text(p, "each user part") for p in content) if isinstance(content, list) else (
        _text(content, "the user message's content"),)
    if not parts:
        raise ValueError("the user message has no text")
    media_at = rec.get("media_at", 0)
    if isinstance(media_at, bool) or not isinstance(media_at, int) or not 0 <= media_at <= len(parts):
        raise ValueError(f"'media_at' must be an integer from 0 to {len(parts)} (the user parts)")
    return str(rid), ItemPrompt(system, parts, media_at, _frames(rec.get("frames", {})))


def read_prompt_file(path) -> PromptFile:
    """Read and check the prompts file ``path``; ``PromptFileError`` with one line per malformed record."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--prompts {path}: no such file")
    data = path.read_bytes()
    prompts, lines, problems = {}, {}, []
    # lines end at "\n" alone (storage.lines): a record's text may hold U+2028, U+0085 or a form feed, as
    # harness-prompts writes it (ensure_ascii=False); bytes that are not UTF-8 stay marked (surrogateescape)
    for number, raw in storage.lines(data.decode("utf-8", errors="surrogateescape")):
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError as err:
            problems.append(f"{path}, line {number}: not UTF-8 text (byte {ord(raw[err.start]) - 0xDC00:#04x} at "
                            f"column {err.start + 1})")
            continue
        try:
            rec = json.loads(raw)
        except storage.JSON_ERRORS as err:
            why = storage.json_problem(err) if isinstance(err, RecursionError) else err
            problems.append(f"{path}, line {number}: not JSON ({why})")
            continue
        try:
            rid, prompt = _record(rec)
        except ValueError as err:
            problems.append(f"{path}, line {number}: {err}")
            continue
        if rid in prompts:
            problems.append(f"{path}, line {number}: id {rid!r} appears again (first on line {lines[rid]})")
            continue
        prompts[rid], lines[rid] = prompt, number
    if not prompts and not problems:
        problems.append(f"{path}: holds no record")
    if problems:
        raise PromptFileError(path, problems)
    return PromptFile(path, hashlib.sha256(data).hexdigest(), prompts, lines)
