"""Shared helpers of the figure tests: the Agg backend, text boxes and overlap, a notebook's figure cells run."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from sova_lib.report.label_placement import _text_box  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test made."""
    yield
    plt.close("all")


def differs(name: str) -> str:
    """The message of a figure whose bytes differ from the committed file: first whether the environment equals the
    lock (and which distributions differ), since a drifted package changes bytes the drawing code did not."""
    from tests.locked_environment import verdict

    return f"{name} differs from the committed file; {verdict()}"


def boxes(fig, annotations):
    """Display-space bounding boxes of ``annotations`` once ``fig`` is drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [_text_box(a, renderer) for a in annotations]


def overlap(a, b) -> bool:
    return a.x0 < b.x1 and a.x1 > b.x0 and a.y0 < b.y1 and a.y1 > b.y0


def notebook_cells(notebook: str) -> list:
    """The code cells of ``notebooks/<notebook>.py`` (jupytext), in order."""
    import jupytext

    from tests.paths import ROOT

    return [c for c in jupytext.read(ROOT / "notebooks" / f"{notebook}.py").cells if c.cell_type == "code"]


def draw_figures(notebook: str, out, frames=None, *, figure: str | None = None, upto_figures: bool = False,
                 **parameters) -> dict:
    """Run a notebook's figure cells (tagged ``figure``) as the notebook runs them; returns the namespace.

    The cells run in the notebooks' folder, as papermill runs them. The
    parameters cell runs first (``figures_dir`` = ``out``, then
    ``parameters`` override), then the imports cell (the next one). With
    ``frames`` (a function of that namespace returning the variables the
    figure cells read, e.g. from the committed CSVs), the figure cells alone
    run next: all of them, or with ``figure`` (a stem such as ``confusion``)
    those of the figure that ``save_figure`` writes as
    ``<notebook>_<figure>`` (the tagged cells after the previous figure's
    save). With ``upto_figures``, every code cell up to the last figure cell
    runs, as in the notebook.
    """
    import contextlib
    import sys

    from tests.paths import ROOT

    folder = str(ROOT / "notebooks")
    sys.path.insert(0, folder)  # as the kernel papermill starts: in the notebooks' folder, which it imports from
    try:
        with matplotlib.rc_context(), contextlib.chdir(folder):
            matplotlib.rcdefaults()  # as a new kernel starts: what an earlier figure set is not carried over
            return _draw_figures(notebook, out, frames, figure=figure, upto_figures=upto_figures, **parameters)
    finally:
        sys.path.remove(folder)


def _draw_figures(notebook: str, out, frames, *, figure, upto_figures, **parameters) -> dict:
    cells = notebook_cells(notebook)
    first = next(k for k, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(cells[first].source, namespace)
    namespace.update(figures_dir=str(out), **parameters)
    exec(cells[first + 1].source, namespace)
    if frames is not None:
        namespace.update(frames(namespace))
    tagged = [k for k, c in enumerate(cells) if "figure" in c.metadata.get("tags", [])]
    assert tagged, f"{notebook}: no cell tagged figure"
    if upto_figures:
        run = range(first + 2, tagged[-1] + 1)
    elif figure is None:
        run = tagged
    else:
        saves = [k for k in tagged if "save_figure(" in cells[k].source]
        (end,) = [k for k in saves if f'"{notebook}_{figure}"' in cells[k].source]
        run = [k for k in tagged if max([j for j in saves if j < end], default=-1) < k <= end]
    for k in run:
        exec(cells[k].source, namespace)
    return namespace
