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
# # Ablations of the MLLM-to-Embedding framework: Tables 5, 6 and 7
#
# This notebook regenerates the paper's ablations on SOVABench, each with the paper's numbers beside:
#
# * **Table 5**: sentence splitting with the maximum cosine against one embedding of the whole answer. The paper
#   measured it on image benchmarks (InternVL3.5 2B); here it is computed on SOVABench for every description
#   cache that exists;
# * **set aggregation**: maximum (the paper's Eq. 3), mean or median cosine over all sentence pairs;
# * **Table 6**: the sentence encoder. Only all-MiniLM-L6-v2 loads offline here; the others need the model hub
#   and are listed with the reason they were not computed;
# * **Table 7**: the frame sampling rate, from caches whose manifests record different `fps`.
#
# Everything is computed from the description caches under `cache_dir`. When there is none, every table says so
# and the notebook still runs.

# %% tags=["parameters"]
cache_dir = None  # folder of descriptions/<name>__<hash>/ caches; None: $SOVA_CACHE, else the repository's cache/
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
encoder_name = "all-MiniLM-L6-v2"  # sentence encoder of Tables 5, 7 and the aggregation table
encoders = [  # Table 6: sentence encoders tried in order; one that does not load is listed with the reason
    "all-MiniLM-L6-v2", "Alibaba-NLP/gte-large-en-v1.5", "google/embeddinggemma-300m",
    "intfloat/multilingual-e5-large-instruct", "Qwen/Qwen3-Embedding-0.6B", "sentence-transformers/clip-ViT-L-14",
]
protocols = ["inter-pair", "intra-pair"]  # protocols of Tables 5, 7 and the aggregation table
bootstrap = 200  # resamples of the queries for 95% confidence intervals (0: no intervals)
seed = 0  # seed of the bootstrap
ties = "expected"  # AP tie rule: "expected" (mean over orderings of tied scores, the default), "optimistic", "pessimistic"

# %% [markdown]
# Imports, the output folder, and the description caches found.

# %%
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib import SentenceEncoder, records
from sova_lib.report import cache_scan, plots, tables
from sova_lib.storage import cache_root, write_json

from paper import ablations

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # texts are shown whole
caches = cache_scan.find_description_caches(cache_dir)
scored = cache_scan.sovabench_caches(caches)
cache_scan.caches_frame(caches) if caches else print(ablations.no_cache_note(cache_dir))

# %% [markdown]
# ## Scoring every setting
#
# Each SOVABench cache is scored under every setting of the ablations: sentences or the whole text, the three
# set aggregations, and (inter-pair) every sentence encoder that loads here; one that cannot be loaded (no model
# hub) is listed with the reason. Each evaluation is one record, a row of the frames below (at the end they are also
# written under `figures_dir/results/`, for `sova results`).

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
available, loaded = ablations.encoder_rows(encoders, cache_dir=cache_dir)
settings = [(True, "max"), (False, "max"), (True, "mean"), (True, "median")]
made = ablations.ablation_rows(caches, encoder, protocols, settings, ties=ties, bootstrap=bootstrap, seed=seed)
by_encoder = ablations.ablation_rows(caches, list(loaded.values()), ["inter-pair"], [(True, "max")],
                                     ties=ties, bootstrap=bootstrap, seed=seed)
setting_rows = pd.DataFrame(made, columns=records.RECORD_FIELDS)
encoder_scores = pd.DataFrame(by_encoder, columns=records.RECORD_FIELDS)
available

# %% [markdown]
# ## Table 5: splitting into sentences (maximum cosine) against the whole text
#
# First the paper's table as printed (accuracy in % on image benchmarks), then the same comparison computed on
# SOVABench here.

# %%
table5_paper = ablations.paper_wide("Table 5")
table5_paper

# %%
split_rows = setting_rows[setting_rows["aggregate"] == "max"]
table5 = ablations.settings_table(split_rows, "text_split", cache_dir)
tables.write_outputs(table5_paper, table5_paper, out / "03_ablations_table5_paper")
tables.write_outputs(split_rows if len(split_rows) else table5, table5, out / "03_ablations_table5_sovabench")
table5

# %% [markdown]
# ## Set aggregation: maximum, mean and median
#
# The similarity of two clips is an aggregate of the cosines between their sentences; the paper uses the maximum.

# %%
agg_rows = setting_rows[setting_rows["text_split"] == "sentences"]
aggregation = ablations.settings_table(agg_rows, "aggregate", cache_dir)
tables.write_outputs(agg_rows if len(agg_rows) else aggregation, aggregation, out / "03_ablations_aggregation")
aggregation

# %% [markdown]
# When some cache was scored, the aggregation results of the first one as a bar chart: one cluster per protocol, one
# bar per aggregate, with its 95% interval. Values and intervals are drawn as printed, to one decimal.

# %% tags=["figure"]
if len(agg_rows) and agg_rows["value"].notna().any():
    first = agg_rows[agg_rows["cache"] == agg_rows["cache"].iloc[0]].dropna(subset=["value"])
    shown = first.astype({"ci_low": float, "ci_high": float}).round({"value": 1, "ci_low": 1, "ci_high": 1})
    groups, kinds = list(dict.fromkeys(shown["protocol"])), list(dict.fromkeys(shown["aggregate"]))
    width = 0.8 / len(kinds)
    fig, ax = plots.pyplot().subplots(figsize=(max(5.0, 0.8 * len(groups) * len(kinds) + 2), 4))
    for k, kind in enumerate(kinds):
        part = shown[shown["aggregate"] == kind].set_index("protocol").reindex(groups)
        err = [part["value"] - part["ci_low"], part["ci_high"] - part["value"]] if part["ci_low"].notna().any() else None
        bars = ax.bar(np.arange(len(groups)) + (k - (len(kinds) - 1) / 2) * width, part["value"], width=width * 0.95,
                      yerr=err, capsize=3, label=kind)
        ax.bar_label(bars, fmt="%.1f", fontsize=8, padding=2 if err is None else 6)
    ax.set_xticks(range(len(groups)), groups)
    ax.set(xlabel="protocol", ylabel="mAP / Pair-mAP (%)", ylim=(0, shown[["value", "ci_high"]].max().max() * 1.2))
    ax.legend(fontsize=9)
    ax.set_title(f"Set aggregation: {first['source'].iloc[0][:60]}")
    fig.tight_layout()
    plots.save_figure(fig, out / "03_ablations_aggregation")

# %% [markdown]
# ## Table 6: the sentence encoder
#
# Each encoder of the paper was tried above; the inter-pair mAP of every SOVABench cache with every encoder that
# loads.

# %%
table6 = ablations.encoder_table(available, encoder_scores)
tables.write_outputs(table6, table6, out / "03_ablations_table6")
table6

# %% [markdown]
# ## Table 7: frame sampling rate
#
# The paper's rows (MiniCPM-V 4.5, task-aware prompt, 1 to 7 frames per second), then every SOVABench cache with
# the sampling rate its manifest records. Caches of the same model and prompt at several rates form the ablation.

# %%
fps_rows = split_rows[split_rows["text_split"] == "sentences"] if len(split_rows) else split_rows
table7 = ablations.fps_compare(fps_rows, cache_dir)
tables.write_outputs(table7, table7, out / "03_ablations_table7")
table7

# %% [markdown]
# ## Headline numbers

# %%
summary = {
    "encoder": encoder_name, "protocols": protocols, "ties": ties, "sovabench_caches": len(scored),
    "encoders_available": [e for e in encoders if e in loaded],
    "encoders_not_available": [e for e in encoders if e not in loaded],
    "table5": split_rows[["cache", "protocol", "text_split", "value"]].to_dict("records") if len(split_rows) else [],
    "aggregation": agg_rows[["cache", "protocol", "aggregate", "value"]].to_dict("records") if len(agg_rows) else [],
    "table6_rows": len(table6), "table7_rows": len(table7),
}
write_json(out / "03_ablations.json", summary, indent=1)
summary["sovabench_caches"], summary["encoders_available"]

# %% [markdown]
# The records, one JSON file each under `figures_dir/results/`, collected with every other notebook's into
# `results.csv` (what `sova results` reads).

# %%
for record in [*made, *by_encoder]:
    records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
