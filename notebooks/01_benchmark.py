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
# # The benchmark: Table 2, Figure 3 and Figure A.1
#
# This notebook regenerates the statistics of SOVABench itself:
#
# * **Table 2** (SOVABench rows): samples and queries of each protocol;
# * **Figure 3(a)**: queries per class of the inter-pair protocol;
# * **Figure 3(b)**: clip durations;
# * **Figure 3(c)**: crop sizes;
# * **Figure A.1**: clips per action within each opposite pair of the intra-pair protocol.
#
# Counts and durations come from the published metadata shipped with the package, so they cover every clip.
# Crop sizes need the raw annotations: from a clip manifest (`sova sovabench clips plan`) when one is given, otherwise
# from the MEVA annotation sample shipped with the package (4 source videos), and then the figure says it is a sample.

# %% tags=["parameters"]
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
manifest = ""  # clip manifest TSV written by `sova sovabench clips plan` ("": plan the shipped 4-video MEVA sample)
fps = {"MEVA": 30.0, "VIRAT": 30.0}  # frame rate per source dataset, frames per second, for durations

# %% [markdown]
# Imports and the output folder.

# %%
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.benchmarks.sovabench import labels
from sova_lib.benchmarks.sovabench.clips import stats as clip_stats
from sova_lib.benchmarks.sovabench.clips.kpf import find_annotation_files
from sova_lib.benchmarks.sovabench.clips.plan import plan_clip, plan_clips, read_manifest
from sova_lib.benchmarks.sovabench.splits import DATA_DIR, load_split
from sova_lib.protocols import get_protocol
from sova_lib.report import plots, tables
from sova_lib.storage import write_json

from paper.results import NOT_COMPUTED, paper_results

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## Table 2: samples and queries
#
# The paper's Table 2 compares SOVABench with other retrieval benchmarks; the SOVABench rows are computed here from
# the metadata and the protocols (the paper rounds the sample counts: 9.9k is 9,882).
#
# First the paper's rows as printed, one per benchmark.

# %%
table2_paper = (paper_results("Table 2")
                .pivot_table(index=["model", "group"], columns="column", values="value", sort=False).astype(int)
                .add_suffix(" (paper)").reset_index().rename(columns={"model": "benchmark", "group": "task (metric)"})
                .rename_axis(columns=None))
table2_paper

# %% [markdown]
# Then the SOVABench rows counted here: the clips and the queries of each protocol.

# %%
here = []
for name, label in (("inter-pair", "SOVABench (Inter-pair)"), ("intra-pair", "SOVABench (Intra-pair)"),
                    ("inter-pair-constrained", "SOVABench (Inter-pair, constrained; Table C.1)")):
    protocol = get_protocol(name)
    here.append({"benchmark": label, "task (metric)": f"Action Retrieval ({protocol.metric})",
                 "samples (here)": len(protocol.clips()),
                 "queries (here)": sum(len(task.queries) for task in protocol.tasks())})
here = pd.DataFrame(here)
here

# %% [markdown]
# The two side by side: each paper row with the counts of its benchmark, then the rows the paper does not have. A
# benchmark not counted here reads "not computed here", a count the paper does not print "-".

# %%
table2 = pd.concat([table2_paper.merge(here.drop(columns="task (metric)"), on="benchmark", how="left"),
                    here[~here["benchmark"].isin(table2_paper["benchmark"])]], ignore_index=True)
table2 = table2.convert_dtypes().astype(object).fillna({"samples (paper)": "-", "queries (paper)": "-",
                                                        "samples (here)": NOT_COMPUTED, "queries (here)": NOT_COMPUTED})
table2 = table2[["benchmark", "task (metric)", "samples (paper)", "samples (here)", "queries (paper)", "queries (here)"]]
tables.write_outputs(table2, table2, out / "01_benchmark_table2")
table2

# %% [markdown]
# ## Figure 3(a): queries per class
#
# The 1,423 queries of the inter-pair protocol by action and source dataset. The inter-pair protocol merges the two
# actions of each pair into one class; the intra-pair protocol keeps them apart. A query is a clip that is not a
# distractor; the actions are listed pair by pair, in the order of `labels.ACTIONS`.

# %%
queries = [clip for clip in load_split("interpair") if not clip.is_distractor]
counts = pd.crosstab(pd.Series([clip.label for clip in queries], name="action"),
                     pd.Series([clip.source_dataset for clip in queries], name="source"))
counts = counts.reindex(index=[a for a in labels.ACTIONS if a in counts.index], columns=["MEVA", "VIRAT"],
                        fill_value=0).rename_axis(columns=None)
tables.write_outputs(counts.reset_index(), counts.reset_index(), out / "01_benchmark_figure3a")
counts

# %% [markdown]
# The figures of this notebook colour the two source datasets alike; change `source_colors` to recolour them all.

# %% tags=["figure"]
source_colors = {"MEVA": "#1f77b4", "VIRAT": "#ff7f0e"}  # colour of each source dataset, in every figure below
fig, ax = plots.pyplot().subplots(figsize=(7.5, 0.45 * len(counts) + 1.4))
left = np.zeros(len(counts))  # one bar per action, stacked by source
for dataset in counts.columns:
    ax.barh(list(counts.index), counts[dataset].to_numpy(), left=left, color=source_colors[dataset], label=dataset)
    left += counts[dataset].to_numpy()
for y, total in enumerate(left):  # each action's total after its bar
    ax.text(total + left.max() * 0.01, y, f"{int(total)}", va="center", fontsize=9)
ax.invert_yaxis()
ax.set(xlim=(0, counts.sum(axis=1).max() * 1.12), xlabel="queries (clips)", ylabel="action",
       title=f"Inter-pair queries per action (n = {int(counts.values.sum()):,})")
ax.legend(title="source", loc="upper right")
fig.tight_layout()
plots.save_figure(fig, out / "01_benchmark_figure3a")

# %% [markdown]
# ## Figure 3(b): clip durations
#
# Every clip of the inter-pair file (queries and distractors), from its annotated frames in the metadata, with the
# 90-frame buffers of the start and stop clips, at the frame rates of the parameters. The window of a clip is the
# clip planner's (`plan_clip`, here without annotations): its annotated first to last frame, both included, with 90
# frames before `vehicle_starts` and after `vehicle_stops`; its end is not clamped to the video's length, which the
# metadata does not give.

# %%
durations = []
for clip in load_split("interpair"):
    window = plan_clip(clip, None)
    frames = window.end_frame - window.start_frame + 1
    durations.append({"index": clip.index, "label": clip.label, "source_dataset": clip.source_dataset,
                      "distractor": clip.is_distractor, "frames": frames,
                      "duration_s": frames / fps[clip.source_dataset]})
durations = pd.DataFrame(durations)
tables.write_outputs(durations, durations.describe().reset_index(), out / "01_benchmark_figure3b")
durations["duration_s"].describe(percentiles=[0.05, 0.5, 0.95]).round(2)

# %% [markdown]
# 40 bins from 0 to the 99th percentile (rounded up to a whole second), stacked by source; the last bin holds
# everything above.

# %% tags=["figure"]
seconds, sources = durations["duration_s"].to_numpy(), list(dict.fromkeys(durations["source_dataset"]))
bins = np.linspace(0, max(1.0, np.ceil(np.quantile(seconds, 0.99))), 41)
fig, ax = plots.pyplot().subplots(figsize=(7, 4))
per_source = [np.clip(seconds[durations["source_dataset"] == s], None, bins[-1]) for s in sources]
ax.hist(per_source, bins=bins, stacked=True, color=[source_colors[s] for s in sources], label=sources,
        edgecolor="white")
ax.legend(title="source")
ax.set(xlabel=f"duration (s); last bin holds everything above {bins[-1]:.0f} s", ylabel="clips",
       title=f"Clip durations, all {len(durations):,} inter-pair clips (from annotated frames)")
fig.tight_layout()
plots.save_figure(fig, out / "01_benchmark_figure3b")

# %% [markdown]
# ## Figure 3(c): crop sizes
#
# Each clip is cropped to the union of its actors' boxes. The sizes come from a clip manifest (here, a manifest
# planned from the shipped MEVA annotation sample unless `manifest` names one). The sample's plan takes every clip of
# the inter-pair and intra-pair files (each once) and keeps those whose source video the sample annotates.

# %%
if manifest:
    planned, source = clip_stats.manifest_frame(read_manifest(manifest)), f"manifest {Path(manifest).name}"
else:
    sample = DATA_DIR / "meva-annotations-sample"  # KPF annotations of 4 MEVA source videos
    videos = sorted(find_annotation_files(sample))
    clips = {clip.index: clip for split in ("interpair", "intrapair") for clip in load_split(split)}
    rows = [row for row in plan_clips(list(clips.values()), sample) if row.status != "annotation_missing"]
    planned = clip_stats.manifest_frame(rows)
    source = f"MEVA annotation sample: {len(videos)} source videos only, not the whole benchmark"
sizes = clip_stats.crop_sizes(planned)
tables.write_outputs(sizes, clip_stats.status_counts(planned), out / "01_benchmark_figure3c")
print(f"{len(sizes)} clips with a crop region ({source})")

# %% tags=["figure"]
min_side = 112  # the minimum crop side, drawn as dashed lines (px)
fig, ax = plots.pyplot().subplots(figsize=(7.5, 4.8))
ax.scatter(sizes["width"], sizes["height"], s=14, alpha=0.6, color="#1f77b4", edgecolors="none",
           label=f"clips (n = {len(sizes)})")
ax.axvline(min_side, ls="--", color="0.5", lw=1)
ax.axhline(min_side, ls="--", color="0.5", lw=1, label=f"minimum side ({min_side} px)")
ax.set(xlim=(0, max(float(sizes["width"].max()), min_side) * 1.05),
       ylim=(0, max(float(sizes["height"].max()), min_side) * 1.15),
       xlabel="crop width (px)", ylabel="crop height (px)", title=f"Crop sizes ({source})")
ax.legend(loc="upper left")
fig.tight_layout()
plots.save_figure(fig, out / "01_benchmark_figure3c")

# %% [markdown]
# ## Figure A.1: clips per action within each pair (intra-pair)
#
# Two rows per opposite pair, in the order of `labels.PAIRS`.

# %%
intrapair = load_split("intrapair")
pairs = pd.DataFrame([{"pair": pair.name, "action": action, "clips": sum(clip.label == action for clip in intrapair)}
                      for pair in labels.PAIRS for action in pair.actions])
tables.write_outputs(pairs, pairs, out / "01_benchmark_figureA1")
pairs

# %% [markdown]
# One panel per pair, four to a row.

# %% tags=["figure"]
by_pair = pairs.groupby("pair", sort=False)
fig, axes = plots.pyplot().subplots(int(np.ceil(by_pair.ngroups / 4)), 4, squeeze=False,
                                    figsize=(3.2 * 4, 2.9 * int(np.ceil(by_pair.ngroups / 4))))
for ax, (pair, part) in zip(axes.flat, by_pair):
    bars = ax.bar(range(len(part)), part["clips"], color=["#1f77b4", "#ff7f0e"][: len(part)], width=0.6)
    ax.bar_label(bars, fontsize=9)
    ax.set_xticks(range(len(part)), [a.replace(" vehicle", "\nvehicle") for a in part["action"]], fontsize=9)
    ax.set(ylim=(0, float(pairs["clips"].max()) * 1.2), ylabel="clips")
    ax.set_title(pair, fontsize=11)
for ax in axes.flat[by_pair.ngroups:]:
    ax.axis("off")
fig.suptitle("Clips per action within each opposite pair (intra-pair)")
fig.tight_layout()
plots.save_figure(fig, out / "01_benchmark_figureA1")

# %% [markdown]
# ## Headline numbers

# %%
summary = {
    "table2": table2.to_dict("records"),
    "queries_per_action": counts.sum(axis=1).to_dict(),
    "queries_per_dataset": counts.sum(axis=0).to_dict(),
    "durations": {"clips": len(durations), "median_s": float(durations["duration_s"].median()),
                  "p05_s": float(durations["duration_s"].quantile(0.05)),
                  "p95_s": float(durations["duration_s"].quantile(0.95))},
    "crops": {"source": source, "clips": len(sizes), "median_width": float(sizes["width"].median()),
              "median_height": float(sizes["height"].median()), "min_side": int(sizes[["width", "height"]].min().min())},
    "pair_counts": pairs.set_index("action")["clips"].to_dict(),
}
write_json(out / "01_benchmark.json", summary, indent=1)
summary["durations"], summary["crops"]
