"""The ``--engine`` options shared by ``sova describe`` and ``sova embed``: local, or a pool of Ray actors.

``add_engine_options(parser)`` adds ``--engine {local,ray}`` and the ray
engine's options (``--workers``, ``--gpus-per-worker``, ``--cpus-per-worker``,
``--batch-size``, ``--address``, ``--num-cpus``, ``--num-gpus``);
``engine_options(args)`` turns them into the keyword options of
``sova_lib.describe.ray_engine.describe_items_ray`` and
``sova_lib.describe.contrastive.ray_engine.embed_items_ray``.
"""
from __future__ import annotations

from sova_lib.cli import CliError

__all__ = ["add_engine_options", "engine_options"]


#: Options of the ray engine: (flag, dest, type, default, help).
_RAY_OPTIONS = (
    ("--workers", "workers", int, 1, "actors in the pool (default 1)"),
    ("--gpus-per-worker", "gpus_per_worker", float, 0.0, "GPUs each actor holds (default 0)"),
    ("--cpus-per-worker", "cpus_per_worker", float, 1.0, "CPUs each actor holds (default 1)"),
    ("--batch-size", "batch_size", int, 8, "items per actor call (default 8)"),
    ("--address", "address", str, None, "join this Ray cluster ('auto': the one started on this machine); "
                                          "default: start a local Ray instance"),
    ("--num-cpus", "num_cpus", int, None, "CPUs of a local Ray instance (default: all)"),
    ("--num-gpus", "num_gpus", int, None, "GPUs of a local Ray instance (default: all)"),
)


def add_engine_options(parser) -> None:
    """``--engine`` and the ray engine's options, in an argument group of their own."""
    group = parser.add_argument_group("engine")
    group.add_argument("--engine", choices=["local", "ray"], default="local",
                       help="local: this process; ray: a pool of Ray actors, each loading the model once")
    for flag, dest, kind, _, text in _RAY_OPTIONS:
        group.add_argument(flag, dest=dest, type=kind, default=None, metavar=dest.split("_")[0].upper(),
                           help=f"(ray) {text}")


def engine_options(args) -> dict:
    """The ray engine's keyword options from ``args``; a ray option with ``--engine local`` is a usage error."""
    given = {dest: getattr(args, dest) for _, dest, _, _, _ in _RAY_OPTIONS if getattr(args, dest) is not None}
    if args.engine != "ray":
        if given:
            flag = next(f for f, dest, _, _, _ in _RAY_OPTIONS if dest in given)
            raise CliError(f"{flag} applies to --engine ray")
        return {}
    options = {dest: default for _, dest, _, default, _ in _RAY_OPTIONS} | given
    for name in ("workers", "batch_size"):
        if options[name] < 1:
            raise CliError(f"--{name.replace('_', '-')} must be at least 1, got {options[name]}")
    for name in ("gpus_per_worker", "cpus_per_worker"):
        if options[name] < 0:
            raise CliError(f"--{name.replace('_', '-')} must not be negative, got {options[name]}")
    return options
