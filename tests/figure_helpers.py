"""Shared helpers of the figure and notebook tests: the Agg backend, text boxes and overlap, a notebook's cells run
as its kernel runs them."""
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


def tagged(tag: str):
    """Choose the code cells tagged ``tag``, in the notebook's order (for ``run_cells``)."""
    def chosen(cells) -> list[int]:
        picked = [k for k, c in enumerate(cells) if tag in c.metadata.get("tags", [])]
        assert picked, f"no cell tagged {tag}"
        return picked
    return chosen


def holding(*markers: str):
    """Choose, for each of ``markers`` in turn, the one code cell whose source holds it (for ``run_cells``)."""
    def chosen(cells) -> list[int]:
        picked = []
        for marker in markers:
            (k,) = [k for k, c in enumerate(cells) if marker in c.source]
            picked.append(k)
        return picked
    return chosen


def run_cells(notebook: str, chosen, *, parameters: dict | None = None, names=None) -> tuple[dict, object]:
    """Run cells of ``notebooks/<notebook>.py`` (jupytext) as a new kernel papermill starts runs them.

    First its parameters cell (the one tagged ``parameters``), then
    ``parameters`` over it, then its set-up cell (the next code cell); then,
    with ``names`` added (a dict, or a function of the namespace returning
    one, such as values read from the committed CSVs), the code cells
    ``chosen`` picks (a function of the code cells returning their indices
    in the order to run them: ``tagged``, ``holding``). Everything runs in
    the notebooks' folder, which is first on the import path, with
    matplotlib's defaults (what an earlier figure set is not carried over).

    Returns the namespace and the value of the last cell's closing
    expression (what the notebook shows under it; ``None`` when it ends with
    a statement).
    """
    import ast
    import contextlib
    import sys

    from tests.paths import ROOT

    cells = notebook_cells(notebook)
    first = tagged("parameters")(cells)[0]
    name = f"{notebook}.py"
    namespace: dict = {}
    value = None
    folder = str(ROOT / "notebooks")
    sys.path.insert(0, folder)
    try:
        with matplotlib.rc_context(), contextlib.chdir(folder):
            matplotlib.rcdefaults()
            exec(compile(cells[first].source, name, "exec"), namespace)
            namespace.update(parameters or {})
            exec(compile(cells[first + 1].source, name, "exec"), namespace)
            namespace.update(names(namespace) if callable(names) else names or {})
            for k in chosen(cells):
                tree = ast.parse(cells[k].source)
                last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                exec(compile(tree, name, "exec"), namespace)
                value = None if last is None else eval(compile(ast.Expression(last.value), name, "eval"), namespace)
    finally:
        sys.path.remove(folder)
    return namespace, value


def draw_figures(notebook: str, out, frames=None, *, figure: str | None = None, upto_figures: bool = False,
                 **parameters) -> dict:
    """Run a notebook's figure cells (tagged ``figure``) as the notebook runs them (``run_cells``); returns the
    namespace.

    ``figures_dir`` is ``out``, then ``parameters`` override. With
    ``frames`` (a function of the namespace the set-up cell leaves,
    returning the variables the figure cells read, e.g. from the committed
    CSVs), the figure cells alone run next: all of them, or with ``figure``
    (a stem such as ``confusion``) those of the figure that ``save_figure``
    writes as ``<notebook>_<figure>`` (the tagged cells after the previous
    figure's save). With ``upto_figures``, every code cell after the set-up
    cell up to the last figure cell runs, as in the notebook.
    """
    def chosen(cells) -> list[int]:
        figures = tagged("figure")(cells)
        if upto_figures:
            first = tagged("parameters")(cells)[0]
            return list(range(first + 2, figures[-1] + 1))
        if figure is None:
            return figures
        saves = [k for k in figures if "save_figure(" in cells[k].source]
        (end,) = [k for k in saves if f'"{notebook}_{figure}"' in cells[k].source]
        return [k for k in figures if max([j for j in saves if j < end], default=-1) < k <= end]

    return run_cells(notebook, chosen, parameters={"figures_dir": str(out), **parameters}, names=frames)[0]
