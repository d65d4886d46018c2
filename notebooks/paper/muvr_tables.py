"""The MUVR paper's Tables 7, 8 and 9 (``data/muvr_tables/muvr_tables.csv`` beside this module), and tables that put computed values beside them.

``paper_rows(table)`` reads the paper's numbers; ``compare(table, group,
computed)`` gives, for each model of a table group, the paper's value of
every column and the computed one (``NOT_COMPUTED`` where none was given).
Computed values are keyed by the paper's model name (e.g. ``"EVA-CLIP"``).
"""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from sova_lib.benchmarks.muvr.annotations import PARTITIONS, load_partition
from sova_lib.benchmarks.muvr.features import released_vectors
from sova_lib.benchmarks.muvr.retrieval import evaluate_vectors

from paper.beside import NOT_COMPUTED

__all__ = ["GROUPS", "NOT_COMPUTED", "RELEASED_FEATURES", "compare", "paper_rows", "released_feature_tables",
           "tables_7_and_8"]

#: Folder of the released features (features/VLMs_1_15/<folder>) -> the paper's model name.
RELEASED_FEATURES = {"EVA-CLIP": "EVA-CLIP", "OpenCLIP": "OpenCLIP (ViT-H-14)"}
#: The (table, group) blocks of Tables 7 and 8, in the paper's order.
GROUPS = (("Table 7", "text"), ("Table 7", "video"), ("Table 7", "text+video"), ("Table 8", "p=0"),
          ("Table 8", "p=0.3"))


def paper_rows(table: str | None = None) -> list[dict]:
    """Rows ``{table, group, model, column, value}`` of the CSV, for one table or all."""
    text = (Path(__file__).resolve().parent / "data" / "muvr_tables" / "muvr_tables.csv").read_text(encoding="utf-8")
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


def tables_7_and_8(computed: dict) -> tuple:
    """Tables 7 and 8 as two DataFrames of ``compare`` rows (``group, model, column, paper, computed``).

    ``computed``: ``released_feature_tables``'s result (``{}``: every row
    "not computed here"). Only the released models' rows are kept.
    """
    models = list(RELEASED_FEATURES.values())
    blocks: dict = {}
    for table, group in GROUPS:
        frame = pd.DataFrame(compare(table, group, computed.get((table, group), {}), models=models))
        frame.insert(0, "group", group)
        blocks.setdefault(table, []).append(frame)
    return tuple(pd.concat(blocks[t], ignore_index=True) for t in ("Table 7", "Table 8"))


def _flatten(result) -> dict:
    return {**result.metrics, **{p: v["mAP"] for p, v in result.per_partition.items()}}


def released_feature_tables(data_root, features_root, *, models=tuple(RELEASED_FEATURES), partitions=PARTITIONS,
                            ties: str = "expected") -> dict:
    """Tables 7 and 8 computed from the released features: ``{(table, group): {paper model: {column: value}}}``.

    ``features_root`` holds one folder per model (``<features_root>/<model>/<partition>/``);
    a model whose folder is missing is left out (its rows stay "not computed here").
    """
    loaded = [load_partition(data_root, p) for p in partitions]
    out: dict = {}
    for folder in models:
        features = Path(features_root) / folder
        if not features.is_dir():
            continue
        name = RELEASED_FEATURES.get(folder, folder)
        for query in ("text", "video", "text+video"):
            result = evaluate_vectors(loaded, released_vectors(features, query=query), query=query, ties=ties)
            out.setdefault(("Table 7", query), {})[name] = _flatten(result)
        for weight in (0.0, 0.3):
            result = evaluate_vectors(loaded, released_vectors(features, version="filter"), version="filter",
                              tag_weight=weight, ties=ties)
            out.setdefault(("Table 8", f"p={weight:g}"), {})[name] = _flatten(result)
    return out
