"""Frame embeddings on Ray Data: a pool of actors, each with the contrastive model loaded once, into the same cache.

``embed_items_ray(options, items, cache_dir, fps=..., pool=...)`` does
what ``runner.embed_items`` does, with the work spread over Ray actors, the
way ``sova_lib.describe.ray_engine`` spreads describing:

* The driver names the cache folder from the model's configuration read
  without loading the weights (``model.planned_config``: ``config.json`` and
  the weights' digest), opens it through the one cache writer
  (``runner.run_into_store``) and leaves out the items already embedded (and,
  unless ``retry_errors``, those that failed before).
* The rest become a Ray dataset of small rows (each item pickled); no
  frames leave the driver. ``map_batches`` runs the actor of both Ray
  engines (``sova_lib.describe.ray_engine.RunWorker``) in a pool of
  ``workers`` actors (``gpus_per_worker`` GPUs, ``cpus_per_worker`` CPUs
  each). An actor is sent the model's options (``ContrastiveOptions``),
  loads ``ContrastiveModel(options)`` once and
  checks that its ``config()`` is the driver's; a failure stops the run with
  the same exception and message as a local run. For each call of
  ``items_per_call`` items it decodes the sampler's frames and computes the
  vectors with the local engine's own loop (``runner.schedule_embeddings``).
* Vectors and per-item errors stream back (``iter_rows``) and the driver
  alone appends them to the shards and ``errors.jsonl``: a killed driver
  loses only unwritten items, and the same command resumes.

The model's device is fixed on the driver (``cuda`` when the actors hold
GPUs, else ``cpu``, unless ``options.device`` says otherwise), so
its precision, part of the cache key, is the same in every actor.

``runner`` and ``ray_engine`` are one named pair in each kind of run: describing
(``sova_lib.describe.runner``, ``sova_lib.describe.ray_engine``) and embedding frames
(``sova_lib.describe.contrastive.runner``, ``sova_lib.describe.contrastive.ray_engine``). ``runner`` is
the local engine (``--engine local``) and holds the pieces every engine shares; ``ray_engine`` runs
those pieces on a pool of Ray actors (``--engine ray``).
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Iterable

from sova_lib.describe.contrastive.model import ContrastiveModel, ContrastiveOptions, planned_config
from sova_lib.describe.contrastive.runner import check_pool, run_into_store, schedule_embeddings
from sova_lib.describe.contrastive.store import embedding_key
from sova_lib.describe.item import Item, effective_rate
from sova_lib.describe.ray_engine import run_on_actors
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import RunOptions, RunSummary
from sova_lib.video.frames import Sampling

__all__ = ["embed_items_ray"]


def _load_model(options: ContrastiveOptions, expected_config: dict) -> ContrastiveModel:
    """An actor's model: ``ContrastiveModel(options)``, checked to be the one the driver named the cache after."""
    model = ContrastiveModel(options)
    if model.config() != expected_config:
        raise RuntimeError(f"the model loaded on a Ray worker is not the one the driver named the cache "
                           f"after: {model.config()} != {expected_config}")
    return model


def embed_items_ray(
    options: ContrastiveOptions,
    items: Iterable[Item],
    cache_dir: str | Path,
    *,
    fps: float = 1.0,
    frames: int | None = None,
    max_frames: int | None = None,
    pool: str = "mean",
    flush_items: int = 64,
    flush_seconds: float = 30.0,
    crop_source: str = "none",
    ray: RayOptions | None = None,
    run: RunOptions | None = None,
) -> RunSummary:
    """Embed ``items`` on a Ray actor pool into ``cache_dir`` (module docstring); returns the run's ``RunSummary``.

    ``options``: the model's (``ContrastiveOptions``), which each actor is
    sent. ``ray``: the pool
    and the cluster, as for ``sova_lib.describe.ray_engine.describe_items_ray``
    (``RayOptions``); Ray is not started when nothing is left to embed.
    Other arguments, ``run`` (``RunOptions``) among them, as for
    ``runner.embed_items``. A model that cannot be found (on the driver:
    ``RuntimeError``) or loaded (in an actor: ``ModelLoadError``) stops the run.
    """
    ray = ray or RayOptions()
    device = options.device or ("cuda" if ray.gpus_per_worker else "cpu")
    options = replace(options, device=device)
    expected, model_class, _ = planned_config(options.model, revision=options.revision, device=device,
                                              dtype=options.dtype)
    check_pool(model_class, pool, options.model)
    items = list(items)
    sampling = Sampling(None if frames is not None else effective_rate(items, fps), frames, max_frames)
    key = embedding_key(expected, sampling.fps, pool, crop_source=crop_source, **sampling.cache_fields())
    outcomes = partial(run_on_actors, start=partial(_load_model, options, expected),
                       work=partial(schedule_embeddings, fps=sampling, pool=pool), ray=ray)
    return run_into_store(key, items, cache_dir, outcomes, device=f"{ray.device()}, {device}", run_options=run,
                          flush_items=flush_items, flush_seconds=flush_seconds,
                          last_run={"batch_frames": options.batch_frames}, run={"engine": ray.engine()})
