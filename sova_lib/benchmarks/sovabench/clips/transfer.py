"""One file's transfer from the bucket, bounded by what the server announced: ``HEAD``, then a resumable ``GET``.

:class:`Transfers` holds what the transfers of one ``fetch.fetch_sources`` run share (the httpx client, the stop
flag, the progress bar, whether any request has succeeded). Its rules for the bytes of a stranger's server:

* **Never more than announced.** ``HEAD`` gives the size (``Content-Length``; an answer without one is refused).
  A ``GET`` must agree with it before a byte is written: a 200 must announce that ``Content-Length``, a 206 the
  ``Content-Range`` ``bytes <have>-<size - 1>/<size>`` and the ``Content-Length`` of that range. The body is read
  as it is sent (``Accept-Encoding: identity``, raw bytes) and written only up to the announced size: a server
  that sends more fails that file, and its ``.part`` is removed, so no ``.part`` ever holds more than the size.
* **Verified bytes.** Before the first byte of a ``.part`` is written, the object's validators as that answer gives
  them (``ETag``, ``Last-Modified``: :class:`Announced`) are recorded beside it (``<name>.avi.part.json``). A resume
  sends them as ``If-Range`` (the ``ETag`` when it is strong, else ``Last-Modified``), so a server whose object
  changed answers 200 with the whole new object, which is written from the start; a ``.part`` without a record, or
  whose record differs from what ``HEAD`` says now, is started again from zero. When the ``ETag`` is a plain MD5
  (32 hex digits: S3's ETag of an object uploaded in one part), the finished file's MD5 must equal it. Then the video
  must open and decode (``sources.check_video``); it takes its name, and its SHA-256 is appended to the root's
  ``SHA256SUMS`` (``checksums``). A file that fails is removed with its record.
* **One fetch per file.** A file is written only under its lock, ``<name>.avi.lock`` beside it (``filelock``,
  removed before its release); a fetch that finds it held skips the file and says so (:class:`Busy`), and one that takes
  it after another fetch finished the file counts it present.
"""
from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from sova_lib.benchmarks.sovabench.clips.checksums import digests, record_checksum

__all__ = ["Announced", "Busy", "FetchEnvironmentError", "ItemFailed", "Transfers", "record_validators"]

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
_PLAIN_MD5 = re.compile(r'"([0-9a-fA-F]{32})"')
_IDENTITY = {"Accept-Encoding": "identity"}  # the body as the server sends it: its bytes are the ones announced


@dataclass(frozen=True)
class Announced:
    """What a server announced of an object: its ``size`` in bytes, its ``etag`` and ``last_modified`` headers
    ("" when absent)."""

    size: int
    etag: str = ""
    last_modified: str = ""

    @classmethod
    def of(cls, headers, size: int) -> Announced:
        return cls(size, headers.get("etag", ""), headers.get("last-modified", ""))

    @property
    def if_range(self) -> str:
        """The validator a resume sends as ``If-Range``: a strong ``ETag``, else ``Last-Modified``, else ""."""
        return self.etag if self.etag and not self.etag.startswith("W/") else self.last_modified

    @property
    def md5(self) -> str | None:
        """The MD5 the ``ETag`` is, lower case, when it is a plain one (32 hex digits in quotes), else None."""
        found = _PLAIN_MD5.fullmatch(self.etag)
        return found.group(1).lower() if found else None


def _record_path(part: Path) -> Path:
    return part.with_name(part.name + ".json")


def record_validators(part: Path, announced: Announced) -> None:
    """Record ``announced`` as the validators of the bytes ``part`` will hold (written whole, then renamed)."""
    record = _record_path(part)
    tmp = record.with_name(record.name + ".tmp")
    tmp.write_text(json.dumps(asdict(announced)) + "\n", encoding="utf-8")
    os.replace(tmp, record)


def _recorded(part: Path) -> Announced | None:
    try:
        data = json.loads(_record_path(part).read_text(encoding="utf-8"))
        return Announced(int(data["size"]), str(data["etag"]), str(data["last_modified"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _discard(part: Path) -> None:
    part.unlink(missing_ok=True)
    _record_path(part).unlink(missing_ok=True)


class FetchEnvironmentError(OSError):
    """The server cannot be reached or refuses the first requests: nothing will download; the message says why."""


class _Retry(Exception):
    """A transfer to try again (cut, wrong range, a server error)."""


class ItemFailed(Exception):
    """One file that cannot be fetched (not in the bucket, refused after others succeeded, more bytes than
    announced); the message says why."""


class Busy(Exception):
    """A file another fetch is writing (it holds the file's lock); the message says so."""


class Transfers:
    """The shared state of one fetch: the client, the stop flag, the bar, whether any request has succeeded."""

    def __init__(self, client, bar, attempts: int, backoff: float, check, root: Path, *, probe: int = 0,
                 layout: str = "--base-url"):
        self.client, self.bar, self.attempts, self.backoff, self.check = client, bar, attempts, backoff, check
        self.root, self.probe, self.layout = root, probe, layout
        self.misses = 0  # 404s before any success
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.any_ok = False
        self.bytes = 0

    def advance(self, n: int, *, arrived: bool = True) -> None:
        """``n`` bytes more on the bar (fewer for a negative ``n``: bytes given up), counted in ``bytes`` when they
        ``arrived`` in this run."""
        with self.lock:
            self.bytes += n if arrived else 0
            self.bar.update(n)

    def refused(self, url: str, what: str) -> Exception:
        """A refusal before any success is the environment; after one, that file's failure."""
        if not self.any_ok:
            return FetchEnvironmentError(f"{url}: {what} on the first requests; nothing can be fetched from there "
                                         "(check --base-url and the network)")
        return ItemFailed(what)

    def head(self, url: str) -> Announced:
        """What the server announces of ``url``: its size and validators."""
        import httpx

        try:
            r = self._retrying(lambda: self._answer(url, self.client.head(url, headers=_IDENTITY)))
        except (httpx.ConnectError, httpx.ConnectTimeout) as err:
            if self.any_ok:
                raise ItemFailed(f"cannot connect: {err}") from None
            raise FetchEnvironmentError(f"cannot reach {url}: {err} (no network, an unknown host or a wrong "
                                        "--base-url)") from None
        except (_Retry, httpx.TransportError) as err:
            raise ItemFailed(f"{type(err).__name__}: {err} after {self.attempts} attempts") from None
        if r.status_code == 404:
            with self.lock:
                self.misses += 0 if self.any_ok else 1
                if self.probe and self.misses >= self.probe and not self.any_ok:
                    raise FetchEnvironmentError(
                        f"the first {self.probe} key(s) all answer HTTP 404 ({url} among them): {self.layout} is "
                        "likely wrong; nothing fetched")
            raise ItemFailed("not in the bucket (HTTP 404)")
        if r.status_code != 200 or not r.headers.get("content-length", "").isdigit():
            raise ItemFailed(f"HTTP {r.status_code} without a size")
        if int(r.headers["content-length"]) == 0:
            raise ItemFailed("the server gives it as 0 bytes: no video")
        self.any_ok = True
        return Announced.of(r.headers, int(r.headers["content-length"]))

    def _answer(self, url: str, r):
        """``r``, unless its status is one to try again (a 5xx, 429: ``_Retry``) or a refusal (401, 403:
        :meth:`refused`)."""
        if r.status_code >= 500 or r.status_code == 429:
            raise _Retry(f"HTTP {r.status_code}")
        if r.status_code in (401, 403):
            raise self.refused(url, f"HTTP {r.status_code}")
        return r

    def _retrying(self, call):
        import httpx
        import tenacity

        attempts = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type((_Retry, httpx.ReadTimeout, httpx.WriteTimeout,
                                                    httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)),
            stop=tenacity.stop_after_attempt(self.attempts), reraise=True,
            wait=tenacity.wait_exponential(multiplier=self.backoff, max=60))
        return attempts(call)

    def _get_once(self, url: str, part: Path, head: Announced) -> None:
        size = head.size
        have = part.stat().st_size if part.exists() else 0
        recorded = _recorded(part)
        if have and (have > size or recorded != head or not head.if_range):  # bytes of another (or unknown) object
            _discard(part)
            self.advance(-have, arrived=False)
            have = 0
        if have == size:
            return
        headers = dict(_IDENTITY)
        if have:
            headers.update({"Range": f"bytes={have}-", "If-Range": head.if_range})
        with self.client.stream("GET", url, headers=headers) as r:
            mode = self._agreed(self._answer(url, r), part, have, size)
            answered = Announced.of(r.headers, size)
            if mode == "ab" and answered.etag and answered.etag != head.etag:
                _discard(part)
                raise _Retry(f"the server answered ETag {answered.etag} to a resume of ETag {head.etag}")
            if mode == "wb":
                self.advance(-have, arrived=False)
                have = 0
                record_validators(part, answered)  # before the first byte
            room = size - have
            with open(part, mode) as f:
                for chunk in r.iter_raw():  # as bytes arrive, so that a cut transfer keeps them
                    if self.stop.is_set():
                        raise KeyboardInterrupt
                    if len(chunk) > room:
                        f.close()
                        _discard(part)
                        raise ItemFailed(f"the server sent more than the {size} bytes it announced; nothing kept")
                    f.write(chunk)
                    f.flush()  # what arrived is on disk, whatever stops the run next
                    room -= len(chunk)
                    self.advance(len(chunk))
        if part.stat().st_size != size:
            raise _Retry(f"transfer ended at {part.stat().st_size} of {size} bytes")

    def _agreed(self, r, part: Path, have: int, size: int) -> str:
        """How to open ``part`` for the answer ``r`` to a GET from byte ``have`` of ``size``: ``"ab"`` (a 206 of
        the asked range), ``"wb"`` (a 200 of the whole); anything else raises before a byte is written."""
        length = r.headers.get("content-length", "")
        if r.status_code == 206:
            got = _CONTENT_RANGE.fullmatch(r.headers.get("content-range", ""))
            if got is None or (int(got.group(1)), int(got.group(2)), int(got.group(3))) != (have, size - 1, size):
                _discard(part)
                raise _Retry(f"the server answered range {r.headers.get('content-range')!r} to bytes={have}- "
                             f"of {size} bytes")
            if length != str(size - have):
                _discard(part)
                raise ItemFailed(f"the server announced Content-Length {length or 'none'} for the "
                                 f"{size - have} bytes of range {have}-{size - 1}; nothing kept")
            return "ab"
        if r.status_code == 200:
            if length != str(size):
                _discard(part)
                raise ItemFailed(f"the server announced Content-Length {length or 'none'} where HEAD gave "
                                 f"{size} bytes; nothing kept")
            return "wb"
        if r.status_code == 416:
            _discard(part)
            raise _Retry("the server refused the resume range (HTTP 416)")
        raise ItemFailed(f"HTTP {r.status_code}")

    def fetch(self, source, url: str, dest: Path, head: Announced) -> str | None:
        """Download, verify, check and rename one file, recording its SHA-256, holding the lock ``<name>.avi.lock``
        beside it; returns "" when fetched, None when another fetch finished it meanwhile, else why it failed (the
        file then removed). ``Busy`` when another fetch holds the lock."""
        from filelock import FileLock, Timeout

        dest.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(dest.with_name(dest.name + ".lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise Busy(f"another fetch is writing it (it holds {lock.lock_file}); skipped, run again when that one "
                       "ends") from None
        try:
            return None if dest.exists() else self._fetch_locked(source, url, dest, head)
        finally:  # removed while held: filelock does not take a lock whose file is gone (its st_nlink is 0)
            Path(lock.lock_file).unlink(missing_ok=True)
            lock.release()

    def _fetch_locked(self, source, url: str, dest: Path, head: Announced) -> str:
        """:meth:`fetch` under the lock: ``<name>.avi.part`` filled up to ``head.size`` bytes, resumed from what it
        holds when its recorded validators are ``head``'s, retried as ``fetch`` says; then verified and checked."""
        import httpx

        part = dest.with_name(dest.name + ".part")
        try:
            self._retrying(lambda: self._get_once(url, part, head))
        except (_Retry, httpx.TransportError) as err:
            raise ItemFailed(f"{err or type(err).__name__} after {self.attempts} attempts; what arrived is kept in "
                             f"{part.name} for the next run") from None
        recorded = _recorded(part) or head
        sha256, md5 = digests(part)
        if recorded.md5 is not None and md5 != recorded.md5:
            _discard(part)
            return f"downloaded, but its MD5 {md5} is not the ETag {recorded.etag} the server gave; removed"
        if self.check is not None:
            status = self.check(part, source)
            if status != "ok":
                _discard(part)
                return f"downloaded, but it {status if status.startswith('does') else 'has ' + status}; removed"
        os.replace(part, dest)
        record_checksum(self.root, dest, sha256)
        _record_path(part).unlink(missing_ok=True)
        return ""
