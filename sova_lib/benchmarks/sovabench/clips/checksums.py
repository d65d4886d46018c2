"""The SHA-256 of each video ``clips fetch`` finished, in ``<video root>/SHA256SUMS``, and its check.

The file has the form ``sha256sum`` writes and reads (``<64 hex digits>  <path relative to the root>``, one line
per file, ``/`` between folders), so ``cd <video root> && sha256sum -c SHA256SUMS`` checks it too. Lines are
appended as files finish; where a path appears twice, the later line holds. A line of another form is skipped.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["CHECKSUM_FILE", "digests", "read_checksums", "record_checksum", "verify"]

#: The checksum file's name, at the top of the video root.
CHECKSUM_FILE = "SHA256SUMS"

_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")
_BLOCK = 1 << 20


def digests(path) -> tuple[str, str]:
    """``(sha256, md5)`` hex digests of the file ``path``, read once in 1 MiB blocks."""
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            sha.update(block)
            md5.update(block)
    return sha.hexdigest(), md5.hexdigest()


def read_checksums(root) -> dict[str, str]:
    """``{relative path: sha256 hex}`` of ``<root>/SHA256SUMS`` (empty when there is none)."""
    path = Path(root) / CHECKSUM_FILE
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    return {found[2]: found[1] for line in lines if (found := _LINE.fullmatch(line.rstrip("\r")))}


def record_checksum(root, path, sha256: str) -> None:
    """Append the line of ``path`` (a file under ``root``) with its ``sha256`` to ``<root>/SHA256SUMS``, in one
    write (``O_APPEND``: lines of fetches running at once do not mix)."""
    line = f"{sha256}  {Path(path).resolve().relative_to(Path(root).resolve()).as_posix()}\n".encode()
    with open(Path(root) / CHECKSUM_FILE, "ab", buffering=0) as f:  # unbuffered: the line is one write()
        f.write(line)


def verify(root, path, recorded: dict[str, str]) -> str | None:
    """None when ``recorded`` (``SHA256SUMS`` under ``root``, as :func:`read_checksums` gives it) holds no line
    for ``path``; ``"ok"`` when the file's SHA-256 equals it; else a phrase saying it differs."""
    try:
        rel = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return None
    if rel not in recorded:
        return None
    if digests(path)[0] == recorded[rel]:
        return "ok"
    return f"a SHA-256 other than the one {CHECKSUM_FILE} records for {rel}"
