"""A paper table beside the computed records, in the steps the results notebook (``02_results``) takes in its cells,
and its cells of one tag run as the notebook runs them."""
import pandas as pd

from tests.figure_helpers import run_cells, tagged

from paper import results

KEYS = ["group", "model", "prompt"]


def paper_wide(table: str) -> pd.DataFrame:
    """The paper's ``table`` as printed: one row per model and prompt ("-" for none), ``<column> paper`` columns."""
    frame = results.paper_results(table).replace({"prompt": {"": "-"}})
    return (frame.pivot_table(index=KEYS, columns="column", values="value")
            .reindex(pd.MultiIndex.from_frame(frame[KEYS].drop_duplicates()))
            .add_suffix(" paper").reset_index().rename_axis(columns=None))


def beside(table: str, computed) -> pd.DataFrame:
    """Every row of the paper's ``table`` with the computed records beside it, then the computed rows it lacks."""
    here = results.rows_beside(computed, table)
    return pd.concat([paper_wide(table).merge(here, on=KEYS, how="left"), here[here["group"] == results.NOT_IN_PAPER]],
                     ignore_index=True)


def results_cells(tag: str, out, **values) -> dict:
    """Run ``02_results``' code cells tagged ``tag`` (``run_cells``); returns the namespace. ``values`` override the
    parameters and stand for what the earlier cells made (``caches``, ``encoder``, ``made``, ...); ``figures_dir`` is
    ``out``."""
    return run_cells("02_results", tagged(tag), parameters={"figures_dir": str(out), **values}, names=values)[0]


def figure2b_points(table4, out) -> dict:
    """``points`` and ``random_level`` of Figure 2(b), as ``02_results``' cell tagged ``points`` makes them from
    ``table4`` (the paper's Table 4 beside the computed rows, ``beside``)."""
    ns = results_cells("points", out, table4=table4, paper={"Table 4": paper_wide("Table 4")})
    return {"points": ns["points"], "random_level": ns["random_level"]}
