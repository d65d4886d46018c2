"""What every on-disk store of the project shares: the lock, atomic writes, times, the manifest.

The description cache (``sova_lib.describe.cache``), the frame-embedding
cache (``sova_lib.describe.contrastive.store``), the result records
(``sova_lib.records``) and the clip index cache
(``sova_lib.benchmarks.sovabench.clips.kpf_index``) write through here:

* ``LockedFolder``: a folder written by one process at a time. ``open()``
  takes ``<folder>/.lock`` exclusively (``filelock``; a second writer fails at
  once with ``CacheLockedError``); ``manifest()`` reads ``manifest.json`` and
  ``update_manifest(**fields)`` refreshes its counts and time and writes it
  atomically.
* ``atomic_file(path)``: write to a temporary name beside ``path``, then
  ``os.replace`` it, so a reader (or a killed writer) sees the whole old file
  or the whole new one; ``write_bytes``, ``write_text``, ``write_json`` build on it (and make the folder).
  Every file the library writes whole goes through these. Every
  temporary name of the project is ``atomic_file``'s,
  ``.<name>.<pid>.<random>.tmp``: hidden and ending in ``.tmp``, so no
  reader's pattern (``shard-*.npz``, ``*.json``, ``*.mp4``) matches it;
  ``remove_temporary(folder)`` clears those a killed writer left.
* ``write_shard(folder, number, **arrays)`` and ``read_shards(folder, names, ...)``: the append-only
  ``shard-*.npz`` files of the sentence-vector and frame-embedding caches, each written whole (``atomic_file``)
  under a name no other writer can take, and read back in the order of their names.
* ``file_errors(path, doing)``: an operating-system error on ``path`` (a full
  disk, a read-only folder, a folder where a file belongs) becomes a
  ``StorageError``, one line naming the file and what to do.
* ``redact(text, secrets)``: ``text`` without the given secret values and
  without any ``Authorization`` or ``Bearer`` value, for every message,
  error line and manifest field that may carry a server's words.
* ``now()``: the time stamps of manifests and error lines (UTC, seconds).
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

import errno
import json
import math
import numbers
import os
import re
import time
import uuid
import zipfile
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Iterator

__all__ = ["CACHE_VARIABLE", "CacheLockedError", "JSON_ERRORS", "JsonlError", "LockedFolder", "REDACTED",
           "STALE_SECONDS", "StorageError", "atomic_file", "cache_root", "file_errors", "json_line", "json_problem",
           "lines", "now", "read_jsonl", "read_shards", "read_text", "redact", "remove_temporary",
           "write_bytes", "write_json", "write_shard", "write_text"]

#: The environment variable that names the cache root when no folder is given.
CACHE_VARIABLE = "SOVA_CACHE"


def cache_root(cache_dir: str | Path | None = None, default: str | Path = "cache") -> Path:
    """The cache root a command, ``sova reproduce`` or a notebook reads and writes: ``cache_dir`` when given, else
    ``$SOVA_CACHE`` when set, else ``default`` (the repository's ``cache/``: ``"cache"`` from its root, where the
    commands run; the notebooks, run from ``notebooks/``, pass ``"../cache"``). Not resolved: a relative folder
    stays relative to the working folder."""
    if cache_dir is not None and str(cache_dir) != "":
        return Path(cache_dir)
    return Path(os.environ.get(CACHE_VARIABLE) or default)

#: What ``json.loads`` raises on input it cannot read: bad JSON, or nesting deeper than Python's recursion limit.
JSON_ERRORS = (ValueError, RecursionError)


class CacheLockedError(OSError):
    """Another process is writing to the same cache folder: a condition of the environment, not of the input."""


class StorageError(OSError):
    """An operating-system error on a file of the project, as one line naming the file and what to do."""


#: errno -> what to do about it, for ``file_errors``.
_FIXES = {
    errno.ENOSPC: "the disk is full: free some space, or use a folder on another disk",
    errno.EDQUOT: "the disk quota is used up: free some space, or use a folder on another disk",
    errno.EFBIG: "the file is larger than this file system or its limits allow: use a folder on another disk",
    errno.EACCES: "no permission: use a folder you can write to, or change its permissions",
    errno.EPERM: "no permission: use a folder you can write to, or change its permissions",
    errno.EROFS: "the file system is read-only: use a folder on a writable disk",
    errno.EISDIR: "a folder stands where a file belongs: remove it, or use another folder",
    errno.ENOTDIR: "a file stands where a folder belongs: remove it, or use another folder",
    errno.EEXIST: "a file stands where a folder belongs: remove it, or use another folder",
}


def json_problem(err: BaseException) -> str:
    """Why ``json.loads`` failed, in words (``JSON_ERRORS``): the decoder's message, or that the nesting is too deep."""
    if isinstance(err, RecursionError):
        return "nested more deeply than can be read (thousands of levels)"
    return str(getattr(err, "msg", None) or err)


@contextmanager
def file_errors(path: str | Path, doing: str) -> Iterator[None]:
    """Turn an ``OSError`` on ``path`` into a ``StorageError``: ``cannot <doing> <path>: <why>; <what to do>``.

    A ``StorageError`` or ``CacheLockedError`` raised inside passes unchanged.
    """
    try:
        yield
    except (StorageError, CacheLockedError):
        raise
    except OSError as err:
        fix = _FIXES.get(err.errno, "check the path, its permissions and the disk")
        where = err.filename if err.filename and str(err.filename) != str(path) else None
        why = err.strerror or str(err) or type(err).__name__
        error = StorageError(f"cannot {doing} {path}: {why}{f' ({where})' if where else ''}; {fix}")
        error.errno = err.errno
        raise error from None


#: A temporary file this old (seconds) in a folder that writers share without a lock is a killed writer's.
STALE_SECONDS = 3600.0


def remove_temporary(folder: str | Path, *, older_than: float | None = None) -> None:
    """Remove the temporary files (``atomic_file``'s) left in ``folder`` by killed writers.

    ``older_than`` (seconds): only those not modified for that long, for a folder that writers share without a
    lock, where a younger one may be another process's write in progress.
    """
    for stray in Path(folder).glob(".*.tmp"):
        with suppress(FileNotFoundError):  # another process finished or removed it
            if older_than is None or time.time() - stray.stat().st_mtime >= older_than:
                stray.unlink()


#: ``Authorization: <value>`` (a header, a JSON or Python dict entry, any case) and ``Bearer <token>``.
_AUTHORIZATION = re.compile(r"""((?:proxy-)?authorization|x-api-key|api[-_]key)(["']?\s*[:=]\s*["']?)"""
                            r"""(?:(?:bearer|basic|token)\s+)?[^\s"',;}]+""", re.IGNORECASE)
_BEARER = re.compile(r"(bearer\s+)[^\s\"',;}]+", re.IGNORECASE)

#: What stands where a secret was.
REDACTED = "[redacted]"


def redact(text: str, secrets=()) -> str:
    """``text`` with every ``Authorization`` / ``Bearer`` value and each of ``secrets`` (non-empty strings) replaced.

    A value already redacted is left as it is, so redacting twice changes nothing.
    """
    def value(prefix: str, match: re.Match) -> str:
        return match[0] if REDACTED in match[0] else prefix + REDACTED

    text = _AUTHORIZATION.sub(lambda m: value(m[1] + m[2], m), text)
    text = _BEARER.sub(lambda m: value(m[1], m), text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def now() -> str:
    """The current UTC time as ISO 8601 to the second, e.g. ``2025-01-31T12:00:00+00:00``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class atomic_file:
    """A file that appears at ``path`` whole or not at all: written under a temporary name, then ``os.replace``-d.

    ``with atomic_file(path) as f:`` gives the temporary file opened for
    binary writing (named ``.<name>.<pid>.<random>.tmp`` beside ``path``: hidden
    and ending in ``.tmp``, so concurrent writers never share one and no
    reader's pattern matches it); leaving the block
    without an exception replaces ``path`` with it (``commit``), an exception
    removes it and leaves ``path`` as it was (``discard``). A writer that
    outlives one block (a clip written frame by frame) keeps the object and
    calls ``commit`` or ``discard`` itself. ``sync`` fsyncs the data before
    the rename. An operating-system error is a ``StorageError`` naming
    ``path`` (``file_errors``).
    """

    def __init__(self, path: str | Path, *, sync: bool = False):
        self.path, self.sync = Path(path), sync
        self.tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        with file_errors(self.path, "write"):
            self.file: BinaryIO = open(self.tmp, "wb")

    def __enter__(self) -> BinaryIO:
        return self.file

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            self.commit()
            return
        self.discard()
        if isinstance(error, OSError):
            with file_errors(self.path, "write"):
                raise error

    def commit(self) -> None:
        """Replace ``path`` with what was written."""
        with file_errors(self.path, "write"):
            try:
                if self.sync:
                    self.file.flush()
                    os.fsync(self.file.fileno())
                self.file.close()
                os.replace(self.tmp, self.path)
            except BaseException:
                self.discard()
                raise

    def discard(self) -> None:
        """Remove what was written; ``path`` stays as it was."""
        self.file.close()
        self.tmp.unlink(missing_ok=True)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (``atomic_file``), making its folder if needed; returns ``path``."""
    with file_errors(Path(path).parent, "create the folder"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as f:
        f.write(data)
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (``write_bytes``); returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, data: Any, *, indent: int | None = 2, digits: int | None = None) -> Path:
    """Write ``data`` as JSON to ``path`` atomically; returns ``path``.

    Non-ASCII is kept as is, numpy numbers become plain numbers, a float NaN
    becomes ``null``, other objects their ``str``, and a final newline ends
    the file. ``digits`` rounds every float to that many decimals, for numbers
    whose last bits depend on the order of a parallel sum.
    """
    return write_text(path, json.dumps(_plain_json(data, digits), indent=indent, ensure_ascii=False,
                                       default=str) + "\n")


def _plain_json(value, digits: int | None):
    """``value`` with numpy numbers as Python ones, NaN as None and floats rounded to ``digits`` (None: as they
    are), in dicts (keys as ``str``), lists and tuples."""
    if isinstance(value, dict):
        return {str(k): _plain_json(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v, digits) for v in value]
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):  # float, a numpy float
        value = float(value)
        return None if math.isnan(value) else value if digits is None else round(value, digits)
    if isinstance(value, numbers.Integral) and not isinstance(value, int):  # a numpy integer
        return int(value)
    return value


def write_shard(folder: str | Path, number: int | str, *, sync: bool = False, **arrays) -> None:
    """Write ``arrays`` (``numpy.savez``) as a new ``shard-<time>-<pid>-<number>-<random>.npz`` in ``folder``.

    Atomically (``atomic_file``; ``sync`` as there). The random part keeps a shard from ever replacing another,
    one written by an earlier run or by another process in the same second.
    """
    import numpy as np

    stem = f"shard-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{number}-{uuid.uuid4().hex[:8]}"
    with atomic_file(Path(folder) / f"{stem}.npz", sync=sync) as f:
        np.savez(f, **arrays)


def read_shards(folder: str | Path, names: tuple[str, ...], kind: str, fix: str) -> Iterator[tuple]:
    """The arrays ``names`` of each ``shard-*.npz`` of ``folder`` (``write_shard``), in the order of the file names.

    A shard that cannot be read raises ``ValueError``: ``<shard>: not a readable <kind> (<why>); delete it, and
    <fix>``.
    """
    import numpy as np

    for shard in sorted(Path(folder).glob("shard-*.npz")):
        try:
            with np.load(shard, allow_pickle=False) as data:
                arrays = tuple(data[name] for name in names)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
            raise ValueError(f"{shard}: not a readable {kind} ({type(err).__name__}: {err}); "
                             f"delete it, and {fix}") from None
        yield arrays


class LockedFolder:
    """A cache folder written by one process at a time, with a ``manifest.json``.

    Subclasses keep ``done`` (finished ids) and ``failures`` (id -> reason),
    which their ``_read`` fills when the folder is opened; ``update_manifest``
    counts them. ``manifest_data`` is the manifest being written.
    """

    done: Any
    failures: dict

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.manifest_path = self.folder / "manifest.json"
        self.manifest_data: dict = {}
        self._lock = None

    def open(self):
        """Create the folder, hold ``.lock`` in it and read what is there (``_read``); returns the folder object.

        ``CacheLockedError`` if another writer holds the lock. Holding it, the temporary files a killed writer left
        are removed (``remove_temporary``); on any failure after that the lock is released again.
        """
        from filelock import FileLock, Timeout

        with file_errors(self.folder / ".lock", "create the lock file"):
            self.folder.mkdir(parents=True, exist_ok=True)
            lock = FileLock(self.folder / ".lock", thread_local=False)
            try:
                lock.acquire(timeout=0)
            except Timeout:
                raise CacheLockedError(f"another run is writing to {self.folder}; "
                                       "wait for it to finish or stop it") from None
        self._lock = lock
        try:
            remove_temporary(self.folder)
            self._read()
        except BaseException:
            self.close()
            raise
        return self

    def _read(self) -> None:
        """Read ``done`` and ``failures`` from the folder (each subclass its own way)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the lock (a subclass closes its files first); also what leaving a ``with`` block does."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def manifest(self) -> dict:
        """The manifest written last, or ``{}``; ``ValueError`` naming the file when it is not a JSON object."""
        path = self.manifest_path
        if not path.exists():
            return {}
        fix = "delete it to have it rewritten"
        if not path.is_file():
            raise ValueError(f"{path} is not a file; {fix}")
        try:
            with file_errors(path, "read"):
                data = json.loads(path.read_text(encoding="utf-8"))
        except JSON_ERRORS as err:
            raise ValueError(f"{path}: not valid JSON ({json_problem(err)}); {fix}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object, found {type(data).__name__}; {fix}")
        return data

    def update_manifest(self, **fields: Any) -> None:
        """Set ``fields`` in the manifest, refresh its counts and time, and write it."""
        self.manifest_data.update(fields, counts={"done": len(self.done), "failed": len(self.failures)},
                                  updated=now())
        self.write_manifest(self.manifest_data)

    def write_manifest(self, manifest: dict) -> None:
        """Write ``manifest`` as ``manifest.json`` (indented JSON, replaced atomically)."""
        write_json(self.manifest_path, manifest)



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
        except JSON_ERRORS as err:
            raise JsonlError(path, number, json_problem(err)) from None
