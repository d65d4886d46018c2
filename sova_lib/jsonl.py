"""JSON Lines as the project writes and reads them: one JSON value per line, lines split on ``"\\n"`` only.

``json.dumps(..., ensure_ascii=False)`` keeps U+0085, U+2028 and U+2029
raw inside strings, and ``str.splitlines`` (like ``io``'s text lines,
which also split at a lone ``"\\r"``) splits there and at ``\\x0b``,
``\\x0c`` and ``\\x1c``-``\\x1e`` too, cutting such a record in two. JSON
escapes every ``"\\n"`` inside a value, so ``"\\n"`` alone ends a line.

* ``json_line(value)``: one line of JSON text ending in ``"\\n"``, non-ASCII
  kept as written; a lone surrogate (``"\\ud800"``, which a JSON answer can
  hold) is written as its ``\\uXXXX`` escape, so the line encodes as UTF-8
  and reads back equal.
* ``lines(text)``: ``(line number, line)`` of each non-blank line.
* ``read_text(path)``: a UTF-8 file's text with its line ends as written
  (``Path.read_text`` turns a lone ``"\r"`` into ``"\n"``).
* ``read_jsonl(path)``: ``(line number, value)`` of each non-blank line of a
  UTF-8 file; ``JsonlError`` names the file and line that is no JSON.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["JsonlError", "json_line", "lines", "read_jsonl", "read_text"]

_SURROGATE = re.compile(r"[\ud800-\udfff]")


class JsonlError(ValueError):
    """A line of a JSON Lines file that is no JSON: ``<file>, line <n>: not valid JSON (<reason>)``."""

    def __init__(self, path, line: int, reason: str):
        self.path, self.line, self.reason = str(path), line, reason
        super().__init__(f"{path}, line {line}: not valid JSON ({reason})")


def json_line(value, **options) -> str:
    """``value`` as one line of JSON (``json.dumps(value, ensure_ascii=False, **options)`` and ``"\\n"``).

    Only a surrogate code point (never part of valid UTF-8) is escaped, as
    ``\\udXXX``; ``json.loads`` reads it back as the same character.
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def lines(text: str) -> Iterator[tuple[int, str]]:
    """``(number, line)`` of every line of ``text`` that is not blank, numbered from 1, split on ``"\\n"`` only."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def read_text(path: str | Path) -> str:
    """The text of the UTF-8 file ``path``, every character as written (no newline translation)."""
    return Path(path).read_bytes().decode("utf-8")


def read_jsonl(path: str | Path) -> Iterator[tuple[int, object]]:
    """``(number, value)`` of every non-blank line of the UTF-8 JSON Lines file ``path`` (``lines``).

    ``JsonlError`` for a line that does not parse; ``UnicodeDecodeError`` for bytes that are not UTF-8.
    """
    for number, line in lines(read_text(path)):
        try:
            yield number, json.loads(line)
        except (ValueError, RecursionError) as err:
            raise JsonlError(path, number, str(err)) from None
