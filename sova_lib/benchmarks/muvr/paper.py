"""The MUVR paper's Tables 7, 8 and 9 (``data/paper_tables.csv``), and tables that put computed values beside them.

``paper_rows(table)`` reads the paper's numbers; ``compare(table, group,
computed)`` gives, for each model of a table group, the paper's value of
every column and the computed one (``NOT_COMPUTED`` where none was given).
Computed values are keyed by the paper's model name (e.g. ``"EVA-CLIP"``).
"""
from __future__ import annotations

import csv
from importlib import resources

__all__ = ["NOT_COMPUTED", "compare", "paper_rows"]

NOT_COMPUTED = "not computed here"


def paper_rows(table: str | None = None) -> list[dict]:
    """Rows ``{table, group, model, column, value}`` of the CSV, for one table or all."""
    text = (resources.files("sova_lib.benchmarks.muvr") / "data" / "paper_tables.csv").read_text(encoding="utf-8")
    rows = [{**r, "value": float(r["value"])} for r in csv.DictReader(text.splitlines())]
    return [r for r in rows if table is None or r["table"] == table]


def compare(table: str, group: str, computed: dict, *, models=None) -> list[dict]:
    """One row per (model, column): the paper's value and the computed one (percent) or ``NOT_COMPUTED``.

    ``computed`` maps a model name to ``{column: value}`` (the columns of the
    table: ``mAP``, ``uAP``, ``R@200``, ..., and partition names).
    """
    out = []
    for r in paper_rows(table):
        if r["group"] != group or (models is not None and r["model"] not in models):
            continue
        value = computed.get(r["model"], {}).get(r["column"])
        out.append({"model": r["model"], "column": r["column"], "paper": r["value"],
                    "computed": NOT_COMPUTED if value is None else round(float(value), 1)})
    return out
