"""SOVABench paper Table 3 (image tasks): the paper's numbers beside what this repository computes.

Computed rows, each evaluation written as one record (``sova_lib.records``,
``ImageTaskResult.to_record``) and the table read back from the collected
records (``run_records``):

* ``Random (recomputed from the choice lists)`` (``random_records``): chance
  from the choice lists of the items loaded (mean over items of 1/k); a
  dataset whose annotation file is not found gets a record with no value and
  a note naming the file.
* ``oracle`` (``oracle_records``): each image described by its correct
  choice, through splitting, the sentence encoder and scoring (an upper
  bound, not a model).
* one row per image description cache (``sova image-tasks describe``) whose
  image keys cover a task's images, scored with the MLLM-to-Embedding rule
  (``description_records``).

``chance_by_construction`` gives the chance level that the choice
construction fixes (2, 4, 9 or 10 choices), without any file, and
``random_row_check`` re-derives the paper's Random averages both ways, which
exposes the Visual7W-Count entry printed as 10.0.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from sova_lib.benchmarks import image_tasks as it
from sova_lib.records import make_record

from paper.results import NOT_COMPUTED, select_rows

__all__ = ["COLUMNS", "RANDOM_SOURCE", "chance_by_construction", "computed_rows", "description_records",
           "oracle_records", "random_records", "random_row_check", "random_table", "readable",
           "run_records", "table3_frame"]

#: Table 3's dataset columns, in the paper's order, and the task that computes each here.
COLUMNS = {"SpatialBench InD.": None, "SpatialBench OutD.": None, "VSR": "vsr-zeroshot",
           "What's Up A": "whatsup-a", "What's Up B": "whatsup-b", "CountBench": "countbench",
           "Visual7W-Count": "visual7w-count"}
AVERAGES = ("Spatial Avg.", "Count Avg.", "Avg.")
#: The tasks computed here, in the order of their columns.
TASKS = tuple(task for task in COLUMNS.values() if task)

#: The ``source`` of the Random row's records, which names its row of Table 3.
RANDOM_SOURCE = "Random (recomputed from the choice lists)"


def _load(annotations) -> dict:
    """task -> ``(items, "")`` of each of ``TASKS``, or ``(None, why)`` when its annotation file is not found."""
    loaded = {}
    for task in TASKS:
        try:
            loaded[task] = it.load(task, None if it.DATASETS[task].vendored else annotations), ""
        except FileNotFoundError as err:
            loaded[task] = None, str(err)
    return loaded


def random_records(annotations=None, *, bootstrap: int = 0, seed: int = 0) -> list[dict]:
    """One record (``sova_lib.records``) per task column: chance from the loaded items (``annotations``: a folder
    of the files). A task whose annotation file is not found gives a record with no value and a note naming
    the file. ``bootstrap`` and ``seed`` are the run's settings (chance has no interval), as
    ``sova image-tasks evaluate --baseline random`` records them.
    """
    run = dict(kind="baseline", source=RANDOM_SOURCE, baseline="random", bootstrap=bootstrap, seed=seed)
    records = []
    for task, (items, error) in _load(annotations).items():
        if items is None:
            records.append(make_record(benchmark=it.BENCHMARK, protocol=task, metric="accuracy", ties="n/a",
                                       text_split="n/a", note=f"{NOT_COMPUTED}: {error}", **run))
        else:
            result = it.ImageTaskResult(task, it.chance(items), len(items), ties="n/a", text_split="n/a")
            records.append(result.to_record(**run))
    return records


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
    printed = {k: paper.get(k, np.nan) for k in AVERAGES}
    as_printed = it.table3_averages(paper)
    four_options = it.table3_averages({**paper, "Visual7W-Count": 25.0})
    rows = [{"averages": "printed in Table 3", **printed},
            {"averages": "recomputed from the printed columns", **as_printed},
            {"averages": "recomputed with Visual7W-Count = 25.0 (4 options)", **four_options}]
    return pd.DataFrame(rows, columns=["averages", *AVERAGES])


def oracle_records(encoder, annotations=None, *, limit: int | None = None, bootstrap: int = 0,
                   seed: int = 0) -> list[dict]:
    """The oracle's accuracy on every task whose items load (the first ``limit`` items of each), one record each.

    The records' ``source``, which names the oracle's row of Table 3, says how many items were scored.
    """
    source = f"oracle (first {limit} items; an upper bound)" if limit else "oracle (every item; an upper bound)"
    run = dict(kind="baseline", source=source, baseline="oracle", encoder=encoder.name, bootstrap=bootstrap, seed=seed)
    return [it.oracle(task, items[:limit], encoder, bootstrap=bootstrap, seed=seed).to_record(**run)
            for task, (items, _) in _load(annotations).items() if items]


def description_records(caches, encoder, annotations=None, *, sentences: bool = True, bootstrap: int = 0,
                        seed: int = 0) -> list[dict]:
    """Every description cache scored on every task whose images it describes completely, one record each.

    ``caches``: ``sova_lib.report.cache_scan.FoundCache`` objects (texts keyed by
    image key). A task the cache covers in part gives a record with no value
    and a note, never a score on a subset; a task it does not touch gives none.
    """
    records = []
    loaded = {task: items for task, (items, _) in _load(annotations).items()}
    for cache in caches:
        keys = set(cache.texts)
        run = dict(kind="description cache", source=cache.label, cache=cache.name,
                   config_hash=cache.manifest.get("config_hash"), model=cache.model, prompt=cache.prompt, fps=cache.fps,
                   encoder=encoder.name, bootstrap=bootstrap, seed=seed)
        for task, items in loaded.items():
            needed = {i.image_key for i in items} if items else set()
            present = len(needed & keys)
            if present == 0:
                continue
            if present < len(needed):
                records.append(make_record(benchmark=it.BENCHMARK, protocol=task, metric="accuracy",
                                           n_queries=len(items), ties=it.TIE_RULE, text_split=_split(sentences),
                                           note=f"{len(needed) - present} of {len(needed)} images not described: "
                                                "not scored", **run))
                continue
            texts = {k: cache.texts[k] for k in needed}
            records.append(it.score_descriptions(task, items, texts, encoder, sentences=sentences,
                                                 bootstrap=bootstrap, seed=seed).to_record(**run))
    return records


def _split(sentences: bool) -> str:
    return "sentences+max" if sentences else "whole text"


def run_records(collected, *, encoder: str, bootstrap: int, seed: int, sentences: bool = True) -> dict:
    """The image-task records of one run's settings in a collected record table (``sova_lib.records``).

    Returns ``{"random": ..., "oracle": ..., "described": ...}``, three frames
    of records with Table 3's ``column`` added: the Random row's, the
    oracle's with ``encoder``, and the description caches' with ``encoder``
    and ``sentences``, each in the order of the table's columns (caches by
    folder name first). Records of other benchmarks or settings are left out.
    """
    where = {task: k for k, task in enumerate(TASKS)}
    run = {"benchmark": it.BENCHMARK, "protocol": tuple(where), "bootstrap": bootstrap, "seed": seed}
    parts = {"random": select_rows(collected, kind="baseline", baseline="random", encoder=None, **run),
             "oracle": select_rows(collected, kind="baseline", baseline="oracle", encoder=encoder, **run),
             "described": select_rows(collected, kind="description cache", encoder=encoder,
                                      text_split=_split(sentences), **run)}
    column_of = {task: column for column, task in COLUMNS.items() if task}
    out = {}
    for name, frame in parts.items():
        frame = frame.sort_values(["cache", "protocol"], na_position="first",  # no cache (a baseline) first
                                  key=lambda col: col.map(where) if col.name == "protocol" else col)
        frame.insert(0, "column", frame["protocol"].map(column_of))
        out[name] = frame.reset_index(drop=True)
    return out


def random_table(random) -> "pd.DataFrame":
    """The Random row's value, item count and note for every Table 3 column, from ``run_records(...)["random"]``.

    A column without a record reads ``not computed here``; the SpatialBench
    columns are never computed (their data could not be identified).
    """
    by_column = {r["column"]: r for r in random.to_dict("records")}
    rows = []
    for column, task in COLUMNS.items():
        r = by_column.get(column)
        if task is None or r is None:
            why = "the SpatialBench data could not be identified" if task is None else "no record of this run"
            rows.append({"column": column, "value": np.nan, "items": 0, "note": f"{NOT_COMPUTED}: {why}"})
            continue
        value = float(r["value"]) if pd.notna(r["value"]) else np.nan
        items = int(r["n_queries"]) if pd.notna(value) and pd.notna(r["n_queries"]) else 0
        rows.append({"column": column, "value": value, "items": items,
                     "note": r["note"] if isinstance(r["note"], str) else ""})
    return pd.DataFrame(rows, columns=["column", "value", "items", "note"])


def computed_rows(parts: dict) -> dict:
    """Table 3's computed rows, ``{row name: {column: value}}``, for ``table3_frame``.

    ``parts``: ``run_records``' frames. The Random and oracle rows are named
    by their records' ``source``; each description cache gives one row, in
    folder-name order, named by its source and ``[here]`` (and by its folder,
    ``[here: <folder>]``, when several caches share a source).
    """
    rows = {}
    for name in ("random", "oracle"):
        for source, group in parts[name].groupby("source", sort=False):
            rows[source] = dict(zip(group["column"], group["value"]))
    described = parts["described"]
    shared = described.groupby("source")["cache"].nunique()
    for cache, group in described.groupby("cache", sort=True):
        source = group["source"].iloc[0]
        name = f"{source} [here]" if shared[source] == 1 else f"{source} [here: {cache}]"
        rows[name] = dict(zip(group["column"], group["value"]))
    return rows


def table3_frame(paper, computed: dict) -> "pd.DataFrame":
    """Paper rows and computed rows in Table 3's layout, with the three averages.

    ``paper``: ``paper.results.paper_results("Table 3")``. ``computed``:
    row name -> ``{column: value}``. A computed row's averages are computed
    only when every column they need has a value (NaN otherwise); a cell
    with no value is NaN.
    """
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
