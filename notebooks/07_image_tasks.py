# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Image tasks: SOVABench paper Table 3
#
# Table 3 answers multiple-choice image questions (spatial relations: SpatialBench, VSR, What's Up; counting:
# CountBench, Visual7W-Count) with the MLLM-to-Embedding framework: describe the image, split the description into
# sentences, embed them, and pick the choice sentence with the highest maximum cosine. Accuracy counts a tie between
# choices as its expected value (1/t over the t tied choices).
#
# The paper's numbers are shown beside what this repository computes: the Random row from the choice lists, the
# oracle (an upper bound), and any image description cache found under `cache_dir`. A row that was not computed
# reads "not computed here". Every evaluation is one record, a row of the frames below; at the end the records are
# also written under `figures_dir/results/` and collected into `results.csv`, where `sova results` reads them. Only
# VSR's annotations ship with the package; the other datasets need their public annotation files in `annotations`
# (or `$SOVA_IMAGE_TASKS`), and no image of any dataset is included.

# %% tags=["parameters"]
cache_dir = None  # folder of descriptions/<name>__<hash>/ caches; None: $SOVA_CACHE, else the repository's cache/
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
annotations = None  # folder with the public annotation files (None: $SOVA_IMAGE_TASKS, or VSR alone)
encoder_name = "all-MiniLM-L6-v2"  # sentence encoder; the paper used GTE-Large, which needs the model hub
oracle_items = 100  # items per dataset for the oracle row (None: all of them)
bootstrap = 200  # resamples of the items for 95% confidence intervals (0: no intervals)
seed = 0  # seed of the bootstrap resampling

# %%
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib import SentenceEncoder, records
from sova_lib.benchmarks import image_tasks
from sova_lib.report import cache_scan, tables
from sova_lib.storage import cache_root, write_json

from paper import results

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # notes are shown whole
run = {"bootstrap": bootstrap, "seed": seed}

# %% [markdown]
# Table 3's dataset columns in the paper's order, its three averages, and the task that computes each column here
# (`image_tasks.DATASETS` names their columns); the SpatialBench data could not be identified, so its two columns are
# never computed. Each task's items are read from its annotation file; a task whose file is not found keeps the
# reason.

# %%
columns = ["SpatialBench InD.", "SpatialBench OutD.", "VSR", "What's Up A", "What's Up B", "CountBench",
           "Visual7W-Count"]
average_names = ["Spatial Avg.", "Count Avg.", "Avg."]
tasks = ["vsr-zeroshot", "whatsup-a", "whatsup-b", "countbench", "visual7w-count"]
column_of = {task: image_tasks.DATASETS[task].column for task in tasks}
loaded, not_found = {}, {}
for task in tasks:
    try:
        loaded[task] = image_tasks.load(task, None if image_tasks.DATASETS[task].vendored else annotations)
    except FileNotFoundError as err:
        loaded[task], not_found[task] = [], str(err)

# %% [markdown]
# ## The Random row, recomputed from the choice lists
#
# Chance is the mean over items of 1/(number of choices). VSR has two choices per item (the caption and its
# negation), What's Up four caption options, CountBench nine number-substituted captions (two to ten), Visual7W-Count
# its four original options. Each task's chance is one record, as `sova image-tasks evaluate --baseline random` records
# it; a task whose annotation file is not found gets a record with no value and a note naming the file.

# %%
random_source = "Random (recomputed from the choice lists)"  # names its row of Table 3
random_records = []
for task, items in loaded.items():
    common = dict(kind="baseline", source=random_source, baseline="random", **run)  # chance has no interval
    if task in not_found:
        random_records.append(records.make_record(benchmark=image_tasks.BENCHMARK, protocol=task, metric="accuracy",
                                                  ties="n/a", text_split="n/a",
                                                  note=f"{results.NOT_COMPUTED}: {not_found[task]}", **common))
    else:
        result = image_tasks.ImageTaskResult(task, image_tasks.chance(items), len(items), ties="n/a", text_split="n/a")
        random_records.append(result.to_record(**common))

# %% [markdown]
# The Random row's value, item count and note for every column.

# %%
by_column = {column_of[r["protocol"]]: r for r in random_records}
rows = []
for column in columns:
    r = by_column.get(column)
    if r is None:
        value, n, note = np.nan, 0, f"{results.NOT_COMPUTED}: the SpatialBench data could not be identified"
    elif r["value"] is None:  # its annotation file was not found
        value, n, note = np.nan, 0, r["note"]
    else:
        value, n, note = float(r["value"]), int(r["n_queries"]), r["note"] or ""
    rows.append({"column": column, "value": value, "items": n, "note": note})
random = pd.DataFrame(rows, columns=["column", "value", "items", "note"])
tables.write_outputs(random, random, out / "07_image_tasks_random")
random

# %% [markdown]
# The chance level that each column's choice construction fixes, without any file: 1 / number of choices.

# %%
choices = {"VSR": 2, "What's Up A": 4, "What's Up B": 4, "CountBench": 9, "CountBench (one..ten)": 10,
           "Visual7W-Count": 4}
(100 / pd.Series(choices, name="chance by construction (%)")).round(2)

# %% [markdown]
# ## The paper's Visual7W-Count chance
#
# Table 3 prints 10.0 under Visual7W-Count, yet its Random averages (Count Avg. 17.5, Avg. 24.7) follow only if
# that column is 25.0, the chance of the four original Visual7W options; with 10.0 they would be 10.0 and 21.0.

# %%
paper = results.paper_results("Table 3")
paper_random = dict(zip(paper[paper["model"] == "Random"]["column"], paper[paper["model"] == "Random"]["value"]))
averages = {"printed in Table 3": {k: paper_random.get(k) for k in average_names},
            "recomputed from the printed columns": image_tasks.table3_averages(paper_random),
            "recomputed with Visual7W-Count = 25.0 (4 options)":
                image_tasks.table3_averages({**paper_random, "Visual7W-Count": 25.0})}  # its four original options
check = pd.DataFrame([{"averages": name, **values} for name, values in averages.items()],
                     columns=["averages", *average_names])
tables.write_outputs(check, check.round(2), out / "07_image_tasks_random_check")
check.round(2)

# %% [markdown]
# ## Oracle and description caches
#
# The oracle describes each image by its correct choice and runs splitting, the encoder and scoring: 100 unless
# two choices are the same sentence. Its records' source, which names its row of Table 3, says how many items of each
# task were scored.

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
oracle_source = (f"oracle (first {oracle_items} items; an upper bound)" if oracle_items
                 else "oracle (every item; an upper bound)")
oracle_records = []
for task, items in loaded.items():
    if items:
        result = image_tasks.oracle(task, items[:oracle_items], encoder, **run)
        oracle_records.append(result.to_record(kind="baseline", source=oracle_source, baseline="oracle",
                                               encoder=encoder.name, **run))

# %% [markdown]
# Each image description cache (`sova image-tasks describe`; texts keyed by image) is scored on every task whose
# images it describes completely, with the MLLM-to-Embedding rule (`image_tasks.score_descriptions`: sentences, max
# cosine). A task it describes in part gets a record with no value and a note, never a score on a subset; a task it
# does not touch gets none.

# %%
caches = cache_scan.find_description_caches(cache_dir)
described_records = []
for cache in caches:
    common = dict(kind="description cache", source=cache.label, cache=cache.name,
                  config_hash=cache.manifest.get("config_hash"), model=cache.model, prompt=cache.prompt, fps=cache.fps,
                  encoder=encoder.name, **run)
    for task, items in loaded.items():
        needed = {item.image_key for item in items}
        present = len(needed & set(cache.texts))
        if present and present == len(needed):
            texts = {key: cache.texts[key] for key in needed}
            result = image_tasks.score_descriptions(task, items, texts, encoder, sentences=True, **run)
            described_records.append(result.to_record(**common))
        elif present:
            described_records.append(records.make_record(
                benchmark=image_tasks.BENCHMARK, protocol=task, metric="accuracy", n_queries=len(items),
                ties=image_tasks.TIE_RULE, text_split="sentences+max",
                note=f"{len(needed) - present} of {len(needed)} images not described: not scored", **common))

# %% [markdown]
# Each record is one row, its Table 3 column beside it.

# %%
made = [*random_records, *oracle_records, *described_records]
computed = pd.DataFrame(made)
computed.insert(0, "column", computed["protocol"].map(column_of))
oracle = computed[computed["baseline"] == "oracle"]
described = computed[computed["kind"] == "description cache"]
shown = ["column", "source", "value", "ci_low", "ci_high", "n_queries", "note"]
oracle[shown]

# %%
described[["cache", *shown]] if len(described) else print(f"no image description cache under {Path(cache_dir) / 'descriptions'}")

# %% [markdown]
# ## Table 3
#
# The paper's rows first, one per model and prompt, with its printed averages.

# %%
rows = []
for (model, prompt), group in paper.groupby(["model", "prompt"], sort=False):
    rows.append({"row": f"{model} ({prompt})" if prompt else model, "source": "paper",
                 **dict(zip(group["column"], group["value"].astype(float)))})

# %% [markdown]
# Then the rows computed here: a baseline's row named by its records' source; one row per description cache, in
# folder-name order, named by its source and `[here]` (and by its folder, `[here: <folder>]`, when several caches share
# a source). A computed row's average is computed only when every column it needs has a value, so averages that need
# SpatialBench stay empty here.

# %%
computed_rows = dict(list(computed[computed["kind"] == "baseline"].groupby("source", sort=False)))
shared = described.groupby("source")["cache"].nunique()  # caches per source
for cache, group in described.groupby("cache", sort=True):
    source = group["source"].iloc[0]
    computed_rows[f"{source} [here]" if shared[source] == 1 else f"{source} [here: {cache}]"] = group
for name, group in computed_rows.items():
    values = dict(zip(group["column"], group["value"]))
    clean = {k: v for k, v in values.items() if v is not None and np.isfinite(v)}
    rows.append({"row": name, "source": "computed here", **values, **image_tasks.table3_averages(clean)})
table = pd.DataFrame(rows, columns=["row", "source", *columns, *average_names])

# %% [markdown]
# The table as it reads: one decimal; an empty paper cell "-", an empty computed cell "not computed here".

# %%
readable = table.astype(object)
for column in [*columns, *average_names]:
    readable[column] = [f"{v:.1f}" if v == v else ("-" if source == "paper" else results.NOT_COMPUTED)
                        for v, source in zip(table[column], table["source"])]
tables.write_outputs(table, readable, out / "07_image_tasks_table3")
readable

# %%
summary = {"random": dict(zip(random["column"], random["value"])), "random_check": check.to_dict("records"),
           "oracle": dict(zip(oracle["column"], oracle["value"])), "caches": len(caches),
           "described_rows": len(described), "encoder": encoder_name, "ties": "expected"}
write_json(out / "07_image_tasks.json", summary, indent=1)
pd.Series(summary["random"], name="Random row recomputed (%)", dtype=object).fillna(results.NOT_COMPUTED)

# %% [markdown]
# The records, one JSON file each under `figures_dir/results/`, collected with every other notebook's into
# `results.csv` (what `sova results` reads).

# %%
for record in made:
    records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
