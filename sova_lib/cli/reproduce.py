"""``sova reproduce``: regenerate every table and figure (``sova_lib.report.reproduce``).

A module of ``sova_lib.cli`` is named after the command it adds (one module per command), and the library
module behind it may share its name; ``sova_lib.cli.reproduce`` parses and prints,
``sova_lib.report.reproduce`` does the work.
"""
from __future__ import annotations

from sova_lib.cli.options import DEFAULT_BOOTSTRAP, add_cache_options, add_output_options, count, note
from sova_lib.report.reproduce import reproduce

__all__ = ["add_commands"]


def run_reproduce(args) -> int:
    if args.bootstrap == 1:
        note("--bootstrap 1 resamples the queries once: every interval has zero width")
    failed = reproduce(args.out, args.cache_dir, bootstrap=args.bootstrap, notebooks=args.notebooks,
                       build=args.build, skip_notebooks=args.skip_notebooks)
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}")
        return 1
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("reproduce", help="regenerate every table and figure the repository can make",
                       description="Write the baseline tables, then run every notebook (notebooks/NN_name.py) "
                                   "through papermill; what 'make reproduce' runs. Exit status 1 when a notebook "
                                   "failed (the others still run).")
    add_output_options(p, out=("DIR", "output folder (default: figures)"))
    p.set_defaults(out="figures")
    add_cache_options(p, what="the cached model outputs are read from it", retry=False)
    p.add_argument("--bootstrap", type=count, default=DEFAULT_BOOTSTRAP, metavar="N",
                   help=f"resamples for 95%% intervals (default {DEFAULT_BOOTSTRAP}; 0: no interval)")
    p.add_argument("--notebooks", default="notebooks", metavar="DIR",
                   help="folder of the NN_name.py notebooks and their helper package paper/, each notebook's "
                        "working folder (default: notebooks, under the current folder)")
    p.add_argument("--build", default="build/notebooks", metavar="DIR",
                   help="folder for the executed notebooks (default: build/notebooks)")
    p.add_argument("--skip-notebooks", action="store_true", help="write the baseline tables only")
    p.set_defaults(func=run_reproduce)
