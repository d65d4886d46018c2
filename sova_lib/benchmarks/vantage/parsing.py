"""Answer parsers of the text-answer tasks (VQA, pointing, event verification, temporal, dense captioning)
and the scoring modes.

Every parser takes the model's raw answer and a mode and returns the parsed
value or ``None`` for an answer it cannot read; none raises on any string.

``official`` follows the public harness (spec section 1, file:line there);
``strict`` differs only where the spec's section 8 names a harness quirk:

* multiple choice (VQA, pointing): a letter counts only in upper case
  (official also takes "a" in "is a machine" as option A), and pointing's last
  resort, the first A-D character anywhere in the upper-cased answer ("No
  idea" -> D), is dropped;
* temporal: numeric JSON values are read as seconds, ``h:m:s`` times in
  full, and plain-text times ("00:08-00:12") are read (official reads JSON
  only, keeps the first field of ``h:m:s`` and scores the rest as the whole
  video, as the harness does);
* dense captioning: a missing event time is unreadable (official: 0 s).
"""
from __future__ import annotations

import json
import math
import re

__all__ = [
    "MODES", "check_mode", "dvc_time", "float_of", "json_objects", "parse_choice", "parse_dvc", "parse_pointing",
    "parse_temporal", "parse_time", "parse_yes_no"
]

#: The scoring modes: ``official`` reproduces the harness (the leaderboard), ``strict`` scores every unreadable
#: answer as wrong or zero.
MODES = ("official", "strict")


def check_mode(mode: str) -> str:
    """``mode`` itself; ``ValueError`` when it is not one of ``MODES``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
    return mode


def float_of(value) -> float:
    """``float(value)`` of a number (or numeric text), an integer too large for a float being +-inf where ``float``
    raises ``OverflowError``; ``ValueError`` / ``TypeError`` as ``float`` raises them."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def parse_choice(text: str, mode: str = "official") -> str | None:
    """The option letter of a multiple-choice answer (VQA; harness ``vantage_vqa.py:29-55``).

    On the stripped text, first match wins: ``Answer:`` then the letter
    (whole word); the text starting with the letter, optionally in
    parentheses, followed by ``.``, ``:`` or a space; ``answer is`` /
    ``option`` / ``choose`` / ``select`` / ``pick``, an optional ``:`` and
    ``(``, then the letter (no word boundary after it); else the last
    standalone letter. ``official`` reads the letter in either case, as the
    harness does; ``strict`` only in upper case (spec section 8.6), the
    key words still in either case. Examples: "Answer: C" -> C;
    "I pick b." -> B (``strict``: None); "The forklift is a machine" -> A
    (``strict``: None).
    """
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    text = text.strip()
    cls = "([ABCD])" if mode == "strict" else "([ABCDabcd])"
    patterns = ((re.search, rf"(?i:Answer:)\s*{cls}\b"), (re.match, rf"^\(?{cls}\)?[.:\s]"),
                (re.search, rf"(?i:answer is|option|choose|select|pick)\s*:?\s*\(?{cls}\)?"))
    for find, pattern in patterns:
        m = find(pattern, text)
        if m:
            return m.group(1).upper()
    found = re.findall(rf"\b{cls}\b", text)
    return found[-1].upper() if found else None


def parse_pointing(text: str, mode: str = "official") -> str | None:
    """The option letter of a pointing answer (harness ``image_mcq.py:3020-3032``).

    The last standalone letter or ``(X)``, case-insensitive in ``official``;
    else (``official`` only) the first A-D character of the upper-cased text.
    Examples: "The answer is (C)." -> C; "No idea" -> D (``strict``: None); "none" -> None.
    """
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    flags = re.IGNORECASE if mode == "official" else 0
    found = re.findall(r"\(([ABCD])\)|\b([ABCD])\b", text, flags=flags)
    if found:
        return "".join(found[-1]).upper()
    return next((ch for ch in text.upper() if ch in "ABCD"), None) if mode == "official" else None


def parse_yes_no(text: str, mode: str = "official") -> str | None:
    """``"yes"`` or ``"no"``: the first standalone yes/no word, case-insensitive ("Nobody" -> None)."""
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    m = re.search(r"\b(yes|no)\b", text, flags=re.IGNORECASE)
    return m.group(1).lower() if m else None


_TIME = r"\d+(?:\.\d+)?(?::\d+(?:\.\d+)?){0,2}"


def parse_time(value, mode: str = "official") -> float | None:
    """Seconds of a time: a number, ``m:s`` (60m + s) or ``h:m:s``; ``None`` when unreadable.

    ``official`` keeps only the first field of an ``h:m:s`` time (harness
    ``vantage_temporal.py:390-439``); ``strict`` reads 3600h + 60m + s.
    """
    mode = check_mode(mode)
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float_of(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str) or not re.fullmatch(_TIME, value.strip()):
        return None
    parts = [float(p) for p in value.strip().split(":")]
    if len(parts) == 3 and mode == "official":
        return parts[0]
    return sum(f * 60 ** (len(parts) - 1 - k) for k, f in enumerate(parts))


def json_objects(text: str):
    """Every JSON value that starts at a ``{`` or ``[`` of ``text``, in order."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            continue
        yield value


#: One time tag ``<12.5>`` as the harness's fallback parser and its final re-read match it
#: (``vantage_temporal.py:433``, written there in verbose form): digits with at most one dot, no sign, no exponent.
_TIME_TAG = re.compile(r"<(?:\d*\.?\d+|\d+\.?)>")


def _repair_temporal_json(text: str) -> str:
    """The answer as the harness mends it before ``json.loads`` (``vantage_temporal.py:391-408``).

    On the stripped text: when ``"start":`` occurs once, a ``"`` goes before
    the first comma after the next quote unless one is there already; when
    ``"end":`` occurs once and its value's quote is opened but never closed
    (or closed only right after a line break), a ``"`` is appended; finally
    trailing space goes and a ``}`` is appended unless the text ends with one.
    """
    text = text.strip()
    if text.count('"start":') == 1:
        quote = text.find('"', text.find('"start":') + len('"start":'))
        if quote != -1:
            comma = text.find(",", quote)
            if comma != -1 and text[comma - 1] != '"':
                text = f'{text[:comma]}"{text[comma:]}'
    if text.count('"end":') == 1:
        quote = text.find('"', text.find('"end":') + len('"end":'))
        if quote != -1:
            closing = text.find('"', quote + 1)
            if closing == -1 or text[closing - 1] == "\n":
                text = text.rstrip() + '"'
    text = text.rstrip()
    return text if text.endswith("}") else text + "}"


def _minutes_seconds(value: str) -> float:
    """``"m:s"`` -> 60m + s, else ``float`` of the first ``:`` field (``vantage_temporal.py:425-428``); raises
    ``ValueError`` as ``float`` does."""
    parts = value.split(":")
    return float(parts[0]) * 60 + float(parts[1]) if len(parts) == 2 else float(parts[0])


def _time_tags(text: str, duration: float) -> tuple[float, float] | None:
    """The harness's fallback (``vantage_temporal.py:432-439``): the first two ``<number>`` tags, each clamped to
    [0, duration], sorted; ``None`` (the whole video) with fewer than two."""
    tags = _TIME_TAG.findall(text)
    if len(tags) < 2:
        return None
    a, b = (min(max(float(t[1:-1]), 0), duration) for t in tags[:2])
    return min(a, b), max(a, b)


def _json_times(text: str) -> tuple[float, float] | None:
    """``parse_timestamps_json`` of the harness (``vantage_temporal.py:390-429``, not strict): the pair, ``None``
    for the whole video, or an exception where the harness raises one (its caller then tries the tags)."""
    repaired = _repair_temporal_json(text)
    try:
        value = json.loads(repaired)
    except json.JSONDecodeError:
        start, end = (re.search(rf'"{key}":\s*"([^"]+)"', repaired) for key in ("start", "end"))
        if not (start and end):
            return None
        value = {"start": start.group(1), "end": end.group(1).rstrip("\n}")}
    if isinstance(value, list) and value:
        value = value[0]
    return _minutes_seconds(value["start"]), _minutes_seconds(value["end"])


def _temporal_official(text: str, duration: float) -> tuple[float, float] | None:
    """The harness's reading of a temporal answer (``vantage_temporal.py:390-439,482-485,507,540-542``).

    1. ``parse_timestamps_json``: the mended text (``_repair_temporal_json``)
       goes to ``json.loads``; a list gives its first element, whose
       ``start`` and ``end`` are read. Where the text is no JSON at all, the
       ``"start": "..."`` and ``"end": "..."`` strings are searched in it
       instead, and without both the answer is the whole video (``None``).
    2. Each value must be a string ``m:s`` (60m + s) or a number text (an
       ``h:m:s`` time keeps its first field); any other failure (a key
       missing, a numeric JSON value, a field ``float`` cannot read, JSON
       nested too deep) falls to ``parse_timestamps``: the first two
       ``<number>`` tags of the raw answer (``_time_tags``), else the whole video.
    3. The pair is written as ``"<s> <e>"`` and read back by the tag rule,
       which clamps to [0, d] and sorts; a value whose text is no tag (a
       negative, ``nan``, ``inf`` or an exponent such as ``1e-05``) leaves
       fewer than two tags, so the answer is the whole video there too.
    """
    try:
        pair = _json_times(text)
    except Exception:  # noqa: BLE001 - the harness falls to its tag parser on any error but a JSON one (line 484)
        pair = _time_tags(text, duration)
    if pair is None or not all(_TIME_TAG.fullmatch(f"<{v}>") for v in pair):
        return None
    return pair


def parse_temporal(text: str, mode: str = "official", duration: float = 30.0) -> tuple[float, float] | None:
    """``(start, end)`` in seconds of a temporal-localization answer; ``None`` when unreadable.

    ``official`` reads the answer as the harness does (``_temporal_official``):
    JSON only, ``{"start": "00:08.50", "end": "00:12"}``; plain text such as
    ``"00:08-00:12"`` and numeric values (``{"start": 8, "end": 12}``) are
    unreadable (the harness scores the whole video [0, ``duration``]);
    ``<8> <12>`` tags count only where the answer is JSON that fails
    otherwise. ``strict`` (spec section 8) reads a JSON object with
    ``start`` and ``end`` (numbers as seconds, ``m:s`` or full ``h:m:s``
    strings), else the first two ``m:s`` times of the text. Only the first
    interval counts; the metric clamps to [0, d] and sorts.
    """
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    if mode == "official":
        return _temporal_official(text, float(duration))
    pair = next(((obj["start"], obj["end"]) for obj in json_objects(text)
                 if isinstance(obj, dict) and "start" in obj and "end" in obj), None)
    if pair is None:
        pair = re.findall(r"\d+(?:\.\d+)?(?::\d+(?:\.\d+)?){1,2}", text)[:2]
        if len(pair) < 2:
            return None
    start, end = (parse_time(v, mode) for v in pair)
    return None if start is None or end is None else (start, end)


def dvc_time(value, mode: str = "official") -> float | None:
    """Seconds of a dense-captioning time (harness ``vantage_dvc.py:168-183``), full ``h:m:s``.

    A number as is; a string stripped: ``m:s`` -> 60m + s, ``h:m:s`` ->
    3600h + 60m + s, else a plain number ("0:00:33" -> 33, "01:05.5" -> 65.5),
    each field read by ``float`` (so "nan", "inf" and "1_000" read).
    A missing or empty time is 0 in ``official`` and unreadable in ``strict``.
    ``official`` keeps a time that is not finite, as the harness does (the
    event then has IoU 0 with every GT event there and here); ``strict``
    reads it as unreadable. ``None`` for what the harness cannot read (it
    stops there). Unlike the temporal task's parser (``parse_time``), no
    field is dropped.
    """
    mode = check_mode(mode)
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0.0 if mode == "official" else None
    if isinstance(value, (int, float)):
        number = float_of(value)
    else:
        parts = str(value).strip().split(":")
        if len(parts) > 3:
            return None
        try:
            fields = [float(p) for p in parts]
        except ValueError:
            return None
        number = sum(f * 60 ** (len(fields) - 1 - k) for k, f in enumerate(fields))
    return number if mode == "official" or math.isfinite(number) else None


def _dvc_raw(text: str):
    """The event records of an answer (harness ``vantage_dvc.py:186-207``), in four tries.

    1. the text from its first ``[`` to its last ``]`` as JSON;
    2. from its first ``{`` to its last ``}`` as JSON (an object is one event);
    3. each ``"start": "..." ... "end": "..." ... "caption": "..."`` run of
       quoted strings (objects written one after another, or broken JSON);
    4. each ``<hh:mm:ss><hh:mm:ss> caption`` (two-digit fields), caption to the line's end.
    A try that reads stops the search, even when it holds no event.
    """
    text = text.strip()
    for pattern in (r"\[[\s\S]*\]", r"\{[\s\S]*\}"):
        m = re.search(pattern, text)
        if m:
            try:
                value = json.loads(m.group())
            except (ValueError, RecursionError):
                continue
            return [value] if isinstance(value, dict) else value
    quoted = [{"start": s, "end": e, "caption": c} for s, e, c in re.findall(
        r'"start":\s*"([^"]+)".*?"end":\s*"([^"]+)".*?"caption":\s*"([^"]*)"', text, re.DOTALL)]
    return quoted or [{"start": s, "end": e, "caption": c.strip()} for s, e, c in re.findall(
        r"<(\d{2}:\d{2}:\d{2})><(\d{2}:\d{2}:\d{2})>\s*(.+)", text)]


def _field(ev: dict, key: str, mode: str):
    """``ev[key] or ev[key + "_time"]`` as the harness reads a time (``"0"`` when both are missing); in
    ``strict`` a time of 0 is kept and a missing one stays missing."""
    if mode == "official":
        return ev.get(key) or ev.get(f"{key}_time", "0")
    value = ev.get(key)
    return value if value is not None and value != "" else ev.get(f"{key}_time")


def parse_dvc(text: str, mode: str = "official") -> tuple[list[tuple[float, float, object]], int] | None:
    """Events ``(start, end, caption)`` of a dense-captioning answer, sorted by start (stable), and a count of bad ones.

    Records come from ``_dvc_raw``. Per record (harness
    ``vantage_dvc.py:231-239``): ``start`` (else ``start_time``), ``end``
    (else ``end_time``) through ``dvc_time``; ``caption`` (else
    ``description``). A record whose caption is empty or missing is left
    out, as the harness does (``if caption:``); ``official`` keeps any other
    caption as the harness does, text or not (``7``, ``["..."]``, ``true``;
    it is scored by its JSON text, ``metrics_captions.caption_text``, as the
    harness's remote BERTScore request carries it, ``vantage_dvc.py:280-296``),
    ``strict`` leaves out a caption that is not text. A record that is not
    an object or has an unreadable time is left out too (the harness stops
    on those), and all of these are counted. The sort is Python's on the
    start (a ``nan`` start keeps the harness's order). Returns ``(events,
    n_bad)``, or ``None`` when no event is readable. Example:
    ``'{"start": "0:00:33", "end": "0:00:40", "caption": "a"}'`` -> ``([(33.0, 40.0, "a")], 0)``.
    """
    mode = check_mode(mode)
    if not isinstance(text, str):
        return None
    raw = _dvc_raw(text)
    if not isinstance(raw, list):
        return None
    events, bad = [], 0
    for ev in raw:
        if not isinstance(ev, dict):
            bad += 1
            continue
        start, end = (dvc_time(_field(ev, key, mode), mode) for key in ("start", "end"))
        caption = ev.get("caption", "") or ev.get("description", "") or ""
        if start is None or end is None or not caption or (mode == "strict" and not isinstance(caption, str)):
            bad += 1
            continue
        events.append((start, end, caption))
    if not events:
        return None
    events.sort(key=lambda e: e[0])
    return events, bad
