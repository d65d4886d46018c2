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

import pandas as pd

from sova_lib import SentenceEncoder, records
from sova_lib.benchmarks.image_tasks import table3_averages
from sova_lib.report import cache_scan, tables
from sova_lib.storage import cache_root, write_json

from paper import results, table3

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # notes are shown whole
run = {"bootstrap": bootstrap, "seed": seed}

# %% [markdown]
# ## The Random row, recomputed from the choice lists
#
# Chance is the mean over items of 1/(number of choices). VSR has two choices per item (the caption and its
# negation), What's Up four caption options, CountBench nine number-substituted captions (two to ten), Visual7W-Count
# its four original options. A column whose annotation file is not found says so.

# %%
random_records = table3.random_records(annotations, **run)
random = table3.random_table(random_records)
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
averages = {"printed in Table 3": {k: paper_random.get(k) for k in table3.AVERAGES},
            "recomputed from the printed columns": table3_averages(paper_random),
            "recomputed with Visual7W-Count = 25.0 (4 options)":
                table3_averages({**paper_random, "Visual7W-Count": 25.0})}  # its four original options
check = pd.DataFrame([{"averages": name, **values} for name, values in averages.items()],
                     columns=["averages", *table3.AVERAGES])
tables.write_outputs(check, check.round(2), out / "07_image_tasks_random_check")
check.round(2)

# %% [markdown]
# ## Oracle and description caches
#
# The oracle describes each image by its correct choice and runs splitting, the encoder and scoring: 100 unless
# two choices are the same sentence. Each image description cache is scored on every task whose images it
# describes completely. Each record is one row, its Table 3 column beside it.

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
caches = cache_scan.find_description_caches(cache_dir)
made = [*random_records, *table3.oracle_records(encoder, annotations, limit=oracle_items, **run),
        *table3.description_records(caches, encoder, annotations, **run)]
computed = pd.DataFrame(made)
computed.insert(0, "column", computed["protocol"].map(table3.COLUMN_OF))
oracle = computed[computed["baseline"] == "oracle"]
described = computed[computed["kind"] == "description cache"]
shown = ["column", "source", "value", "ci_low", "ci_high", "n_queries", "note"]
oracle[shown]

# %%
described[["cache", *shown]] if len(described) else print(f"no image description cache under {Path(cache_dir) / 'descriptions'}")

# %% [markdown]
# ## Table 3
#
# The paper's rows first, then the rows computed here. An average is computed only when every column it needs has a
# value, so averages that need SpatialBench stay empty here.

# %%
table = table3.table3_frame(paper, table3.computed_rows(computed))
readable = table.astype(object)  # one decimal; an empty paper cell "-", an empty computed cell "not computed here"
for column in [*table3.COLUMNS, *table3.AVERAGES]:
    readable[column] = [f"{v:.1f}" if v == v else ("-" if source == "paper" else results.NOT_COMPUTED)
                        for v, source in zip(table[column], table["source"])]
tables.write_outputs(table, readable, out / "07_image_tasks_table3")
readable

# %%
summary = {"random": dict(zip(random["column"], random["value"])), "random_check": check.to_dict("records"),
           "oracle": dict(zip(oracle["column"], oracle["value"])), "caches": len(caches),
           "described_rows": len(described), "encoder": encoder_name, "ties": "expected"}
write_json(out / "07_image_tasks.json", summary, indent=1)
pd.Series(summary["random"], name="Random row recomputed (%)").fillna(results.NOT_COMPUTED)

# %% [markdown]
# The records, one JSON file each under `figures_dir/results/`, collected with every other notebook's into
# `results.csv` (what `sova results` reads).

# %%
for record in made:
    records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
