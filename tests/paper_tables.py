"""A paper table beside the computed records, in the steps the results notebook (``02_results``) takes in its cells."""
import pandas as pd

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
