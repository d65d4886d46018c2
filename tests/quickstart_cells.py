"""The quickstart notebook's cells, run one at a time on values a test chooses, as its kernel runs them."""
import ast
import contextlib

from tests.figure_helpers import notebook_cells
from tests.paths import ROOT


def run_cells(tmp_path, *markers: str, parameters: dict | None = None, **names) -> tuple[dict, object]:
    """Run ``notebooks/00_quickstart.py``'s parameters cell (then ``parameters`` over it, the outputs under
    ``tmp_path``) and its set-up cell, then, with ``names`` added, the one code cell holding each of ``markers``,
    in that order, in the notebooks' folder (papermill's working folder).

    Returns the namespace and the value of the last cell's closing expression (what the notebook shows under it;
    ``None`` when it ends with a statement).
    """
    cells = [c.source for c in notebook_cells("00_quickstart")]
    namespace: dict = {}
    value = None
    with contextlib.chdir(ROOT / "notebooks"):
        exec(cells[0], namespace)
        namespace.update({"figures_dir": str(tmp_path / "figures"), "cache_dir": str(tmp_path / "cache"),
                          **(parameters or {})})
        exec(cells[1], namespace)
        namespace.update(names)
        for marker in markers:
            (source,) = [c for c in cells if marker in c]
            tree = ast.parse(source)
            last = tree.body.pop() if isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "00_quickstart.py", "exec"), namespace)
            value = None if last is None else eval(compile(ast.Expression(last.value), "00_quickstart.py", "eval"),
                                                   namespace)
    return namespace, value
