"""Downloading the MEVA source videos of a protocol from the public bucket over HTTPS, resumable and checked.

:func:`fetch_sources` takes the :class:`sources.Source` list of a protocol and downloads each MEVA video that is
not yet under the video root to ``<video root>/<bucket key>`` (``drops-123-r13/<date>/<hour>/<name>.avi``, the
bucket's own layout, which ``extract.find_source_videos`` finds at any depth):

1. ``HEAD`` every file, ``concurrency`` at a time, for its size (the progress bar's total: bytes, rate, time
   left). A refused connection, an unknown host or a 403 before any request has succeeded is the environment
   (``FetchEnvironmentError``, an ``OSError``): the run stops at once.
2. ``GET`` each file into ``<name>.avi.part``; a ``.part`` left by a cut transfer or an earlier run is resumed
   with an HTTP ``Range`` request (a server that answers 200 instead is read from the start). A transfer that
   fails mid-way (connection cut, read timeout, a 5xx) is retried ``attempts`` times in all, waiting
   ``backoff`` seconds and then twice as long each time, resuming each time from what arrived.
3. When the ``.part`` holds exactly the size the server gave, the file is checked: it must open and hold the
   frames and frame rate its rows need (``sources.check_video``). Then it is renamed to its final name; a file
   that fails the check is removed and reported, and the run goes on.

Ctrl-C stops the transfers, keeps the finished files (and the ``.part`` files, for the next run) and returns a
summary marked ``interrupted``. VIRAT videos are not in the bucket: they are counted and named, never fetched.
"""
from __future__ import annotations

import os
import queue
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from sova_lib.benchmarks.sovabench.clips.plan import DEFAULT_FPS
from sova_lib.benchmarks.sovabench.clips.sources import MEVA_BASE_URL, MEVA_NAME, VIRAT_WHERE, Source, check_video

__all__ = ["MAX_LISTED", "FetchEnvironmentError", "FetchSummary", "fetch_sources", "planned_fetches"]

#: Failures listed one by one in the summary; the rest are counted.
MAX_LISTED = 20
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class FetchEnvironmentError(OSError):
    """The server cannot be reached or refuses the first requests: nothing will download; the message says why."""


class _Retry(Exception):
    """A transfer to try again (cut, wrong range, a server error)."""


class _ItemFailed(Exception):
    """One file that cannot be fetched (not in the bucket, refused after others succeeded)."""


@dataclass
class FetchSummary:
    """What :func:`fetch_sources` did: files ``fetched`` and ``failed`` (``(name, reason)``), how many were
    ``present`` already, ``virat`` videos not fetchable here, ``planned`` ``(name, url, path)`` of a dry run,
    ``bytes`` downloaded, and whether Ctrl-C ``interrupted`` the run."""

    fetched: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    present: int = 0
    virat: int = 0
    planned: list[tuple[str, str, Path]] = field(default_factory=list)
    bytes: int = 0
    interrupted: bool = False

    def lines(self, dry_run: bool = False) -> list[str]:
        if dry_run:
            out = [f"would fetch {len(self.planned)} MEVA video(s); {self.present} already present"]
            out += [f"  {url} -> {path}" for _, url, path in self.planned]
        else:
            out = [f"MEVA videos fetched: {len(self.fetched)} ({self.bytes / 1e6:.1f} MB), already present: "
                   f"{self.present}, failed: {len(self.failed)}"]
            out += [f"  failed {name}: {reason}" for name, reason in self.failed[:MAX_LISTED]]
            if len(self.failed) > MAX_LISTED:
                out.append(f"  ... and {len(self.failed) - MAX_LISTED} more")
            if self.interrupted:
                out.append("  interrupted: finished files are kept; run the same command again to resume")
        if self.virat:
            out.append(f"VIRAT videos needed but not fetched here: {self.virat}; from {VIRAT_WHERE}")
        return out


def planned_fetches(sources: Sequence[Source], video_root, base_url: str = MEVA_BASE_URL,
                    limit: int | None = None) -> list[tuple[Source, str, Path]]:
    """``(source, url, destination)`` of each MEVA source whose video is missing, the first ``limit`` of them.

    ``ValueError`` naming the source video when its name is not ``sources.MEVA_NAME`` or its destination, resolved
    (symbolic links followed), does not lie under ``video_root``: nothing is fetched then.
    """
    todo = [s for s in sources if s.dataset == "MEVA" and s.video_status == "missing"]
    todo = todo if limit is None else todo[:limit]
    root = Path(video_root)
    out = []
    for s in todo:
        if not MEVA_NAME.fullmatch(s.source_video):
            raise ValueError(f"source video {s.source_video!r} is not a MEVA video name; nothing fetched")
        dest = root / s.location
        if not dest.resolve().is_relative_to(root.resolve()):
            raise ValueError(f"source video {s.source_video!r}: its file {dest} resolves to {dest.resolve()}, "
                             f"outside --video-root {root}; nothing fetched")
        out.append((s, f"{base_url.rstrip('/')}/{s.location}", dest))
    return out


class _Run:
    """The shared state of one fetch: the client, the stop flag, the bar, whether any request has succeeded."""

    def __init__(self, client, bar, attempts: int, backoff: float, check: bool):
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
        return _ItemFailed(what)

    def head(self, url: str) -> int:
        """The size in bytes the server gives for ``url``."""
        import httpx

        try:
            r = self._retrying(lambda: self._head_once(url))
        except (httpx.ConnectError, httpx.ConnectTimeout) as err:
            if self.any_ok:
                raise _ItemFailed(f"cannot connect: {err}") from None
            raise FetchEnvironmentError(f"cannot reach {url}: {err} (no network, an unknown host or a wrong "
                                        "--base-url)") from None
        except (_Retry, httpx.TransportError) as err:
            raise _ItemFailed(f"{type(err).__name__}: {err} after {self.attempts} attempts") from None
        if r.status_code in (401, 403):
            raise self.refused(url, f"HTTP {r.status_code}")
        if r.status_code == 404:
            raise _ItemFailed("not in the bucket (HTTP 404)")
        if r.status_code != 200 or "content-length" not in r.headers:
            raise _ItemFailed(f"HTTP {r.status_code} without a size")
        self.any_ok = True
        return int(r.headers["content-length"])

    def _head_once(self, url: str):
        r = self.client.head(url)
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
        """``part`` filled up to ``size`` bytes, resumed from what it holds, retried as the module says."""
        import httpx

        try:
            self._retrying(lambda: self._get_once(url, part, size))
        except (_Retry, httpx.TransportError) as err:
            raise _ItemFailed(f"{err or type(err).__name__} after {self.attempts} attempts; what arrived is kept in "
                              f"{part.name} for the next run") from None

    def _get_once(self, url: str, part: Path, size: int) -> None:
        have = part.stat().st_size if part.exists() else 0
        if have > size:
            part.unlink()
            have = 0
        if have == size:
            return
        with self.client.stream("GET", url, headers={"Range": f"bytes={have}-"} if have else {}) as r:
            if r.status_code == 206:
                got = _CONTENT_RANGE.fullmatch(r.headers.get("content-range", ""))
                if got is None or int(got.group(1)) != have or int(got.group(3)) != size:
                    part.unlink(missing_ok=True)
                    raise _Retry(f"the server answered range {r.headers.get('content-range')!r} to bytes={have}-")
                mode = "ab"
            elif r.status_code == 200:
                if int(r.headers.get("content-length", size)) != size:
                    raise _Retry(f"the server's size changed from {size} to {r.headers['content-length']} bytes")
                mode = "wb"
                with self.lock:
                    self.bar.update(-have)
            elif r.status_code == 416:
                part.unlink(missing_ok=True)
                raise _Retry("the server refused the resume range (HTTP 416)")
            elif r.status_code >= 500 or r.status_code == 429:
                raise _Retry(f"HTTP {r.status_code}")
            elif r.status_code in (401, 403):
                raise self.refused(url, f"HTTP {r.status_code}")
            else:
                raise _ItemFailed(f"HTTP {r.status_code}")
            with open(part, mode) as f:
                for chunk in r.iter_bytes():  # as bytes arrive, so that a cut transfer keeps them
                    if self.stop.is_set():
                        raise KeyboardInterrupt
                    f.write(chunk)
                    f.flush()  # what arrived is on disk, whatever stops the run next
                    self.advance(len(chunk))
        if part.stat().st_size != size:
            raise _Retry(f"transfer ended at {part.stat().st_size} of {size} bytes")

    def fetch(self, source: Source, url: str, dest: Path, size: int) -> str:
        """Download, check and rename one file; returns "" or why it failed (the file then removed)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        self.download(url, part, size)
        if self.check:
            status, _, _ = check_video(part, source.frames_needed, DEFAULT_FPS[source.dataset])
            if status != "ok":
                part.unlink(missing_ok=True)
                return f"downloaded, but it {status if status.startswith('does') else 'has ' + status}; removed"
        os.replace(part, dest)
        return ""


def fetch_sources(sources: Sequence[Source], video_root, *, base_url: str = MEVA_BASE_URL, concurrency: int = 4,
                  limit: int | None = None, dry_run: bool = False, connect_timeout: float = 10.0,
                  read_timeout: float = 60.0, attempts: int = 4, backoff: float = 1.0, check: bool = True,
                  show_progress: bool = False, transport=None) -> FetchSummary:
    """Download the missing MEVA videos of ``sources`` (from ``sources.list_sources(..., video_root)``) into
    ``video_root`` as the module docstring says; returns a :class:`FetchSummary`.

    ``concurrency`` transfers run at once; ``limit`` takes the first N missing videos only; ``dry_run`` plans
    without any request. ``connect_timeout``/``read_timeout`` bound each wait in seconds; ``attempts`` and
    ``backoff`` bound the retries. ``check=False`` skips opening the downloaded files. ``transport``: an httpx
    transport (tests). Raises ``FetchEnvironmentError`` when the server cannot be reached, ``ValueError`` for a
    ``base_url`` that is not an http(s) address.
    """
    if not re.match(r"https?://[^/\s]", base_url):
        raise ValueError(f"--base-url {base_url!r} is not an http:// or https:// address; the MEVA bucket's is "
                         f"{MEVA_BASE_URL}")
    summary = FetchSummary(present=sum(1 for s in sources if s.dataset == "MEVA" and s.video_status != "missing"),
                           virat=sum(1 for s in sources if s.dataset == "VIRAT" and s.video_status == "missing"))
    todo = planned_fetches(sources, video_root, base_url, limit)
    if dry_run:
        summary.planned = [(s.source_video, url, dest) for s, url, dest in todo]
        return summary
    if not todo:
        return summary

    import httpx

    from sova_lib.progress import progress_bar

    timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=read_timeout, pool=None)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    bar = progress_bar(total=0, unit="B", unit_scale=True, unit_divisor=1024, desc="fetching MEVA videos",
                       disable=not show_progress)
    with httpx.Client(timeout=timeout, limits=limits, follow_redirects=True, transport=transport) as client:
        run = _Run(client, bar, attempts, backoff, check)
        try:
            sizes = _each(run, run.head, [((s, url, dest), (url,)) for s, url, dest in todo], concurrency, summary)
            bar.total = sum(sizes.values())
            bar.update(sum(min(_part_size(dest), size) for (_, _, dest), size in sizes.items()))  # resumed
            jobs = [((s, url, dest), (s, url, dest, size)) for (s, url, dest), size in sizes.items()]
            for (s, _, _), reason in _each(run, run.fetch, jobs, concurrency, summary).items():
                (summary.failed.append((s.source_video, reason)) if reason else summary.fetched.append(s.source_video))
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            run.stop.set()
            bar.close()
            summary.bytes = run.bytes
    return summary


def _part_size(dest: Path) -> int:
    part = dest.with_name(dest.name + ".part")
    return part.stat().st_size if part.exists() else 0


def _each(run: _Run, call, jobs: list, concurrency: int, summary: FetchSummary) -> dict:
    """``call(*args)`` of each ``(key, args)`` of ``jobs`` in ``concurrency`` threads; the results by key. A file's
    failure goes to ``summary.failed``; an environment error stops every thread and is raised here.

    The threads are daemon threads, not joined: on Ctrl-C (raised here, in the main thread) or an environment
    error, the run stops at once; a thread blocked in a read ends with its read timeout, without writing more.
    """
    todo: queue.Queue = queue.Queue()
    for job in jobs:
        todo.put(job)
    done: queue.Queue = queue.Queue()

    def work():
        while not run.stop.is_set():
            try:
                key, args = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((key, call(*args), None))
            except BaseException as err:  # noqa: BLE001  (handed to the main thread)
                if isinstance(err, FetchEnvironmentError):
                    run.stop.set()  # no other request starts
                done.put((key, None, err))

    for _ in range(min(concurrency, len(jobs))):
        threading.Thread(target=work, daemon=True).start()
    out, finished = {}, False
    try:
        for _ in range(len(jobs)):
            while True:
                try:
                    key, result, err = done.get(timeout=0.2)
                    break
                except queue.Empty:
                    continue
            if isinstance(err, _ItemFailed):
                summary.failed.append((key[0].source_video, str(err)))
            elif err is not None:
                raise err
            else:
                out[key] = result
        finished = True
    finally:
        if not finished:
            run.stop.set()
    return out
