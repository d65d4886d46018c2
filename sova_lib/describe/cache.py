"""The description cache: one folder per configuration, append-only and resumable.

``cache_key(...)`` gathers everything that changes a description (backend,
``describer.config()``, prompt texts, system prompt, sampling rate, sampler
version, crop source, and the fingerprint of the weights: the content of a
local model folder, a hub id's commit, what a server reports of its model);
``config_hash(key)`` is 12 hex digits of its SHA-256 (``sova_lib.describe.provenance``, which reads a folder back)
and ``cache_folder(cache_dir, key)`` the folder it names::

    <cache_dir>/descriptions/<readable name>__<config hash>/
        descriptions.jsonl   one {"id": ..., "text": ...} line per item, in finishing order
        errors.jsonl         one {"id": ..., "error": ..., "time": ...} line per failure
        manifest.json        the configuration, counts, throughput and times

``open_cache(cache_dir, key, source=...)`` is the one way a folder is made:
the runner, ``sova import`` and a construction of texts (tests) all call it, so
every ``manifest.json`` has the same fields (``new_manifest``; the schema is
in ``cache/README.md``). ``DescriptionCache`` is one such folder, opened under
an exclusive lock (``sova_lib.storage``: ``CacheLockedError`` when another process holds it). Lines are appended and
flushed one at a time, and fsync'd every ``sync_every`` seconds; a last line
torn by a killed run is cut off when the folder is opened again, and complete
lines are never lost (a whole last record that only lacks its line end is
kept, and the line end added). An id found twice in ``descriptions.jsonl``
with the same text counts once; with two different texts the folder is
refused, naming both lines: the rule ``sova <benchmark> evaluate`` applies to
the same file (``sova_lib.item_vectors.put_text``). Nothing that looks like a
secret (an API key, a token) is ever written to a key or manifest, and error
lines are written with ``Authorization`` and ``Bearer`` values redacted.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sova_lib._version import __version__
from sova_lib.describe.provenance import MANIFEST_SCHEMA, config_hash
from sova_lib.item_vectors import put_text
from sova_lib.storage import (
    JSON_ERRORS,
    CacheLockedError,
    LockedFolder,
    file_errors,
    json_line,
    json_problem,
    now,
    redact,
)

if TYPE_CHECKING:
    from sova_lib.describe.prompts import Prompt

__all__ = ["SOURCES", "CacheLockedError", "DescriptionCache", "cache_folder", "cache_key", "import_texts",
           "new_manifest", "open_cache", "read_failures", "software_versions"]

_SECRET_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "password", "secret",
                          "authorization"})


def cache_key(backend: str, describer_config: dict, prompt: Prompt, fps: float | None,
              sampler_version: str | None = None, crop_source: str = "none", *,
              frames: int | None = None, max_frames: int | None = None, input_name: str | None = None) -> dict:
    """Everything that changes the text; its ``config_hash`` names the cache folder.

    ``sampler_version`` defaults to ``sova_lib.video.SAMPLER_VERSION``;
    ``fps`` is ``None`` for texts that were not made from sampled frames, or were made from ``frames`` evenly
    spaced frames per clip; ``max_frames`` caps the rate's count (``sova_lib.video.Sampling``). ``frames`` and
    ``max_frames`` enter the key only when set, so the paper's default (1 fps, no cap) keeps its folders.
    The weights' ``fingerprint`` (the describer's ``fingerprint()``, ``runner.describer_fingerprint``, e.g.
    ``{"method": "folder-digest", "sha256": ...}``) joins the key last (``runner.RunPlan.key_with``); a describer
    without weights (motion) has none, and its key has no such field. ``input_name``: the benchmark or input the
    items come from (``"quickstart"``, ``"sovabench"``, ``"muvr-windows"``, ...), the ``input`` field and the start
    of the folder's readable name; a run on any folder of files has none (``cache/README.md`` says why it enters
    the hash).
    """
    from sova_lib.video.frames import SAMPLER_VERSION  # a key is made by a run; reading a cache needs no video code

    _check_no_secrets(describer_config)
    counts = {k: int(v) for k, v in (("frames", frames), ("max_frames", max_frames)) if v is not None}
    return {
        **({} if input_name is None else {"input": input_name}),
        "backend": backend,
        "describer": describer_config,
        "prompt": {"name": prompt.name, "video": prompt.video, "image": prompt.image},
        "system_prompt": prompt.system_prompt,
        "fps": None if fps is None else float(fps),
        "sampler_version": SAMPLER_VERSION if sampler_version is None else sampler_version,
        "crop_source": crop_source,
        **counts,
    }


def _check_no_secrets(obj: Any, where: str = "describer config") -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if str(k).lower() in _SECRET_KEYS:
                raise ValueError(f"{where} holds {k!r}: secrets must never be written to a cache manifest")
            _check_no_secrets(v, where)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _check_no_secrets(v, where)


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:limit] or "x"


def cache_folder(cache_dir: str | Path, key: dict, prefix: str = "", name: str | None = None,
                 kind: str = "descriptions") -> Path:
    """``<cache_dir>/<kind>/<prefix><name>__<config hash>``, the name cut to a file-name-safe slug.

    ``name`` defaults to ``<input>-<backend>-<model>-<prompt>-<fps>fps``, read from ``key``; ``kind`` is
    ``descriptions`` (the default) or ``frame-embeddings`` (``contrastive.store.embedding_folder``).
    """
    if name is None:
        model = str(key["describer"].get("model") or "")
        fps = "" if key["fps"] is None else f"{key['fps']:g}fps"
        count = f"{key['frames']}frames" if key.get("frames") else f"max{key['max_frames']}" if key.get("max_frames") else ""
        parts = [key.get("input"), key["backend"], model.rstrip("/").rsplit("/", 1)[-1], key["prompt"]["name"], fps,
                 count]
        name = "-".join(_slug(p) for p in parts if p)
    return Path(cache_dir) / kind / f"{prefix}{_slug(name, 80)}__{config_hash(key)}"


#: What can make a description cache: a describer run, an import of another tool's output, a construction.
SOURCES = ("run", "import", "synthetic")


def software_versions() -> dict:
    """Versions of this library, Python, transformers and torch (``None`` where not installed).

    Recorded in every manifest but never part of the key: upgrading a library
    does not throw away cached descriptions.
    """
    from importlib import metadata  # 25 ms of imports that a warm evaluation, which writes no manifest, never needs

    found = {"sova_lib": __version__, "python": platform.python_version()}
    for dist in ("transformers", "torch"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = None
    return found


def new_manifest(key: dict, *, source: str, details: dict | None = None, device: str | None = None,
                 created: str | None = None) -> dict:
    """The manifest of a cache of ``key``: the one schema every writer uses.

    Fields: ``schema``; the key's fields (``backend``, ``describer``,
    ``prompt``, ``system_prompt``, ``fps``, ``sampler_version``,
    ``crop_source``, and ``fingerprint`` where the describer has weights)
    with ``config_hash`` and ``hash_fields``; ``model`` and
    ``revision`` (from the describer config); ``source`` (one of ``SOURCES``)
    and ``source_details`` (what was imported, how texts were constructed,
    the clip manifest); ``versions`` (``software_versions()``) and ``device``;
    ``counts`` (``done``, ``failed``); ``created`` and ``updated``. The runner
    adds ``run`` (the backend's run information), ``runs`` and ``last_run``.
    """
    if source not in SOURCES:
        raise ValueError(f"unknown cache source {source!r}; choose one of {SOURCES}")
    created_now = now()
    return {
        "schema": MANIFEST_SCHEMA, **key, "config_hash": config_hash(key), "hash_fields": sorted(key),
        "model": key["describer"].get("model"), "revision": key["describer"].get("revision"),
        "source": source, "source_details": details or {}, "versions": software_versions(), "device": device,
        "counts": {"done": 0, "failed": 0}, "created": created or created_now, "updated": created_now,
    }


def open_cache(cache_dir: str | Path, key: dict, *, source: str, prefix: str = "", name: str | None = None,
               details: dict | None = None, device: str | None = None, sync_every: float = 5.0) -> "DescriptionCache":
    """Open (creating it if needed) the cache folder of ``key`` and write its manifest; the one cache writer.

    The folder is ``cache_folder(cache_dir, key, prefix, name)``; its manifest
    is ``new_manifest(key, ...)``, written at once for a new folder, and for an
    existing one (keeping its ``created`` time) at the writer's first
    ``update_manifest`` (so a run with nothing to do leaves it alone). Close
    the returned cache (or use it in a ``with``).
    """
    cache = DescriptionCache(cache_folder(cache_dir, key, prefix, name), sync_every).open()
    try:
        previous = cache.manifest()
        cache.manifest_data = new_manifest(key, source=source, details=details, device=device,
                                           created=previous.get("created"))
        if not previous:
            cache.update_manifest()
    except BaseException:
        cache.close()
        raise
    return cache


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    """The records of a JSON Lines file written by ``DescriptionCache``, each with its line number, repaired.

    A last line that does not parse was cut short by an interrupted run: it
    is cut off the file (every complete line before it is kept). A last line
    that parses but lacks its line end is whole: it is kept, and the line end
    is added. A broken line elsewhere raises ``ValueError`` naming the file
    and line.
    """
    if not path.exists():
        return []
    with file_errors(path, "read"):
        data = path.read_bytes()
    pieces = data.split(b"\n")  # the last piece is empty when the file ends with a line end
    last = max((n for n, raw in enumerate(pieces, start=1) if raw.strip()), default=0)
    records: list[tuple[int, dict]] = []
    pos = 0  # where the line starts in the file
    for number, raw in enumerate(pieces, start=1):
        try:
            if raw.strip():
                rec = json.loads(raw)
                if not isinstance(rec, dict) or "id" not in rec:
                    raise ValueError("not an object with an 'id'")
                records.append((number, rec))
        except JSON_ERRORS as err:
            if number != last:
                raise ValueError(f"{path}, line {number}: broken record ({json_problem(err)}); "
                                 "remove or fix that line, then run again") from None
            print(f"sova: {path}: cut off an incomplete last line ({len(data) - pos} bytes) "
                  "left by an interrupted run", file=sys.stderr)
            with file_errors(path, "repair"), open(path, "r+b") as f:
                f.truncate(pos)
            return records
        pos += len(raw) + 1
    if pieces[-1]:  # a whole record whose line end was never written
        with file_errors(path, "repair"), open(path, "ab") as f:
            f.write(b"\n")
    return records


def read_failures(path: Path) -> dict:
    """id -> reason of each record of an ``errors.jsonl`` (the last one per id; a torn last line is cut off)."""
    return {rec["id"]: rec.get("error", "") for _, rec in _read_jsonl(path)}


class DescriptionCache(LockedFolder):
    """One cache folder: append-only descriptions and errors, and the manifest.

    ``open()`` takes an exclusive lock (a second run on the same folder fails
    at once), repairs a torn last line, reads what is there: ``done`` (id ->
    text) and ``failures`` (id -> reason, for ids not described since), and
    opens both files for appending.
    """

    def __init__(self, folder: str | Path, sync_every: float = 5.0):
        super().__init__(folder)
        self.descriptions_path = self.folder / "descriptions.jsonl"
        self.errors_path = self.folder / "errors.jsonl"
        self.sync_every = sync_every
        self.done: dict[Any, str] = {}
        self.failures: dict[Any, str] = {}
        self._files: list = []
        self._last_sync = time.monotonic()

    def _read(self) -> None:
        self._load()
        with file_errors(self.folder, "write to"):
            for path in (self.descriptions_path, self.errors_path):
                self._files.append(open(path, "a", encoding="utf-8"))
        self._desc, self._err = self._files

    def recount(self) -> None:
        """Read ``done`` and ``failures`` back from the two logs: after Ctrl-C, which can fall between a line's write
        and its count, so that the manifest's counts are those of the lines on disk."""
        self.sync()
        self._load()

    def _load(self) -> None:
        """``done`` and ``failures`` as the two logs hold them (a torn last line cut off)."""
        done, lines = {}, {}
        for number, rec in _read_jsonl(self.descriptions_path):
            put_text(done, lines, rec["id"], rec.get("text", ""), f"{self.descriptions_path}, line {number}")
        self.done = done
        self.failures = {k: v for k, v in read_failures(self.errors_path).items() if k not in done}

    def add(self, id: Any, text: str, cut: int | None = None) -> None:
        """Append ``id``'s description; an empty or whitespace-only text is flagged ``"empty": true``.

        ``cut``: the answer's length in characters before it was cut to ``text`` (recorded as ``"cut"``).
        """
        record = {"id": id, "text": text}
        if not text.strip():
            record["empty"] = True
        if cut is not None:
            record["cut"] = cut
        self._append(self._desc, record)
        self.done[id] = text
        self.failures.pop(id, None)

    def add_error(self, id: Any, reason: str) -> None:
        """Append ``id``'s failure (``Authorization`` and ``Bearer`` values redacted)."""
        reason = redact(reason)
        self._append(self._err, {"id": id, "error": reason, "time": now()})
        self.failures[id] = reason

    def _append(self, file, record: dict) -> None:
        with file_errors(file.name, "write"):
            file.write(json_line(record))
            file.flush()
        if time.monotonic() - self._last_sync >= self.sync_every:
            self.sync()

    def sync(self) -> None:
        for f in self._files:
            with file_errors(f.name, "write"):
                f.flush()
                os.fsync(f.fileno())
        self._last_sync = time.monotonic()

    def write_manifest(self, manifest: dict) -> None:
        """Write ``manifest`` (``LockedFolder.write_manifest``) after checking it holds no secret."""
        _check_no_secrets(manifest, "manifest")
        super().write_manifest(manifest)

    def close(self) -> None:
        try:
            self.sync()
        finally:
            for f in self._files:
                with contextlib.suppress(OSError):  # the data could not be written: sync() has said so
                    f.close()
            self._files = []
            super().close()


def import_texts(cache_dir: str | Path, key: dict, texts: dict, *, details: dict | None = None) -> tuple[Path, int]:
    """Write descriptions made elsewhere (id -> text) into the cache folder of ``key``, named ``imported-...``.

    Returns the folder and how many texts were added; texts already there
    are skipped. An id already there with another text raises ``ValueError``
    (import into a fresh cache folder instead).
    """
    added = 0
    with open_cache(cache_dir, key, source="import", prefix="imported-", details=details) as cache:
        for id, text in texts.items():
            if id in cache.done:
                if cache.done[id] != text:
                    raise ValueError(f"id {id!r} is already in {cache.descriptions_path} with another text; "
                                     "import into a fresh --cache-dir")
                continue
            cache.add(id, text)
            added += 1
        cache.update_manifest()
    return cache.folder, added
