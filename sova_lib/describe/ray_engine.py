"""Describe on Ray Data: many GPUs, many machines or many endpoints, into the same resumable cache.

``describe_items_ray(backend, options, items, cache_dir, prompt=..., fps=...)``
does what ``sova_lib.describe.runner.describe_items`` does, with the work
spread over a pool of Ray actors:

* The driver (this process) runs ``runner.describe_items`` itself, with
  ``RayEngine`` in place of the local engine: the same loop opens the cache
  folder of the run's key (``run_cache.open_run``, the one cache writer),
  leaves out the items already described (and, unless ``retry_errors``,
  those that failed before) and writes each outcome the engine yields.
  Items with a reason known before loading go straight to ``errors.jsonl``.
* The rest become a Ray dataset of small rows (a position and the item as
  pickled: its path, window, crop, direction); no frames leave the driver.
* ``Dataset.map_batches`` runs ``RunWorker`` (the actor of both Ray
  engines) in a pool of ``workers`` actors, each with ``gpus_per_worker``
  GPUs and ``cpus_per_worker`` CPUs (``run_on_actors``).
  An actor builds its describer once from the backend's options class (``make_describer(backend, options)``,
  the options the only payload it is sent)
  and loads it once (``runner.start_describer``: the weights, or the
  endpoint check); a failure there stops the whole run with the same
  exception and message as the local engine. For each call of
  ``items_per_call`` items the actor decodes the frames itself (the runner's
  loader threads) and calls the describer with its own batching and
  concurrency (the runner's scheduler).
* Outcomes stream back as they finish (``iter_rows``), and the driver alone
  appends each to the cache in the runner's loop, applying its fail-fast
  rule as a local run does. A killed driver loses only the items in flight; the same command
  resumes.

The cache key is computed on the driver (``runner.plan_run``) from a
describer built there once but not loaded (``config()`` is cheap for every
backend; ``sova describe --engine ray`` passes the one it built, with
``RayEngine``, to ``runner.describe_items``) and its ``fingerprint()``
(a local model folder's digest, so the folder must be on the driver's disk
too; a hub commit; what the server reports), so a Ray run and a local run of
the same configuration share one cache folder and, for a deterministic
describer, write the same texts.

Ray: with ``address`` (``"auto"``, or ``host:port``) the run joins that
cluster (with token authentication when a token is at hand,
``ray_options.use_cluster_token``); otherwise it uses the Ray instance this process
already has, or starts a local one with ``num_cpus`` / ``num_gpus`` (default: the machine's)
and shuts it down at the end.

Of the describing pair of ``runner.py`` / ``ray_engine.py`` (the frame-embedding pair is
``sova_lib.describe.contrastive``), this is the Ray engine (``--engine ray``); ``sova_lib.describe.runner``
holds the local one and the loop both share. ``RunWorker``, ``run_on_actors`` and ``RayOptions`` (declared in
``sova_lib.describe.ray_options``, which imports no Ray) serve both pairs' Ray engines.
"""
from __future__ import annotations

import logging
import pickle
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from sova_lib.describe.contract import Describer, make_describer, options_of
from sova_lib.describe.item import Item
from sova_lib.describe.prompts import Prompt
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import Outcome, RunOptions, RunSummary
from sova_lib.describe.runner import describe_items, schedule_requests, start_describer
from sova_lib.video.frames import Sampling

__all__ = ["RayEngine", "RunWorker", "check_ray_data", "describe_items_ray", "map_on_actors",
           "pickled_error", "ray_session", "run_on_actors"]


class RunWorker:
    """A Ray Data actor of either engine: ``start()`` once, then ``work(state, items, load_workers=)`` per batch.

    ``start`` builds what the actor keeps (a describer, built and loaded once
    with ``start_describer``; a contrastive model) and ``work`` is the local
    engine's own generator of outcomes on a batch (``runner.schedule_requests``;
    ``contrastive.runner.schedule_embeddings``), one ``Outcome`` per item, with
    ``load_workers`` decoding threads (``RayOptions.threads``). A batch holds ``row``
    (positions in the driver's list) and ``item`` (each ``Item`` pickled); the
    answer holds, per row, ``row``, ``outcome`` (the item's ``Outcome``
    pickled) and ``fatal``: empty, or the pickled exception that stops the run
    (``start`` failed, or ``work`` raised past its per-item handling; then
    ``outcome`` is empty). The driver raises that exception itself, so a run
    on Ray stops with the same error and message as a local run.
    """

    def __init__(self, start: Callable[[], Any], work: Callable[..., Iterable[Outcome]], load_workers: int):
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
            try:
                for outcome in self.work(self.state, items, load_workers=self.load_workers):
                    done[position[outcome.id]] = pickle.dumps(outcome)
            except Exception as err:  # noqa: BLE001 - handed to the driver, which stops the run with it
                self.fatal = pickled_error(err)
        return {"row": rows, "outcome": [done.get(row, b"") for row in rows], "fatal": [self.fatal] * len(rows)}


def _start_describer(backend: str, options: Any) -> Describer:
    describer = make_describer(backend, options)
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


def check_ray_data() -> None:
    """ValueError naming the first of Ray Data's modules (``ray``, ``pyarrow``) that is not installed: looked up,
    not imported, since Ray's import takes seconds and a run takes its cache's lock first."""
    import importlib.util

    missing = [name for name in ("ray", "pyarrow") if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"--engine ray needs Ray Data (pip install 'ray[data]'): no module {missing[0]!r}")


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


def describe_items_ray(backend: str, options: Any, items: Iterable[Item], cache_dir: str | Path, *,
                       ray: RayOptions | None = None, run: RunOptions | None = None, **describing) -> RunSummary:
    """Describe ``items`` with the ``backend`` describer on a Ray actor pool into ``cache_dir`` (module docstring).

    ``runner.describe_items`` with ``engine=RayEngine(backend, options, ray)``: ``options`` are the describer's
    options, an instance of the backend's ``Options`` or its fields as a dict (``contract.options_of``); ``ray``: the
    pool and the cluster (``RayOptions``; default: its defaults); ``run`` (``RunOptions``) and ``describing``
    (``prompt``, ``fps``, ``frames``, ``max_frames``, ``crop_source``, ``sampler_version``, ``input_name``,
    ``details``) as for ``runner.describe_items``. The
    describer is built once here and once in each actor; a caller that has built one passes it to
    ``runner.describe_items`` with ``engine=RayEngine(backend, options, ray)`` instead.
    ``DescriberEnvironmentError`` (or the describer's own error) stops the run when an actor's describer cannot
    start.
    """
    engine = RayEngine(backend, options, ray or RayOptions())
    describer = make_describer(backend, engine.options)  # the driver's one, built, not loaded: its config() names it
    return describe_items(describer, items, cache_dir, run=run, engine=engine, **describing)


@dataclass(frozen=True)
class RayEngine:
    """Describing on a pool of Ray actors (``--engine ray``), each with its own describer, loaded once.

    The ``runner.Engine`` of ``describe_items_ray``: ``outcomes`` is ``run_on_actors`` with each actor's
    describer made of ``backend`` and ``options`` (``make_describer``) and started (``runner.start_describer``),
    and the local engine's own ``runner.schedule_requests`` on each call; the driver's describer only names the
    cache. ``options``: the backend's ``Options`` instance, the payload each actor is sent (a dict of its fields is
    made one, ``contract.options_of``). ``ray``: the pool and the cluster.
    """

    backend: str
    options: Any
    ray: RayOptions

    def __post_init__(self):
        if isinstance(self.options, dict):
            object.__setattr__(self, "options", options_of(self.backend, self.options))

    def outcomes(self, describer: Describer, todo: list[Item], sampling: Sampling | float | None, prompt: Prompt,
                 run_info: dict) -> Iterator[Outcome]:
        return run_on_actors(todo, start=partial(_start_describer, self.backend, self.options),
                             work=partial(schedule_requests, sampling=sampling, prompt=prompt), ray=self.ray)

    def run_info(self) -> dict:
        return {"engine": self.ray.engine()}

    def device(self, describer: Describer) -> str:
        return self.ray.device()


def run_on_actors(todo: list[Item], *, start: Callable[[], Any], work: Callable[..., Iterable[Outcome]],
                  ray: RayOptions) -> Iterator[Outcome]:
    """The outcomes of both Ray engines: ``todo`` worked on by ``RunWorker(start, work)`` actors, one per item.

    Items with a reason known before loading (``Item.error``) come first, unloaded, from here; the rest go to
    the pool (``map_on_actors``), each actor with ``ray.threads()`` decoding threads, the one rule of both Ray
    engines, and each outcome comes back as its actor's call returns. Nothing starts Ray when no item is left.
    """
    ready = []
    for item in todo:
        if item.error is not None:
            yield Outcome(item.id, error=item.error, loaded=False)
        else:
            ready.append(item)
    if not ready:
        return
    kwargs = {"start": start, "work": work, "load_workers": ray.threads()}
    for _, out in map_on_actors(ready, RunWorker, kwargs, ray):
        yield pickle.loads(out["outcome"])


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

