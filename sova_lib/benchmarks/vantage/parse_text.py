"""Answer parsers of the text-answer tasks: VQA, pointing, event verification, temporal, dense captioning.

Every parser takes the model's raw answer and a mode and returns the parsed
value or ``None`` for an answer it cannot read; none raises on any string.

``parity`` follows the public harness (spec section 1, file:line there);
``strict`` differs only where the spec's section 8 names a harness quirk:

* multiple choice (VQA, pointing): a bare letter counts only in upper case
  (parity also takes "a" in "is a machine" as option A), and pointing's last
  resort, the first A-D character anywhere in the upper-cased answer ("No
  idea" -> D), is dropped;
* temporal: numeric JSON values are read as seconds (parity: unreadable, so
  the whole video), and ``h:m:s`` times are read in full (parity keeps the
  first field only).
"""
from __future__ import annotations

import json
import math
import re

__all__ = [
    "MODES", "check_mode", "parse_choice", "parse_dvc", "parse_pointing", "parse_temporal", "parse_time", "parse_yes_no",
]

#: The scoring modes: ``parity`` reproduces the harness (the leaderboard), ``strict`` scores every unreadable
#: answer as wrong or zero.
MODES = ("parity", "strict")

_LETTERS = "ABCD"


def check_mode(mode: str) -> str:
    """``mode`` itself, or ``ValueError`` when it is not one of ``MODES``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
    return mode


def parse_choice(text: str, mode: str = "parity", letters: str = _LETTERS) -> str | None:
    """The option letter of a multiple-choice answer (VQA; harness ``vantage_vqa.py:29-55``).

    First match wins, case-insensitive: ``Answer: X``; a leading ``X.`` or
    ``(X)``; ``answer is`` / ``option`` / ``choose`` / ``select`` / ``pick``
    followed by ``X``; else the last standalone letter (upper case only in
    ``strict``). Examples: "Answer: C" -> C, "I pick b." -> B, "The forklift
    is a machine" -> A (``strict``: None).
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    cls = f"[{letters}]"
    patterns = (rf"answer\s*:\s*\(?({cls})\b", rf"^\s*\(?({cls})(?:\.|\))",
                rf"(?:answer\s+is|option|choose|select|pick)\s*:?\s*\(?({cls})\b")
    for pattern in patterns:
        m = re.search(pattern, text, flags=re.IGNORECASE | re.MULTILINE)
        if m:
            return m.group(1).upper()
    flags = re.IGNORECASE if mode == "parity" else 0
    found = re.findall(rf"\b({cls})\b", text, flags=flags)
    return found[-1].upper() if found else None


def parse_pointing(text: str, mode: str = "parity", letters: str = _LETTERS) -> str | None:
    """The option letter of a pointing answer (harness ``image_mcq.py:3020-3032``).

    The last standalone letter or ``(X)``, case-insensitive in ``parity``;
    else (``parity`` only) the first A-D character of the upper-cased text.
    Examples: "The answer is (C)." -> C; "No idea" -> D (``strict``: None); "none" -> None.
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    flags = re.IGNORECASE if mode == "parity" else 0
    found = re.findall(rf"\(([{letters}])\)|\b([{letters}])\b", text, flags=flags)
    if found:
        return "".join(found[-1]).upper()
    if mode == "parity":
        for ch in text.upper():
            if ch in letters:
                return ch
    return None


def parse_yes_no(text: str, mode: str = "parity") -> str | None:
    """``"yes"`` or ``"no"``: the first standalone yes/no word, case-insensitive ("Nobody" -> None)."""
    check_mode(mode)
    if not isinstance(text, str):
        return None
    m = re.search(r"\b(yes|no)\b", text, flags=re.IGNORECASE)
    return m.group(1).lower() if m else None


_TIME = r"\d+(?:\.\d+)?(?::\d+(?:\.\d+)?){0,2}"


def parse_time(value, mode: str = "parity") -> float | None:
    """Seconds of a time: a number, ``m:s`` (60m + s) or ``h:m:s``; ``None`` when unreadable.

    ``parity`` keeps only the first field of an ``h:m:s`` time (harness
    ``vantage_temporal.py:390-439``); ``strict`` reads 3600h + 60m + s.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str) or not re.fullmatch(_TIME, value.strip()):
        return None
    parts = [float(p) for p in value.strip().split(":")]
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return 60 * parts[0] + parts[1]
    return parts[0] if mode == "parity" else 3600 * parts[0] + 60 * parts[1] + parts[2]


def _json_objects(text: str):
    """Every JSON value that starts at a ``{`` or ``[`` of ``text``, in order."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        yield value


def parse_temporal(text: str, mode: str = "parity") -> tuple[float, float] | None:
    """``(start, end)`` in seconds of a temporal-localization answer, unsorted and unclamped.

    A JSON object with ``start`` and ``end`` whose values are ``m:s`` strings
    ("00:08.50"); numeric values are unreadable in ``parity`` (the harness
    then scores the whole video) and seconds in ``strict``. Otherwise the
    first two ``m:s`` times of the text ("00:08-00:12"). Only the first
    interval counts. ``None`` when nothing is readable.
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    for obj in _json_objects(text):
        if isinstance(obj, dict) and "start" in obj and "end" in obj:
            start, end = obj["start"], obj["end"]
            if mode == "parity" and not (isinstance(start, str) and isinstance(end, str)):
                return None
            start, end = parse_time(start, mode), parse_time(end, mode)
            return None if start is None or end is None else (start, end)
    times = re.findall(r"\d+(?:\.\d+)?(?::\d+(?:\.\d+)?){1,2}", text)
    if len(times) < 2:
        return None
    start, end = parse_time(times[0], mode), parse_time(times[1], mode)
    return None if start is None or end is None else (start, end)


def _events_from_json(value) -> list | None:
    if isinstance(value, dict):
        if "start" in value or "end" in value:
            return [value]
        lists = [v for v in value.values() if isinstance(v, list)]
        return lists[0] if lists else None
    return value if isinstance(value, list) else None


def parse_dvc(text: str, mode: str = "parity") -> tuple[list[tuple[float, float, str]], int] | None:
    """Events ``(start, end, caption)`` of a dense-captioning answer, sorted by start, and a count of bad ones.

    A JSON list ``[{"start", "end", "caption"}, ...]`` first, then a JSON
    object (a single event, or its first list value), then one
    ``<time> - <time>: caption`` per line (harness ``vantage_dvc.py:186-207``).
    Times are seconds, ``m:s`` or ``h:m:s`` (see ``parse_time``). An event
    with an unreadable time (the harness stops on one) or no caption is left
    out and counted. Returns ``(events, n_bad)``, or ``None`` when no event is
    readable.
    """
    check_mode(mode)
    if not isinstance(text, str):
        return None
    raw = None
    for opener in ("[", "{"):
        for value in _json_objects(text):
            if (opener == "[" and isinstance(value, list)) or (opener == "{" and isinstance(value, dict)):
                raw = _events_from_json(value)
                if raw:
                    break
        if raw:
            break
    events, bad = [], 0
    if raw:
        for ev in raw:
            if not isinstance(ev, dict):
                bad += 1
                continue
            start, end = parse_time(ev.get("start"), mode), parse_time(ev.get("end"), mode)
            caption = ev.get("caption") if isinstance(ev.get("caption"), str) else ""
            if start is None or end is None or not caption.strip():
                bad += 1
                continue
            events.append((start, end, caption.strip()))
    else:
        line = re.compile(rf"({_TIME})\s*s?\s*(?:-|–|to)\s*({_TIME})\s*s?\s*[\]\):,\-–]*\s*(.*)")
        for row in text.splitlines():
            m = line.search(row)
            if not m:
                continue
            start, end = parse_time(m.group(1), mode), parse_time(m.group(2), mode)
            if start is None or end is None or not m.group(3).strip():
                bad += 1
                continue
            events.append((start, end, m.group(3).strip()))
    if not events:
        return None
    events.sort(key=lambda e: e[0])
    return events, bad
