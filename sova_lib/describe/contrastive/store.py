"""The frame-embedding cache: one folder per configuration, append-only shards, kill -9 safe.

``embedding_key(model_config, fps, pool, ...)`` gathers everything that
changes the vectors (model name, revision, weights digest, class, precision,
sampling rate, sampler version, pooling, crop source); its hash names the
folder::

    <cache_dir>/frame-embeddings/<model>-<pool>-<fps>fps__<config hash>/
        shard-<time>-<pid>-<n>-<random>.npz  items finished together: ids, counts, vectors, frames
        errors.jsonl                 one {"id", "error", "time"} line per failed item
        manifest.json                the key, counts, versions, throughput and times (the schema of
                                     sova_lib.describe.cache.new_manifest, ``backend`` "contrastive")

A shard is written to a temporary name (``sova_lib.storage.atomic_file``:
``.shard-....npz.<pid>.<random>.tmp``, which no reader's ``shard-*.npz``
matches) and renamed, so a killed run leaves either a whole shard or none (a
stray temporary file is removed on the next open); items of a lost shard are
embedded again, and an item is in at most one shard, because finished ids
are skipped and the folder is locked against a second writer.

Shard arrays: ``ids`` (``n`` JSON-encoded ids, so int and str ids survive),
``counts`` (``n``: vectors per item; 1 for ``pool="mean"``), ``vectors``
(``sum(counts) x D`` float32, as the model gave them), ``frames``
(``sum(counts)``: each vector's frame index within its clip, -1 for a pooled
vector). ``export`` writes the ``.npz`` that ``sova <benchmark> evaluate --embeddings``
reads (``ids``, ``owner``, ``vectors``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sova_lib.describe.cache import cache_folder, new_manifest, read_failures
from sova_lib.item_vectors import write_embeddings
from sova_lib.similarity import ItemVectors
from sova_lib.storage import LockedFolder, file_errors, json_line, now, read_shards, write_shard
from sova_lib.video import SAMPLER_VERSION

__all__ = ["POOLS", "EmbeddingCache", "embedding_folder", "embedding_key", "export", "read_cache"]

#: ``mean``: one vector per clip, the mean of its frame vectors; ``none``: every frame vector;
#: ``video``: the model's own clip vector (``get_video_features``).
POOLS = ("mean", "none", "video")


def embedding_key(model_config: dict, fps: float | None, pool: str, *, crop_source: str = "none",
                  frames: int | None = None, max_frames: int | None = None) -> dict:
    """Everything that changes the vectors of a run; its ``config_hash`` names the cache folder.

    ``fps`` (``None`` with ``frames``), ``frames`` and ``max_frames`` as ``sova_lib.video.Sampling`` says; the
    last two enter the key only when set, so the paper's default keeps its folders.

    Shaped like a description cache's key (``backend``, ``describer``: the
    model's config), so the project's one manifest schema
    (``sova_lib.describe.cache.new_manifest``) describes it too.
    """
    if pool not in POOLS:
        raise ValueError(f"unknown pooling {pool!r}; choose one of {POOLS}")
    counts = {k: int(v) for k, v in (("frames", frames), ("max_frames", max_frames)) if v is not None}
    return {"backend": "contrastive", "describer": model_config, "fps": None if fps is None else float(fps),
            "pool": pool, "sampler_version": SAMPLER_VERSION, "crop_source": crop_source, **counts}


def embedding_folder(cache_dir: str | Path, key: dict) -> Path:
    """``<cache_dir>/frame-embeddings/<model>-<pool>-<fps>fps__<config hash>`` (``cache.cache_folder``;
    ``<N>frames`` for a fixed count, ``-max<N>`` after the rate for a cap)."""
    model = str(key["describer"].get("model", "model")).rstrip("/").rsplit("/", 1)[-1]
    frames = f"{key['frames']}frames" if key.get("frames") else f"{key['fps']:g}fps"
    cap = f"-max{key['max_frames']}" if key.get("max_frames") else ""
    return cache_folder(cache_dir, key, name=f"{model}-{key['pool']}-{frames}{cap}", kind="frame-embeddings")


def read_cache(folder: str | Path) -> dict:
    """id -> ``(vectors (c, D) float32, frames (c,) int64)`` of every finished item of a cache folder."""
    out = {}
    for ids, counts, vectors, frames in read_shards(folder, ("ids", "counts", "vectors", "frames"), "shard",
                                                    "the next run embeds its items again"):
        starts = np.cumsum(counts) - counts
        for raw, start, count in zip(ids.tolist(), starts.tolist(), counts.tolist()):
            out[json.loads(raw)] = (vectors[start:start + count], frames[start:start + count])
    return out


class EmbeddingCache(LockedFolder):
    """One cache folder, opened for writing under an exclusive lock (``sova_lib.storage.LockedFolder``).

    ``done``: ids with vectors; ``failures``: id -> reason, for ids that failed
    and were not embedded since. A second writer gets ``CacheLockedError``.
    """

    def __init__(self, folder: str | Path):
        super().__init__(folder)
        self.errors_path = self.folder / "errors.jsonl"
        self.done: set = set()
        self.failures: dict = {}
        self._shards = 0

    def _read(self) -> None:
        self.done = set(read_cache(self.folder))
        self.failures = {k: v for k, v in read_failures(self.errors_path).items() if k not in self.done}

    def add(self, items: list[tuple]) -> None:
        """Write one shard holding ``items``: ``(id, vectors (c, D), frame indices (c,))`` each."""
        if not items:
            return
        ids, vectors, frames = zip(*items)
        self._shards += 1
        write_shard(self.folder, f"{self._shards:05d}", sync=True, ids=np.array([json.dumps(i) for i in ids]),
                    counts=np.array([len(v) for v in vectors], dtype=np.int64),
                    vectors=np.concatenate(vectors).astype(np.float32), frames=np.concatenate(frames).astype(np.int64))
        self.done.update(ids)
        for i in ids:
            self.failures.pop(i, None)

    def add_error(self, item_id, reason: str) -> None:
        with file_errors(self.errors_path, "write"), open(self.errors_path, "a", encoding="utf-8") as f:
            f.write(json_line({"id": item_id, "error": reason, "time": now()}))
        self.failures[item_id] = reason

    def start_manifest(self, key: dict, device: str | None = None) -> None:
        """Begin this run's manifest in the project's schema (``new_manifest``), keeping the folder's ``created``."""
        self.manifest_data = new_manifest(key, source="run", device=device, created=self.manifest().get("created"))


def export(folder: str | Path, path: str | Path, ids=None) -> Path:
    """Write a cache folder's vectors as the ``.npz`` of ``sova_lib.item_vectors.write_embeddings``.

    ``ids``: the items to export, in that order (default: every finished item,
    sorted). Integer ids give an integer ``ids`` array (what ``sova sovabench evaluate
    --embeddings`` reads); other ids are written as strings. Raises
    ``KeyError`` naming ids the cache lacks.
    """
    found = read_cache(folder)
    ids = sorted(found, key=lambda i: (isinstance(i, str), i)) if ids is None else list(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise KeyError(f"{len(missing)} id(s) have no vectors in {folder} (e.g. {missing[:5]})")
    if not ids:
        raise ValueError(f"{folder} holds no vectors to export")
    counts = [len(found[i][0]) for i in ids]
    array = np.array(ids, dtype=np.int64) if all(isinstance(i, int) for i in ids) else np.array([str(i) for i in ids])
    items = ItemVectors(array, np.repeat(np.arange(len(ids)), counts), np.concatenate([found[i][0] for i in ids]))
    return write_embeddings(path, items)
