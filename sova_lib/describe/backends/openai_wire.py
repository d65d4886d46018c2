"""What an OpenAI-compatible server sends back, read: a streamed answer, a plain one, an error body.

``StreamedAnswer`` reads a chat-completions stream (``"stream": true``):
server-sent events, one ``data: {json}`` chunk per piece of the answer, each
with ``choices[0].delta.content``, then ``data: [DONE]``; with
``"stream_options": {"include_usage": true}`` a last chunk holds ``usage`` and
no choices (OpenAI's API reference, "The chat completion chunk object"; vLLM's
``serving_chat.py`` and ``transformers serve`` send the same shape). The
answer's text is the pieces of choice 0 joined: the same text the plain answer's
``choices[0].message.content`` holds.

``server_message`` finds the server's own words in an error body, whatever its
shape: OpenAI's (and newer vLLM's) ``{"error": {"message": ...}}``; older
vLLM's ``{"object": "error", "message": ...}`` (``ErrorResponse`` in
``vllm/entrypoints/openai/protocol.py``); TGI's ``{"error": "...",
"error_type": "..."}`` (``ErrorResponse`` in ``router/src/lib.rs``); FastAPI's
``{"detail": "..."}`` or, for a request that fails validation, ``{"detail":
[{"loc": [...], "msg": "...", "type": "..."}, ...]}`` (``transformers
serve`` answers both); else the first line of a plain-text (or HTML) body.
"""
from __future__ import annotations

import json
import re

from sova_lib.storage import JSON_ERRORS

__all__ = ["StreamError", "StreamedAnswer", "server_message", "cut", "shown"]

#: The longest server message put into an error line (characters).
MAX_MESSAGE_CHARS = 500

_TAG = re.compile(r"<[^>]*>")


class StreamError(ValueError):
    """A stream that holds an error, or a chunk that is not JSON."""


class StreamedAnswer:
    """The text of a chat-completions stream, fed its bytes as they arrive.

    ``feed(chunk)`` returns True when new text came; ``done`` turns True at
    ``data: [DONE]``; ``finish_reason`` and ``usage`` are the last ones sent;
    ``text`` is the pieces of choice 0 so far. A chunk holding ``error`` raises
    ``StreamError`` with the server's message. ``redact`` (text -> text) is
    applied to the server's text an error shows before it is cut.

    Reading is linear in the bytes fed: each byte is scanned for a line end
    once, and the whole lines of a ``feed`` are split off the buffer at once.
    """

    def __init__(self, redact=None) -> None:
        self.pieces: list[str] = []
        self.done = False
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self._redact = redact or (lambda text: text)
        self._buffer = bytearray()
        self._scanned = 0  # bytes at the buffer's start known to hold no line end
        self._data: list[bytes] = []

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def feed(self, chunk: bytes) -> bool:
        self._buffer += chunk
        end = self._buffer.rfind(b"\n", self._scanned)
        if end < 0:  # no line ends yet: the next feed scans only what it adds
            self._scanned = len(self._buffer)
            return False
        lines = bytes(self._buffer[:end]).split(b"\n")  # the whole lines, split at C speed
        del self._buffer[:end + 1]
        self._scanned = 0
        new = False
        for line in lines:
            if self.done:
                break
            line = line.rstrip(b"\r")
            if not line:  # a blank line ends an event
                new |= self._dispatch()
            elif line[0] != 58:  # b":" starts a comment (a keep-alive)
                name, _, value = line.partition(b":")
                if name == b"data":
                    self._data.append(value[1:] if value.startswith(b" ") else value)
        return new

    def close(self) -> bool:
        """The stream has ended: an event left without its blank line is read too; True when it held text."""
        if self._buffer.strip():
            self.feed(b"\n")
        return self._dispatch()

    def _dispatch(self) -> bool:
        data, self._data = b"\n".join(self._data), []
        if not data.strip():
            return False
        if data.strip() == b"[DONE]":
            self.done = True
            return False
        try:
            chunk = json.loads(data)
        except JSON_ERRORS:
            raise StreamError(f"a chunk of the stream is not JSON: {shown(data, self._redact, 100)}") from None
        if not isinstance(chunk, dict):
            raise StreamError(f"a chunk of the stream is not a JSON object: {shown(data, self._redact, 100)}")
        if "error" in chunk or chunk.get("object") == "error":
            raise StreamError(f"the stream ended with an error: {_message(chunk)}")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        new = False
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, list):  # content parts
                content = "".join(str(p.get("text", "")) for p in content
                                  if isinstance(p, dict) and p.get("type", "text") == "text")
            if isinstance(content, str) and content:
                self.pieces.append(content)
                new = True
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return new


def server_message(data: bytes) -> str:
    """The server's own message in an error body (module docstring), on one line, not yet cut."""
    try:
        body = json.loads(data)
    except (*JSON_ERRORS, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        message = _message(body)
    else:
        text = data.decode("utf-8", "replace")
        if text.lstrip().startswith("<"):  # an HTML page: its text
            text = _TAG.sub("\n", text)
        message = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return " ".join(message.split()) or "(no message)"


def cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown(data: bytes, redact, limit: int) -> str:
    """The server's ``data`` as an error shows it: decoded, ``redact`` (text -> text) applied, then written as a
    ``repr`` cut to ``limit`` characters (redacted before cut, so no piece of a secret is left at the cut)."""
    return cut(repr(redact(data.decode("utf-8", "replace")).encode()), limit)


def _message(body: dict) -> str:
    """The message of a JSON error body of any of the shapes the module docstring lists."""
    error = body.get("error")
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str) and error:
        return error
    if isinstance(body.get("message"), str) and body["message"]:
        return body["message"]
    detail = body.get("detail")
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, list) and detail:
        return "; ".join(_validation_error(d) for d in detail)
    return json.dumps(body, ensure_ascii=False)


def _validation_error(item) -> str:
    """One of FastAPI's validation errors, ``body.messages.0: Field required``."""
    if not isinstance(item, dict):
        return str(item)
    loc = item.get("loc")
    where = ".".join(str(part) for part in loc) if isinstance(loc, list) else ""
    return f"{where}: {item.get('msg', '')}" if where else str(item.get("msg", item))
