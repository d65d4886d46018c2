"""``sova reproduce``: regenerate every table and figure (``sova_lib.paper.reproduce``)."""
from __future__ import annotations

import sys
from pathlib import Path

from sova_lib.cli import CliError
from sova_lib.paper.reproduce import REPO_ROOT, reproduce

__all__ = ["add_commands"]


def run_reproduce(args) -> int:
    if args.bootstrap < 0:
        raise CliError(f"--bootstrap {args.bootstrap}: expected a number of resamples, 0 (none) or more")
    if args.bootstrap == 1:
        print("sova: note: --bootstrap 1 resamples the queries once: every interval has zero width", file=sys.stderr)
    if not args.skip_notebooks and not Path(args.notebooks).is_dir():
        raise CliError(f"--notebooks {args.notebooks}: no such folder; expected the folder of the NN_name.py notebooks")
    try:
        failed = reproduce(args.figures, args.cache_dir, bootstrap=args.bootstrap, notebooks=args.notebooks,
                           build=args.build, skip_notebooks=args.skip_notebooks)
    except (FileNotFoundError, ValueError) as err:
        raise CliError(str(err)) from None
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}")
        return 1
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("reproduce", help="regenerate every table and figure the repository can make")
    p.add_argument("--figures", default="figures", help="output folder (default: figures)")
    p.add_argument("--cache-dir", default=None, help="cache root (default: $SOVA_CACHE or ./cache)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for intervals")
    p.add_argument("--notebooks", default=str(REPO_ROOT / "notebooks"), help="folder of the NN_name.py notebooks")
    p.add_argument("--build", default="build/notebooks", help="folder for the executed notebooks")
    p.add_argument("--skip-notebooks", action="store_true", help="write the baseline tables only")
    p.set_defaults(func=run_reproduce)
