"""The description cache: one folder per configuration, append-only and resumable.

``cache_key(...)`` gathers everything that changes a description (backend,
``describer.config()``, prompt texts, system prompt, sampling rate, sampler
version, crop source); ``config_hash(key)`` is 12 hex digits of its SHA-256
and ``cache_folder(cache_dir, key)`` the folder it names::

    <cache_dir>/descriptions/<readable name>__<config hash>/
        descriptions.jsonl   one {"id": ..., "text": ...} line per item, in finishing order
        errors.jsonl         one {"id": ..., "error": ..., "time": ...} line per failure
        manifest.json        the configuration, counts, throughput and times

``DescriptionCache`` is one such folder, opened under an exclusive lock
(``CacheLockedError`` when another process holds it). Lines are appended and
flushed one at a time, and fsync'd every ``sync_every`` seconds; a last line
torn by a killed run is cut off when the folder is opened again, and complete
lines are never lost. Nothing that looks like a secret (an API key, a token)
is ever written to a key or manifest.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sova_lib.describe.prompts import Prompt
from sova_lib.video.frames import SAMPLER_VERSION

__all__ = ["CacheLockedError", "DescriptionCache", "cache_folder", "cache_key", "config_hash"]

_SECRET_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "password", "secret",
                          "authorization"})


def config_hash(key: dict) -> str:
    """12 hex digits of the SHA-256 of ``key`` as canonical JSON."""
    blob = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def cache_key(backend: str, describer_config: dict, prompt: Prompt, fps: float,
              sampler_version: str | None = None, crop_source: str = "none") -> dict:
    """Everything that changes the text; its ``config_hash`` names the cache folder.

    ``sampler_version`` defaults to ``sova_lib.video.SAMPLER_VERSION``.
    """
    _check_no_secrets(describer_config)
    if sampler_version is None:
        sampler_version = SAMPLER_VERSION
    return {
        "backend": backend,
        "describer": describer_config,
        "prompt": {"name": prompt.name, "video": prompt.video, "image": prompt.image},
        "system_prompt": prompt.system_prompt,
        "fps": float(fps),
        "sampler_version": sampler_version,
        "crop_source": crop_source,
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


def cache_folder(cache_dir: str | Path, key: dict, prefix: str = "") -> Path:
    """``<cache_dir>/descriptions/<prefix><backend>-<model>-<prompt>-<fps>fps__<config hash>``."""
    model = str(key["describer"].get("model") or "")
    parts = [key["backend"], model.rstrip("/").rsplit("/", 1)[-1], key["prompt"]["name"], f"{key['fps']:g}fps"]
    name = prefix + "-".join(_slug(p) for p in parts if p)
    return Path(cache_dir) / "descriptions" / f"{name}__{config_hash(key)}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _read_jsonl(path: Path, repair: bool) -> list[dict]:
    """The records of a JSON Lines file written by ``DescriptionCache``.

    A last line with no line end, or one that does not parse, was cut short by
    an interrupted run: with ``repair`` it is cut off the file (every complete
    line before it is kept). A broken line elsewhere raises ``ValueError``
    naming the file and line.
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[dict] = []
    pos, number = 0, 0
    while pos < len(data):
        number += 1
        end = data.find(b"\n", pos)
        raw = data[pos:] if end < 0 else data[pos:end]
        is_last = end < 0 or not data[end + 1:].strip()
        try:
            if end < 0:
                raise ValueError("no line end")
            if raw.strip():
                rec = json.loads(raw)
                if not isinstance(rec, dict) or "id" not in rec:
                    raise ValueError("not an object with an 'id'")
                records.append(rec)
        except ValueError as err:
            if not is_last:
                raise ValueError(f"{path}, line {number}: broken record ({err}); "
                                 "remove or fix that line, then run again") from None
            if repair:
                print(f"sova: {path}: cut off an incomplete last line ({len(data) - pos} bytes) "
                      "left by an interrupted run", file=sys.stderr)
                with open(path, "r+b") as f:
                    f.truncate(pos)
            break
        pos = end + 1
    return records


class CacheLockedError(RuntimeError):
    """Another process is writing to the same cache folder."""


class DescriptionCache:
    """One cache folder: append-only descriptions and errors, and the manifest.

    ``open()`` takes an exclusive lock (a second run on the same folder fails
    at once), repairs a torn last line and reads what is there: ``done`` (id ->
    text) and ``failures`` (id -> reason, for ids not described since).
    """

    def __init__(self, folder: str | Path, sync_every: float = 5.0):
        self.folder = Path(folder)
        self.descriptions_path = self.folder / "descriptions.jsonl"
        self.errors_path = self.folder / "errors.jsonl"
        self.manifest_path = self.folder / "manifest.json"
        self.sync_every = sync_every
        self.done: dict[Any, str] = {}
        self.failures: dict[Any, str] = {}
        self._files: list = []
        self._last_sync = time.monotonic()

    def open(self) -> "DescriptionCache":
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.folder / ".lock", "w")
        try:
            import fcntl

            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # no advisory locks on this platform
            pass
        except OSError:
            self._lock.close()
            raise CacheLockedError(f"another run is writing to {self.folder}; "
                                   "wait for it to finish or stop it") from None
        try:
            described = _read_jsonl(self.descriptions_path, repair=True)
            failed = _read_jsonl(self.errors_path, repair=True)
        except BaseException:
            self._lock.close()
            self._lock = None
            raise
        for rec in described:
            self.done.setdefault(rec["id"], rec.get("text", ""))
        for rec in failed:
            self.failures[rec["id"]] = rec.get("error", "")
        for key in self.done:
            self.failures.pop(key, None)
        self._desc = open(self.descriptions_path, "a", encoding="utf-8")
        self._err = open(self.errors_path, "a", encoding="utf-8")
        self._files = [self._desc, self._err]
        return self

    def manifest(self) -> dict:
        """The manifest written last, or ``{}``."""
        if not self.manifest_path.exists():
            return {}
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except ValueError as err:
            raise ValueError(f"{self.manifest_path}: not valid JSON ({err}); delete it to have it rewritten") from None

    def add(self, id: Any, text: str) -> None:
        self._desc.write(json.dumps({"id": id, "text": text}, ensure_ascii=False) + "\n")
        self._desc.flush()
        self.done[id] = text
        self.failures.pop(id, None)
        self._maybe_sync()

    def add_error(self, id: Any, reason: str) -> None:
        self._err.write(json.dumps({"id": id, "error": reason, "time": _now()}, ensure_ascii=False) + "\n")
        self._err.flush()
        self.failures[id] = reason
        self._maybe_sync()

    def _maybe_sync(self) -> None:
        if time.monotonic() - self._last_sync >= self.sync_every:
            self.sync()

    def sync(self) -> None:
        for f in self._files:
            f.flush()
            os.fsync(f.fileno())
        self._last_sync = time.monotonic()

    def write_manifest(self, manifest: dict) -> None:
        _check_no_secrets(manifest, "manifest")
        tmp = self.manifest_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.manifest_path)

    def close(self) -> None:
        if self._files:
            self.sync()
            for f in self._files:
                f.close()
            self._files = []
        if getattr(self, "_lock", None) is not None:
            self._lock.close()
            self._lock = None
