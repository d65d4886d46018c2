"""Regenerate what the repository can regenerate (the ``sova reproduce`` command).

Step 1 writes the built-in baselines of every protocol as
``figures/baselines.csv`` and ``figures/baselines.md``.

Step 2 executes every notebook of the notebooks folder (``--notebooks``,
by default ``notebooks/`` of the current folder: a checkout of the
repository) in name order through papermill, on its default parameters
except the output and cache folders (``figures_dir``, ``cache_dir``), which
come from the command line. The notebooks' jupytext sources
(``NN_name.py``) are what runs, each with the notebooks folder as its
working folder, so that ``import paper`` finds the helper package beside
them; the executed copies go to ``build/notebooks/`` (ignored by git). Each
notebook writes its tables, figures and ``<notebook>.json`` under the
figures folder. A failing notebook is reported and the others still run;
the command then exits with status 1.

A module of ``sova_lib.cli`` is named after the command it adds (one module per command), and the library
module behind it may share its name; ``sova_lib.cli.reproduce`` parses and prints,
``sova_lib.report.reproduce`` does the work.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from sova_lib.benchmarks.sovabench.protocols import SOVABENCH_PROTOCOLS
from sova_lib.encoder import SentenceEncoder
from sova_lib.evaluation import check_bootstrap
from sova_lib.report.baselines import baseline_rows
from sova_lib.report.tables import write_outputs
from sova_lib.storage import cache_root, write_text

__all__ = ["find_notebooks", "reproduce", "run_notebook"]

#: The folder this ``sova_lib`` is imported from (a checkout, or site-packages): the kernels import it too.
LIBRARY_ROOT = Path(__file__).resolve().parents[2]


def find_notebooks(folder: str | Path) -> list[Path]:
    """The jupytext sources ``NN_*.py`` of ``folder``, in name order.

    Raises ``FileNotFoundError`` when there is no such folder, or when it holds
    none (the notebooks come with a checkout of the repository, not with an
    installed wheel).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"--notebooks {folder}: no such folder; run sova reproduce in a checkout of the "
                                "repository (its notebooks/ is the default) or pass --notebooks DIR, the folder of "
                                "the NN_name.py notebooks")
    found = sorted(folder.glob("[0-9][0-9]_*.py"))
    if not found:
        raise FileNotFoundError(f"no notebooks (NN_name.py) in {folder}; run from a source checkout "
                                "or pass --notebooks DIR")
    return found


@contextmanager
def _kernel_path(root: Path):
    """Put ``root`` first on the kernel's PYTHONPATH, so that notebooks import the sova_lib this command runs."""
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

    The notebook runs in its own folder, the notebooks folder (so its
    relative default paths work and ``import paper`` finds the helper package
    beside it), with the folder of the running ``sova_lib``
    (``LIBRARY_ROOT``) first on the kernel's ``PYTHONPATH``.
    ``parameters`` override the cell tagged ``parameters``; names the
    notebook does not declare are left out (so one set of folders can be
    passed to every notebook). A notebook that declares ``interactive`` gets
    ``interactive = False`` unless ``parameters`` say otherwise: a papermill
    run has no browser, so widgets give way to their static view. Returns the
    executed notebook; a failing cell
    raises papermill's ``PapermillExecutionError`` (the executed copy,
    written up to the failure, shows where).
    """
    import jupytext
    import papermill

    source = Path(source)
    executed = write_text(executed, jupytext.writes(jupytext.read(source), fmt="ipynb"))  # this copy is what runs
    from jupyter_client.manager import AsyncKernelManager
    from traitlets.config import Config

    declared = papermill.inspect_notebook(str(executed))
    wanted = {k: v for k, v in {"interactive": False, **(parameters or {})}.items() if k in declared}
    # Local sockets (ipc) instead of unencrypted TCP, of which the kernel warns at start.
    config = Config({"KernelManager": {"transport": "ipc"}, "AsyncKernelManager": {"transport": "ipc"}})
    with _kernel_path(LIBRARY_ROOT):
        return papermill.execute_notebook(str(executed), str(executed), parameters=wanted, kernel_name=kernel_name,
                                          cwd=str(source.parent), progress_bar=False, execution_timeout=timeout,
                                          kernel_manager_class=_quiet_manager(AsyncKernelManager), config=config)


def _quiet_manager(base):
    """``base`` (a jupyter_client kernel manager) that shuts a finished kernel down without first interrupting it.

    jupyter_client sends SIGINT before its shutdown request; an idle kernel
    that catches it logs "KeyboardInterrupt caught in kernel" as an error.
    The shutdown request alone stops the kernel (and a kernel that does not
    stop is still killed after the manager's wait).
    """
    async def interrupt_unless_shutting_down(self):
        if not self.shutting_down:
            await base._async_interrupt_kernel(self)

    return type("QuietShutdownKernelManager", (base,), {"_async_interrupt_kernel": interrupt_unless_shutting_down})


def reproduce(figures: str | Path, cache_dir: str | Path | None = None, *, bootstrap: int = 1000,
              notebooks: str | Path = "notebooks", build: str | Path = "build/notebooks",
              skip_notebooks: bool = False, report=print) -> list[str]:
    """Write the baseline tables, then run every notebook; return the names of the notebooks that failed.

    ``notebooks`` is the folder of the ``NN_name.py`` notebooks (relative to
    the current folder). ``report`` receives one line per step (``print`` by default). A negative
    ``bootstrap`` raises ``ValueError`` and a missing folder or one without
    notebooks ``FileNotFoundError`` (``find_notebooks``), both before anything
    is written.
    """
    sources = [] if skip_notebooks else find_notebooks(notebooks)  # before any work, and before papermill
    import papermill

    check_bootstrap(bootstrap)
    start = time.time()
    out = Path(figures).resolve()
    cache = cache_root(cache_dir).resolve()  # the notebooks' own rule, which they are given resolved
    encoder = SentenceEncoder(cache_dir=cache, show_progress=False)
    rows = baseline_rows(list(SOVABENCH_PROTOCOLS), encoder=encoder, bootstrap=bootstrap)  # protocol by protocol
    table = pd.DataFrame(rows)[["protocol", "baseline", "metric", "value", "ci_low", "ci_high", "n_queries"]]
    for path in write_outputs(table, table, out / "baselines"):
        report(f"wrote {path}")
    if skip_notebooks:
        report(f"done in {time.time() - start:.0f} s; outputs under {out}/")
        return []
    build = Path(build).resolve()
    failed = []
    for k, source in enumerate(sources, start=1):
        executed = build / f"{source.stem}.ipynb"
        t0 = time.time()
        try:
            run_notebook(source, executed, {"figures_dir": str(out), "cache_dir": str(cache)})
            report(f"[{k}/{len(sources)}] {source.name} ... {time.time() - t0:.0f} s -> {executed}")
        except papermill.PapermillExecutionError as err:
            failed.append(source.name)
            report(f"[{k}/{len(sources)}] {source.name} ... FAILED after {time.time() - t0:.0f} s: "
                   f"{err.ename}: {err.evalue} (see {executed})")
    report(f"done in {time.time() - start:.0f} s")
    report(f"tables, figures and headline JSON: {out}/")
    report(f"executed notebooks: {build}/")
    return failed
