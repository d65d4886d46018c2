"""The ``--engine`` options shared by ``sova describe`` and ``sova embed``: local, or a pool of Ray actors.

``add_engine_options(parser)`` adds ``--engine {local,ray}`` and, in a group
of their own, the ray engine's options (``--workers``, ``--gpus-per-worker``,
``--cpus-per-worker``, ``--batch-size``, ``--address``, ``--num-cpus``,
``--num-gpus``); ``engine_options(args)`` turns them into the ``RayOptions``
(``sova_lib.describe.ray_engine``) that
``sova_lib.describe.ray_engine.describe_items_ray`` and
``sova_lib.describe.contrastive.ray_engine.embed_items_ray`` take;
``run_options(args)`` turns ``--retry-errors`` and ``--no-progress`` into the
``RunOptions`` (``sova_lib.describe.runner``) that every describing or
embedding run takes, whatever the engine.

A ray option implies the ray engine: ``--workers 4`` alone runs on Ray (with a
one-line note), so no ray option is ever ignored; the one contradiction left,
a ray option beside an explicit ``--engine local``, is a usage error.
"""
from __future__ import annotations

from sova_lib.cli import CliError
from sova_lib.cli.options import note
from sova_lib.describe.run_cache import RunOptions

__all__ = ["add_engine_options", "engine_options", "run_options"]


#: Options of the ray engine: (flag, dest, type, help); one not given takes ``RayOptions``' default.
_RAY_OPTIONS = (
    ("--workers", "workers", int, "Ray actors in the pool, each loading the model once (default 1)"),
    ("--gpus-per-worker", "gpus_per_worker", float, "GPUs each actor holds (default 0)"),
    ("--cpus-per-worker", "cpus_per_worker", float, "CPUs each actor holds (default 1)"),
    ("--batch-size", "batch_size", int, "items per actor call (default 8)"),
    ("--address", "address", str, "join this Ray cluster ('auto': the one started on this machine); "
                                   "default: start a local Ray instance"),
    ("--num-cpus", "num_cpus", int, "CPUs of a local Ray instance (default: all)"),
    ("--num-gpus", "num_gpus", int, "GPUs of a local Ray instance (default: all)"),
)


def add_engine_options(parser) -> None:
    """``--engine`` in the ``engine`` group, and the ray engine's options in a ``ray engine`` group of their own."""
    group = parser.add_argument_group("engine")
    group.add_argument("--engine", choices=["local", "ray"], default=None,
                       help="local: this process (default); ray: a pool of Ray actors, each loading the model once "
                            "(implied by any option below)")
    ray = parser.add_argument_group("ray engine", "any of these implies --engine ray, e.g. --workers 4 "
                                                  "--gpus-per-worker 1")
    for flag, dest, kind, text in _RAY_OPTIONS:
        ray.add_argument(flag, dest=dest, type=kind, default=None, metavar="ADDRESS" if dest == "address" else "N",
                         help=text)


def engine_options(args):
    """The ray engine's ``RayOptions`` from ``args`` (None for the local engine); sets ``args.engine``.

    A ray option given without ``--engine`` implies ``--engine ray`` (one note on stderr); beside an explicit
    ``--engine local`` it is a usage error.
    """
    given = {dest: getattr(args, dest) for _, dest, _, _ in _RAY_OPTIONS if getattr(args, dest) is not None}
    flags = [f for f, dest, _, _ in _RAY_OPTIONS if dest in given]
    if args.engine == "local" and given:
        raise CliError(f"{flags[0]} applies to --engine ray, not --engine local; drop one of them")
    if args.engine is None:
        args.engine = "ray" if given else "local"
        if given:
            note(f"--engine ray, implied by {', '.join(flags)}")
    if args.engine != "ray":
        return None
    for name in ("workers", "batch_size"):
        if given.get(name, 1) < 1:
            raise CliError(f"--{name.replace('_', '-')} must be at least 1, got {given[name]}")
    for name in ("gpus_per_worker", "cpus_per_worker"):
        if given.get(name, 0) < 0:
            raise CliError(f"--{name.replace('_', '-')} must not be negative, got {given[name]}")
    from sova_lib.describe.ray_engine import RayOptions  # the ray engine's module only where it runs

    return RayOptions(**given)


def run_options(args) -> RunOptions:
    """The ``RunOptions`` of ``--retry-errors``, ``--no-progress`` and ``--max-answer-chars`` (where the command has
    it); the other fields keep their defaults."""
    return RunOptions(retry_errors=args.retry_errors, show_progress=not args.no_progress,
                      max_answer_chars=getattr(args, "max_answer_chars", RunOptions.max_answer_chars))
