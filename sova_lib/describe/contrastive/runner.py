"""Embedding the frames of clips and images with a contrastive model, into a resumable cache.

``embed_items(model, items, cache_dir, fps=1, pool="mean")`` samples each
item's frames with the paper's sampler (the same ``load_item`` that feeds the
describers: ``sova_lib.video.sample_frames`` for a video, one frame for an
image), runs them through ``model`` in batches of ``batch_frames`` frames
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
"""
from __future__ import annotations

import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sova_lib.describe.contrastive.store import EmbeddingCache, embedding_folder, embedding_key
from sova_lib.describe.item import Item, load_item
from sova_lib.video import sample_frames

__all__ = ["EmbedSummary", "embed_items"]


@dataclass
class EmbedSummary:
    """What a run did: counts, its folder and its speed (items and frames per second)."""

    folder: Path
    embedded: int = 0
    skipped: int = 0
    failed: int = 0
    frames: int = 0
    seconds: float = 0.0
    errors: dict = field(default_factory=dict)

    @property
    def items_per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        return (f"{self.embedded} embedded, {self.skipped} already cached, {self.failed} failed; "
                f"{self.frames} frames in {self.seconds:.1f} s ({self.items_per_second:.2f} items/s) -> {self.folder}")


def _pool(frame_vectors: np.ndarray, indices: np.ndarray, pool: str):
    if pool == "mean":
        return frame_vectors.mean(axis=0, keepdims=True), np.array([-1])
    return frame_vectors, indices


def embed_items(model, items: list[Item], cache_dir: str | Path, *, fps: float = 1.0, pool: str = "mean",
                batch_frames: int = 64, flush_items: int = 64, flush_seconds: float = 30.0,
                load_workers: int = 2, retry_errors: bool = False, crop_source: str = "none",
                progress: bool = True) -> EmbedSummary:
    """Embed ``items`` with ``model`` (a ``ContrastiveModel``) into the cache; see the module docstring."""
    if pool == "video" and not getattr(model, "has_video_features", False):
        raise ValueError(f"pool 'video' needs a model with get_video_features (X-CLIP); {model.name} has none")
    if pool != "video" and not getattr(model, "has_image_features", True):
        raise ValueError(f"pool {pool!r} needs a model with get_image_features; {model.name} has only a video head")
    key = embedding_key(model.config(), fps, pool, crop_source=crop_source)
    cache = EmbeddingCache(embedding_folder(cache_dir, key)).open()
    summary = EmbedSummary(cache.folder)
    try:
        cache.start_manifest(key, device=getattr(model, "device", None))
        seen = set()
        todo = []
        for item in items:
            if item.id in seen:
                raise ValueError(f"item id {item.id!r} appears twice; ids must be unique")
            seen.add(item.id)
            if item.id in cache.done or (item.id in cache.failures and not retry_errors):
                summary.skipped += 1
            else:
                todo.append(item)
        started = time.monotonic()
        _run(model, todo, cache, summary, fps=fps, pool=pool, batch_frames=batch_frames, flush_items=flush_items,
             flush_seconds=flush_seconds, load_workers=load_workers, progress=progress)
        summary.seconds = time.monotonic() - started
        cache.update_manifest(last_run={"embedded": summary.embedded, "failed": summary.failed,
                                        "skipped": summary.skipped, "frames": summary.frames,
                                        "seconds": round(summary.seconds, 3), "batch_frames": batch_frames},
                              throughput_items_per_s=round(summary.items_per_second, 3))
    finally:
        cache.close()
    return summary


def _load(item: Item, fps: float):
    """``(item, images, frame indices, error)``: the sampler's frames of a video, or the one image."""
    try:
        if item.video and item.error is None and Path(item.path).is_file():
            frames = sample_frames(item.path, rate=fps, window=item.window, crop=item.crop, reverse=item.reverse)
            return item, list(frames.images), np.asarray(frames.indices, dtype=np.int64), None
        images, _, _ = load_item(item, fps)  # an image, or the error of a missing/planned-bad item
        return item, images, np.zeros(len(images), dtype=np.int64), None
    except Exception as err:  # a bad item is recorded, the run goes on
        return item, None, None, f"{type(err).__name__}: {err}"


def _prefetched(todo, fps, workers: int, ahead: int):
    """``_load`` of each item in order, at most ``ahead`` items decoded ahead of the consumer."""
    with ThreadPoolExecutor(max(1, workers)) as pool:
        queue = deque()
        for item in todo:
            queue.append(pool.submit(_load, item, fps))
            if len(queue) >= ahead:
                yield queue.popleft().result()
        while queue:
            yield queue.popleft().result()


def _run(model, todo, cache, summary, *, fps, pool, batch_frames, flush_items, flush_seconds, load_workers,
         progress):
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), unit="item", disable=not progress, desc="embed")
    waiting, ready = [], ([], [], [])  # items whose frames wait for a batch; finished (ids, vectors, frames)
    last_flush = time.monotonic()

    def flush():
        nonlocal ready, last_flush
        cache.add(*ready)
        ready, last_flush = ([], [], []), time.monotonic()

    def run_batch():
        frames = [img for _, images, _ in waiting for img in images]
        vectors = model.image_features(frames) if pool != "video" else None
        offset = 0
        for item, images, indices in waiting:
            if pool == "video":
                vecs, idx = model.video_features(images)[None], np.array([-1])
            else:
                vecs, idx = _pool(vectors[offset:offset + len(images)], indices, pool)
            offset += len(images)
            ready[0].append(item.id)
            ready[1].append(vecs)
            ready[2].append(idx)
            summary.embedded += 1
            summary.frames += len(images)
        bar.update(len(waiting))
        waiting.clear()

    for item, images, indices, error in _prefetched(todo, fps, load_workers, ahead=4 * max(1, load_workers)):
        if error is not None:
            cache.add_error(item.id, error)
            summary.failed += 1
            summary.errors[item.id] = error
            bar.update(1)
            continue
        waiting.append((item, images, indices))
        if sum(len(w[1]) for w in waiting) >= batch_frames:
            run_batch()
        if len(ready[0]) >= flush_items or (ready[0] and time.monotonic() - last_flush >= flush_seconds):
            flush()
    if waiting:
        run_batch()
    flush()
    bar.close()
