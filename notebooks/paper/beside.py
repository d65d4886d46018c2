"""A paper's numbers beside the computed ones, as one wide table for reading.

``paper_beside_computed`` turns a long table of a paper's numbers and the ones
computed here (one number per row) into a wide table a reader can scan: the
paper's columns in the paper's order, a row of computed numbers under each paper
row that has any, and one cell, not a row of them, saying what was not computed.
"""
from __future__ import annotations

import pandas as pd

__all__ = ["NOT_COMPUTED", "paper_beside_computed"]

#: What a cell of a number that was not computed here reads (``results`` and notebook 05 use this one).
NOT_COMPUTED = "not computed here"


def paper_beside_computed(long, *, index=("group", "model"), column: str = "column", missing: str = NOT_COMPUTED):
    """``long`` (columns ``*index``, ``column``, ``paper``, ``computed``; one number per row, ``computed`` a number
    or ``missing``) as one wide table for reading.

    One row per ``index`` value with the paper's numbers, its ``numbers``
    cell reading ``paper``; the columns keep the order of their first
    appearance in ``long`` (the paper's: R@200, R@500, R@2000, where a
    pivot would sort them as text). Under a paper row with any computed
    number comes the row of computed numbers (``numbers``: ``computed
    here``; ``missing`` in a column not computed). A paper row without any
    computed number says so once, in its ``numbers`` cell (``paper;
    not computed here``).
    """
    index, columns = list(index), list(dict.fromkeys(long[column]))
    rows = []
    for key, part in long.groupby(index, sort=False):  # a tuple, index being a list
        paper = dict(zip(part[column], part["paper"]))
        computed = dict(zip(part[column], part["computed"]))
        done = {c: v for c, v in computed.items() if not (isinstance(v, str) and v == missing) and not pd.isna(v)}
        label = "paper" if done else f"paper; {missing}"
        rows.append({**dict(zip(index, key)), "numbers": label, **{c: paper.get(c, "") for c in columns}})
        if done:
            rows.append({**dict(zip(index, key)), "numbers": "computed here",
                         **{c: done.get(c, missing) for c in columns}})
    return pd.DataFrame(rows, columns=[*index, "numbers", *columns])
