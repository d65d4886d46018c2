"""The ``sova`` command line.

One module per command group (``describe``, ``embed``, ``evaluate``, ``clips``,
``reproduce``), each defining ``add_commands(subparsers)``, which adds its
sub-commands with ``set_defaults(func=...)``; ``func(args)`` returns the
process exit code. Command modules parse arguments and print; the work is
done by the library. Heavy imports (torch, transformers, video decoders) stay
inside the functions that need them, so that ``sova --help`` stays fast.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from sova_lib._version import __version__

__all__ = ["main", "build_parser", "CliError"]

#: Modules whose ``add_commands`` contribute sub-commands, in help order.
COMMAND_MODULES: tuple[str, ...] = (
    "sova_lib.cli.describe",
    "sova_lib.cli.embed",
    "sova_lib.cli.evaluate",
    "sova_lib.cli.compare",
    "sova_lib.cli.clips",
    "sova_lib.cli.vantage",
    "sova_lib.cli.reproduce",
)


class CliError(Exception):
    """A user error: printed as ``sova: error: <message>`` with exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sova",
        description="SOVABench and the MLLM-to-Embedding framework.",
    )
    parser.add_argument("--version", action="version", version=f"sova_lib {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as err:
        print(f"sova: error: {err}", file=sys.stderr)
        return 2
