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
# # Error analysis of the intra-pair protocol (Appendix E)
#
# The intra-pair protocol asks whether a clip's description tells it apart from the opposite action (opening
# against closing a trunk). The paper read MiniCPM-V 4.5's answers for the 97 clips of the trunk pair and sorted
# every error into four modes, most severe first:
#
# 1. **hallucination**: invented or wrong objects and actions;
# 2. **under-description**: true, but the dynamic event is missing;
# 3. **temporal misunderstanding**: the right action with its direction reversed;
# 4. **action assumption**: the right high-level action with required steps left out.
#
# This notebook computes, for a set of descriptions: how often each query's top-ranked neighbour is the opposite
# action (per pair and per action), the worst queries with their descriptions and neighbours, and a labelling
# sheet (CSV) in which a researcher records the error mode of each clip; a filled sheet is counted.
#
# **Which descriptions?** A description cache under `cache_dir` that covers every intra-pair clip. When there is
# none, the notebook runs on a **synthetic demonstration**: each clip described by its own action name, with a
# fraction deliberately swapped to the opposite action and another replaced by a generic sentence. It shows how
# the analysis works; it is not a model's output, and every table and figure says so.

# %% tags=["parameters"]
cache_dir = None  # folder of descriptions/<name>__<hash>/ caches; None: $SOVA_CACHE, else the repository's cache/
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
cache_name = ""  # cache folder to analyse; "": the first SOVABench cache covering the intra-pair protocol
pair = "trunk"  # opposite pair of the labelling sheet (the paper analysed the trunk pair)
worst_k = 10  # how many of the worst queries (lowest AP, all pairs) to list
neighbours = 3  # ranked neighbours shown for each worst query
labels_csv = ""  # a filled labelling sheet to count ("": none yet)
encoder_name = "all-MiniLM-L6-v2"  # sentence encoder
ties = "expected"  # AP tie rule: "expected" (mean over orderings of tied scores, the default), "optimistic", "pessimistic"
swap_fraction = 0.2  # synthetic demonstration only: share of clips given the opposite action's name
generic_fraction = 0.1  # synthetic demonstration only: share of clips given a generic sentence
seed = 0  # synthetic demonstration only: seed of the random choice of clips

# %% [markdown]
# Imports and the output folder.

# %%
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from sova_lib import SentenceEncoder, embed_descriptions, evaluate, records
from sova_lib.report import plots, tables
from sova_lib.storage import cache_root, write_json

from paper import error_analysis as ea
from paper import results

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # texts are shown whole

# %% [markdown]
# ## The descriptions analysed
#
# The line below says what they are: a cache (by the model and prompt that made it) or the synthetic demonstration.

# %%
analysed = ea.analysis_texts(cache_dir, cache_name, swap_fraction=swap_fraction, generic_fraction=generic_fraction,
                             rng=np.random.default_rng(seed))
texts, source, constructed = analysed.texts, analysed.source, analysed.constructed
synthetic = constructed is not None
print(source)

# %% [markdown]
# Embed the sentences and score the intra-pair protocol; the per-query AP drives the rest. The score is one record
# (at the end also written under `figures_dir/results/`, for `sova results`).

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
items = embed_descriptions(texts, encoder)
result = evaluate("intra-pair", items, ties=ties)
record = ea.score_record(result, analysed, encoder=encoder.name)
print(f"intra-pair Pair-mAP = {record['value']:.1f} ({source})")
pd.Series(record["per_class"], name="mAP (%)").round(1)

# %% [markdown]
# ## Confusions between opposite actions
#
# For every query of a pair: is its most similar clip the opposite action? (Tied best matches share the vote.)
# A describer blind to temporal direction sits near the random-ranking level (grey tick); one that never confuses
# opposite actions sits at 0.

# %%
confusion = ea.opposite_confusion(items)
tables.write_outputs(confusion.assign(source=source), confusion, out / "04_errors_confusion")
confusion

# %% [markdown]
# One bar per pair (all its queries), a dot per action, a grey tick at the random-ranking level.

# %% tags=["figure"]
shown = confusion.round({"top-1 opposite (%)": 1, "chance (%)": 1})  # drawn as printed, to one decimal
whole, each = shown[shown["action"] == "all"], shown[shown["action"] != "all"]
handles = [Line2D([], [], color="#d62728", lw=6, alpha=0.75, label="pair (all queries)"),
           Line2D([], [], marker="o", ls="", color="k", markersize=4, label="each action"),
           Line2D([], [], color="0.35", lw=2, label="random ranking")]

# %% tags=["figure"]
fig, ax = plots.pyplot().subplots(figsize=(8, 0.55 * len(whole) + 1.8))
ax.barh(np.arange(len(whole)), whole["top-1 opposite (%)"], color="#d62728", alpha=0.75, height=0.6)
for k, (pair_name, share, chance) in enumerate(zip(whole["pair"], whole["top-1 opposite (%)"], whole["chance (%)"])):
    part = each[each["pair"] == pair_name]
    ax.scatter(part["top-1 opposite (%)"], [k] * len(part), color="k", s=14, zorder=3)
    for n, (action, x) in enumerate(zip(part["action"], part["top-1 opposite (%)"])):  # names above, then below
        ax.annotate(action, (x, k), xytext=(0, 7 if n % 2 == 0 else -9),
                    textcoords="offset points", ha="center", fontsize=6.5, color="0.15")
    ax.plot([chance] * 2, [k - 0.35, k + 0.35], color="0.35", lw=2)
    ax.text(101, k, f"{share:.1f}%", va="center", fontsize=9)
ax.set_yticks(np.arange(len(whole)), whole["pair"])
ax.invert_yaxis()
ax.set(xlim=(0, 112), xlabel="queries whose top-ranked neighbour is the opposite action (%)", ylabel="opposite pair",
       title=("SYNTHETIC DEMONSTRATION: " if synthetic else "") + "top-ranked neighbour of the opposite action")
ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.95)
fig.tight_layout()
plots.save_figure(fig, out / "04_errors_confusion")

# %% [markdown]
# ## The worst queries
#
# The queries with the lowest AP across all pairs, each with its description and its nearest neighbours.

# %%
worst = ea.worst_queries(items, texts, result, k=worst_k, neighbours=neighbours)
tables.write_outputs(worst.assign(source=source), worst, out / "04_errors_worst_queries")
worst[["id", "pair", "action", "AP (%)", "description", "n1 action", "n1 description"]]

# %% [markdown]
# ## A labelling sheet for the error modes
#
# Every query of `pair`, worst first, with an empty `error_mode` column to fill with one of these modes (the most
# severe that applies). An existing sheet is never overwritten, so labels survive a re-run.

# %%
pd.DataFrame({"error mode": list(ea.ERROR_MODE_HELP), "meaning": list(ea.ERROR_MODE_HELP.values())})

# %%
pair_queries = ea.worst_queries(items, texts, result, pair=pair, k=None, neighbours=1)
sheet = ea.write_labelling_sheet(pair_queries, out / f"04_errors_labels_{pair.replace('/', '-')}.csv", source=source)
print(f"{len(pair_queries)} clips of the {pair} pair to label: {sheet}")

# %% [markdown]
# ## Counting the error modes
#
# A filled sheet (`labels_csv`) is counted beside the paper's counts for MiniCPM-V 4.5 on the trunk pair. In the
# synthetic demonstration, the "labels" are the errors put in on purpose, known by construction.

# %%
if labels_csv:
    labelled = ea.read_labels(labels_csv)
elif synthetic:  # the errors put in on purpose
    labelled = pair_queries.assign(error_mode=pair_queries["id"].map(constructed.set_index("id")["constructed_as"]))
else:
    labelled = ea.read_labels(sheet)
modes = labelled["error_mode"].fillna("").astype(str).str.strip()  # empty: not labelled yet
counts = pd.DataFrame({"error mode": [*ea.ERROR_MODES, "not labelled"],
                       "clips": [int((modes == m).sum()) for m in [*ea.ERROR_MODES, ""]]})
paper_counts = dict(results.paper_results("Appendix E")[["column", "value"]].values)
tables.write_outputs(counts.assign(paper=counts["error mode"].map(paper_counts)), counts, out / "04_errors_modes")
counts.assign(**{"paper (MiniCPM-V 4.5, trunk)": counts["error mode"].map(paper_counts)})

# %% tags=["figure"]
demo = synthetic and not labels_csv
fig, ax = plots.pyplot().subplots(figsize=(8, 4))
x = np.arange(len(counts))
bars = ax.bar(x - 0.2, counts["clips"], width=0.4, label="synthetic, by construction" if demo else "labelled here")
ax.bar_label(bars, fontsize=8)
bars = ax.bar(x + 0.2, [float(paper_counts.get(m, np.nan)) for m in counts["error mode"]], width=0.4, color="0.6",
              label="paper (Appendix E: MiniCPM-V 4.5, task-aware)")
ax.bar_label(bars, fmt="%.0f", fontsize=8)  # a mode the paper did not count: no bar, no label
ax.set_xticks(x, [m.replace(" ", "\n") for m in counts["error mode"]], fontsize=9)
ax.set(xlabel="error mode", ylabel="clips",
       title=("SYNTHETIC DEMONSTRATION: " if demo else "") + f"error modes, {pair} pair, n = {len(labelled)}")
ax.legend()
fig.tight_layout()
plots.save_figure(fig, out / "04_errors_modes")

# %% [markdown]
# ## Headline numbers

# %%
summary = {
    "source": source, "synthetic": synthetic, "pair": pair, "pair_map": result.value,
    "per_pair": result.per_pair,
    "top1_opposite": dict(zip(confusion.query("action == 'all'")["pair"], confusion.query("action == 'all'")["top-1 opposite (%)"])),
    "worst_ids": worst["id"].tolist(), "sheet": sheet.name, "sheet_rows": len(pair_queries),
    "error_modes": dict(zip(counts["error mode"], counts["clips"])),
}
write_json(out / "04_errors.json", summary, indent=1)
summary["pair_map"], summary["synthetic"]

# %% [markdown]
# The record, one JSON file under `figures_dir/results/`, collected with every other notebook's into `results.csv`
# (what `sova results` reads).

# %%
records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
