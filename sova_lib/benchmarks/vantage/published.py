"""The paper's published VANTAGE-Bench numbers and the chance baselines a user can compute.

``data/published.csv`` holds one row per number the paper reports
(arXiv:2609.09396, sections 4, 5, C.1 and D.3; spec section 4), x100, with
the section it comes from; ``published_comparison(computed)`` puts them
beside the values a user computed ("not computed here" for the rest).
``PUBLISHED_HALF_WIDTHS`` are the
median bootstrap half-widths of appendix G.1.

Chance baselines (spec section 4): VQA and pointing random = mean over items
of 1 / number of options; event verification all-"yes" Macro F1 = p / (1 + p)
with p the share of "yes" in the truth; temporal whole-video mIoU = the
official score of answers that are all unreadable.
"""
from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["PUBLISHED_HALF_WIDTHS", "published_comparison"]

_DATA = Path(__file__).resolve().parent / "data" / "published.csv"

#: Median 95% bootstrap half-widths (paper appendix G.1), x100.
PUBLISHED_HALF_WIDTHS = {"refex": 1.00, "astro": 1.27, "event_verification": 7.47}


def published_comparison(computed: dict | None = None) -> list[dict]:
    """The paper's numbers, rows ``{task, model, setting, metric, value, source}`` (``value`` as float), with a
    ``computed here`` column: the user's value for that task, or "not computed here".

    ``computed`` maps a task to a ``VantageResult`` of the user's own model on
    the real ground truth; its value stands beside every published row of
    that task and metric (the model differs: compare with care).
    """
    computed = computed or {}
    rows = []
    with open(_DATA, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            mine = computed.get(row["task"])
            value = round(mine.value, 2) if mine is not None and mine.metric == row["metric"] else "not computed here"
            rows.append({**row, "value": float(row["value"]), "computed here": value})
    return rows
