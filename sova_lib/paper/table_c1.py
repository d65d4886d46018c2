"""SOVABench paper Table C.1: the paper's numbers beside what this repository computes.

Table C.1 (SOVABench paper, Appendix C) gives every model's inter-pair mAP
on the 1,423 query clips alone (``inter-pair-constrained``: no distractors)
and its efficiency (instances per second on the authors' hardware).

* ``table_c1_frame(computed)``: every row of the paper's Table C.1 with the
  computed rows beside it (``computed``: the rows of ``figures/results.csv``
  that ``sova_lib.paper.results.main_rows`` selects), matched as
  ``sova_lib.paper.results.compare_table`` matches rows (as Table 4,
  ``sova_lib.paper.table4``, is); the efficiency column is the paper's
  alone, shown as reported: it is not a quantity this table computes.
* ``readable(table)``: the same for reading, each computed cell as
  ``value [low, high]``.
"""
from __future__ import annotations

import pandas as pd

from sova_lib.paper.results import compare_table, format_table

__all__ = ["COLUMNS", "PAPER_ONLY", "TABLE", "readable", "table_c1_frame"]

#: The paper's name of the table, its computed columns (protocol names), and the columns copied from the paper alone.
TABLE = "Table C.1"
COLUMNS = ("inter-pair-constrained",)
PAPER_ONLY = ("efficiency",)


def table_c1_frame(computed: "pd.DataFrame") -> "pd.DataFrame":
    """The paper's Table C.1 beside ``computed`` (``efficiency paper``, then ``<protocol> paper / here / CI``)."""
    return compare_table(TABLE, computed, COLUMNS, paper_only=PAPER_ONLY)


def readable(table: "pd.DataFrame") -> "pd.DataFrame":
    """``table_c1_frame``'s table for reading: ``value [low, high]`` cells, ``not computed here`` where absent."""
    return format_table(table, COLUMNS, paper_only=PAPER_ONLY)
