"""SOVABench paper Table 3 (image tasks): the paper's numbers beside what this repository computes.

Computed rows, each evaluation one record (``sova_lib.records``,
``ImageTaskResult.to_record``), from which the notebook builds the table:

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

The notebook re-derives the paper's Random averages in its cells (with
``image_tasks.table3_averages``), which exposes the Visual7W-Count entry
printed as 10.0, and writes the table for reading there.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from sova_lib.benchmarks import image_tasks as it
from sova_lib.records import make_record

from paper.beside import NOT_COMPUTED

__all__ = ["AVERAGES", "COLUMNS", "COLUMN_OF", "RANDOM_SOURCE", "computed_rows", "description_records", "oracle_records",
           "random_records", "random_table", "table3_frame"]

#: Table 3's dataset columns, in the paper's order, and the task that computes each here.
COLUMNS = {"SpatialBench InD.": None, "SpatialBench OutD.": None, "VSR": "vsr-zeroshot",
           "What's Up A": "whatsup-a", "What's Up B": "whatsup-b", "CountBench": "countbench",
           "Visual7W-Count": "visual7w-count"}
AVERAGES = ("Spatial Avg.", "Count Avg.", "Avg.")
#: The tasks computed here, in the order of their columns, and the column of each.
TASKS = tuple(task for task in COLUMNS.values() if task)
COLUMN_OF = {task: column for column, task in COLUMNS.items() if task}

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


def random_table(records) -> "pd.DataFrame":
    """The Random row's value, item count and note for every Table 3 column, from ``random_records``' records.

    The SpatialBench columns are never computed (their data could not be
    identified): they read ``not computed here``.
    """
    by_column = {COLUMN_OF[r["protocol"]]: r for r in records}
    rows = []
    for column, task in COLUMNS.items():
        if task is None:
            rows.append({"column": column, "value": np.nan, "items": 0,
                         "note": f"{NOT_COMPUTED}: the SpatialBench data could not be identified"})
            continue
        r = by_column[column]
        value = np.nan if r["value"] is None else float(r["value"])
        rows.append({"column": column, "value": value, "items": 0 if value != value else int(r["n_queries"]),
                     "note": r["note"] or ""})
    return pd.DataFrame(rows, columns=["column", "value", "items", "note"])


def computed_rows(frame) -> dict:
    """Table 3's computed rows, ``{row name: {column: value}}``, for ``table3_frame``.

    ``frame``: the records of the Random row, the oracle and the description
    caches, with Table 3's ``column`` beside each. A baseline's row is named
    by its records' ``source``; each description cache gives one row, in
    folder-name order, named by its source and ``[here]`` (and by its folder,
    ``[here: <folder>]``, when several caches share a source).
    """
    rows = {}
    for source, group in frame[frame["kind"] == "baseline"].groupby("source", sort=False):
        rows[source] = dict(zip(group["column"], group["value"]))
    described = frame[frame["kind"] == "description cache"]
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
