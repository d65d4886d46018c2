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

from sova_lib import SentenceEncoder, embed_descriptions, evaluate, get_protocol, records, set_similarity
from sova_lib.report import plots, tables
from sova_lib.storage import cache_root, write_json

from paper import results

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # texts are shown whole

# %% [markdown]
# ## The descriptions analysed
#
# A description cache that holds every intra-pair clip: the one named `cache_name`, else the first SOVABench cache
# found. A named cache that is missing or lacks a clip is refused.

# %%
from sova_lib.report.cache_scan import find_description_caches

caches = find_description_caches(cache_dir)
if cache_name:
    named = [c for c in caches if c.name == cache_name]
    if not named:
        raise ValueError(f"no description cache named {cache_name!r} under {cache_dir}/descriptions; "
                         f"found: {[c.name for c in caches]}")
    if not named[0].covers("intra-pair"):
        present, needed = named[0].coverage["intra-pair"]
        raise ValueError(f"cache {cache_name!r} holds {present} of the {needed} intra-pair clips; "
                         "the error analysis needs all of them")
    cache = named[0]
else:
    cache = next((c for c in caches if c.is_sovabench and c.covers("intra-pair")), None)

# %% [markdown]
# Without such a cache, the synthetic demonstration (`paper.error_analysis.synthetic_texts`): every clip described by
# its action name, drawn with the seed, a share of them given the opposite action's name or a generic sentence; the
# table `constructed` says what was done to each clip. The line printed says what the descriptions are.

# %%
from paper.error_analysis import synthetic_texts

if cache is not None:
    texts, source, constructed = cache.texts, cache.label, None
else:
    texts, constructed = synthetic_texts("intra-pair", swap_fraction=swap_fraction, generic_fraction=generic_fraction,
                                         rng=np.random.default_rng(seed))
    source = (f"SYNTHETIC DEMONSTRATION, not a model: each clip described by its action name, "
              f"{swap_fraction:.0%} swapped to the opposite action, {generic_fraction:.0%} replaced by a generic sentence")
synthetic = constructed is not None
print(source)

# %% [markdown]
# Embed the sentences and score the intra-pair protocol; the per-query AP drives the rest. The score is one record,
# named by the source and, for a real cache, by what wrote it (folder, key, model, prompt, sampling, software); at the
# end it is also written under `figures_dir/results/`, for `sova results`.

# %%
from sova_lib.describe.provenance import cache_provenance

encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
items = embed_descriptions(texts, encoder)
result = evaluate("intra-pair", items, ties=ties)
written_by = {} if cache is None else cache_provenance(cache.manifest, cache.path)
record = result.to_record(kind="description cache", source=source, benchmark="SOVABench", encoder=encoder.name,
                          text_split="sentences", bootstrap=0, seed=None, note="", **written_by)
print(f"intra-pair Pair-mAP = {record['value']:.1f} ({source})")
pd.Series(record["per_class"], name="mAP (%)").round(1)

# %% [markdown]
# For each pair, the similarity of each of its queries to every clip of its gallery (the pair's clips), as the score
# ranks them (`set_similarity`, the aggregate of the sentence cosines); a query's own entry is set to minus infinity.
# `ids` are the benchmark ids of the protocol's clip positions.

# %%
protocol = get_protocol("intra-pair")
ids = protocol.ids()
row_of = {i: k for k, i in enumerate(np.asarray(items.ids).tolist())}
position = np.array([row_of[i] for i in ids.tolist()])  # row of each clip in items (every clip is described)
similarities = {}
for task in protocol.tasks():
    sims = set_similarity(items.select(position[task.queries]), items.select(position[task.gallery]),
                          aggregate=result.aggregate).astype(np.float64)
    sims[~task.valid()] = -np.inf
    similarities[task.name] = task, sims

# %% [markdown]
# ## Confusions between opposite actions
#
# For every query of a pair: is its most similar clip the opposite action? When several clips tie for the highest
# score, each is the top neighbour with equal chance, so the query counts the share of the opposite action among
# them. `chance` is that share over the whole gallery: what a random ranking's top neighbour gives on average.

# %%
tolerance = 1e-6  # scores this close to a row's best tie with it: identical texts' float32 cosines differ in the last bit
rows = []
for name, (task, sims) in similarities.items():
    actions, gallery = task.labels[task.queries], task.labels[task.gallery]
    opposite = actions[:, None] != gallery[None, :]
    best = sims >= sims.max(axis=1, keepdims=True) - tolerance  # the clips tied at the top of each query's ranking
    share = 100 * (best & opposite).sum(axis=1) / best.sum(axis=1)
    chance = 100 * (opposite & task.valid()).sum(axis=1) / task.valid().sum(axis=1)
    for action in [*dict.fromkeys(actions.tolist()), "all"]:
        keep = actions == action if action != "all" else np.ones_like(share, bool)
        rows.append({"pair": name, "action": action, "queries": int(keep.sum()),
                     "top-1 opposite (%)": round(float(share[keep].mean()), 2),
                     "top-1 same (%)": round(float(100 - share[keep].mean()), 2),
                     "chance (%)": round(float(chance[keep].mean()), 2)})
confusion = pd.DataFrame(rows)

# %% [markdown]
# A describer blind to temporal direction sits near the random-ranking level; one that never confuses opposite
# actions sits at 0.

# %%
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
# Every query, by AP (lowest first, then by id), with its description and its `neighbours` first-ranked clips (ties
# in the ranking broken by gallery order): id, action, similarity and description of each.

# %%
rows = []
for name, (task, sims) in similarities.items():
    order = np.argsort(-sims, axis=1, kind="stable")
    for qi, q in enumerate(task.queries):
        qid = int(ids[q])
        row = {"id": qid, "pair": name, "action": task.labels[q], "AP (%)": round(100 * result.per_query[qid], 2),
               "description": texts[qid]}
        for j in range(neighbours):
            g = task.gallery[order[qi, j]]
            gid = int(ids[g])
            row.update({f"n{j + 1} id": gid, f"n{j + 1} action": task.labels[g],
                        f"n{j + 1} similarity": round(float(sims[qi, order[qi, j]]), 3),
                        f"n{j + 1} description": texts[gid]})
        rows.append(row)
queries = pd.DataFrame(rows).sort_values(["AP (%)", "id"], kind="stable").reset_index(drop=True)

# %% [markdown]
# The `worst_k` queries with the lowest AP across all pairs.

# %%
worst = queries.head(worst_k)
tables.write_outputs(worst.assign(source=source), worst, out / "04_errors_worst_queries")
worst[["id", "pair", "action", "AP (%)", "description", "n1 action", "n1 description"]]

# %% [markdown]
# ## A labelling sheet for the error modes
#
# Every query of `pair`, worst first, with an empty `error_mode` column to fill with one of these modes (the most
# severe that applies) and a `note` column. An existing sheet is never overwritten, so labels survive a re-run.

# %%
error_modes = {  # the paper's four modes, most severe first, then correct (Appendix E)
    "hallucination": "semantically wrong description or invented entities, objects or actions",
    "under-description": "factually right but omits the dynamic event (e.g. no mention of the trunk)",
    "temporal misunderstanding": "right action type, reversed direction (opening described as closing)",
    "action assumption": "right high-level action, required intermediate steps omitted",
    "correct": "the description states the clip's action",
}
pd.DataFrame({"error mode": list(error_modes), "meaning": list(error_modes.values())})

# %%
import csv

from sova_lib.storage import write_text

pair_queries = queries[queries["pair"] == pair]
if pair_queries.empty:
    raise ValueError(f"unknown pair {pair!r}; choose one of {list(similarities)}")
sheet = out / f"04_errors_labels_{pair.replace('/', '-')}.csv"
if not sheet.exists():
    blank = pair_queries.assign(source=source, error_mode="", note="")
    columns = ["source", "id", "pair", "action", "AP (%)", "description", "n1 action", "n1 description",
               "error_mode", "note"]
    write_text(sheet, blank[columns].to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC))
print(f"{len(pair_queries)} clips of the {pair} pair to label: {sheet}")

# %% [markdown]
# ## Counting the error modes
#
# A filled sheet (`labels_csv`, else the sheet above for a real cache) is read, refusing a mode that is not one of the
# five (an empty cell: not labelled yet). In the synthetic demonstration, the "labels" are the errors put in on
# purpose, known by construction.

# %%
if labels_csv or not synthetic:
    filled = Path(labels_csv or sheet)
    labelled = pd.read_csv(filled, keep_default_na=False)
    for column in ("id", "error_mode"):
        if column not in labelled:
            raise ValueError(f"{filled}: no {column!r} column; start from the sheet this notebook writes")
    for line, (clip, mode) in enumerate(zip(labelled["id"], labelled["error_mode"]), start=2):
        if str(mode).strip() not in ("", *error_modes):
            raise ValueError(f"{filled}, line {line} (clip {clip}): unknown error mode {mode!r}; "
                             f"use one of {', '.join(error_modes)} or leave it empty")
else:  # the errors put in on purpose
    labelled = pair_queries.assign(error_mode=pair_queries["id"].map(constructed.set_index("id")["constructed_as"]))

# %% [markdown]
# The count of each mode, beside the paper's counts for MiniCPM-V 4.5 on the trunk pair.

# %%
modes = labelled["error_mode"].fillna("").astype(str).str.strip()  # empty: not labelled yet
counts = pd.DataFrame({"error mode": [*error_modes, "not labelled"],
                       "clips": [int((modes == m).sum()) for m in [*error_modes, ""]]})
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
