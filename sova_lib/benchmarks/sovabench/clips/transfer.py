"""One file's transfer from the bucket, bounded by what the server announced: ``HEAD``, then a resumable ``GET``.

:class:`Transfers` holds what the transfers of one ``fetch.fetch_sources`` run share (the httpx client, the stop
flag, the progress bar, whether any request has succeeded). Its rules for the bytes of a stranger's server:

* **Never more than announced.** ``HEAD`` gives the size (``Content-Length``; an answer without one is refused).
  A ``GET`` must agree with it before a byte is written: a 200 must announce that ``Content-Length``, a 206 the
  ``Content-Range`` ``bytes <have>-<size - 1>/<size>`` and the ``Content-Length`` of that range. The body is read
  as it is sent (``Accept-Encoding: identity``, raw bytes) and written only up to the announced size: a server
  that sends more fails that file, and its ``.part`` is removed, so no ``.part`` ever holds more than the size.
"""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path

__all__ = ["FetchEnvironmentError", "ItemFailed", "Transfers"]

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class FetchEnvironmentError(OSError):
    """The server cannot be reached or refuses the first requests: nothing will download; the message says why."""


class _Retry(Exception):
    """A transfer to try again (cut, wrong range, a server error)."""


class ItemFailed(Exception):
    """One file that cannot be fetched (not in the bucket, refused after others succeeded, more bytes than
    announced); the message says why."""


class Transfers:
    """The shared state of one fetch: the client, the stop flag, the bar, whether any request has succeeded."""

    def __init__(self, client, bar, attempts: int, backoff: float, check):
        self.client, self.bar, self.attempts, self.backoff, self.check = client, bar, attempts, backoff, check
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.any_ok = False
        self.bytes = 0

    def advance(self, n: int) -> None:
        with self.lock:
            self.bytes += n
            self.bar.update(n)

    def refused(self, url: str, what: str) -> Exception:
        """A refusal before any success is the environment; after one, that file's failure."""
        if not self.any_ok:
            return FetchEnvironmentError(f"{url}: {what} on the first requests; nothing can be fetched from there "
                                         "(check --base-url and the network)")
        return ItemFailed(what)

    def head(self, url: str) -> int:
        """The size in bytes the server gives for ``url``."""
        import httpx

        try:
            r = self._retrying(lambda: self._head_once(url))
        except (httpx.ConnectError, httpx.ConnectTimeout) as err:
            if self.any_ok:
                raise ItemFailed(f"cannot connect: {err}") from None
            raise FetchEnvironmentError(f"cannot reach {url}: {err} (no network, an unknown host or a wrong "
                                        "--base-url)") from None
        except (_Retry, httpx.TransportError) as err:
            raise ItemFailed(f"{type(err).__name__}: {err} after {self.attempts} attempts") from None
        if r.status_code in (401, 403):
            raise self.refused(url, f"HTTP {r.status_code}")
        if r.status_code == 404:
            raise ItemFailed("not in the bucket (HTTP 404)")
        if r.status_code != 200 or not r.headers.get("content-length", "").isdigit():
            raise ItemFailed(f"HTTP {r.status_code} without a size")
        self.any_ok = True
        return int(r.headers["content-length"])

    def _head_once(self, url: str):
        r = self.client.head(url, headers={"Accept-Encoding": "identity"})
        if r.status_code >= 500 or r.status_code == 429:
            raise _Retry(f"HTTP {r.status_code}")
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

    def download(self, url: str, part: Path, size: int) -> None:
        """``part`` filled up to ``size`` bytes, resumed from what it holds, retried as ``fetch`` says."""
        import httpx

        try:
            self._retrying(lambda: self._get_once(url, part, size))
        except (_Retry, httpx.TransportError) as err:
            raise ItemFailed(f"{err or type(err).__name__} after {self.attempts} attempts; what arrived is kept in "
                             f"{part.name} for the next run") from None

    def _get_once(self, url: str, part: Path, size: int) -> None:
        have = part.stat().st_size if part.exists() else 0
        if have > size:
            part.unlink()
            have = 0
        if have == size:
            return
        headers = {"Accept-Encoding": "identity"}
        if have:
            headers["Range"] = f"bytes={have}-"
        with self.client.stream("GET", url, headers=headers) as r:
            mode = self._agreed(url, r, part, have, size)
            if mode == "wb":
                with self.lock:
                    self.bar.update(-have)
                have = 0
            room = size - have
            with open(part, mode) as f:
                for chunk in r.iter_raw():  # as bytes arrive, so that a cut transfer keeps them
                    if self.stop.is_set():
                        raise KeyboardInterrupt
                    if len(chunk) > room:
                        f.close()
                        part.unlink(missing_ok=True)
                        raise ItemFailed(f"the server sent more than the {size} bytes it announced; nothing kept")
                    f.write(chunk)
                    f.flush()  # what arrived is on disk, whatever stops the run next
                    room -= len(chunk)
                    self.advance(len(chunk))
        if part.stat().st_size != size:
            raise _Retry(f"transfer ended at {part.stat().st_size} of {size} bytes")

    def _agreed(self, url: str, r, part: Path, have: int, size: int) -> str:
        """How to open ``part`` for the answer ``r`` to a GET from byte ``have`` of ``size``: ``"ab"`` (a 206 of
        the asked range), ``"wb"`` (a 200 of the whole); anything else raises before a byte is written."""
        length = r.headers.get("content-length", "")
        if r.status_code == 206:
            got = _CONTENT_RANGE.fullmatch(r.headers.get("content-range", ""))
            if got is None or (int(got.group(1)), int(got.group(2)), int(got.group(3))) != (have, size - 1, size):
                part.unlink(missing_ok=True)
                raise _Retry(f"the server answered range {r.headers.get('content-range')!r} to bytes={have}- "
                             f"of {size} bytes")
            if length != str(size - have):
                part.unlink(missing_ok=True)
                raise ItemFailed(f"the server announced Content-Length {length or 'none'} for the "
                                 f"{size - have} bytes of range {have}-{size - 1}; nothing kept")
            return "ab"
        if r.status_code == 200:
            if length != str(size):
                part.unlink(missing_ok=True)
                raise ItemFailed(f"the server announced Content-Length {length or 'none'} where HEAD gave "
                                 f"{size} bytes; nothing kept")
            return "wb"
        if r.status_code == 416:
            part.unlink(missing_ok=True)
            raise _Retry("the server refused the resume range (HTTP 416)")
        if r.status_code >= 500 or r.status_code == 429:
            raise _Retry(f"HTTP {r.status_code}")
        if r.status_code in (401, 403):
            raise self.refused(url, f"HTTP {r.status_code}")
        raise ItemFailed(f"HTTP {r.status_code}")

    def fetch(self, source, url: str, dest: Path, size: int) -> str:
        """Download, check and rename one file; returns "" or why it failed (the file then removed)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        self.download(url, part, size)
        if self.check is not None:
            status = self.check(part, source)
            if status != "ok":
                part.unlink(missing_ok=True)
                return f"downloaded, but it {status if status.startswith('does') else 'has ' + status}; removed"
        os.replace(part, dest)
        return ""
