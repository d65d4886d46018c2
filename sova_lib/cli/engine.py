"""The ``--engine`` options shared by ``sova describe`` and ``sova embed``: local, or a pool of Ray actors.

``add_engine_options(parser)`` adds ``--engine {local,ray}`` and, in a group
of their own, the ray engine's options (``--workers``, ``--gpus-per-worker``,
``--cpus-per-worker``, ``--ray-items-per-call``, ``--address``, ``--num-cpus``,
``--num-gpus``), made from the fields ``RayOptions`` declares with a flag
(``sova_lib.describe.ray_options``: each flag's help, metavar and default are
its field's); ``engine_options(args)`` turns them into the ``RayOptions`` that
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
from sova_lib.describe.contract import declared_options
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import RunOptions

__all__ = ["add_engine_options", "engine_options", "run_options"]


#: The argparse type of a ray engine flag, by the types its field declares (``BackendOption.kinds``): a count of 1 or
#: more, a share of 0 or more, and an optional setting read as it is (Ray checks it). They refuse a value out of range
#: while the command line is parsed.
_FLAG_TYPES = {("int",): positive_count, ("float",): nonnegative_number, ("None", "int"): int, ("None", "str"): str}


def _ray_flags() -> dict:
    """``{field: (flag, option)}`` of the ``RayOptions`` fields declared with a flag, in their order: ``--NAME``, but
    ``--ray-items-per-call`` for ``items_per_call``, the one that says Ray (and so implies ``--engine ray``)."""
    return {name: (f"--{'ray-' if name == 'items_per_call' else ''}{name.replace('_', '-')}", option)
            for name, option in declared_options(RayOptions).items() if option.flag}


def add_engine_options(parser) -> None:
    """``--engine`` in the ``engine`` group, and the ray engine's options in a ``ray engine`` group of their own."""
    group = parser.add_argument_group("engine")
    group.add_argument("--engine", choices=["local", "ray"], default=None,
                       help="local: this process (default); ray: a pool of Ray actors, each loading the model once "
                            "(implied by --ray-items-per-call)")
    ray = parser.add_argument_group("ray engine", "options of --engine ray, e.g. --engine ray --workers 4 "
                                                  "--gpus-per-worker 1")
    for name, (flag, option) in _ray_flags().items():  # a flag of each field that declares one, as it declares it
        ray.add_argument(flag, type=_FLAG_TYPES[tuple(option.kinds())], default=None, metavar=option.flag,
                         help=option.help.format(default=option.default))


def engine_options(args):
    """The ray engine's ``RayOptions`` from ``args`` (None for the local engine); sets ``args.engine``.

    ``--ray-items-per-call`` without ``--engine`` implies ``--engine ray`` (one note on stderr); any other ray option
    without ``--engine ray``, or a ray option beside an explicit ``--engine local``, is a usage error.
    """
    ray_flags = _ray_flags()
    values = {name: getattr(args, flag[2:].replace("-", "_")) for name, (flag, _) in ray_flags.items()}  # as stored
    given = {name: value for name, value in values.items() if value is not None}
    flags = [ray_flags[name][0] for name in given]
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
    return RayOptions(**given)


def run_options(args) -> RunOptions:
    """The ``RunOptions`` of ``--retry-errors``, ``--no-progress``, ``--limit`` and ``--max-answer-chars`` (where the
    command has them); the other fields keep their defaults."""
    return RunOptions(retry_errors=args.retry_errors, show_progress=not args.no_progress,
                      max_answer_chars=getattr(args, "max_answer_chars", RunOptions.max_answer_chars),
                      limit=getattr(args, "limit", None))
