"""What a model's files are, as one digest: the content fingerprint that keys the caches of its outputs.

``folder_fingerprint(folder)`` is the SHA-256 over the model files of a
folder (``model_files``), taken in the order of their sorted relative paths:
for each file its relative path (UTF-8), then the 32-byte SHA-256 of its
bytes. A model folder rebuilt in place (a new checkpoint saved over the old
one) gets a new fingerprint, so the description cache, the frame-vector cache
and the sentence-vector cache of its outputs each get a new folder.

Hashing gigabytes of weights takes minutes, so each file's digest is
computed once per version of the file and remembered in a small memo: a JSON
object ``{absolute path: [size, mtime_ns, ctime_ns, sha256]}``, at
``$SOVA_DIGEST_MEMO`` if set, else ``$XDG_CACHE_HOME/sova_lib/file-digests.json``
(``~/.cache/...``). A file whose size and times still match is not read again;
any write to a file changes its times (the change time ``ctime`` even when a
copy keeps the modification time), so a changed file is always hashed again.
As git does with its index, a file changed less than ``SETTLED_SECONDS`` before
it was read is not remembered: on a file system whose clock ticks coarsely, a
second write of the same size within one tick would leave its times as they
were.
The memo is only a memo: writers merge their entries under a lock and replace
the file atomically, a reader needs no lock, and one that cannot be read or
written is computed again or left as it was.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import suppress
from pathlib import Path

from sova_lib.storage import JSON_ERRORS, write_json

__all__ = ["MEMO_VARIABLE", "SETTLED_SECONDS", "content_fingerprint", "file_digests", "folder_fingerprint",
           "local_folder", "memo_path", "model_files"]

#: The environment variable that relocates the memo of file digests.
MEMO_VARIABLE = "SOVA_DIGEST_MEMO"

#: A file's digest is remembered only when its last change is at least this old (seconds) when it is read.
SETTLED_SECONDS = 2.0

#: Files of a model folder that never change what the model computes: documentation, pictures, and the state a
#: training run keeps beside a checkpoint (optimiser, scheduler, random generators, the trainer's log).
_NOT_MODEL = frozenset({".md", ".rst", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".pdf"})
_TRAINER_STATE = frozenset({"optimizer.pt", "optimizer.bin", "scheduler.pt", "trainer_state.json",
                            "training_args.bin"})


def memo_path() -> Path:
    """Where the memo of file digests lives: ``$SOVA_DIGEST_MEMO``, else under the user's cache folder."""
    if os.environ.get(MEMO_VARIABLE):  # the home folder is not looked up: a container may have none
        return Path(os.environ[MEMO_VARIABLE])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sova_lib" / "file-digests.json"


def local_folder(name: str | Path | None) -> Path | None:
    """The folder on this machine that ``name`` (a model's path or a hub id) names, as one path: absolute, symlinks
    followed, no trailing slash; None when ``name`` names no folder here (a hub id, a server's own path, "")."""
    if name is None or not str(name).strip():
        return None
    folder = Path(str(name)).expanduser()
    return folder.resolve() if folder.is_dir() else None


def model_files(folder: str | Path) -> list[Path]:
    """The files below ``folder`` that make the model, sorted by relative path.

    Weights, configuration, tokenizer, processor, chat template and any modeling code: every file except those
    under a hidden folder or with a hidden name (``.git``, ``.cache``, ``.gitattributes``), documentation and
    pictures (``README.md``, ``*.png``, ...), and a training run's state (``optimizer.pt``, ``scheduler.pt``,
    ``rng_state*.pth``, ``trainer_state.json``, ``training_args.bin``).
    """
    folder = Path(folder)
    return sorted(path for path in folder.rglob("*") if not (
        any(part.startswith(".") for part in path.relative_to(folder).parts) or path.suffix.lower() in _NOT_MODEL
        or path.name in _TRAINER_STATE or path.name.startswith("rng_state")) and path.is_file())


def _read_memo(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *JSON_ERRORS):
        return {}
    return data if isinstance(data, dict) else {}


def _stamp(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def file_digests(paths) -> dict[Path, str]:
    """The SHA-256 (hex) of each file of ``paths``, read only for the files the memo does not know as they are now."""
    memo_file = memo_path()
    memo = _read_memo(memo_file)
    digests: dict[Path, str] = {}
    new: dict[str, list] = {}
    for path in paths:
        real = os.path.realpath(path)  # a hub snapshot's files are links to its blobs
        stamp = _stamp(os.stat(real))
        known = memo.get(real)
        if isinstance(known, list) and len(known) == 4 and known[:3] == stamp and isinstance(known[3], str):
            digests[Path(path)] = known[3]
            continue
        with open(real, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        settled = time.time_ns() - max(stamp[1:]) >= SETTLED_SECONDS * 1e9
        if settled and _stamp(os.stat(real)) == stamp:  # not written lately, nor while it was read
            new[real] = [*stamp, digest]
        digests[Path(path)] = digest
    if new:
        _remember(memo_file, new)
    return digests


def _remember(memo_file: Path, new: dict) -> None:
    """Merge ``new`` into the memo file under its lock; a memo that cannot be written is left as it is."""
    from filelock import FileLock, Timeout

    with suppress(OSError, Timeout):
        memo_file.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(memo_file) + ".lock", timeout=30):
            write_json(memo_file, {**_read_memo(memo_file), **new}, indent=None)


def folder_fingerprint(folder: str | Path) -> str:
    """The SHA-256 (64 hex digits) of ``folder``'s model files (``model_files``; module docstring)."""
    folder = Path(folder)
    files = model_files(folder)
    digests = file_digests(files)
    total = hashlib.sha256()
    for path in files:
        total.update(str(path.relative_to(folder)).encode())
        total.update(bytes.fromhex(digests[path]))
    return total.hexdigest()


def content_fingerprint(path: str | Path) -> dict:
    """What the file or folder ``path`` holds, as one object: ``{"method": "file-digest", "sha256": ...}``, the
    SHA-256 of a file's bytes, or ``{"method": "folder-digest", "sha256": ...}``, a folder's ``folder_fingerprint``
    (its files but hidden ones, documentation and pictures). It names nothing of where ``path`` is, so the same
    content has the same fingerprint however it is spelled and on every machine."""
    path = Path(path)
    if path.is_dir():
        return {"method": "folder-digest", "sha256": folder_fingerprint(path)}
    return {"method": "file-digest", "sha256": file_digests([path])[path]}
