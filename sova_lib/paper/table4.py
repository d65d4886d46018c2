"""SOVABench paper Table 4 and its Figure 2(b): the paper's numbers beside what this repository computes.

Table 4 (SOVABench paper, Section 5) gives every model's inter-pair mAP and
intra-pair Pair-mAP; Figure 2(b) plots one against the other.

* ``table4_frame(computed)``: every row of the paper's Table 4 with the
  computed rows beside it (``computed``: the rows of ``figures/results.csv``
  that ``sova_lib.paper.results.main_rows`` selects), matched as
  ``sova_lib.paper.results.compare_table`` matches rows: a description cache
  by model id and prompt, a frame-embedding cache by its paper model
  (``sova_lib.paper.contrastive``), the paper's Random row by the
  ``prevalence`` baseline; computed rows the paper lacks come last.
* ``readable(table)``: the same for reading, each computed cell as
  ``value [low, high]``.
* ``paper_random()``: the paper's Random row, ``(inter-pair, intra-pair)``.
* ``figure2b(table)``: Figure 2(b) from the table, the paper's rows as
  circles, the computed ones as stars, dashed lines at the paper's Random row.

Table C.1 (the inter-pair protocol on the queries alone) is built the same way
in ``sova_lib.paper.table_c1``; ``sova_lib.paper.table3`` is Table 3.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from sova_lib.paper import plots
from sova_lib.paper.results import compare_table, format_table, paper_results, scatter_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["COLUMNS", "TABLE", "figure2b", "paper_random", "readable", "table4_frame"]

#: The paper's name of the table, and its columns (protocol names) in the paper's order.
TABLE = "Table 4"
COLUMNS = ("inter-pair", "intra-pair")


def table4_frame(computed: "pd.DataFrame") -> "pd.DataFrame":
    """The paper's Table 4 beside ``computed`` (columns ``<protocol> paper / here / CI low / CI high``)."""
    return compare_table(TABLE, computed, COLUMNS)


def readable(table: "pd.DataFrame") -> "pd.DataFrame":
    """``table4_frame``'s table for reading: ``value [low, high]`` cells, ``not computed here`` where absent."""
    return format_table(table, COLUMNS)


def paper_random() -> tuple[float, float]:
    """The paper's Random row of Table 4: ``(inter-pair mAP, intra-pair Pair-mAP)`` in percent."""
    paper = paper_results(TABLE)
    row = paper[paper["model"] == "Random"].set_index("column")["value"]
    return tuple(float(row[c]) for c in COLUMNS)


def figure2b(table: "pd.DataFrame", *,
             title: str = "SOVABench: inter-pair mAP against intra-pair Pair-mAP") -> "Figure":
    """Figure 2(b) from ``table4_frame``'s table: inter-pair (x) against intra-pair (y), one point per row."""
    return plots.inter_vs_intra(scatter_frame(table), random=paper_random(), title=title)
