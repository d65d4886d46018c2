"""What every on-disk store of the project shares: the lock, atomic writes, times, digests, the manifest.

The description cache (``sova_lib.describe.cache``), the frame-embedding
cache (``sova_lib.describe.contrastive.store``), the result records
(``sova_lib.records``) and the clip index cache
(``sova_lib.benchmarks.sovabench.clips.kpf_index``) write through here:

* ``LockedFolder``: a folder written by one process at a time. ``lock()``
  takes ``<folder>/.lock`` exclusively (``filelock``; a second writer fails at
  once with ``CacheLockedError``); ``manifest()`` reads ``manifest.json`` and
  ``update_manifest(**fields)`` refreshes its counts and time and writes it
  atomically.
* ``atomic_file(path)``: write to a temporary name beside ``path``, then
  ``os.replace`` it, so a reader (or a killed writer) sees the whole old file
  or the whole new one; ``write_text``, ``write_json`` build on it.
* ``now()``: the time stamps of manifests and error lines (UTC, seconds).
* ``folder_digest`` and ``file_digest``: SHA-256 digests of a model's files,
  which name the caches of its outputs.
* JSON Lines, as every such file of the project is written and read: one
  JSON value per line, lines split on ``"\\n"`` only. ``json.dumps(...,
  ensure_ascii=False)`` keeps U+0085, U+2028 and U+2029 raw inside strings,
  and ``str.splitlines`` (like ``io``'s text lines, which also split at a
  lone ``"\\r"``) splits there and at ``\\x0b``, ``\\x0c`` and
  ``\\x1c``-``\\x1e`` too, cutting such a record in two; JSON escapes every
  ``"\\n"`` inside a value, so ``"\\n"`` alone ends a line. ``json_line(value)``
  writes one line, non-ASCII kept as written and a lone surrogate
  (``"\\ud800"``, which a JSON answer can hold) as its ``\\uXXXX`` escape, so
  the line encodes as UTF-8 and reads back equal; ``lines(text)`` gives
  ``(line number, line)`` of each non-blank line; ``read_text(path)`` a UTF-8
  file's text with its line ends as written; ``read_jsonl(path)`` ``(line
  number, value)`` of each non-blank line, ``JsonlError`` naming the file and
  line that is no JSON.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Iterator

__all__ = ["CacheLockedError", "JsonlError", "LockedFolder", "atomic_file", "file_digest", "folder_digest", "json_line",
           "lines", "now", "read_jsonl", "read_text", "write_json", "write_text"]


class CacheLockedError(RuntimeError):
    """Another process is writing to the same cache folder."""


def now() -> str:
    """The current UTC time as ISO 8601 to the second, e.g. ``2025-01-31T12:00:00+00:00``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@contextmanager
def atomic_file(path: str | Path, *, tmp: str | Path | None = None, sync: bool = False) -> Iterator[BinaryIO]:
    """Open a temporary file for binary writing; on success it replaces ``path`` in one ``os.replace``.

    ``tmp`` is the temporary name (default: ``.<name>.<pid>.<random>.tmp``
    beside ``path``, so concurrent writers never share one). ``sync`` fsyncs
    the data before the rename. On an exception the temporary file is removed
    and ``path`` is left as it was.
    """
    path = Path(path)
    tmp = Path(tmp) if tmp is not None else path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as f:
            yield f
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str, *, tmp: str | Path | None = None) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (``atomic_file``); returns ``path``."""
    with atomic_file(path, tmp=tmp) as f:
        f.write(text.encode("utf-8"))
    return Path(path)


def write_json(path: str | Path, data: Any, *, indent: int | None = 2, tmp: str | Path | None = None) -> Path:
    """Write ``data`` as JSON (non-ASCII kept as is, other objects as ``str``, a final newline) atomically."""
    return write_text(path, json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n", tmp=tmp)


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes, as 64 hex digits."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def folder_digest(folder: str | Path, *, skip: tuple[str, ...] = (), by_file: bool = False) -> str:
    """SHA-256 over every file below ``folder``, in the order of their sorted paths.

    For each file the digest takes its path relative to ``folder`` (UTF-8),
    then its bytes, or with ``by_file`` the 32-byte SHA-256 of its bytes.
    Files with a path part in ``skip`` (e.g. ``".cache"``) are left out. The
    two forms name existing caches (the sentence encoder's: bytes; a
    contrastive model's ``weights_identity``: ``by_file``, skipping
    ``.cache``), so neither may change.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not set(skip) & set(p.parts)):
        digest.update(str(path.relative_to(folder)).encode())
        with open(path, "rb") as f:
            if by_file:
                digest.update(hashlib.file_digest(f, "sha256").digest())
            else:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


class LockedFolder:
    """A cache folder written by one process at a time, with a ``manifest.json``.

    Subclasses keep ``done`` (finished ids) and ``failures`` (id -> reason);
    ``update_manifest`` counts them. ``manifest_data`` is the manifest being
    written.
    """

    done: Any
    failures: dict

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.manifest_path = self.folder / "manifest.json"
        self.manifest_data: dict = {}
        self._lock = None

    def lock(self) -> None:
        """Create the folder and hold ``.lock`` in it; ``CacheLockedError`` if another writer holds it."""
        from filelock import FileLock, Timeout

        self.folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.folder / ".lock", thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise CacheLockedError(f"another run is writing to {self.folder}; "
                                   "wait for it to finish or stop it") from None
        self._lock = lock

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def manifest(self) -> dict:
        """The manifest written last, or ``{}``; ``ValueError`` naming the file when it is not JSON."""
        if not self.manifest_path.exists():
            return {}
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except ValueError as err:
            raise ValueError(f"{self.manifest_path}: not valid JSON ({err}); delete it to have it rewritten") from None

    def update_manifest(self, **fields: Any) -> None:
        """Set ``fields`` in the manifest, refresh its counts and time, and write it."""
        self.manifest_data.update(fields, counts={"done": len(self.done), "failed": len(self.failures)},
                                  updated=now())
        self.write_manifest(self.manifest_data)

    def write_manifest(self, manifest: dict) -> None:
        """Write ``manifest`` as ``manifest.json`` (indented JSON, replaced atomically)."""
        write_json(self.manifest_path, manifest, tmp=self.manifest_path.with_suffix(".json.tmp"))


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
