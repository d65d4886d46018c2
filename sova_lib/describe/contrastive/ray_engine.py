"""Frame embeddings on Ray Data: a pool of actors, each with the contrastive model loaded once, into the same cache.

``embed_items_ray(model_options, items, cache_dir, fps=..., pool=...)`` does
what ``runner.embed_items`` does, with the work spread over Ray actors, the
way ``sova_lib.describe.ray_engine`` spreads describing:

* The driver names the cache folder from the model's configuration read
  without loading the weights (``model.planned_config``: ``config.json`` and
  the weights' digest), opens it through the one cache writer
  (``runner.run_into_store``) and leaves out the items already embedded (and,
  unless ``retry_errors``, those that failed before).
* The rest become a Ray dataset of small JSON rows (``item_to_json``); no
  frames leave the driver. ``map_batches`` runs ``EmbedWorker`` in a pool
  of ``workers`` actors (``gpus_per_worker`` GPUs, ``cpus_per_worker``
  CPUs each). An actor loads ``ContrastiveModel(**model_options)`` once and
  checks that its ``config()`` is the driver's; a failure stops the run with
  the same exception and message as a local run. For each batch of
  ``batch_size`` items it decodes the sampler's frames and computes the
  vectors with the local engine's own loop (``runner.embed_stream``).
* Vectors and per-item errors stream back (``iter_rows``) and the driver
  alone appends them to the shards and ``errors.jsonl``: a killed driver
  loses only unwritten items, and the same command resumes.

The model's device is fixed on the driver (``cuda`` when the actors hold
GPUs, else ``cpu``, unless ``model_options["device"]`` says otherwise), so
its precision, part of the cache key, is the same in every actor.

``runner`` and ``ray_engine`` are one named pair in each kind of run: describing
(``sova_lib.describe.runner``, ``sova_lib.describe.ray_engine``) and embedding frames
(``sova_lib.describe.contrastive.runner``, ``sova_lib.describe.contrastive.ray_engine``). ``runner`` is
the local engine (``--engine local``) and holds the pieces every engine shares; ``ray_engine`` runs
those pieces on a pool of Ray actors (``--engine ray``).
"""
from __future__ import annotations

import pickle
from functools import partial
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from sova_lib.describe.contrastive.model import ContrastiveModel, planned_config
from sova_lib.describe.contrastive.runner import check_pool, embed_stream, run_into_store
from sova_lib.describe.contrastive.store import embedding_key
from sova_lib.describe.item import Item
from sova_lib.describe.ray_engine import RayOptions, item_from_json, map_on_actors, pickled_error
from sova_lib.describe.run_cache import RunOptions, RunSummary

__all__ = ["EmbedWorker", "embed_items_ray"]


class EmbedWorker:
    """A Ray Data actor: one ``ContrastiveModel``, loaded once, embedding batches of dataset rows.

    A batch holds ``row`` (positions in the driver's list) and ``item``
    (``item_to_json``); the answer holds, per row, ``row``, ``vectors`` (the
    pickled ``(vectors, frame indices)``, empty on error), ``frames`` (frames
    decoded), ``error`` (``""`` when none) and ``fatal``: empty, or the
    pickled exception that stops the run (the model could not load, its
    configuration is not the driver's, or a forward pass failed).
    """

    def __init__(self, model_options: dict, expected_config: dict, fps: float, pool: str, batch_frames: int,
                 load_workers: int = 1):
        self.fps, self.pool, self.batch_frames, self.load_workers = fps, pool, batch_frames, load_workers
        self.fatal = b""
        try:
            self.model = ContrastiveModel(**model_options)
            if self.model.config() != expected_config:
                raise RuntimeError(f"the model loaded on a Ray worker is not the one the driver named the cache "
                                   f"after: {self.model.config()} != {expected_config}")
        except Exception as err:  # noqa: BLE001 - handed to the driver, which stops the run with it
            self.fatal = pickled_error(err)

    def __call__(self, batch: dict) -> dict:
        rows, answers = [int(row) for row in batch["row"]], [(b"", 0, "")] * len(batch["row"])
        if not self.fatal:
            try:
                answers = self._embed(batch)
            except Exception as err:  # noqa: BLE001 - handed to the driver, which stops the run with it
                self.fatal = pickled_error(err)
        vectors, frames, error = zip(*answers)
        return {"row": rows, "vectors": list(vectors), "frames": list(frames), "error": list(error),
                "fatal": [self.fatal] * len(rows)}

    def _embed(self, batch: dict) -> list[tuple[bytes, int, str]]:
        """``(pickled (vectors, frame indices) or b"", frames decoded, error or "")`` of each item of ``batch``."""
        items = [item_from_json(str(text)) for text in batch["item"]]
        done = {}
        for item, vectors, indices, frames, error in embed_stream(
                self.model, items, fps=self.fps, pool=self.pool, batch_frames=self.batch_frames,
                load_workers=self.load_workers):
            done[item.id] = (b"" if error else pickle.dumps((vectors, indices)), frames, error or "")
        return [done[item.id] for item in items]


def embed_items_ray(
    model_options: dict,
    items: Iterable[Item],
    cache_dir: str | Path,
    *,
    fps: float = 1.0,
    pool: str = "mean",
    batch_frames: int = 64,
    flush_items: int = 64,
    flush_seconds: float = 30.0,
    crop_source: str = "none",
    on_start: Callable[[float], None] | None = None,
    ray: RayOptions | None = None,
    run: RunOptions | None = None,
) -> RunSummary:
    """Embed ``items`` on a Ray actor pool into ``cache_dir`` (module docstring); returns the run's ``RunSummary``.

    ``model_options``: ``ContrastiveModel``'s keyword options (``name``,
    ``revision``, ``device``, ``dtype``, ``batch_size``). ``ray``: the pool
    and the cluster, as for ``sova_lib.describe.ray_engine.describe_items_ray``
    (``RayOptions``); ``on_start(seconds)`` is told how long Ray took to start,
    and is not called when nothing is left to embed (Ray is then not started).
    Other arguments, ``run`` (``RunOptions``) among them, as for
    ``runner.embed_items``. A model that cannot be found (on the driver:
    ``RuntimeError``) or loaded (in an actor: ``ModelLoadError``) stops the run.
    """
    ray = ray or RayOptions()
    device = model_options.get("device") or ("cuda" if ray.gpus_per_worker else "cpu")
    model_options = {**model_options, "device": device}
    expected, model_class, _ = planned_config(model_options["name"], revision=model_options.get("revision"),
                                              device=device, dtype=model_options.get("dtype"))
    check_pool(model_class, pool, name=model_options["name"])
    key = embedding_key(expected, fps, pool, crop_source=crop_source)
    kwargs = {"model_options": model_options, "expected_config": expected, "fps": fps, "pool": pool,
              "batch_frames": batch_frames, "load_workers": ray.threads()}  # one rule for both Ray engines
    stream = partial(_stream_from_actors, ray, on_start, kwargs)
    return run_into_store(key, list(items), cache_dir, stream, device=f"{ray.device()}, {device}", run_options=run,
                          flush_items=flush_items, flush_seconds=flush_seconds,
                          last_run={"batch_frames": batch_frames}, run={"engine": ray.engine()})


def _stream_from_actors(ray: RayOptions, on_start, kwargs: dict, todo: list[Item]):
    """The ``stream`` of ``run_into_store`` for a Ray run: start Ray, map ``EmbedWorker(**kwargs)`` over ``todo``."""
    for item, out in map_on_actors(todo, EmbedWorker, kwargs, ray, on_start):
        if out["error"]:
            yield item, None, None, 0, str(out["error"])
        else:
            vectors, indices = pickle.loads(out["vectors"])
            yield item, np.asarray(vectors), np.asarray(indices), int(out["frames"]), None
