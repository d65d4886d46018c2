"""SOVABench paper Table 3 (image tasks): the paper's numbers beside what this repository computes.

Computed rows:

* ``Random (recomputed)``: chance from the choice lists of the items loaded
  (mean over items of 1/k); a dataset whose annotation file is not found
  gets no value and a note naming the file.
* ``oracle``: each image described by its correct choice, through
  splitting, the sentence encoder and scoring (an upper bound, not a model).
* one row per image description cache (``sova image-tasks describe``) whose
  image keys cover a task's images, scored with the MLLM-to-Embedding rule.

``chance_by_construction`` gives the chance level that the choice
construction fixes (2, 4, 9 or 10 choices), without any file, and
``random_row_check`` re-derives the paper's Random averages both ways, which
exposes the Visual7W-Count entry printed as 10.0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sova_lib.benchmarks import image_tasks as it

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "chance_by_construction", "computed_rows", "description_rows", "oracle_rows",
           "random_row_check", "random_rows", "readable", "table3_frame"]

#: Table 3's dataset columns, in the paper's order, and the task that computes each here.
COLUMNS = {"SpatialBench InD.": None, "SpatialBench OutD.": None, "VSR": "vsr-zeroshot",
           "What's Up A": "whatsup-a", "What's Up B": "whatsup-b", "CountBench": "countbench",
           "Visual7W-Count": "visual7w-count"}
AVERAGES = ("Spatial Avg.", "Count Avg.", "Avg.")


def _load(task: str, annotations):
    try:
        return it.load(task, None if it.DATASETS[task].vendored else annotations), ""
    except FileNotFoundError as err:
        return None, str(err)


def random_rows(annotations=None) -> list[dict]:
    """One row per Table 3 column: chance from the loaded items (``annotations``: a folder of the files)."""
    rows = []
    for column, task in COLUMNS.items():
        if task is None:
            rows.append({"column": column, "value": np.nan, "items": 0,
                         "note": "not computed here: the SpatialBench data could not be identified"})
            continue
        items, error = _load(task, annotations)
        if items is None:
            rows.append({"column": column, "value": np.nan, "items": 0, "note": f"not computed here: {error}"})
        else:
            rows.append({"column": column, "value": it.chance(items), "items": len(items), "note": ""})
    return rows


def chance_by_construction() -> dict:
    """Chance (percent) that each column's choice construction fixes: 1 / number of choices."""
    return {"VSR": 100 / 2, "What's Up A": 100 / 4, "What's Up B": 100 / 4,
            "CountBench": 100 / 9, "CountBench (one..ten)": 100 / 10, "Visual7W-Count": 100 / 4}


def random_row_check(paper: dict) -> "pd.DataFrame":
    """The paper's Random averages against averages recomputed from its own columns.

    ``paper``: column -> the paper's Random value. Rows: the averages as
    printed, recomputed with the columns as printed, and recomputed with
    Visual7W-Count at 25.0 (its four original options).
    """
    import pandas as pd

    printed = {k: paper.get(k, np.nan) for k in AVERAGES}
    as_printed = it.table3_averages(paper)
    four_options = it.table3_averages({**paper, "Visual7W-Count": 25.0})
    rows = [{"averages": "printed in Table 3", **printed},
            {"averages": "recomputed from the printed columns", **as_printed},
            {"averages": "recomputed with Visual7W-Count = 25.0 (4 options)", **four_options}]
    return pd.DataFrame(rows, columns=["averages", *AVERAGES])


def oracle_rows(encoder, annotations=None, *, limit: int | None = None, bootstrap: int = 0, seed: int = 0):
    """The oracle's accuracy on every task whose items load (the first ``limit`` items of each)."""
    rows = []
    for column, task in COLUMNS.items():
        items = _load(task, annotations)[0] if task else None
        if not items:
            continue
        r = it.oracle(task, items[:limit], encoder, bootstrap=bootstrap, seed=seed)
        rows.append({"column": column, "value": r.value, "items": r.n_items,
                     "ci_low": r.ci[0] if r.ci else np.nan, "ci_high": r.ci[1] if r.ci else np.nan,
                     "note": "oracle: each image described by its correct choice (an upper bound)"})
    return rows


def description_rows(caches, encoder, annotations=None, *, sentences: bool = True, bootstrap: int = 0,
                     seed: int = 0) -> list[dict]:
    """Every description cache scored on every task whose images it describes completely.

    ``caches``: ``sova_lib.paper.cache_scan.FoundCache`` objects (texts keyed by
    image key). A task the cache covers in part is listed with a note, never
    scored on a subset.
    """
    rows = []
    loaded = {task: _load(task, annotations)[0] for task in COLUMNS.values() if task}
    for cache in caches:
        keys = set(cache.texts)
        for column, task in COLUMNS.items():
            items = loaded.get(task)
            if not items:
                continue
            needed = {i.image_key for i in items}
            present = len(needed & keys)
            base = {"source": cache.label, "cache": cache.name, "column": column, "items": len(items)}
            if present == 0:
                continue
            if present < len(needed):
                rows.append({**base, "value": np.nan, "note": f"{len(needed) - present} of {len(needed)} images "
                                                            "not described: not scored"})
                continue
            texts = {k: cache.texts[k] for k in needed}
            r = it.score_descriptions(task, items, texts, encoder, sentences=sentences, bootstrap=bootstrap,
                                      seed=seed)
            rows.append({**base, "value": r.value, "ci_low": r.ci[0] if r.ci else np.nan,
                         "ci_high": r.ci[1] if r.ci else np.nan, "note": ""})
    return rows


def computed_rows(random, oracle, described, *, oracle_items=None) -> dict:
    """Table 3's computed rows, ``{row name: {column: value}}``, for ``table3_frame``.

    ``random``, ``oracle`` and ``described``: frames of ``random_rows``,
    ``oracle_rows`` and ``description_rows``; each description cache gives
    one row, named by its source and ``[here]``.
    """
    rows = {"Random (recomputed from the choice lists)": dict(zip(random["column"], random["value"])),
            f"oracle (first {oracle_items} items; an upper bound)": dict(zip(oracle["column"], oracle["value"]))}
    for source, group in (described.groupby("source") if len(described) else []):
        rows[f"{source} [here]"] = dict(zip(group["column"], group["value"]))
    return rows


def table3_frame(paper, computed: dict) -> "pd.DataFrame":
    """Paper rows and computed rows in Table 3's layout, with the three averages.

    ``paper``: ``sova_lib.paper.results.paper_results("Table 3")``. ``computed``:
    row name -> ``{column: value}``. A computed row's averages are computed
    only when every column they need has a value (NaN otherwise); a cell
    with no value is NaN.
    """
    import pandas as pd

    rows = []
    for (model, prompt), group in paper.groupby(["model", "prompt"], sort=False):
        values = dict(zip(group["column"], group["value"].astype(float)))
        rows.append({"row": f"{model} ({prompt})" if prompt else model, "source": "paper", **values})
    for name, values in computed.items():
        clean = {k: v for k, v in values.items() if v is not None and np.isfinite(v)}
        rows.append({"row": name, "source": "computed here", **values, **it.table3_averages(clean)})
    return pd.DataFrame(rows, columns=["row", "source", *COLUMNS, *AVERAGES])


def readable(frame) -> "pd.DataFrame":
    """``table3_frame`` for reading: one decimal; an empty paper cell "-", an empty computed cell "not computed here"."""
    shown = frame.copy().astype(object)
    for column in [*COLUMNS, *AVERAGES]:
        shown[column] = [f"{v:.1f}" if v == v else ("-" if src == "paper" else "not computed here")
                         for v, src in zip(frame[column], frame["source"])]
    return shown
