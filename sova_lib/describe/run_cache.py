"""A run's side of its cache folder, whatever the engine: what is left to do, each outcome, the summary.

``open_run(key, items, cache_dir)`` opens the cache folder of ``key``
(``sova_lib.describe.cache``) for one run, an ``OpenRun`` whose ``todo``
holds the items it lacks (nor failed before, unless
``RunOptions.retry_errors``). An engine yields one ``Outcome`` per item of
``todo`` and the runner's loop hands each to ``OpenRun.write``, which appends
it at once and applies the fail-fast rule of ``sova_lib.describe.runner`` (a
run whose first ``stop_after_same_failures`` described items all fail with
one message stops with ``DescriberEnvironmentError``, written to the manifest
as ``stopped``); the run keeps the manifest current and ends with its
``RunSummary``. ``RunOptions`` says how any run behaves here, describing or
embedding frames. The engines (``runner.LocalEngine``,
``ray_engine.RayEngine``) do the work; this module records it.
"""
from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sova_lib.describe.cache import open_cache
from sova_lib.describe.contract import DescriberEnvironmentError
from sova_lib.describe.item import Item
from sova_lib.item_vectors import MAX_TEXT_CHARS
from sova_lib.progress import progress_bar
from sova_lib.storage import now, redact
from sova_lib.wording import counted, kinds_line

__all__ = ["EXAMPLES", "OpenRun", "Outcome", "RunInterrupted", "RunOptions", "RunSummary", "failure_kind", "first_items", "left_to_do",
           "open_run", "unique_items"]


@dataclass(frozen=True)
class RunOptions:
    """How a run behaves here, whatever the engine (``RayOptions`` says where the work goes), describing or embedding.

    ``retry_errors``: describe (embed) again the items that failed before;
    ``show_progress``: draw a progress bar. Describing only:
    ``sync_every`` seconds between rewrites of the manifest, ``verbose``
    prints the summary at the end, ``stop_after_same_failures`` is the
    fail-fast rule (0: never; module docstring), ``max_answer_chars`` the
    longest answer kept (``item_vectors.MAX_TEXT_CHARS``; a longer one is cut
    to it and flagged ``"cut": <its length>``; recorded in the manifest). An
    embedding run writes its shards by ``flush_items`` / ``flush_seconds``
    and prints nothing. ``limit``: only the first ``limit`` items, in the order
    given (the order a full run works in), go into the run (a small test
    run); the cache folder is the same, so a run without it continues there.
    Every run function takes these as one ``run`` argument (default: these
    defaults).
    """

    retry_errors: bool = False
    limit: int | None = None
    sync_every: float = 5.0
    show_progress: bool = True
    verbose: bool = True
    stop_after_same_failures: int = 5
    max_answer_chars: int = MAX_TEXT_CHARS


#: The ids of each kind of failure a summary names.
EXAMPLES = 3


#: The kinds of an item that could not be loaded, read from its reason: the runner's own words for them (a clip
#: manifest's status, ``sova_lib.benchmarks.sovabench.clips.items``; a crop outside the frame, ``sova_lib.crop``; a
#: source video smaller than its annotations, ``sova_lib.benchmarks.sovabench.clips.frame_size``).
_LOAD_KINDS = ((re.compile(r"^manifest status (\w+)"), None),
               (re.compile(r"^source video .* not found under "), "video missing"),
               (re.compile(r"is empty inside the \d+x\d+ frame"), "region empty"),
               (re.compile(r"annotated boxes reach \d+x\d+"), "size mismatch"))


def failure_kind(outcome: "Outcome") -> str:
    """How ``outcome`` failed, in a few words the summary counts by: its own ``kind`` (a describer's: e.g. the openai
    backend's ``"no answer"``, ``"empty"``, ``"too long"``, ``"unreadable"``, ``"refused"``); for an item that could
    not be loaded, its clip manifest's status (``"annotation missing"``, ...), ``"video missing"``, ``"region
    empty"``, ``"size mismatch"`` or else ``"decode"``; ``"describer"`` for any other failure of the describer."""
    if outcome.kind:
        return outcome.kind
    if outcome.loaded:
        return "describer"
    for pattern, kind in _LOAD_KINDS:
        found = pattern.search(outcome.error or "")
        if found:
            return kind or found.group(1).replace("_", " ")
    return "decode"


@dataclass
class RunSummary:
    """What one run of any engine did, describing (``verb`` "described") or embedding ("embedded").

    ``done``: items finished this run; ``skipped_cached``: items already in
    the cache; ``skipped_failed``: items that failed before and were not
    retried; ``failures``: id -> reason of this run's failures; ``total_done``
    and ``total_failed``: the cache folder's counts after the run; ``cut``:
    answers cut to ``RunOptions.max_answer_chars`` (describing); ``frames``:
    frames decoded (embedding); ``left_out``: items beyond ``RunOptions.limit``;
    ``notes``: what the reader must know about the whole run (the describer's ``run_info()`` ``weights_note``:
    a cache that cannot follow the weights), printed after the counts; ``by_kind``: kind -> ids of this run's
    failures (``failure_kind``), counted in the summary with the first ``EXAMPLES`` ids of each. ``str()`` is the
    printed summary, ``line()`` the same in one line; ``skipped`` counts both kinds of items left out.
    """

    folder: Path
    verb: str = "described"
    done: int = 0
    failed: int = 0
    cut: int = 0
    max_answer_chars: int = MAX_TEXT_CHARS
    frames: int = 0
    skipped_cached: int = 0
    skipped_failed: int = 0
    left_out: int = 0
    total_done: int = 0
    total_failed: int = 0
    seconds: float = 0.0
    failures: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    by_kind: dict = field(default_factory=dict)

    @property
    def skipped(self) -> int:
        """Items left out: already in the cache, or failed before."""
        return self.skipped_cached + self.skipped_failed

    @property
    def items_per_s(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        frames = f"{self.frames} frames " if self.frames or self.verb == "embedded" else ""
        return (f"{self.done} {self.verb}, {self.skipped} already cached, {self.failed} failed; "
                f"{frames}in {self.seconds:.1f} s ({self.items_per_s:.2f} items/s) -> {self.folder}"
                + (f"; {self.left_out} left out beyond --limit" if self.left_out else ""))

    def failure_lines(self) -> list[str]:
        """This run's first failures, one line each: the first two ids of each kind (``by_kind``) with the first
        line of their reason (at most 300 characters), then how many more ``errors.jsonl`` holds."""
        shown = [i for ids in self.by_kind.values() for i in ids[:2]]
        more = len(self.failures) - len(shown)
        return ([f"  failed {i!r}: {str(self.failures[i]).splitlines()[0][:300]}" for i in shown]
                + ([f"  ... and {more} more in errors.jsonl"] if more > 0 else []))

    def __str__(self) -> str:
        output = (f"descriptions: {self.folder / 'descriptions.jsonl'}" if self.verb == "described"
                  else f"vectors: {self.folder}")
        lines = [
            f"{self.verb} {self.done}, skipped {self.skipped_cached} (already cached), "
            f"failed {self.failed} in {self.seconds:.1f} s ({self.items_per_s:.2f} items/s)",
            f"  {output} ({self.total_done} items)",
        ]
        if self.cut:
            lines.append(f"  {self.cut} of the {self.done} answers were longer than {self.max_answer_chars} characters "
                         "and were cut to that length (flagged \"cut\": <length> in descriptions.jsonl; "
                         "--max-answer-chars keeps more)")
        if self.left_out:
            lines.insert(1, f"  left out {self.left_out} items beyond the limit (--limit): run again without it "
                            "to continue into this folder")
        if self.skipped_failed:
            lines.insert(1, f"  skipped {self.skipped_failed} items that failed before: "
                            "--retry-errors (retry_errors=True) tries them again")
        if self.by_kind:
            lines.append("  failed by kind: " + kinds_line(self.by_kind, EXAMPLES))
        if self.total_failed:
            lines.append(f"  errors: {self.folder / 'errors.jsonl'} ({self.total_failed} items without a "
                         f"{'description' if self.verb == 'described' else 'vector'})")
        lines.append(f"  manifest: {self.folder / 'manifest.json'}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run, raised once the run's cache is recounted from its files: ``summary`` (``RunSummary``)
    counts what this run finished (``done``, ``failed``) and what the folder holds; ``asked`` is how many items
    the run had left to do. ``line()`` says it in one line."""

    def __init__(self, summary: RunSummary, asked: int):
        super().__init__()
        self.summary, self.asked = summary, asked

    def line(self) -> str:
        s = self.summary
        return (f"{s.verb} {s.done} of {counted(self.asked, 'item', 'items')} before the interrupt ({s.failed} "
                f"failed); {s.folder} holds {s.total_done}")


@dataclass(frozen=True)
class Outcome:
    """How one item of a run ended, whatever the engine: its ``value`` or the ``error`` that stands for it.

    ``value``: the description's text (describing), or ``(vectors, frame indices, frames decoded)``
    (embedding frames); ``None`` when ``error`` (one line: why the item has none) is set. ``loaded`` is False
    for an item whose frames could not be loaded: the describer never saw it, so the fail-fast rule leaves it
    out. ``kind``: how it failed, for the summary's count by kind (``failure_kind``). Engines yield one per item
    as its work ends; ``OpenRun.write`` appends it to the cache.
    """

    id: Any
    value: Any = None
    error: str | None = None
    loaded: bool = True
    kind: str | None = None


@contextlib.contextmanager
def open_run(key: dict, items: list[Item], cache_dir: str | Path, *, run_options: RunOptions | None = None,
             run_info: dict | None = None, device: str | None = None, details: dict | None = None):
    """The cache folder of ``key`` open for one run: an ``OpenRun`` whose ``todo`` is what is left to do.

    The part of a run that every engine shares, around its loop (``for outcome in ...: run.write(outcome)``):
    ``todo`` holds the items not yet in the cache (nor failed before, unless ``run_options.retry_errors``);
    ``write`` appends each outcome at once, applies the fail-fast rule and keeps the manifest current; a
    ``DescriberEnvironmentError`` is written to the manifest as ``stopped`` and raised; Ctrl-C recounts the
    lines on disk. The manifest's ``runs`` lists every run that had work to do, in order: when it started,
    its engine, its batch size (``run_info``'s ``batch_size``, which is not part of the key: a run resumes
    with another) and what it described and failed. ``summary`` is the ``RunSummary``, printed at the end
    when ``run_options.verbose``.
    """
    run = run_options or RunOptions()
    with open_cache(cache_dir, key, source="run", details=details, sync_every=run.sync_every,
                    device=device) as cache:
        this = OpenRun(cache, run, items, run_info or {})
        try:
            with this.recording():
                yield this
        except DescriberEnvironmentError as err:
            cache.update_manifest(stopped={"time": now(), "reason": redact(str(err))})
            raise
    if run.verbose:
        print(this.summary)


def unique_items(items) -> list[Item]:
    """``items`` as a list; ``ValueError`` naming the first id that appears twice (ids must be unique)."""
    items, seen = list(items), set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"item id {item.id!r} appears twice ({item.path}); ids must be unique")
        seen.add(item.id)
    return items


def first_items(items: list, limit: int | None) -> tuple[list, int]:
    """``(the first limit items, how many are left out)``; all of them when ``limit`` is None."""
    if limit is None:
        return items, 0
    if int(limit) != limit or limit < 1:
        raise ValueError(f"limit must be a whole number of 1 or more, got {limit!r}")
    return items[:int(limit)], max(0, len(items) - int(limit))


def left_to_do(items, cache, retry_errors, summary) -> list:
    """The items not in ``cache`` (nor failed before, unless ``retry_errors``); counts the others in ``summary``."""
    todo = []
    for item in items:
        if item.id in cache.done:
            summary.skipped_cached += 1
        elif item.id in cache.failures and not retry_errors:
            summary.skipped_failed += 1
        else:
            todo.append(item)
    return todo


class OpenRun:
    """One run on its open cache (``open_run``): what is left to do, and each outcome written as it comes.

    ``todo``: the items the engine is to work on; ``run_info``: the manifest's ``run`` entry (what an engine
    learns as it starts, such as the devices its describer loaded on, joins it); ``summary``: the run's
    ``RunSummary``. ``write(outcome)`` applies the fail-fast rule of ``sova_lib.describe.runner``: while it is
    ``active``, the describer's failures are held back; the first success, or ``limit`` held failures with more
    than one message, ends the rule and writes what was held; ``limit`` held failures all with one message
    raise ``DescriberEnvironmentError``. ``limit`` 0: never active. The manifest is rewritten at most every
    ``cache.sync_every`` seconds.
    """

    def __init__(self, cache, run: RunOptions, items: list[Item], run_info: dict):
        self.cache, self.bar, self.show_progress, self.run_info = cache, None, run.show_progress, run_info
        # the run's entries of the manifest: its ``run`` information and one more entry in ``runs``
        earlier = cache.manifest().get("runs")
        runs = [r for r in earlier if isinstance(r, dict)] if isinstance(earlier, list) else []
        this = {"started": now(), "engine": (run_info.get("engine") or {}).get("name", "local"),
                "batch_size": run_info.get("batch_size")}
        cache.manifest_data.update(run=run_info, max_answer_chars=run.max_answer_chars, started=this["started"],
                                   runs=[*runs, this])
        self.summary = RunSummary(cache.folder, max_answer_chars=run.max_answer_chars)
        if self.run_info.get("weights_note"):
            self.summary.notes.append(self.run_info["weights_note"])
        items, self.summary.left_out = first_items(items, run.limit)
        self.todo = left_to_do(items, cache, run.retry_errors, self.summary)
        self.done_at_start = len(cache.done)
        self.start = self.last_update = time.monotonic()
        self.limit, self.active = run.stop_after_same_failures, run.stop_after_same_failures > 0
        self.held: list[Outcome] = []

    @contextlib.contextmanager
    def recording(self):
        """The progress bar and the manifest around the engine's loop; Ctrl-C recounts the lines on disk."""
        if not self.todo:  # nothing left to do: the manifest (and its throughput) stays as it was
            yield
            self.update_totals()
            return
        self.update_manifest()
        with progress_bar(total=len(self.todo), unit="item", desc=self.cache.folder.name.split("__")[0],
                          disable=not self.show_progress, dynamic_ncols=True) as self.bar:
            try:
                yield
                self.release()  # fewer held failures than the rule needs: they are the items'
            except KeyboardInterrupt:
                self.cache.recount()  # Ctrl-C may have come between a line's write and its count
                self.update_totals()
                self.summary.done = self.summary.total_done - self.done_at_start  # the lines on disk, not the count
                raise RunInterrupted(self.summary, len(self.todo)) from None
            finally:
                self.update_manifest()

    def write(self, outcome: Outcome) -> None:
        """Append ``outcome`` to the cache, unless the fail-fast rule holds it back (class docstring)."""
        if self.active and outcome.loaded:
            if outcome.error is not None:
                self._hold(outcome)
                return
            self.release()
        self.keep(outcome)

    def _hold(self, outcome: Outcome) -> None:
        """Hold back one failure of the describer while the fail-fast rule is active; stop the run by the rule."""
        self.held.append(outcome)
        self.bar.update(1)
        if len(self.held) < self.limit:
            return
        if len({held.error for held in self.held}) == 1:
            raise DescriberEnvironmentError(
                f"stopped: the first {len(self.held)} items all failed with the same error, which points "
                f"at the describer or its environment rather than the items: {outcome.error}")
        self.release()

    def release(self) -> None:
        """End the rule: the held failures are the items' own; write them."""
        self.active = False
        while self.held:
            self.keep(self.held.pop(0), shown=True)

    def keep(self, outcome: Outcome, shown: bool = False) -> None:
        """Append one outcome; ``shown``: the bar has already counted it."""
        summary = self.summary
        if outcome.error is None:
            text, limit = outcome.value, summary.max_answer_chars
            cut = len(text) if len(text) > limit else None
            self.cache.add(outcome.id, text if cut is None else text[:limit], cut=cut)
            summary.done += 1
            summary.cut += cut is not None
        else:
            self.cache.add_error(outcome.id, outcome.error)
            summary.failed += 1
            summary.failures[outcome.id] = outcome.error
            summary.by_kind.setdefault(failure_kind(outcome), []).append(outcome.id)
            self.bar.set_postfix(failed=summary.failed, refresh=False)
        if not shown:
            self.bar.update(1)
        if time.monotonic() - self.last_update >= self.cache.sync_every:
            self.update_manifest()
            self.last_update = time.monotonic()

    def update_totals(self) -> None:
        summary = self.summary
        summary.seconds = time.monotonic() - self.start
        summary.total_done, summary.total_failed = len(self.cache.done), len(self.cache.failures)

    def update_manifest(self) -> None:
        self.update_totals()
        summary = self.summary
        rate = round(summary.items_per_s, 4)
        runs = self.cache.manifest_data.get("runs") or [{}]
        runs[-1].update(described=summary.done, failed=summary.failed)
        kinds = {"failed_by_kind": {k: len(v) for k, v in summary.by_kind.items()}} if summary.by_kind else {}
        self.cache.update_manifest(last_run={"described": summary.done, "failed": summary.failed, **kinds,
                                             "cut": summary.cut,
                                             "skipped_cached": summary.skipped_cached,
                                             "seconds": round(summary.seconds, 3), "items_per_s": rate},
                                   throughput_items_per_s=rate)
