"""Tables for readers: a DataFrame as Markdown, and a table as CSV and Markdown side by side.

``write_outputs`` writes a table's numbers as CSV and its view for readers as
Markdown (``markdown_table``); ``sova reproduce`` and every notebook write
their tables with it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.storage import write_text

__all__ = ["markdown_table", "write_outputs"]


def _cell(value) -> str:
    """One Markdown cell: an absent value (``None``, NaN, ``pd.NA``) reads ``-``, never ``nan``."""
    absent = value is None or value is pd.NA or value is pd.NaT or (isinstance(value, (float, np.floating)) and value != value)
    return "-" if absent else str(value)


def markdown_table(frame) -> str:
    """``frame`` as a Markdown table (no index); an absent value reads ``-``."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = ["| " + " | ".join(map(_cell, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *lines]) + "\n"


def write_outputs(numbers, readable, stem) -> list[Path]:
    """``numbers`` as ``<stem>.csv`` (one for machines) and ``readable`` as the Markdown table ``<stem>.md`` (one
    view for readers), side by side."""
    stem = Path(stem)
    return [write_text(stem.with_suffix(".csv"), numbers.to_csv(index=False)),
            write_text(stem.with_suffix(".md"), markdown_table(readable))]
