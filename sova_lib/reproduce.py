"""``sova reproduce``: regenerate what the repository can regenerate.

Step 1 writes the built-in baselines of every protocol as
``figures/baselines.csv`` and ``figures/baselines.md``.

Step 2 executes every notebook of ``notebooks/`` in name order through
papermill, on its default parameters except the output and cache folders
(``figures_dir``, ``cache_dir``), which come from the command line. The
notebooks' jupytext sources (``notebooks/NN_name.py``) are what runs; the
executed copies go to ``build/notebooks/`` (ignored by git). Each notebook
writes its tables, figures and ``<notebook>.json`` under the figures folder.
A failing notebook is reported and the others still run; the command then
exits with status 1.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

__all__ = ["add_commands", "baseline_table", "find_notebooks", "markdown_table", "run_notebook", "write_table"]

#: Where the package's own notebooks are, in a source checkout.
REPO_ROOT = Path(__file__).resolve().parent.parent


def baseline_table(*, encoder=None, bootstrap: int = 1000, seed: int = 0):
    """A DataFrame with one row per (protocol, baseline): value and 95% interval in percent."""
    import pandas as pd

    from .protocols import PROTOCOLS
    from .results import baseline_rows

    rows = pd.DataFrame(baseline_rows(list(PROTOCOLS), encoder=encoder, bootstrap=bootstrap, seed=seed))
    rows["order"] = rows["protocol"].map({name: k for k, name in enumerate(PROTOCOLS)})
    rows = rows.sort_values("order", kind="stable").reset_index(drop=True)
    return rows[["protocol", "baseline", "metric", "value", "ci_low", "ci_high", "n_queries"]]


def markdown_table(frame) -> str:
    """``frame`` as a Markdown table (no index)."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *lines]) + "\n"


def write_table(frame, stem: str | Path, *, readable=None) -> list[Path]:
    """Write ``frame`` as ``<stem>.csv`` and, as Markdown, ``readable`` (default ``frame``) as ``<stem>.md``."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, md = stem.with_suffix(".csv"), stem.with_suffix(".md")
    frame.to_csv(csv, index=False)
    md.write_text(markdown_table(frame if readable is None else readable))
    return [csv, md]


def find_notebooks(folder: str | Path) -> list[Path]:
    """The jupytext sources ``NN_*.py`` of ``folder``, in name order.

    Raises ``FileNotFoundError`` when the folder holds none (the notebooks
    ship with a source checkout, not with an installed wheel).
    """
    folder = Path(folder)
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.py"))
    if not found:
        raise FileNotFoundError(f"no notebooks (NN_name.py) in {folder}; run from a source checkout "
                                "or pass --notebooks DIR")
    return found


@contextmanager
def _kernel_path(root: Path):
    """Put ``root`` first on the kernel's PYTHONPATH, so notebooks import this checkout's sova_lib."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root), *([old] if old else [])])
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def run_notebook(source: str | Path, executed: str | Path, parameters: dict | None = None, *,
                 kernel_name: str = "python3", timeout: int = 600):
    """Execute the jupytext notebook ``source`` with papermill; write the executed copy to ``executed``.

    The notebook runs in its own folder (so its relative default paths
    work), with this checkout first on the kernel's ``PYTHONPATH``.
    ``parameters`` override the cell tagged ``parameters``; names the
    notebook does not declare are left out (so one set of folders can be
    passed to every notebook). Returns the executed notebook; a failing cell
    raises papermill's ``PapermillExecutionError`` (the executed copy,
    written up to the failure, shows where).
    """
    import jupytext
    import nbformat
    import papermill

    source, executed = Path(source), Path(executed)
    executed.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(jupytext.read(source), executed)  # the .py is the source; this copy is what runs
    declared = papermill.inspect_notebook(str(executed))
    wanted = {k: v for k, v in (parameters or {}).items() if k in declared}
    with _kernel_path(REPO_ROOT):
        return papermill.execute_notebook(str(executed), str(executed), parameters=wanted, kernel_name=kernel_name,
                                          cwd=str(source.parent), progress_bar=False, execution_timeout=timeout)


def run_reproduce(args) -> int:
    from .embed import SentenceEncoder, default_cache_dir

    start = time.time()
    out = Path(args.figures).resolve()
    cache = Path(args.cache_dir or default_cache_dir()).resolve()
    encoder = SentenceEncoder(cache_dir=cache, show_progress=False)
    paths = write_table(baseline_table(encoder=encoder, bootstrap=args.bootstrap), out / "baselines")
    for p in paths:
        print(f"wrote {p}")
    if args.skip_notebooks:
        print(f"done in {time.time() - start:.0f} s; outputs under {out}/")
        return 0
    import papermill

    notebooks = find_notebooks(args.notebooks)
    build = Path(args.build).resolve()
    failed = []
    for k, source in enumerate(notebooks, start=1):
        executed = build / f"{source.stem}.ipynb"
        t0 = time.time()
        print(f"[{k}/{len(notebooks)}] {source.name} ...", end=" ", flush=True)
        try:
            run_notebook(source, executed, {"figures_dir": str(out), "cache_dir": str(cache)})
            print(f"{time.time() - t0:.0f} s -> {executed}")
        except papermill.PapermillExecutionError as err:
            failed.append(source.name)
            print(f"FAILED after {time.time() - t0:.0f} s: {err.ename}: {err.evalue} (see {executed})")
    print(f"done in {time.time() - start:.0f} s")
    print(f"tables, figures and headline JSON: {out}/")
    print(f"executed notebooks: {build}/")
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
