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
# Imports and the output folder.

# %%
import json
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib import SentenceEncoder, records
from sova_lib.item_vectors import embed_descriptions
from sova_lib.report import cache_scan, plots, tables
from sova_lib.storage import cache_root, write_json

from paper.results import NOT_COMPUTED, evaluate_cache, paper_results

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
pd.set_option("display.max_colwidth", None)  # texts are shown whole

# %% [markdown]
# The description caches found. When there is no SOVABench cache, every computed table says so in one sentence
# (`note`).

# %%
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
caches = cache_scan.find_description_caches(cache_dir)
scored = cache_scan.sovabench_caches(caches)
note = (f"no SOVABench description cache in {Path(cache_dir).resolve().name or cache_dir}/descriptions: nothing "
        "computed here (describe the benchmark with `sova sovabench describe ...`, then re-run)")
cache_scan.caches_frame(caches) if caches else print(note)

# %% [markdown]
# ## The sentence encoders
#
# The paper names Table 6's encoders and nothing of their settings. Here each is loaded with the `SentenceEncoder`
# keywords of `paper/data/table6_encoders/` (why each, in its README and docs/sovabench.md): an encoder with query and
# document prompts gets its one prompt for symmetric similarity, since every sentence stands on both sides of some
# comparison.

# %%
table6_encoders = pd.DataFrame(json.loads(Path("paper/data/table6_encoders/table6_encoders.json").read_text()))
settings = dict(zip(table6_encoders["id"], table6_encoders["options"]))  # id -> SentenceEncoder keywords
table6_encoders

# %% [markdown]
# Each encoder of `encoders` is tried with its settings (none for an id not listed); one that does not load here (no
# model hub) is listed with the reason.

# %%
available, loaded = [], {}
for name in encoders:
    try:
        loaded[name] = SentenceEncoder(name, cache_dir=cache_dir, show_progress=False, **settings.get(name, {}))
        available.append({"encoder": name, "available": True, "reason": "loads offline here"})
    except RuntimeError as err:
        reason = ("weights not on this machine and the model hub not reachable"
                  if "could not be downloaded" in str(err) else str(err).split(". ")[0])
        available.append({"encoder": name, "available": False, "reason": reason})
available = pd.DataFrame(available)
available

# %% [markdown]
# ## Scoring every setting
#
# Each SOVABench cache is scored under every setting of the ablations: sentences or the whole text, the three
# set aggregations (with `encoder_name`), and, inter-pair, every sentence encoder that loads here. A cache is embedded
# once per splitting mode and encoder (`embed_descriptions`), then scored once per aggregate (`evaluate_cache`, as
# the results notebook scores it). Each evaluation is one record, a row of the frames below (at the end they are also
# written under `figures_dir/results/`, for `sova results`).

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one bar over the sentences to encode, if any
aggregates = {True: ["max", "mean", "median"], False: ["max"]}  # sentences (or the whole text) -> aggregates scored
run = {"ties": ties, "bootstrap": bootstrap, "seed": seed}
made, by_encoder = [], []
for cache in scored:
    for sentences, names in aggregates.items():
        items = embed_descriptions(cache.texts, encoder, sentences=sentences)
        for aggregate in names:
            made += evaluate_cache(cache, encoder, protocols, aggregate=aggregate, sentences=sentences, items=items,
                                   **run)
    for other in loaded.values():
        by_encoder += evaluate_cache(cache, other, ["inter-pair"], **run)
setting_rows = pd.DataFrame(made, columns=records.RECORD_FIELDS)
encoder_scores = pd.DataFrame(by_encoder, columns=records.RECORD_FIELDS)
setting_rows[["source", "protocol", "text_split", "aggregate", "value"]]

# %% [markdown]
# For reading, each ablation side by side: one row per cache and protocol, one column per setting (sentences or the
# whole text for Table 5, the aggregate for the set aggregation), each cell the score with its interval
# (`records.score_cell`), and the note of a protocol left unscored.

# %%
split_rows = setting_rows[setting_rows["aggregate"] == "max"]
agg_rows = setting_rows[setting_rows["text_split"] == "sentences"]
side_by_side = {}
for setting, rows in (("text_split", split_rows), ("aggregate", agg_rows)):
    shown = [] if len(rows) else [{"source": note}]
    for (source, cache, protocol), part in rows.groupby(["source", "cache", "protocol"], sort=False):
        row = {"source": source, "cache": cache, "protocol": protocol}
        for r in part.to_dict("records"):
            row[str(r[setting])] = records.score_cell(r)
            if isinstance(r["note"], str) and r["note"]:
                row["note"] = r["note"]
        shown.append(row)
    side_by_side[setting] = pd.DataFrame(shown)
table5, aggregation = side_by_side["text_split"], side_by_side["aggregate"]

# %% [markdown]
# The paper's Tables 5, 6 and 7 as printed: one row per configuration, one column per column of the table.

# %%
paper_tables = {}
for name in ("Table 5", "Table 6", "Table 7"):
    paper = paper_results(name)
    keys = [c for c in ("group", "model", "prompt", "encoder", "fps", "text_split") if (paper[c] != "").any()]
    wide = paper.pivot_table(index=keys, columns="column", values="value", aggfunc="first", sort=False)
    paper_tables[name] = wide[list(dict.fromkeys(paper["column"]))].reset_index().rename_axis(columns=None)

# %% [markdown]
# ## Table 5: splitting into sentences (maximum cosine) against the whole text
#
# First the paper's table as printed (accuracy in % on image benchmarks), then the same comparison computed on
# SOVABench here.

# %%
table5_paper = paper_tables["Table 5"]
table5_paper

# %%
tables.write_outputs(table5_paper, table5_paper, out / "03_ablations_table5_paper")
tables.write_outputs(split_rows if len(split_rows) else table5, table5, out / "03_ablations_table5_sovabench")
table5

# %% [markdown]
# ## Set aggregation: maximum, mean and median
#
# The similarity of two clips is an aggregate of the cosines between their sentences; the paper uses the maximum.

# %%
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
# Each encoder of `encoders` was tried above. What was computed with each: the inter-pair mAP of every SOVABench
# cache, or why nothing was.

# %%
here = {}  # encoder id -> its "here" cell
for r in available.to_dict("records"):
    scores = encoder_scores[(encoder_scores["encoder"] == r["encoder"]) & (encoder_scores["protocol"] == "inter-pair")]
    if not r["available"]:
        here[r["encoder"]] = f"{NOT_COMPUTED}: {r['reason']}"
    elif not len(encoder_scores):
        here[r["encoder"]] = f"{NOT_COMPUTED}: loads here, but there is no SOVABench description cache"
    else:
        here[r["encoder"]] = "; ".join(f"{s['source']} [{s['cache']}]: {records.score_cell(s)}"
                                       for s in scores.to_dict("records")) or NOT_COMPUTED
here

# %% [markdown]
# Table 6: each of the paper's encoders with the id loaded here, its size and the paper's mAP, then any other encoder
# tried; beside each, what was computed with it ("not tried" for an encoder not in `encoders`).

# %%
paper6 = paper_tables["Table 6"].set_index("encoder")
ids = dict(zip(table6_encoders["encoder"], table6_encoders["id"]))  # the paper's name -> the id loaded here
table6 = []
for name in [*paper6.index, *[e for e in here if e not in ids.values()]]:
    row = {"encoder": name, "id": ids.get(name, name)}
    if name in paper6.index:
        row.update({"params (M)": int(paper6.loc[name, "params"]),
                    "embedding size": int(paper6.loc[name, "embedding size"]),
                    "inter-pair mAP (paper, MiniCPM-V 4.5 task-aware)": float(paper6.loc[name, "inter-pair"])})
    row["here"] = here.get(row["id"], f"{NOT_COMPUTED} (not tried)")
    table6.append(row)
table6 = pd.DataFrame(table6)
tables.write_outputs(table6, table6, out / "03_ablations_table6")
table6

# %% [markdown]
# ## Table 7: frame sampling rate
#
# The paper's rows (MiniCPM-V 4.5, task-aware prompt, 1 to 7 frames per second), then every SOVABench cache with
# the sampling rate its manifest records (sentences, maximum cosine), ordered by model, prompt and rate: caches of
# the same model and prompt at several rates form the ablation.

# %%
table7 = [{"source": "paper: MiniCPM-V 4.5 (task-aware), GTE-Large-8152", "fps": float(r["fps"]),
           "inter-pair mAP": f"{r['inter-pair']:.1f}", "intra-pair Pair-mAP": f"{r['intra-pair']:.1f}"}
          for r in paper_tables["Table 7"].to_dict("records")]
if not len(split_rows):
    table7.append({"source": note, "fps": "", "inter-pair mAP": NOT_COMPUTED, "intra-pair Pair-mAP": NOT_COMPUTED})
fps_rows = split_rows[split_rows["text_split"] == "sentences"].sort_values(["model", "prompt", "fps"],
                                                                           na_position="last")
for (source, cache, fps), part in fps_rows.groupby(["source", "cache", "fps"], sort=False, dropna=False):
    cells = {r["protocol"]: records.score_cell(r) for r in part.to_dict("records")}
    table7.append({"source": f"here: {source} [{cache}], encoder {part['encoder'].iloc[0]}",
                   "fps": "not recorded" if pd.isna(fps) else fps,
                   "inter-pair mAP": cells.get("inter-pair", NOT_COMPUTED),
                   "intra-pair Pair-mAP": cells.get("intra-pair", NOT_COMPUTED)})
table7 = pd.DataFrame(table7)
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
