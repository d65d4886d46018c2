"""The ``--engine`` options shared by ``sova describe`` and ``sova embed``: local, or a pool of Ray actors.

``add_engine_options(parser)`` adds ``--engine {local,ray}`` and, in a group
of their own, the ray engine's options (``--workers``, ``--gpus-per-worker``,
``--cpus-per-worker``, ``--ray-items-per-call``, ``--address``, ``--num-cpus``,
``--num-gpus``); ``engine_options(args)`` turns them into the ``RayOptions``
(``sova_lib.describe.ray_engine``) that
``sova_lib.describe.ray_engine.describe_items_ray`` and
``sova_lib.describe.contrastive.ray_engine.embed_items_ray`` take;
``run_options(args)`` turns ``--retry-errors`` and ``--no-progress`` into the
``RunOptions`` (``sova_lib.describe.runner``) that every describing or
embedding run takes, whatever the engine.

Only what says Ray starts Ray: ``--engine ray``, or ``--ray-items-per-call``
alone (with a one-line note). The model's own batch is ``--batch-size``, an
option of the describer (``sova_lib.cli.options``), the same on every engine.
Any other ray option without ``--engine ray`` is a usage error, so no ray
option is ever ignored and none starts Ray unasked.
"""
from __future__ import annotations

from sova_lib.cli import CliError
from sova_lib.cli.options import nonnegative_number, note, positive_count
from sova_lib.describe.run_cache import RunOptions

__all__ = ["add_engine_options", "engine_options", "run_options"]


#: Options of the ray engine: (flag, dest, type, help); one not given takes ``RayOptions``' default (the field named
#: as the dest, without a ``ray_`` prefix). The types refuse a value out of range while the command line is parsed.
_RAY_OPTIONS = (
    ("--workers", "workers", positive_count, "Ray actors in the pool, each loading the model once (default 1)"),
    ("--gpus-per-worker", "gpus_per_worker", nonnegative_number, "GPUs each actor holds (default 0)"),
    ("--cpus-per-worker", "cpus_per_worker", nonnegative_number, "CPUs each actor holds (default 1)"),
    ("--ray-items-per-call", "ray_items_per_call", positive_count, "items per actor call (default 8), which the "
                                                                    "actor's describer batches by --batch-size"),
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
                            "(implied by --ray-items-per-call)")
    ray = parser.add_argument_group("ray engine", "options of --engine ray, e.g. --engine ray --workers 4 "
                                                  "--gpus-per-worker 1")
    for flag, dest, kind, text in _RAY_OPTIONS:
        ray.add_argument(flag, dest=dest, type=kind, default=None, metavar="ADDRESS" if dest == "address" else "N",
                         help=text)


def engine_options(args):
    """The ray engine's ``RayOptions`` from ``args`` (None for the local engine); sets ``args.engine``.

    ``--ray-items-per-call`` without ``--engine`` implies ``--engine ray`` (one note on stderr); any other ray option
    without ``--engine ray``, or a ray option beside an explicit ``--engine local``, is a usage error.
    """
    given = {dest: getattr(args, dest) for _, dest, _, _ in _RAY_OPTIONS if getattr(args, dest) is not None}
    flags = [f for f, dest, _, _ in _RAY_OPTIONS if dest in given]
    if args.engine == "local" and given:
        raise CliError(f"{flags[0]} applies to --engine ray, not --engine local; drop one of them")
    if args.engine is None:
        says_ray = [f for f in flags if f.startswith("--ray-")]
        args.engine = "ray" if says_ray else "local"
        if says_ray:
            note(f"--engine ray, implied by {', '.join(says_ray)}")
        elif given:
            raise CliError(f"{flags[0]} is an option of the Ray engine; add --engine ray to run on Ray, or drop it")
    if args.engine != "ray":
        return None
    from sova_lib.describe.ray_engine import RayOptions  # the ray engine's module only where it runs

    return RayOptions(**{name.removeprefix("ray_"): value for name, value in given.items()})


def run_options(args) -> RunOptions:
    """The ``RunOptions`` of ``--retry-errors``, ``--no-progress``, ``--limit`` and ``--max-answer-chars`` (where the
    command has them); the other fields keep their defaults."""
    return RunOptions(retry_errors=args.retry_errors, show_progress=not args.no_progress,
                      max_answer_chars=getattr(args, "max_answer_chars", RunOptions.max_answer_chars),
                      limit=getattr(args, "limit", None))
