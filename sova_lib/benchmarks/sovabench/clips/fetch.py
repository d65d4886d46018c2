"""Downloading the MEVA source videos of a protocol from the public bucket over HTTPS, resumable and checked.

:func:`fetch_sources` takes the :class:`sources.Source` list of a protocol and downloads each MEVA video that is
not yet under the video root to ``<video root>/<bucket key>`` (``drops-123-r13/<date>/<hour>/<name>.avi``, the
bucket's own layout, which ``extract.find_source_videos`` finds at any depth):

1. ``HEAD`` every file, ``concurrency`` at a time, for its size (the progress bar's total: bytes, rate, time
   left). A refused connection, an unknown host or a 403 before any request has succeeded is the environment
   (``FetchEnvironmentError``, an ``OSError``): the run stops at once; so is a 404 for each of the first
   ``LAYOUT_PROBE`` keys (the key template or the base URL is then likely wrong).
2. ``GET`` each file into ``<name>.avi.part``; a ``.part`` left by a cut transfer or an earlier run is resumed
   with an HTTP ``Range`` request (a server that answers 200 instead is read from the start); never more bytes
   than ``HEAD`` announced are written (``transfer`` says how the answers must agree). A transfer that
   fails mid-way (connection cut, read timeout, a 5xx) is retried ``attempts`` times in all, waiting
   ``backoff`` seconds and then twice as long each time, resuming each time from what arrived.
3. When the ``.part`` holds exactly the size the server gave, the file is checked: its MD5 where the ``ETag`` is
   one, then it must open, hold the frames and frame rate its rows need and decode its first, middle and last frames
   (``sources.check_video``). Then it is renamed to its final name and its SHA-256 appended to
   ``<video root>/SHA256SUMS`` (``checksums``); a file that fails a check is removed and reported, and the run goes
   on. A video already under the root whose line in ``SHA256SUMS`` it no longer matches is reported as failed.

Ctrl-C stops the transfers, keeps the finished files (and the ``.part`` files, for the next run) and returns a
summary marked ``interrupted``. VIRAT videos are not in the bucket: they are counted and named, never fetched.
"""
from __future__ import annotations

import queue
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from sova_lib.benchmarks.sovabench.clips.checksums import read_checksums, verify
from sova_lib.benchmarks.sovabench.clips.plan import DEFAULT_FPS
from sova_lib.benchmarks.sovabench.clips.sources import (
    MEVA_BASE_URL,
    MEVA_KEY_TEMPLATE,
    MEVA_NAME,
    VIRAT_WHERE,
    Source,
    check_video,
    meva_key,
)
from sova_lib.benchmarks.sovabench.clips.transfer import Busy, FetchEnvironmentError, ItemFailed, Transfers

__all__ = ["LAYOUT_PROBE", "MAX_LISTED", "FetchEnvironmentError", "FetchSummary", "fetch_sources", "planned_fetches"]


#: Failures listed one by one in the summary; the rest are counted.
MAX_LISTED = 20
#: When the first this many keys (or all, when fewer) answer 404 and none answered, the layout is wrong: stop.
LAYOUT_PROBE = 5


@dataclass
class FetchSummary:
    """What :func:`fetch_sources` did: files ``fetched``, ``failed`` (``(name, reason)``) and skipped as ``busy``
    (``(name, why)``: another fetch is writing them), how many were
    ``present`` already, ``virat`` videos not fetchable here, ``planned`` ``(name, url, path)`` of a dry run,
    ``bytes`` downloaded, and whether Ctrl-C ``interrupted`` the run."""

    fetched: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    busy: list[tuple[str, str]] = field(default_factory=list)
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
            if self.busy:
                out.append(f"being fetched by another run: {len(self.busy)}")
                out += [f"  skipped {name}: {why}" for name, why in self.busy[:MAX_LISTED]]
            if self.interrupted:
                out.append("  interrupted: finished files are kept; run the same command again to resume")
        if self.virat:
            out.append(f"VIRAT videos needed but not fetched here: {self.virat}; from {VIRAT_WHERE}")
        return out


def planned_fetches(sources: Sequence[Source], video_root, base_url: str = MEVA_BASE_URL,
                    limit: int | None = None, key_template: str = MEVA_KEY_TEMPLATE) -> list[tuple[Source, str, Path]]:
    """``(source, url, destination)`` of each MEVA source whose video is missing, the first ``limit`` of them: its
    key is ``key_template`` filled (``sources.meva_key``), its URL ``<base_url>/<key>``, its file
    ``<video_root>/<key>``.

    ``ValueError`` naming the source video when its name is not ``sources.MEVA_NAME`` or its destination, resolved
    (symbolic links followed), does not lie under ``video_root``: nothing is fetched then.
    """
    todo = [s for s in sources if s.dataset == "MEVA" and s.video_status == "missing"][:limit]  # None: all
    root = Path(video_root)
    out = []
    for s in todo:
        if not MEVA_NAME.fullmatch(s.source_video):
            raise ValueError(f"source video {s.source_video!r} is not a MEVA video name; nothing fetched")
        key = meva_key(s.source_video, key_template)
        dest = root / key
        if not dest.resolve().is_relative_to(root.resolve()):
            raise ValueError(f"source video {s.source_video!r}: its file {dest} resolves to {dest.resolve()}, "
                             f"outside --video-root {root}; nothing fetched")
        out.append((s, f"{base_url.rstrip('/')}/{key}", dest))
    return out


def fetch_sources(sources: Sequence[Source], video_root, *, base_url: str = MEVA_BASE_URL,
                  key_template: str = MEVA_KEY_TEMPLATE, concurrency: int = 4,
                  limit: int | None = None, dry_run: bool = False, connect_timeout: float = 10.0,
                  read_timeout: float = 60.0, attempts: int = 4, backoff: float = 1.0, check: bool = True,
                  show_progress: bool = False, transport=None) -> FetchSummary:
    """Download the missing MEVA videos of ``sources`` (from ``sources.list_sources(..., video_root)``) into
    ``video_root`` as the module docstring says; returns a :class:`FetchSummary`.

    ``key_template``: the keys' layout (``sources.meva_key``). ``concurrency`` transfers run at once; ``limit`` takes the first N missing videos only; ``dry_run`` plans
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
    todo = planned_fetches(sources, video_root, base_url, limit, key_template)
    if dry_run:
        summary.planned = [(s.source_video, url, dest) for s, url, dest in todo]
        return summary
    _verify_present(sources, video_root, summary)
    if not todo:
        return summary

    import httpx

    from sova_lib.progress import progress_bar

    timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=read_timeout, pool=None)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    bar = progress_bar(total=0, unit="B", unit_scale=True, unit_divisor=1024, desc="fetching MEVA videos",
                       disable=not show_progress)
    with httpx.Client(timeout=timeout, limits=limits, follow_redirects=True, transport=transport) as client:
        run = Transfers(client, bar, attempts, backoff, _check_video if check else None, Path(video_root),
                        probe=min(LAYOUT_PROBE, len(todo)), layout=f"--key-template {key_template} or --base-url "
                                                                    f"{base_url}")
        try:
            heads = _each(run, run.head, [((s, url, dest), (url,)) for s, url, dest in todo], concurrency, summary)
            bar.total = sum(h.size for h in heads.values())
            bar.update(sum(min(_part_size(dest), h.size) for (_, _, dest), h in heads.items()))  # resumed
            jobs = [((s, url, dest), (s, url, dest, h)) for (s, url, dest), h in heads.items()]
            for (s, _, _), reason in _each(run, run.fetch, jobs, concurrency, summary).items():
                if reason is None:  # another fetch finished it meanwhile
                    summary.present += 1
                elif reason:
                    summary.failed.append((s.source_video, reason))
                else:
                    summary.fetched.append(s.source_video)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            run.stop.set()
            bar.close()
            summary.bytes = run.bytes
    return summary


def _verify_present(sources: Sequence[Source], video_root, summary: FetchSummary) -> None:
    """Each MEVA video already under ``video_root`` that ``SHA256SUMS`` records is read: one whose bytes differ is
    a failure (and no longer counted present)."""
    recorded = read_checksums(video_root)
    for s in sources:
        if recorded and s.dataset == "MEVA" and s.video and s.video_status != "missing":
            status = verify(video_root, s.video, recorded)
            if status not in (None, "ok"):
                summary.present -= 1
                summary.failed.append((s.source_video, f"{s.video} has {status}; remove it to fetch it again"))


def _check_video(path: Path, source: Source) -> str:
    return check_video(path, source.frames_needed, DEFAULT_FPS[source.dataset])[0]


def _part_size(dest: Path) -> int:
    part = dest.with_name(dest.name + ".part")
    return part.stat().st_size if part.exists() else 0


def _each(run: Transfers, call, jobs: list, concurrency: int, summary: FetchSummary) -> dict:
    """``call(*args)`` of each ``(key, args)`` of ``jobs`` in ``concurrency`` threads; the results by key. A file's
    failure goes to ``summary.failed``; an environment error stops every thread and is raised here.

    The threads are daemon threads, not joined: on Ctrl-C (raised here, in the main thread) or an environment
    error, the run stops at once; a thread blocked in a read ends with its read timeout, without writing more.
    """
    todo = iter(jobs)
    done: queue.Queue = queue.Queue()

    def work():
        while not run.stop.is_set():
            with run.lock:  # one job to each thread
                key, args = next(todo, (None, None))
            if key is None:
                return
            try:
                done.put((key, call(*args), None))
            except BaseException as err:  # noqa: BLE001  (handed to the main thread)
                if isinstance(err, FetchEnvironmentError):
                    run.stop.set()  # no other request starts
                done.put((key, None, err))

    for _ in range(min(concurrency, len(jobs))):
        threading.Thread(target=work, daemon=True).start()
    out = {}
    try:
        for _ in range(len(jobs)):
            while True:
                try:
                    key, result, err = done.get(timeout=0.2)
                    break
                except queue.Empty:
                    continue
            if isinstance(err, ItemFailed):
                summary.failed.append((key[0].source_video, str(err)))
            elif isinstance(err, Busy):
                summary.busy.append((key[0].source_video, str(err)))
            elif err is not None:
                raise err
            else:
                out[key] = result
    except BaseException:
        run.stop.set()
        raise
    return out
