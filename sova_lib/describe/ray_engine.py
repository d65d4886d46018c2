"""Describe on Ray Data: many GPUs, many machines or many endpoints, into the same resumable cache.

``describe_items_ray(backend, options, items, cache_dir, prompt=..., fps=...)``
does what ``sova_lib.describe.runner.describe_items`` does, with the work
spread over a pool of Ray actors:

* The driver (this process) opens the cache folder of the run's key, exactly
  as the local engine does (``run_cache.run_into_cache``, the one cache writer),
  and leaves out the items already described (and, unless ``retry_errors``,
  those that failed before). Items with a reason known before loading go
  straight to ``errors.jsonl``.
* The rest become a Ray dataset of small rows (a position and the item as
  pickled: its path, window, crop, direction); no frames leave the driver.
* ``Dataset.map_batches`` runs ``RunWorker`` (the actor of both Ray
  engines) in a pool of ``workers`` actors, each with ``gpus_per_worker``
  GPUs and ``cpus_per_worker`` CPUs (``run_on_actors``).
  An actor builds its describer once (``make_describer(backend, **options)``)
  and loads it once (``runner.start_describer``: the weights, or the
  endpoint check); a failure there stops the whole run with the same
  exception and message as the local engine. For each call of
  ``items_per_call`` items the actor decodes the frames itself (the runner's
  loader threads) and calls the describer with its own batching and
  concurrency (the runner's scheduler).
* Outcomes stream back as they finish (``iter_rows``), and the driver alone
  appends each to the cache, applying the runner's fail-fast rule as a local
  run does. A killed driver loses only the items in flight; the same command
  resumes.

The cache key is computed on the driver from a describer built but not
loaded (``config()`` is cheap for every backend) and its ``fingerprint()``
(a local model folder's digest, so the folder must be on the driver's disk
too; a hub commit; what the server reports), so a Ray run and a local run of
the same configuration share one cache folder and, for a deterministic
describer, write the same texts.

Ray: with ``address`` (``"auto"``, or ``host:port``) the run joins that
cluster (with token authentication when a token is at hand,
``use_cluster_token``); otherwise it uses the Ray instance this process
already has, or starts a local one with ``num_cpus`` / ``num_gpus`` (default: the machine's)
and shuts it down at the end.

``runner`` and ``ray_engine`` are one named pair in each kind of run: describing
(``sova_lib.describe.runner``, ``sova_lib.describe.ray_engine``) and embedding frames
(``sova_lib.describe.contrastive.runner``, ``sova_lib.describe.contrastive.ray_engine``). ``runner`` is
the local engine (``--engine local``) and holds the pieces every engine shares; ``ray_engine`` runs
those pieces on a pool of Ray actors (``--engine ray``).
"""
from __future__ import annotations

import logging
import os
import pickle
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable

from sova_lib.describe.contract import Describer, make_describer
from sova_lib.describe.item import Item
from sova_lib.describe.prompts import DEFAULT_PROMPT, Prompt
from sova_lib.describe.run_cache import RunOptions, RunSummary, run_into_cache
from sova_lib.describe.runner import configuration_lock, frame_sampling, plan_run, schedule_requests, start_describer

__all__ = ["RayOptions", "RunWorker", "cluster_token", "describe_items_ray", "map_on_actors", "pickled_error",
           "ray_session", "run_on_actors", "use_cluster_token"]


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide a Ray run goes; the same for describing and embedding (``RunOptions``: how it behaves).

    ``workers`` actors, each with ``gpus_per_worker`` GPUs and
    ``cpus_per_worker`` CPUs, take ``items_per_call`` items per call (the describer batches them by its own
    ``batch_size``);
    ``load_workers`` decoding threads per actor (default: its CPUs, 1 to 8; ``threads``).
    ``address``, ``num_cpus`` and ``num_gpus``: see ``ray_session``.
    Every Ray run function takes these as one ``ray`` argument (default: these defaults).
    """

    workers: int = 1
    gpus_per_worker: float = 0.0
    cpus_per_worker: float = 1.0
    items_per_call: int = 8
    address: str | None = None
    num_cpus: int | None = None
    num_gpus: int | None = None
    load_workers: int | None = None

    def __post_init__(self):
        if self.workers < 1 or self.items_per_call < 1:
            raise ValueError(f"workers and items_per_call must be at least 1, got {self.workers} and "
                             f"{self.items_per_call}")
        if self.address is not None:
            use_cluster_token()  # now, before Ray is imported: it reads RAY_AUTH_MODE then

    def engine(self) -> dict:
        """The manifest's ``engine`` entry."""
        return {"name": "ray", "workers": self.workers, "gpus_per_worker": self.gpus_per_worker,
                "cpus_per_worker": self.cpus_per_worker, "items_per_call": self.items_per_call}

    def device(self) -> str:
        return f"ray: {self.workers} x ({self.gpus_per_worker:g} GPU, {self.cpus_per_worker:g} CPU)"

    def threads(self) -> int:
        """Decoding threads per actor, the one rule of the describe and the embedding Ray engines.

        ``load_workers`` when given; otherwise the actor's CPUs (``cpus_per_worker``, rounded down, at least 1),
        at most 8. The machine that plans the run may not be the one an actor runs on, so its own core count
        plays no part: Ray places an actor only on a node with ``cpus_per_worker`` CPUs free.
        """
        if self.load_workers is not None:
            return self.load_workers
        return max(1, min(8, int(self.cpus_per_worker) or 1))


class RunWorker:
    """A Ray Data actor of either engine: ``start()`` once, then ``work(state, items, record=, load_workers=)`` per batch.

    ``start`` builds what the actor keeps (a describer, built and loaded once
    with ``start_describer``; a contrastive model) and ``work`` runs the
    local engine's own loop on a batch (``runner.schedule_requests``;
    ``contrastive.runner.schedule_embeddings``), calling ``record(id, value, error,
    loaded=True)`` once per item as that loop does, with ``load_workers``
    decoding threads (``RayOptions.threads``). A batch holds ``row``
    (positions in the driver's list) and ``item`` (each ``Item`` pickled); the
    answer holds, per row, ``row``, ``value`` (the pickled value, empty on
    error), ``error`` (``""`` when there is none), ``loaded`` (false for an
    item whose frames could not be loaded) and ``fatal``: empty, or the
    pickled exception that stops the run (``start`` failed, or ``work``
    raised past its per-item handling). The driver raises that exception
    itself, so a run on Ray stops with the same error and message as a local
    run.
    """

    def __init__(self, start: Callable[[], Any], work: Callable[..., None], load_workers: int):
        self.work, self.load_workers, self.fatal = work, load_workers, b""
        try:
            self.state = start()
        except Exception as err:  # noqa: BLE001 - handed to the driver, which stops the run with it
            self.fatal = pickled_error(err)

    def __call__(self, batch: dict) -> dict:
        rows, done = [int(row) for row in batch["row"]], {}
        if not self.fatal:
            items = [pickle.loads(data) for data in batch["item"]]
            position = {item.id: row for item, row in zip(items, rows)}

            def record(id: Any, value: Any, error: str | None, loaded: bool = True) -> None:
                done[position[id]] = (b"" if error else pickle.dumps(value), error or "", loaded)

            try:
                self.work(self.state, items, record=record, load_workers=self.load_workers)
            except Exception as err:  # noqa: BLE001 - handed to the driver, which stops the run with it
                self.fatal = pickled_error(err)
        value, error, loaded = zip(*(done.get(r, (b"", "", True)) for r in rows))
        return {"row": rows, "value": list(value), "error": list(error), "loaded": list(loaded),
                "fatal": [self.fatal] * len(rows)}


def _start_describer(backend: str, options: dict) -> Describer:
    describer = make_describer(backend, **options)
    start_describer(describer)
    return describer


def pickled_error(err: BaseException) -> bytes:
    """``err`` as bytes for the driver; an exception that cannot be pickled becomes a ``RuntimeError`` with its text."""
    try:
        data = pickle.dumps(err)
        pickle.loads(data)
        return data
    except Exception:  # noqa: BLE001 - any pickling failure
        return pickle.dumps(RuntimeError(f"{type(err).__name__}: {err}"))


def cluster_token() -> str | None:
    """Where Ray would read a cluster's token from: ``$RAY_AUTH_TOKEN``, ``$RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "$RAY_AUTH_TOKEN"
    for path in (os.environ.get("RAY_AUTH_TOKEN_PATH"), Path.home() / ".ray" / "auth_token"):
        if path and Path(path).is_file():
            return str(path)
    return None


def use_cluster_token() -> None:
    """Joining a cluster (``address``): with ``RAY_AUTH_MODE`` unset and a token at hand, use token authentication.

    ``ray start --head`` of Ray 2.60 turns token authentication on whenever a token exists, and a driver that
    joins without ``RAY_AUTH_MODE=token`` is refused (``InvalidAuthToken``). Ray reads the token itself from the
    places ``cluster_token`` names; this sets ``RAY_AUTH_MODE=token`` for this process (and the actors it starts)
    when one of them holds one. ``RAY_AUTH_MODE`` set by the user is left as it is.
    """
    if "RAY_AUTH_MODE" in os.environ:
        return
    where = cluster_token()
    if where is not None:
        os.environ["RAY_AUTH_MODE"] = "token"
        print(f"sova: note: joining the Ray cluster with token authentication (the token of {where}; "
              "RAY_AUTH_MODE=disabled turns it off)", file=sys.stderr)


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None, num_gpus: int | None = None):
    """Join ``address``, or reuse this process's Ray, or start a local instance and stop it after."""
    import ray

    if ray.is_initialized():
        yield
        return
    if address:
        ray.init(address=address, logging_level=logging.WARNING)
    else:
        ray.init(num_cpus=num_cpus, num_gpus=num_gpus, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield
    finally:
        ray.shutdown()


def describe_items_ray(
    backend: str,
    options: dict,
    items: Iterable[Item],
    cache_dir: str | Path,
    *,
    prompt: Prompt | str = DEFAULT_PROMPT,
    fps: float = 1.0,
    frames: int | None = None,
    max_frames: int | None = None,
    crop_source: str = "none",
    sampler_version: str | None = None,
    details: dict | None = None,
    ray: RayOptions | None = None,
    run: RunOptions | None = None,
) -> RunSummary:
    """Describe ``items`` with the ``backend`` describer on a Ray actor pool into ``cache_dir`` (module docstring).

    ``options`` are the describer's keyword options (as for ``make_describer``).
    ``ray``: the pool and the cluster (``RayOptions``; default: its defaults);
    ``run`` (``RunOptions``) as for ``runner.describe_items``. Other arguments as for
    ``runner.describe_items``. ``DescriberEnvironmentError`` (or the
    describer's own error) stops the run when an actor's describer cannot start.
    """
    ray = ray or RayOptions()
    describer = make_describer(backend, **options)  # built, not loaded: its config() names the cache
    sampling = frame_sampling(fps, frames, max_frames)
    with configuration_lock(cache_dir, describer, prompt, sampling, sampler_version, crop_source):
        prompt, items, key, run_info = plan_run(describer, prompt, items, sampling, sampler_version, crop_source)
        schedule = partial(run_on_actors, start=partial(_start_describer, backend, options),
                           work=partial(schedule_requests, sampling=sampling, prompt=prompt), ray=ray)
        return run_into_cache(key, items, cache_dir, schedule, run_options=run,
                              run_info={**run_info, "engine": ray.engine()}, device=ray.device(), details=details)


def run_on_actors(todo: list[Item], record: Callable[..., None], *, start: Callable[[], Any],
                  work: Callable[..., None], ray: RayOptions) -> None:
    """The ``schedule(todo, record)`` of both Ray engines: ``todo`` worked on by ``RunWorker(start, work)`` actors.

    ``record(id, value, error, loaded)`` once per item, as the local engines
    call it. Items with a reason known before loading (``Item.error``) are
    recorded here, unloaded; the rest go to the pool (``map_on_actors``), each
    actor with ``ray.threads()`` decoding threads, the one rule of both Ray
    engines.
    """
    ready = []
    for item in todo:
        if item.error is not None:
            record(item.id, None, item.error, False)
        else:
            ready.append(item)
    if not ready:
        return
    kwargs = {"start": start, "work": work, "load_workers": ray.threads()}
    for item, out in map_on_actors(ready, RunWorker, kwargs, ray):
        error = str(out["error"])  # "" for none
        record(item.id, None if error else pickle.loads(out["value"]), error or None, bool(out["loaded"]))


def map_on_actors(items, worker, constructor_kwargs: dict, pool: RayOptions):
    """Run the actor class ``worker`` over ``items`` on the actor pool of ``pool``; yield ``(item, output row)``.

    Ray is joined or started for the run (``ray_session``). Items travel as small rows, each
    pickled; each output row comes back as the pool finishes it. An
    output whose ``fatal`` field is set (an actor that could not start) is
    raised on the driver.
    """
    import ray.data

    with ray_session(pool.address, pool.num_cpus, pool.num_gpus):
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        rows = [{"row": i, "item": pickle.dumps(item)} for i, item in enumerate(items)]
        blocks = -(-len(rows) // pool.items_per_call)  # one block per call (run_on_actors never sends none)
        dataset = ray.data.from_items(rows, override_num_blocks=blocks)
        mapped = dataset.map_batches(
            worker, batch_size=pool.items_per_call, batch_format="numpy", fn_constructor_kwargs=constructor_kwargs,
            compute=ray.data.ActorPoolStrategy(size=pool.workers), num_cpus=pool.cpus_per_worker,
            num_gpus=pool.gpus_per_worker or None)
        for out in mapped.iter_rows():
            if out["fatal"]:
                raise pickle.loads(out["fatal"])
            yield items[int(out["row"])], out

