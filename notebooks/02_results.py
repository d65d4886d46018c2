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
# # SOVABench results: Table 4, Table C.1 and Figure 2(b)
#
# This notebook regenerates the result tables of the SOVABench paper:
#
# * **Table 4**: inter-pair mAP and intra-pair Pair-mAP of every model;
# * **Table C.1**: inter-pair mAP constrained to the 1,423 queries (no distractors), and the paper's efficiency column;
# * **Figure 2(b)**: inter-pair mAP against intra-pair Pair-mAP.
#
# Every row the paper prints is shown beside what this repository computes. Computed rows come from two places:
# the built-in baselines (computed from the benchmark metadata alone) and the description caches found under
# `cache_dir` (folders written by `sova sovabench describe`). A paper row that was not computed here says
# **not computed here**; it is never filled in. A computed row is named for what made it.

# %% tags=["parameters"]
cache_dir = None  # folder of descriptions/<name>__<hash>/ caches; None: $SOVA_CACHE, else the repository's cache/
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
encoder_name = "all-MiniLM-L6-v2"  # sentence encoder; the paper used GTE-Large, which needs the model hub
bootstrap = 1000  # resamples of the queries for 95% confidence intervals (0: no intervals)
seed = 0  # seed of the bootstrap resampling
ties = "expected"  # AP tie rule: "expected" (mean over orderings of tied scores, the default), "optimistic", "pessimistic"
include_oracle = True  # add the oracle upper bound (each clip described by its class name)

# %% [markdown]
# The library does the work; the notebook only calls it and shows the results.

# %%
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from sova_lib import SentenceEncoder, embed_descriptions, evaluate, get_protocol, records
from sova_lib.describe.contrastive import EmbeddingCache, read_cache
from sova_lib.evaluation import BASELINES
from sova_lib.report import baselines, cache_scan, plots, tables
from sova_lib.report.compare import compare
from sova_lib.similarity import ItemVectors, l2_normalize
from sova_lib.storage import cache_root, write_json

from paper import results

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # texts are shown whole

# %% [markdown]
# ## Description caches
#
# Each folder under `cache_dir/descriptions` is one run of a describer. Only caches whose ids are SOVABench clips
# are scored, on every protocol of which they hold clips: a clip a cache lacks (a partial run, a failed item) counts
# as a failure (a missing query scores AP 0, a missing gallery clip ranks last), and every row says how many were
# missing, what the score is without them, and what a random ranking of the same clips scores under each rule (the
# Random row is for all the protocol's clips). The others are listed with the reason.

# %%
caches = cache_scan.find_description_caches(cache_dir)
inventory = cache_scan.caches_frame(caches)
tables.write_outputs(inventory, inventory, out / "02_results_caches")
inventory if len(inventory) else print(f"no description cache under {Path(cache_dir) / 'descriptions'}")

# %% [markdown]
# ## Computed rows
#
# The baselines are the paper's Random row (`prevalence`: the mean class prevalence, query counted), the exact
# expected AP of a random ranking (query excluded), and the oracle (an upper bound that runs the whole pipeline:
# splitting, encoder, maximum cosine, AP). Each SOVABench cache adds one row per protocol. Every evaluation is one
# record (at the end each is also written as one small JSON under `figures_dir/results/`, for `sova results`).

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
protocols = ["inter-pair", "intra-pair", "inter-pair-constrained"]
made = baselines.baseline_rows(protocols, encoder=encoder if include_oracle else None, bootstrap=bootstrap,
                               seed=seed, ties=ties)
made = [r for name in BASELINES for r in made if r["baseline"] == name]  # baseline by baseline, each protocol
for cache in cache_scan.sovabench_caches(caches):  # then cache by cache, each protocol
    made += results.evaluate_cache(cache, encoder, protocols, ties=ties, bootstrap=bootstrap, seed=seed)

# %% [markdown]
# Each frame-embedding cache (`sova sovabench embed`: CLIP, SigLIP2 ... frame vectors, mean-pooled or kept per frame)
# adds a record per protocol, its missing clips counted as failures; a cache of CLIP ViT-L/14 or SigLIP2-Giant sits beside
# the paper's contrastive row. Without such a cache those rows read "not computed here".
#
# A cache is a folder under `cache_dir/frame-embeddings/` holding its manifest and, for each clip, the vectors of its
# frames (one vector when mean-pooled).

# %% tags=["embeddings"]
embedding_caches = {}  # folder -> (manifest, clip id -> (vectors, frame indices))
for manifest_file in sorted((Path(cache_dir) / "frame-embeddings").glob("*/manifest.json")):
    folder = manifest_file.parent  # read, not opened for writing
    embedding_caches[folder] = (EmbeddingCache(folder).manifest(), read_cache(folder))
print(f"{len(embedding_caches)} frame-embedding cache(s) under {Path(cache_dir) / 'frame-embeddings'}")

# %% [markdown]
# What each cache's records say was scored: the model id (with the paper's name where it is the checkpoint of a
# paper row), its pooling and frame rate, and the settings of the scoring.

# %% tags=["embeddings"]
embedded = {}  # folder -> the fields of its records
for folder, (manifest, _) in embedding_caches.items():
    model, pool = str(manifest.get("model")), manifest.get("pool")
    paper_name = cache_scan.paper_model(model, results.CONTRASTIVE_IDS)  # the paper row of its checkpoint
    shown = f"{paper_name} [{model}]" if paper_name else model
    embedded[folder] = {
        "kind": "embeddings", "source": f"{shown} (contrastive, {pool} pooling, {manifest.get('fps'):g} fps)",
        "cache": folder.name, "model": model, "config_hash": manifest.get("config_hash"), "fps": manifest.get("fps"),
        "fingerprint": manifest.get("fingerprint"), "frames": manifest.get("frames"),
        "versions": manifest.get("versions"), "benchmark": "sovabench", "aggregate": "max", "ties": ties,
        "bootstrap": bootstrap, "seed": seed, "text_split": f"{pool} pooling"}

# %% [markdown]
# Each cache scored on each protocol: a clip's frame vectors are one item (unit rows), the clips the cache lacks count
# as failures, and a protocol of which it holds no clip gets a record without a value.

# %% tags=["embeddings"]
for folder, (_, vectors) in embedding_caches.items():
    for name in protocols:
        wanted = get_protocol(name).ids().tolist()
        held = [i for i in wanted if i in vectors]
        if not held:
            made.append(records.make_record(protocol=name, n_missing=len(wanted),
                                            note=f"none of the {len(wanted)} clips: not scored", **embedded[folder]))
            continue
        per_clip = [vectors[i][0] for i in held]  # each clip's frame vectors: one item
        items = ItemVectors(np.asarray(held), np.repeat(np.arange(len(held)), [len(v) for v in per_clip]),
                            l2_normalize(np.concatenate(per_clip)))
        made.append(evaluate(name, items, ties=ties, bootstrap=bootstrap, seed=seed).to_record(**embedded[folder]))

# %% [markdown]
# ## Two describers on the same queries
#
# Two separate intervals that overlap do not say that two describers are equal. A paired comparison scores both
# on the same intra-pair queries: the per-query AP difference, a paired bootstrap interval over the queries
# (within each pair, as the single intervals), and the queries where they disagree most. The paper's own example
# is Table 5, the task-aware against the general prompt of one model; the note says which caches are compared.
# From the command line: `sova compare --protocol intra-pair A B`.

# %% [markdown]
# The pairs: the paper's own question first, for each model with a `general` and a `task-aware` cache covering
# intra-pair, task-aware (A) against general (B); without such a pair, the covering caches in folder-name order, each
# against the next.

# %% tags=["comparisons"]
covering = [c for c in cache_scan.sovabench_caches(caches) if c.covers("intra-pair")]
by_model = {}  # model id -> prompt -> cache
for c in covering:
    by_model.setdefault(c.model, {})[c.prompt] = c
pairs = [(m["task-aware"], m["general"]) for m in by_model.values() if {"task-aware", "general"} <= set(m)]
comparison_note = "task-aware against general prompt, per model (the paper's Table 5)"
if not pairs:
    pairs = list(zip(covering, covering[1:]))
    comparison_note = ("no model has both a general and a task-aware cache; each cache against the next, by folder "
                       "name" if pairs else f"{len(covering)} cache(s) cover intra-pair: a paired comparison needs two")
print(comparison_note)

# %% [markdown]
# Each cache of a pair is embedded once, then each pair compared (`sova_lib.report.compare`).

# %% tags=["comparisons"]
needed = {c.name: c for pair in pairs for c in pair}  # in order of first use
pair_vectors = {name: embed_descriptions(c.texts, encoder) for name, c in needed.items()}
comparisons = [compare("intra-pair", pair_vectors[a.name], pair_vectors[b.name], name_a=a.label, name_b=b.label,
                       ties=ties, bootstrap=bootstrap, seed=seed) for a, b in pairs]
pd.DataFrame([c.summary() for c in comparisons]).round(2) if comparisons else None

# %% [markdown]
# The records as one frame, baselines first, then the caches by folder name; every table and figure below is built
# from it.

# %%
computed = pd.DataFrame(made).sort_values("cache", na_position="first", kind="stable", ignore_index=True)
computed[["kind", "source", "protocol", "metric", "value", "ci_low", "ci_high", "n_queries", "ties"]]

# %% [markdown]
# ## Table 4
#
# The paper's numbers (with GTE-Large as sentence encoder) of Tables 4 and C.1, one row per model and prompt, in the
# paper's order.

# %%
keys = ["group", "model", "prompt"]
paper = {name: results.paper_results(name).replace({"prompt": {"": "-"}}) for name in ("Table 4", "Table C.1")}
paper = {name: frame.pivot_table(index=keys, columns="column", values="value")
         .reindex(pd.MultiIndex.from_frame(frame[keys].drop_duplicates()))  # the paper's row order
         .add_suffix(" paper").reset_index().rename_axis(columns=None) for name, frame in paper.items()}
paper["Table 4"].head()

# %% [markdown]
# The computed ones (with `encoder_name`), each named by the row of the paper it stands beside (a description cache
# by its model id and prompt, a frame-embedding cache by its model, the `prevalence` baseline by Random), then put
# beside the paper's rows; a computed row that the paper lacks follows them.

# %%
here4 = results.rows_beside(computed, "Table 4")
table4 = pd.concat([paper["Table 4"].merge(here4, on=keys, how="left"), here4[here4["group"] == results.NOT_IN_PAPER]],
                   ignore_index=True)
shown4 = results.format_table(table4, "Table 4")
tables.write_outputs(results.number_table(table4, "Table 4"), shown4, out / "02_results_table4")
shown4

# %% [markdown]
# ## Table C.1
#
# The inter-pair protocol constrained to the queries. The paper's efficiency column (instances per second on
# the authors' hardware) is shown as reported; it is not a quantity this table computes.

# %%
hereC1 = results.rows_beside(computed, "Table C.1")
tableC1 = pd.concat([paper["Table C.1"].merge(hereC1, on=keys, how="left"),
                     hereC1[hereC1["group"] == results.NOT_IN_PAPER]], ignore_index=True)
shownC1 = results.format_table(tableC1, "Table C.1")
tables.write_outputs(results.number_table(tableC1, "Table C.1"), shownC1, out / "02_results_tableC1")
shownC1

# %% [markdown]
# ## Figure 2(b)
#
# Inter-pair mAP against intra-pair Pair-mAP: circles are the paper's rows (filled: task-aware prompt, hollow:
# general prompt), stars the rows computed here with both protocols. Dashed lines mark the paper's Random row.
# The points come from Table 4, row by row: the paper's point, then the computed one where the row has both
# protocols (the Random row is drawn once, from the paper; the oracle, an upper bound at 100, is left out). A computed
# point is labelled as its paper row, or by its baseline, its model id and prompt, or its source.

# %% tags=["points"]
short = {"general": " (general)", "task-aware": " (task-aware)"}  # a prompt, as the end of a label
points = []
for r in table4.to_dict("records"):
    if pd.notna(r["inter-pair paper"]) and pd.notna(r["intra-pair paper"]):
        points.append({"label": r["model"] + short.get(r["prompt"], ""), "group": r["group"], "prompt": r["prompt"],
                       "inter": r["inter-pair paper"], "intra": r["intra-pair paper"], "source": "paper"})
    inter, intra = r["inter-pair here"], r["intra-pair here"]
    if r["model"] == "Random" or r["baseline"] == "oracle" or pd.isna(inter) or pd.isna(intra):
        continue
    if not r["group"].startswith("Computed"):
        label = r["model"] + short.get(r["prompt"], "")
    elif pd.notna(r["baseline"]):
        label = r["baseline"].replace("-", " ")
    else:
        label = r["source"] if pd.isna(r["source model"]) else r["source model"] + short.get(r["source prompt"], "")
    points.append({"label": label + " [here]", "group": "Computed here", "prompt": r["prompt"],
                   "inter": inter, "intra": intra, "source": "computed here"})
points = pd.DataFrame(points, columns=["label", "group", "prompt", "inter", "intra", "source"])
random_level = tuple(paper["Table 4"].set_index("model").loc["Random", ["inter-pair paper", "intra-pair paper"]])
points

# %% [markdown]
# The axes zoom on the paper's points; a computed point far from them gets a second panel that shows every point.

# %% tags=["figure"]
points = points.astype({"inter": float, "intra": float}).round({"inter": 2, "intra": 2})  # drawn as printed
here = (points["source"] != "paper").to_numpy()  # computed here, not the paper's
xs, ys = points["inter"].to_numpy(float), points["intra"].to_numpy(float)
box_x = plots.padded_limits(xs[~here], 0.08, 0.3, floor=0) if (~here).any() else plots.padded_limits(xs, 0.1, 0.3)
box_x = (0.0, box_x[1]) if 0 < box_x[0] < 0.2 * box_x[1] else box_x  # close to 0: start there
box_y = plots.padded_limits(ys[~here], 0.12, 0.2) if (~here).any() else plots.padded_limits(ys, 0.1, 0.2)
outside = (xs < box_x[0]) | (xs > box_x[1]) | (ys < box_y[0]) | (ys > box_y[1])  # in the second panel only
heading = ("SOVABench: inter-pair mAP against intra-pair Pair-mAP" + (" (paper's range)" if outside.any() else "")
           + "\ncircles: the paper's published values" + ("; stars: computed here" if here.any() else ""))
views = [(box_x, box_y, heading)] + ([(plots.padded_limits(xs, 0.05, 0.1, floor=0), plots.padded_limits(ys, 0.1, 0.25),
                                       "all points (dotted box: left panel)")] if outside.any() else [])
views = [{"xlim": x, "ylim": y, "title": t,
          "xlabel": "inter-pair mAP (%)" + (f"; axis from {x[0]:.1f}, not 0" if x[0] > 0 else ""),
          "ylabel": "intra-pair Pair-mAP (%)" + (f"; axis from {y[0]:.1f}, not 0" if y[0] > 0 else "")} for x, y, t in views]

# %% [markdown]
# The marks: colour by the group of Table 4, filled for the task-aware prompt, hollow for the general one, a star
# for a row computed here.

# %% tags=["figure"]
colors = {"Random": "#7f7f7f", "Contrastive Image-VLMs": "#1f77b4", "Contrastive Video-VLMs": "#17becf",
          "General MLLMs": "#d62728", "Video-MLLMs": "#ff7f0e", "API MLLMs": "#9467bd", "Computed here": "#2ca02c"}
marks = [{"marker": "*", "s": 150, "color": colors["Computed here"], "edgecolors": "k", "linewidths": 0.5, "zorder": 3}
         if r.source != "paper" else
         {"s": 40, "marker": "o", "zorder": 3, "linewidths": 1.4,
          "edgecolors": colors.get(r.group, colors["Computed here"]),
          "facecolors": "white" if r.prompt == "general" else colors.get(r.group, colors["Computed here"])}
         for r in points.itertuples(index=False)]
handles = [Line2D([], [], marker="o", ls="", color=c, label=f"{g} (paper's value)") for g, c in colors.items()
           if g in set(points["group"]) and g != "Computed here"]
handles += [Line2D([], [], marker="o", ls="", markerfacecolor="white", markeredgecolor="0.3",
                   label="general prompt (paper's value)"),
            Line2D([], [], marker="o", ls="", color="0.3", label="task-aware prompt (paper's value)")]
handles += [Line2D([], [], marker="*", ls="", markersize=12, color=colors["Computed here"], markeredgecolor="k",
                   label="computed here")] if here.any() else []

# %% tags=["figure"]
plt = plots.pyplot()
fig, _ = (plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [2, 1]}) if outside.any()
          else plt.subplots(figsize=(9.5, 6.5)))
for ax, view in zip(fig.axes, views):  # the main panel, then the overview if any
    ax.axvline(random_level[0], ls="--", lw=0.8, color="0.6")
    ax.axhline(random_level[1], ls="--", lw=0.8, color="0.6")
    for r, mark in zip(points.itertuples(index=False), marks):
        ax.scatter(r.inter, r.intra, **mark)
    ax.set(**view)
legend = fig.axes[0].legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.95)
if outside.any():
    fig.axes[1].add_patch(plt.Rectangle((box_x[0], box_y[0]), box_x[1] - box_x[0], box_y[1] - box_y[0], fill=False,
                                        ls=":", lw=1, color="0.3"))
fig.tight_layout()
plots.place_labels(fig.axes[0], xs[~outside], ys[~outside], list(points["label"][~outside]), fontsize=7.5,
                   avoid=[legend])
if outside.any():  # the overview labels the points computed here
    plots.place_labels(fig.axes[1], xs[here], ys[here], list(points["label"][here]), fontsize=7.5,
                       obstacles=(xs[~here], ys[~here]))
plots.save_figure(fig, out / "02_results_figure2b")

# %% [markdown]
# ## Headline numbers
#
# A small JSON that the tests read: the computed baselines, each cache's scores, and how many paper rows were
# not computed here.

# %%
summary = {
    "encoder": encoder_name, "ties": ties, "bootstrap": bootstrap,
    "caches": len(caches), "sovabench_caches": len(cache_scan.sovabench_caches(caches)),
    "computed": computed[["source", "protocol", "value", "ci_low", "ci_high"]].to_dict("records"),
    "table4_rows": len(table4), "table4_not_computed": int(table4["source"].isna().sum()),
    "tableC1_rows": len(tableC1), "embedding_caches": len(embedding_caches),
    "comparisons": [c.summary() for c in comparisons], "comparison_note": comparison_note,
}
write_json(out / "02_results.json", summary, indent=1)
summary["table4_not_computed"], summary["sovabench_caches"]

# %% [markdown]
# The records, one JSON file each under `figures_dir/results/` (the paired comparisons' too), collected with every
# other notebook's into `results.csv` (what `sova results` reads).

# %%
for record in [*made, *(c.to_record(encoder=encoder.name, text_split="sentences", benchmark="SOVABench")
                        for c in comparisons)]:
    records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
