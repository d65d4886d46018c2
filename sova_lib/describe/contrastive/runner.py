"""Embedding the frames of clips and images with a contrastive model, into a resumable cache.

``embed_items(model, items, cache_dir, fps=1, pool="mean")`` samples each
item's frames with the paper's sampler (the same ``load_item`` that feeds the
describers: ``sova_lib.video.sample_frames`` for a video, one frame for an
image), runs them through ``model`` in batches of its ``batch_frames`` frames
(frames of several items share a batch), pools them and appends the vectors
to the cache folder of the configuration (``store``). Items already in the
cache are skipped; an item that cannot be read is recorded in
``errors.jsonl`` and the run goes on. Shards are written every
``flush_items`` items or ``flush_seconds`` seconds, whichever comes first.

Pooling: ``mean`` keeps one vector per item, the mean of its frame vectors
(the clip vector of the paper's contrastive rows); ``none`` keeps every frame
vector, so an item is a set of vectors and ``set_similarity`` scores it by
its best pair of frames; ``video`` keeps the model's own clip vector
(``get_video_features``, X-CLIP).

Both engines share two pieces, with the describing engines' ``Outcome``
(``sova_lib.describe.run_cache``): ``schedule_embeddings`` (decode, batch,
embed, pool: a generator of one outcome per item, in this process and in
each Ray actor of ``ray_engine``) and ``run_into_store`` (the one writer of
the cache and its loop over the outcomes: skipping, shards, errors,
manifest), which the Ray engine runs on its driver.

``runner`` and ``ray_engine`` are one named pair in each kind of run: describing
(``sova_lib.describe.runner``, ``sova_lib.describe.ray_engine``) and embedding frames
(``sova_lib.describe.contrastive.runner``, ``sova_lib.describe.contrastive.ray_engine``). ``runner`` is
the local engine (``--engine local``) and holds the pieces every engine shares; ``ray_engine`` runs
those pieces on a pool of Ray actors (``--engine ray``).
"""
from __future__ import annotations

import contextlib
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from sova_lib.describe.contrastive.store import EmbeddingCache, embedding_folder, embedding_key
from sova_lib.describe.item import Item, effective_rate, load_item
from sova_lib.describe.run_cache import Outcome, RunOptions, RunSummary, first_items, left_to_do, unique_items
from sova_lib.progress import progress_bar
from sova_lib.video import Sampling, sample_frames

__all__ = ["check_pool", "embed_items", "run_into_store", "schedule_embeddings"]


def embed_items(model, items: list[Item], cache_dir: str | Path, *, fps: float = 1.0, frames: int | None = None,
                max_frames: int | None = None, pool: str = "mean", flush_items: int = 64, flush_seconds: float = 30.0,
                load_workers: int = 2, crop_source: str = "none", run: RunOptions | None = None) -> RunSummary:
    """Embed ``items`` with ``model`` (a ``ContrastiveModel``) into the cache; see the module docstring.

    ``run``: the run options shared with describing (``RunOptions``, default:
    its defaults; an embedding run reads ``retry_errors``, ``show_progress`` and ``limit``). ``frames`` and
    ``max_frames`` as for ``sova_lib.describe.runner.describe_items`` (an ``fps`` above every video's own rate is
    lowered to the highest of them, ``item.effective_rate``, in the frames and in the key).
    """
    check_pool(type(model.model), pool, model.name)
    items = unique_items(items)
    sampling = Sampling(None if frames is not None else effective_rate(items, fps), frames, max_frames)
    key = embedding_key(model.config(), sampling.fps, pool, crop_source=crop_source, **sampling.cache_fields())
    outcomes = partial(schedule_embeddings, model, fps=sampling, pool=pool, load_workers=load_workers)
    return run_into_store(key, items, cache_dir, outcomes, device=getattr(model, "device", None), run_options=run,
                          flush_items=flush_items, flush_seconds=flush_seconds, last_run={"batch_frames": model.batch_frames})


def check_pool(model_class: type, pool: str, name: str) -> None:
    """``ValueError`` when the transformers model class of the model ``name`` lacks ``pool``'s head."""
    if pool == "video" and not hasattr(model_class, "get_video_features"):
        raise ValueError(f"pool 'video' needs a model with get_video_features (X-CLIP); {name} has none")
    if pool != "video" and not hasattr(model_class, "get_image_features"):
        raise ValueError(f"pool {pool!r} needs a model with get_image_features; {name} has only a video head")


def run_into_store(key: dict, items: list[Item], cache_dir: str | Path,
                   outcomes: Callable[[list[Item]], Iterator[Outcome]], *, device: str | None = None,
                   run_options: RunOptions | None = None, flush_items: int = 64, flush_seconds: float = 30.0,
                   last_run: dict | None = None, **manifest_fields) -> RunSummary:
    """Open the cache folder of ``key``, leave out finished items, and write each outcome of ``outcomes(todo)``.

    The one writer of an embedding cache, for every engine. ``outcomes(todo)``
    is called once with the items to embed (not at all when there are none)
    and yields one ``Outcome`` per item, its value ``(vectors, frame indices,
    frames decoded)`` (``loaded`` is not read here). Vectors are written in
    shards of ``flush_items`` items or every ``flush_seconds`` seconds; errors at once. ``last_run`` and
    ``manifest_fields`` go to the manifest. ``run_options``: ``retry_errors``,
    ``show_progress`` and ``limit`` of ``RunOptions``.
    """
    run, items = run_options or RunOptions(), unique_items(items)
    with EmbeddingCache(embedding_folder(cache_dir, key)).open() as cache:
        summary = RunSummary(cache.folder, verb="embedded")
        cache.start_manifest(key, device=device)
        items, summary.left_out = first_items(items, run.limit)
        todo = left_to_do(items, cache, run.retry_errors, summary)
        started = time.monotonic()
        if todo:
            _write_all(outcomes(todo), len(todo), cache, summary, flush_items, flush_seconds, run.show_progress)
        summary.seconds = time.monotonic() - started
        summary.total_done, summary.total_failed = len(cache.done), len(cache.failures)
        cache.update_manifest(last_run={"embedded": summary.done, "failed": summary.failed,
                                        "skipped": summary.skipped, "frames": summary.frames,
                                        "seconds": round(summary.seconds, 3), **(last_run or {})},
                              throughput_items_per_s=round(summary.items_per_s, 3), **manifest_fields)
    return summary


def _write_all(outcomes: Iterator[Outcome], total: int, cache, summary, flush_items, flush_seconds,
               show_progress) -> None:
    """``run_into_store``'s loop: count each outcome, write errors at once and vectors in shards."""
    ready = []  # (id, vectors, frame indices) of the finished items not yet in a shard
    last_flush = time.monotonic()
    with progress_bar(total=total, unit="item", disable=not show_progress, desc="embed") as bar, \
            contextlib.closing(outcomes):
        for outcome in outcomes:
            bar.update(1)
            if outcome.error is not None:
                cache.add_error(outcome.id, outcome.error)
                summary.failed += 1
                summary.failures[outcome.id] = outcome.error
                continue
            vectors, indices, frames = outcome.value
            ready.append((outcome.id, vectors, indices))
            summary.done += 1
            summary.frames += frames
            if len(ready) >= flush_items or time.monotonic() - last_flush >= flush_seconds:
                cache.add(ready)
                ready, last_flush = [], time.monotonic()
        cache.add(ready)


def _load(item: Item, fps: Sampling | float):
    """``(item, images, frame indices, error)``: the sampler's frames of a video, or the one image."""
    if item.error is not None:  # a reason known before loading, recorded as the describing engines record it
        return item, None, None, item.error
    try:
        if item.video and Path(item.path).is_file():
            frames = sample_frames(item.path, fps, window=item.window, crop=item.crop, reverse=item.reverse,
                                   cap_rate=True)
            return item, list(frames.images), np.asarray(frames.indices, dtype=np.int64), None
        images, _, _ = load_item(item, fps)  # an image, or the error of a missing item
        return item, images, np.zeros(len(images), dtype=np.int64), None
    except Exception as err:  # a bad item is recorded, the run goes on
        return item, None, None, f"{type(err).__name__}: {err}"


def _prefetched(todo, fps, workers: int, ahead: int):
    """``_load`` of each item in order, at most ``ahead`` items decoded ahead of the consumer."""
    # named as the describing runner's loaders, so that runner.work_running sees them after Ctrl-C; a stopped run
    # (Ctrl-C, an error) leaves at once, without decoding the items queued ahead
    pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="sova-load")
    try:
        queue = deque()
        for item in todo:
            queue.append(pool.submit(_load, item, fps))
            if len(queue) >= ahead:
                yield queue.popleft().result()
        while queue:
            yield queue.popleft().result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def schedule_embeddings(model, items: list[Item], *, fps: Sampling | float, pool: str,
                        load_workers: int = 2) -> Iterator[Outcome]:
    """One ``Outcome`` per item, its value ``(vectors, frame indices, frames decoded)``, or its error.

    Frames are decoded by ``load_workers`` threads (the sampler's frames of a
    video, or the one image); frames of several items share a forward pass of
    at least the model's ``batch_frames`` frames. An item that cannot be read comes out
    at once with its error; the others once their batch has run.
    """
    waiting = []  # (item, images, indices) whose frames wait for a batch
    for item, images, indices, error in _prefetched(items, fps, load_workers, ahead=4 * max(1, load_workers)):
        if error is not None:
            yield Outcome(item.id, error=error)
            continue
        waiting.append((item, images, indices))
        if sum(len(w[1]) for w in waiting) >= model.batch_frames:
            yield from _embed_batch(model, waiting, pool)
            waiting = []
    if waiting:
        yield from _embed_batch(model, waiting, pool)


def _embed_batch(model, waiting: list, pool: str) -> list[Outcome]:
    """The outcomes of ``waiting`` (``(item, images, frame indices)``) after one forward pass of all their frames."""
    frames = [img for _, images, _ in waiting for img in images]
    vectors = model.image_features(frames) if pool != "video" else None
    offset, out = 0, []
    for item, images, indices in waiting:
        if pool == "video":
            vecs, idx = model.video_features(images)[None], np.array([-1])
        elif pool == "mean":
            vecs, idx = vectors[offset:offset + len(images)].mean(axis=0, keepdims=True), np.array([-1])
        else:
            vecs, idx = vectors[offset:offset + len(images)], indices
        offset += len(images)
        out.append(Outcome(item.id, (vecs, idx, len(images))))
    return out
