"""The one runner loop that drives every describer into a resumable cache.

``describe_items(describer, items, cache_dir, prompt=..., fps=...)`` describes
each ``Item`` (a video or an image file, or part of a video: a window, a crop,
played backwards; ``sova_lib.benchmarks.sovabench.clips.items`` makes those of
a clip manifest) with any ``Describer`` and appends the answers to the cache
folder of its configuration (``sova_lib.describe.cache``: layout, key,
manifest). The same configuration finds its folder again and resumes: ids
already described are skipped, as are ids that failed before unless
``run=RunOptions(retry_errors=True)``.

In this process (``LocalEngine``), frames are decoded by its ``load_workers`` background threads, at most
``prefetch`` items ahead, so decoding overlaps the model; requests go to the
describer in batches of up to ``describer.max_batch_size``, with up to
``describer.max_concurrency`` calls in flight. Each answer is written and
flushed as its call returns. A failing item is recorded and the run goes on;
it ends with a summary. An empty or whitespace-only answer is no description:
the item fails ("the describer gave an empty answer"), so ``--retry-errors``
asks again, and a run whose first answers are all empty stops by the
fail-fast rule below. An answer longer than ``RunOptions.max_answer_chars``
is cut to that length and flagged (``sova_lib.describe.run_cache``).

Calls run on daemon threads, so a call that never returns (a server that
never answers) cannot keep the process alive once the run has ended: Ctrl-C
ends it at once, with every finished item saved. A run that ends on an
exception calls the describer's optional ``stop()``, which ends its waits
(the HTTP backend's retries, a transformers ``generate`` after its current
step) early, then waits up to ``STOP_GRACE_SECONDS`` for the calls in flight
to return (their answers are not recorded). That wait matters: on Python
3.13 and older, a daemon thread still inside a C++ extension (torch,
OpenCV) when the interpreter exits is ended with ``pthread_exit`` as soon as
it asks for the GIL back, and that forced unwinding through the extension's
C++ frames aborts the process ("terminate called without an active
exception", exit status 134). ``work_running()`` says whether any call or
frame loader of a run is still going; the command line then ends the process
with ``os._exit`` once the cache is closed (``sova_lib.cli.end_interrupted``).

Fail fast: a ``DescriberEnvironmentError`` from the describer (the model
cannot load, the server is down, ...) stops the run at once; nothing is
written to ``errors.jsonl`` for it, the manifest records ``stopped`` and the
error goes to the caller. A run whose first ``stop_after_same_failures``
described items all fail with one and the same message stops the same way
(those failures are not recorded either), since that is rarely the items'
fault. Failures while loading an item (a missing file) are always the item's.

Engines: whatever the engine, ``describe_items`` is one loop over the
outcomes of the pending items::

    with open_run(key, items, cache_dir, ...) as this_run:      # the cache folder, what is left to do
        for outcome in engine.outcomes(describer, this_run.todo, ...):
            this_run.write(outcome)                              # appended at once; the fail-fast rule

An ``Outcome`` is an item's id and its text or its error
(``sova_lib.describe.run_cache``, with ``open_run``, ``RunOptions`` and
``RunSummary``: the manifest, the progress bar, Ctrl-C and the summary,
written once). Engines differ only in where the describer runs:
``LocalEngine`` (``--engine local``, the default) starts it here
(``start_describer``: its optional ``load()``, once, before the first item)
and yields the outcomes of ``schedule_requests`` (the loader threads, each
item's frames into a request with ``build_request``, and the call pool, one
describer call a batch with ``describe_batch``);
``sova_lib.describe.ray_engine.RayEngine`` yields those of the same
``schedule_requests`` run in each of a pool of Ray actors. ``plan_run`` is
what a run knows before its cache opens (a ``RunPlan``: the prompt, the
unique items, the sampling at the rate the run really uses, the cache key),
the one place every rule of the key is applied: the command line, a notebook
and a script asking the same thing get one key. The key names the run's
``configuration_lock``; the weights' fingerprint joins it under that lock.

This module and ``sova_lib.describe.ray_engine`` are the describing pair of ``runner.py`` / ``ray_engine.py``
(the frame-embedding pair is ``sova_lib.describe.contrastive``): this one is the local engine and the loop every
engine shares.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

from sova_lib.describe.cache import cache_key
from sova_lib.describe.contract import Describer, DescriberEnvironmentError, DescribeRequest
from sova_lib.describe.item import Item, effective_rate, load_item
from sova_lib.describe.prompts import DEFAULT_PROMPT, Prompt, resolve_prompt
from sova_lib.describe.provenance import config_hash
from sova_lib.describe.run_cache import Outcome, RunOptions, RunSummary, open_run, unique_items
from sova_lib.video.frames import Sampling

__all__ = ["STOP_GRACE_SECONDS", "Engine", "LocalEngine", "build_request", "configuration_lock", "describe_batch",
           "describe_items", "describer_fingerprint", "frame_sampling", "plan_run", "RunPlan", "schedule_requests",
           "start_describer", "work_running"]

#: Seconds a stopped run waits for its calls in flight to return (module docstring).
STOP_GRACE_SECONDS = 3.0

#: Names of the threads a run starts: describer calls (daemon threads) and frame loaders.
_CALL_THREAD, _LOAD_THREAD = "sova-describe", "sova-load"


def work_running() -> bool:
    """Whether a describer call or a frame loader started by ``schedule_requests`` is still running."""
    return any(t.is_alive() and t.name.startswith((_CALL_THREAD, _LOAD_THREAD)) for t in threading.enumerate())


def describer_fingerprint(describer: Describer) -> dict | None:
    """The describer's optional ``fingerprint()`` (``contract``): what its weights are; None when it has none.

    Any failure but a ``DescriberEnvironmentError`` is named with the backend, as ``start_describer`` does.
    """
    return _ask(describer, "fingerprint", "cannot tell which weights it runs")


def _ask(describer: Describer, method: str, failure: str) -> Any:
    """What the describer's optional ``method()`` returns (None when it has none); any failure raises
    ``DescriberEnvironmentError`` (a backend's own one as it is; any other error named with the backend and
    ``failure``), which stops the run: every item would fail the same way."""
    call = getattr(describer, method, None)
    if not callable(call):
        return None
    try:
        return call()
    except DescriberEnvironmentError:
        raise
    except Exception as err:  # noqa: BLE001 - a describer that cannot start, or say what it is, stops the run
        raise DescriberEnvironmentError(f"the {describer.name} backend {failure}: {type(err).__name__}: {err}") \
            from err


@contextlib.contextmanager
def configuration_lock(cache_dir: str | Path, key: dict):
    """Held by a run from before its describer says what its weights are until the run ends.

    The cache folder's own lock (``storage.LockedFolder``) can only be taken once the key is known, and the key
    holds the weights' fingerprint, which may ask a server for its model list or hash a model folder. This lock
    is named by the cache folder's path and ``key``, the run's key without the fingerprint (``RunPlan.key``), in
    this user's own lock folder (``run_lock.user_lock_folder()/<hash>.lock``, so the cache holds nothing new and
    no other user's lock can block it; removed when the run ends), and a second run of the same configuration on
    the same cache, by this user on this machine, stops at once with ``CacheLockedError``, before any of that (on
    another machine sharing the cache, or for another user, the folder's own lock still stops it, later).
    """
    from sova_lib.describe.run_lock import LockHeld, held, user_lock_folder
    from sova_lib.storage import CacheLockedError, file_errors

    folder = Path(cache_dir).resolve() / "descriptions"
    name = f"{config_hash({'folder': str(folder), **key})}.lock"
    with file_errors(Path(tempfile.gettempdir()), "make a folder for run locks"):
        path = user_lock_folder() / name
    with contextlib.ExitStack() as stack:
        with file_errors(path, "create the lock file"):
            try:
                stack.enter_context(held(path))
            except LockHeld:
                raise CacheLockedError(f"another run of this configuration is writing to {folder}; "
                                       "wait for it to finish or stop it") from None
        yield


@dataclass(frozen=True)
class RunPlan:
    """What a run knows before its cache opens, whatever the engine (``plan_run``).

    ``prompt``: the run's ``Prompt``; ``items``: its items, ids checked unique; ``sampling``: what its loader gets
    (``frame_sampling``), at the rate the run really uses; ``key``: its cache key without the weights'
    fingerprint (``cache.cache_key``), which names its ``configuration_lock``; ``key_with(fingerprint)`` is the
    whole key, which names its cache folder.
    """

    prompt: Prompt
    items: list
    sampling: Sampling | float | None
    key: dict

    def key_with(self, fingerprint: dict | None) -> dict:
        """The cache key with the weights' ``fingerprint`` (``describer_fingerprint``; None: a describer without
        weights, whose key has no such field)."""
        return self.key if fingerprint is None else {**self.key, "fingerprint": fingerprint}


def plan_run(describer: Describer, items: Iterable[Item], *, prompt: Prompt | str = DEFAULT_PROMPT,
             fps: float | None = 1.0, frames: int | None = None, max_frames: int | None = None,
             crop_source: str = "none", sampler_version: str | None = None,
             input_name: str | None = None) -> RunPlan:
    """The ``RunPlan`` of a run: every rule of its key applied once, here, for every caller.

    The prompt resolved (``prompts.resolve_prompt``: a preset name as the command line reads it, a ``Prompt`` as
    it is); the ids checked unique; the rate rule: ``fps`` above every video's own frame rate among ``items`` is
    lowered to the highest of their rates (``item.effective_rate``; logged once as a warning), in the frames and in
    the key, so asking 1000 fps of 10 fps clips shares the 10 fps folder; the key of ``describer.config()`` (asked
    once) with the sampling, ``crop_source``, ``sampler_version`` and ``input_name`` (``cache.cache_key``). The
    weights' fingerprint is asked later, under the run's ``configuration_lock``.
    """
    prompt, items = resolve_prompt(prompt), unique_items(items)
    if frames is None and fps:
        fps = effective_rate(items, fps)
    sampling = frame_sampling(fps, frames, max_frames)
    counts = sampling.cache_fields() if isinstance(sampling, Sampling) else {}
    key = cache_key(describer.name, describer.config(), prompt, None if frames is not None else fps, sampler_version,
                    crop_source, input_name=input_name, **counts)
    return RunPlan(prompt, items, sampling, key)


def start_describer(describer: Describer) -> None:
    """Call the describer's optional ``load()`` (load the weights, check the server) once, before any item.

    Any failure raises ``DescriberEnvironmentError`` (a backend's own one as it is; any other error
    named with the backend), which stops the run: every item would fail the same way.
    """
    _ask(describer, "load", "cannot start")


def build_request(item: Item, sampling: Sampling | float, prompt: Prompt,
                  loader: Callable[[Item, Any], tuple[list, Sequence[float], bool]] = load_item,
                  ) -> tuple[DescribeRequest | None, str | None]:
    """``(request, None)`` for ``item`` with its frames loaded (``loader(item, sampling)``), or ``(None, reason)``
    when it cannot be loaded."""
    if item.error is not None:
        return None, item.error
    try:
        frames, timestamps, is_video = loader(item, sampling)
        return DescribeRequest(item.id, frames, prompt.text_for(is_video), prompt.system_prompt,
                               is_video, tuple(timestamps)), None
    except Exception as err:  # noqa: BLE001 - recorded as the item's failure
        return None, f"{type(err).__name__}: {err}"


def describe_batch(describer: Describer, batch: list[DescribeRequest]) -> list[Outcome]:
    """Describe ``batch``; on failure retry item by item. One ``Outcome`` per request, in order."""
    try:
        texts = describer.describe(batch)
        if len(texts) != len(batch):
            raise RuntimeError(f"describer returned {len(texts)} answers for {len(batch)} requests")
        return [Outcome(req.id, **_answer(text)) for req, text in zip(batch, texts)]
    except DescriberEnvironmentError:
        raise  # not the items' fault: the run stops
    except Exception as err:  # noqa: BLE001 - a backend may raise anything; it is recorded
        if len(batch) > 1:
            return [r for req in batch for r in describe_batch(describer, [req])]
        return [Outcome(batch[0].id, error=f"{type(err).__name__}: {err}", kind=getattr(err, "kind", None))]


def _answer(text: Any) -> dict:
    """An ``Outcome``'s ``value`` for a description; its ``error`` and ``kind`` for an answer that is not one (not
    text: ``"unreadable"``, or ``"empty"``)."""
    if not isinstance(text, str):
        return {"error": f"answer is {type(text).__name__}, not text", "kind": "unreadable"}
    if not text.strip():
        return {"error": "the describer gave an empty answer", "kind": "empty"}
    return {"value": text}


def _daemon_call(fn: Callable, *args) -> Future:
    """Run ``fn(*args)`` on a daemon thread of its own; its ``Future``.

    The threads of a ``ThreadPoolExecutor`` are joined when the interpreter
    exits, so one call that hangs would keep a stopped run's process alive;
    these are not. The scheduler keeps at most ``max_concurrency`` in flight.
    """
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as err:  # noqa: BLE001 - handed to the scheduler through the future
            future.set_exception(err)

    threading.Thread(target=run, name=_CALL_THREAD, daemon=True).start()
    return future


def describe_items(
    describer: Describer,
    items: Iterable[Item],
    cache_dir: str | Path,
    *,
    prompt: Prompt | str = DEFAULT_PROMPT,
    fps: float = 1.0,
    frames: int | None = None,
    max_frames: int | None = None,
    crop_source: str = "none",
    sampler_version: str | None = None,
    input_name: str | None = None,
    details: dict | None = None,
    run: RunOptions | None = None,
    engine: Engine | None = None,
) -> RunSummary:
    """Describe ``items`` with ``describer`` into ``cache_dir``; resumes a stopped run.

    ``prompt`` is a ``Prompt`` or a string that ``sova_lib.describe.prompts.resolve_prompt``
    reads as ``sova describe --prompt`` does: a preset name (default ``general``), or a sentence of free text
    (``custom_prompt(text)`` for any text).
    ``fps`` is the sampling rate in frames per second of video (the paper's sampler); ``frames`` a fixed count of
    evenly spaced frames instead, ``max_frames`` a cap on the rate's count (``sova_lib.video.Sampling``; both
    enter the cache key only when set); an ``fps`` above every video's own rate is lowered to the highest of
    them (``plan_run``, which applies every rule of the key). ``crop_source``
    says where crop boxes come from (``"none"``: whole frames of the given
    files); it is part of the cache key, as is ``input_name``, the benchmark or input the items come from
    (``"quickstart"``, ``"sovabench"``, ...; ``cache.cache_key``), which starts the folder's name. Ids must be
    unique. ``details``
    goes to the manifest's ``source_details`` (e.g. the clip manifest used).
    ``run``: retries, progress bar, manifest interval, printing and the
    fail-fast rule (``RunOptions``; default: its defaults); a fail-fast
    stop raises ``DescriberEnvironmentError``. ``engine``: where the describer
    runs and how the items are loaded (default: ``LocalEngine()``, this process, each item from its file;
    ``ray_engine.RayEngine``, whose actors decode their own frames).

    Before the first item the local engine runs the describer's optional ``load()`` once (``start_describer``).

    Returns a ``RunSummary`` (also printed when ``verbose``).
    """
    engine = engine or LocalEngine()
    plan = plan_run(describer, items, prompt=prompt, fps=fps, frames=frames, max_frames=max_frames,
                    crop_source=crop_source, sampler_version=sampler_version, input_name=input_name)
    with configuration_lock(cache_dir, plan.key):
        # the fingerprint is asked before anything is skipped, so a describer that cannot be reached stops even a
        # run with nothing left to do
        key = plan.key_with(describer_fingerprint(describer))
        with open_run(key, plan.items, cache_dir, run_options=run,
                      run_info={**_run_info(describer), **engine.run_info()}, device=engine.device(describer),
                      details=details) as this_run:
            outcomes = engine.outcomes(describer, this_run.todo, plan.sampling, plan.prompt, this_run.run_info)
            with contextlib.closing(outcomes):  # a stopped run ends the engine's work before the cache closes
                for outcome in outcomes:
                    this_run.write(outcome)
    return this_run.summary


class Engine(Protocol):
    """Where a run's describer runs (``LocalEngine``, ``ray_engine.RayEngine``); ``describe_items`` does the rest.

    ``outcomes`` yields one ``Outcome`` per item of ``todo`` as its work ends, and starts nothing when ``todo``
    is empty; ``run_info`` is what the engine adds to the manifest's ``run`` entry and ``device`` its
    ``device``. Closing the generator of ``outcomes`` (the run stops: Ctrl-C, an error) ends its work.
    """

    def outcomes(self, describer: Describer, todo: list[Item], sampling: Sampling | float | None, prompt: Prompt,
                 run_info: dict) -> Iterator[Outcome]: ...

    def run_info(self) -> dict: ...

    def device(self, describer: Describer) -> str | None: ...


@dataclass(frozen=True)
class LocalEngine:
    """Describing in this process (``--engine local``): the describer loaded here, ``schedule_requests``' threads.

    ``loader(item, sampling)`` returns ``(frames, timestamps, is_video)`` (default ``load_item``: the item's file);
    ``load_workers`` threads run it (default: half the CPU cores, 2 to 8), at most ``prefetch`` items ahead of the
    model (``schedule_requests``). The describer starts
    (``start_describer``) once there is work, and what loading learned (its ``run_info()``: devices, frame
    sizes) joins ``run_info``, the manifest's ``run`` entry.
    """

    loader: Callable[[Item, Any], tuple[list, Sequence[float], bool]] = load_item
    load_workers: int | None = None
    prefetch: int | None = None

    def outcomes(self, describer: Describer, todo: list[Item], sampling: Sampling | float | None, prompt: Prompt,
                 run_info: dict) -> Iterator[Outcome]:
        if not todo:
            return
        start_describer(describer)
        if callable(getattr(describer, "run_info", None)):
            run_info.update(describer.run_info())
        yield from schedule_requests(describer, todo, sampling, prompt, loader=self.loader,
                                     load_workers=self.load_workers, prefetch=self.prefetch)

    def run_info(self) -> dict:
        return {}  # the manifest reads a run without an engine entry as local

    def device(self, describer: Describer) -> str | None:
        device = getattr(describer, "device", None)
        return None if device is None else str(device)


def frame_sampling(fps: float | None, frames: int | None = None, max_frames: int | None = None) -> Sampling | float | None:
    """What a run's loader gets: ``fps`` itself for the paper's sampler at a rate (or ``None``: no frames sampled),
    a ``Sampling`` with ``frames`` (then ``fps`` is not used) or ``max_frames``."""
    if frames is None and max_frames is None:
        return fps
    return Sampling(None if frames is not None else fps, frames, max_frames)


def _run_info(describer: Describer) -> dict:
    """The describer's ``run_info()`` with its ``batch_size`` (``max_batch_size`` where ``run_info`` does not give
    it): the manifest's ``run`` entry, outside the key."""
    run_info = getattr(describer, "run_info", None)
    info = dict(run_info()) if callable(run_info) else {}
    info.setdefault("batch_size", int(describer.max_batch_size))  # recorded per run, outside the key
    return info


def schedule_requests(describer: Describer, todo: list[Item], sampling: Sampling | float, prompt: Prompt,
                      *, loader: Callable = load_item, load_workers: int | None = None,
                      prefetch: int | None = None) -> Iterator[Outcome]:
    """Load requests on background threads (``build_request``), run ``describer`` calls on a pool: yield outcomes.

    One ``Outcome`` per item as its call returns (``loaded=False`` for an item that could not be loaded, as soon
    as its loader gives up). Up to ``prefetch`` items are loaded or waiting ahead of the model; a call takes up
    to ``max_batch_size`` loaded requests and goes out when the batch is full, when no call is in flight, or
    when nothing more is coming; at most ``max_concurrency`` calls are in flight. Closing the generator (the
    run stops) stops the describer (module docstring).
    """
    batch_size = max(1, int(describer.max_batch_size))
    concurrency = max(1, int(describer.max_concurrency))
    prefetch = max(1, prefetch if prefetch is not None else batch_size * (concurrency + 1))
    if load_workers is None:
        load_workers = min(8, max(2, (os.cpu_count() or 2) // 2))
    load_pool = ThreadPoolExecutor(max(1, load_workers), thread_name_prefix=_LOAD_THREAD)
    pending, ready = deque(todo), deque()
    loads: dict[Future, Item] = {}
    calls: dict[Future, list[DescribeRequest]] = {}
    try:
        while True:
            while pending and len(loads) + len(ready) < prefetch:
                item = pending.popleft()
                loads[load_pool.submit(build_request, item, sampling, prompt, loader)] = item
            while ready and len(calls) < concurrency and (
                len(ready) >= batch_size or not calls or not (pending or loads)
            ):
                batch = [ready.popleft() for _ in range(min(batch_size, len(ready)))]
                calls[_daemon_call(describe_batch, describer, batch)] = batch
            if not (loads or calls or ready):
                return
            done = wait({*loads, *calls}, return_when=FIRST_COMPLETED).done
            for future in [f for f in (*loads, *calls) if f in done]:  # in the order they were sent, not a set's:
                yield from _finished(future, loads, calls, ready)  # loaded items queue in the order of the items
    except BaseException:  # Ctrl-C, an error, or the run closing this generator
        _stop(describer, load_pool, calls)
        raise
    finally:
        load_pool.shutdown(wait=False, cancel_futures=True)


def _finished(future: Future, loads: dict, calls: dict, ready: deque) -> list[Outcome]:
    """The outcomes of one finished ``future``: a call's, or a failed load's; a loaded request joins ``ready``."""
    if future in calls:
        calls.pop(future)
        return future.result()
    item = loads.pop(future)
    request, error = future.result()
    if error is None:
        ready.append(request)
        return []
    return [Outcome(item.id, error=error, loaded=False)]


def _stop(describer: Describer, load_pool: ThreadPoolExecutor, calls: dict) -> None:
    """A stopped run: no more loading, the describer's optional ``stop()``, the calls in flight given a grace."""
    load_pool.shutdown(wait=False, cancel_futures=True)
    stop = getattr(describer, "stop", None)
    if callable(stop):
        stop()  # the calls still in flight end their waits; their answers are not recorded
    if calls:  # let them leave native code before the interpreter may exit (module docstring)
        wait(calls, timeout=STOP_GRACE_SECONDS)
