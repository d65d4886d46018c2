"""``sova reproduce``: regenerate every table and figure (``sova_lib.paper.reproduce``)."""
from __future__ import annotations

from sova_lib.paper.reproduce import REPO_ROOT, reproduce

__all__ = ["add_commands"]


def run_reproduce(args) -> int:
    failed = reproduce(args.figures, args.cache_dir, bootstrap=args.bootstrap, notebooks=args.notebooks,
                       build=args.build, skip_notebooks=args.skip_notebooks)
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
