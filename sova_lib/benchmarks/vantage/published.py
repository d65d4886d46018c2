"""The paper's published VANTAGE-Bench numbers and the chance baselines a user can compute.

``data/published.csv`` holds one row per number the paper reports
(arXiv:2609.09396, sections 4, 5, C.1 and D.3; spec section 4), x100, with
the section it comes from; ``published_comparison(computed)`` lists them,
then a row of its own for each task a user scored, named by the user's model.
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
    """The paper's numbers, rows ``{task, model, setting, metric, value, source}`` (``value`` as float), then one
    row for each task of ``computed``.

    ``computed`` maps a task to a ``VantageResult`` of the user's own model on
    the user's answer key: its row names that model (the submission's
    ``metadata.model``, from ``result.context``), the items it scored as its
    setting (the paper's domains and horizons are partitions the user's data
    may not have), its value to 2 decimals and where it was computed. The
    paper's rows are left as the paper reports them.
    """
    rows = []
    with open(_DATA, newline="", encoding="utf-8") as f:
        rows += [{**row, "value": float(row["value"])} for row in csv.DictReader(f)]
    for task, mine in (computed or {}).items():
        rows.append({"task": task, "model": mine.context.get("model") or "your model (unnamed)",
                     "setting": f"your answer key ({mine.n_items} items)", "metric": mine.metric,
                     "value": round(mine.value, 2),
                     "source": f"computed here from {mine.context.get('source') or 'your answers'}"})
    return rows
