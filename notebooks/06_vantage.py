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
# # VANTAGE-Bench: its eight task metrics (arXiv:2609.09396, Section 4 results, Appendix A task table, Appendix G.1 intervals)
#
# VANTAGE-Bench asks vision-language models eight kinds of question about fixed-camera footage, each with its own
# answer format and metric: video question answering (accuracy), event verification (Macro F1), temporal
# localization (mIoU), dense video captioning (SODA_c), 2D referring expressions (mIoU), 2D spatial pointing
# (accuracy), 2D object localization (F1@0.5) and single object tracking (Success AUC). This notebook
#
# 1. scores the hand-computed cases of each metric from raw answer texts, in the two scoring modes: **official**
#    (what the public harness, and so the leaderboard, does with an answer it cannot read) and **strict** (such an
#    answer is wrong or zero);
# 2. runs the whole chain (prompt, frames, describer, answer cache, parser, metric, bootstrap) on the street
#    footage that ships with the package, with **synthetic questions** and a **rule-based stand-in** describer
#    (frame differences, not a model): its numbers are a demonstration, not a VANTAGE-Bench result;
# 3. lists the paper's published numbers, and below them a row of your model's own for each task you score when
#    `ground_truth_dir` and `submissions_dir` point at your data (the answer keys are not public).

# %% tags=["parameters"]
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
answers_dir = "../build/vantage-answers"  # the stand-in's cached answers go to <answers_dir>/descriptions/
work_dir = "../build/vantage-street"  # where the synthetic street questions and answer keys are written
mode = "official"  # scoring mode: "official" (the harness, the leaderboard's) or "strict"
n_resamples = 2000  # bootstrap resamples per interval (the paper uses 10000)
seed = 0  # seed of the bootstrap generator
n_frames = 8  # frames sent per video (the harness default)
ground_truth_dir = ""  # folder of answer keys <harness key>_gt.jsonl (grounding_gt.jsonl, ...); empty: nothing computed
submissions_dir = ""  # folder of submissions named as in the archive (vqa.jsonl, grounding.jsonl, ...)
similarity = "token-f1"  # dense-captioning similarity for your data: bertscore (leaderboard), meteor or token-f1

# %% [markdown]
# Imports and the output folder. Everything below is a call into `sova_lib`.

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sova_lib import records
from sova_lib.benchmarks import vantage
from sova_lib.benchmarks.vantage import hand_cases, metrics_boxes, metrics_captions, synthetic
from sova_lib.benchmarks.vantage.published import PUBLISHED_HALF_WIDTHS, published_comparison
from sova_lib.describe.run_cache import RunOptions
from sova_lib.report import plots, tables
from sova_lib.storage import write_json
from sova_lib.video import example_videos, probe

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
pd.set_option("display.max_colwidth", None)  # texts are shown whole

# %% [markdown]
# ## The eight tasks
#
# Each task is one record of the registry: how its public items are read, how an item's prompt is rendered, how an
# answer is parsed, which metric scores it, and what the bootstrap resamples (an item, an image, a video for dense
# captioning, a tracklet for tracking: frames of one tracklet are strongly correlated).

# %%
registry = pd.DataFrame([{"task": t.key, "title": t.title, "metric": t.metric, "resampling unit": t.unit,
                          "ties": t.tie_rule} for t in vantage.TASKS.values()])
registry

# %% [markdown]
# ## The metrics on hand-computed cases
#
# Each row scores raw answer texts through the task's parser and metric, in both modes, beside the value computed
# by hand. Where the modes differ, the harness is lenient: event verification drops an unreadable answer before
# Macro F1; temporal localization gives it the whole video (4/30 here); dense captioning drops the video; the
# multiple-choice parsers take a lower-case "a" in "is a machine" as option A, and pointing takes the first A-D
# letter anywhere ("No idea" is D). The parse rate says how many answers were readable.

# %%
hand = pd.DataFrame(hand_cases.hand_case_rows())
tables.write_outputs(hand, hand, out / "06_vantage_hand_cases")
hand

# %% [markdown]
# ## SODA_c: an order-preserving matching of events
#
# Dense captioning pairs GT events (rows) with answer events (columns) by dynamic programming over
# C = temporal IoU x caption similarity, keeping both in time order; SODA_c = 2S / (M + N). Here both answer events
# span the whole video (IoU 0.5 with each GT event) but their captions are crossed, so only one pair can be kept.

# %%
gt_events = [(0, 10, "a forklift enters"), (10, 20, "a worker waves")]
answer_events = [(0, 20, "a worker waves"), (0, 20, "a forklift enters")]
one = metrics_captions.soda_video(gt_events, answer_events, metrics_captions.exact_match_similarity)
{k: one[k] for k in ("S", "soda_c", "pairs", "iou_f1", "caption_f1")}

# %% [markdown]
# ## Success AUC: the area under the success curve
#
# For a tracklet, Success(t) is the share of scored frames whose box overlaps the GT with IoU >= t, for 21
# thresholds t = 0, 0.05, ..., 1; Success AUC is its mean. The harness counts IoU >= t (the OTB toolkit counts
# IoU > t): for frame IoUs 1, 0.5 and 0 that is 33/63 against 30/63.

# %% tags=["figure"]
ious = [1.0, 0.5, 0.0]
fig, ax = plt.subplots(figsize=(5, 3.2))
for inclusive, label in ((True, "IoU >= t (harness)"), (False, "IoU > t (OTB)")):
    curve = metrics_boxes.success_curve(ious, inclusive=inclusive)
    ax.step(metrics_boxes.SUCCESS_THRESHOLDS, curve, where="post", label=f"{label}: AUC {curve.mean():.4f}")
ax.set(xlabel="IoU threshold t", ylabel="Success(t)", title="Frame IoUs 1, 0.5, 0")
ax.legend()
plots.save_figure(fig, out / "06_vantage_success_curve")

# %% [markdown]
# ## A synthetic run on the bundled street footage
#
# Three short excerpts of a fixed outdoor camera (OpenCV's `vtest.avi`) get synthetic questions in the public
# formats of the four video tasks, laid out as the harness's `scripts/run_lmudata.py` lays out its LMUData folder
# (`datasets/VANTAGE_VQA/VANTAGE_VQA.tsv` beside `videos/`, ...), and synthetic answer keys. The describer is a **rule-based stand-in** (it measures
# frame-to-frame change and answers each format from it; not an MLLM). Frames are sampled as the harness samples
# them for frame-list backends, the answers are cached like descriptions, then parsed and scored with intervals.

# %%
videos = example_videos()
durations = [probe(v).num_frames / probe(v).fps for v in videos]
tsvs = synthetic.write_street_benchmark(work_dir, videos, durations)
stand_in = synthetic.RuleBasedStandIn()
rng = np.random.default_rng(seed)
pd.DataFrame({"task": list(tsvs), "questions": [len(vantage.read_items(t, path)) for t, path in tsvs.items()],
              "file (under work_dir)": [path.relative_to(work_dir).as_posix() for path in tsvs.values()]})

# %% [markdown]
# Each task: describe its items (resumable), read the cached answers back, parse and score them with an interval.
# Each score is one record, a row of the table (at the end also written under `figures_dir/results/`).

# %%
street, answers_shown = synthetic.street_run(stand_in, tsvs, work_dir, answers_dir, n_frames=n_frames, mode=mode,
                                           rng=rng, n_resamples=n_resamples)
made = [r.to_record(kind="description cache", source=synthetic.STREET_SOURCE, cache=synthetic.STREET_CACHE, seed=seed)
        for r in street.values()]
synthetic_table = pd.DataFrame(made).rename(columns={"source": "describer", "n_queries": "n_items"}).assign(
    task=list(street), mode=[r.mode for r in street.values()], parse_rate=[r.parse_rate for r in street.values()])
synthetic_table = synthetic_table[["task", "describer", "metric", "value", "ci_low", "ci_high", "mode", "parse_rate",
                                   "n_items"]]
tables.write_outputs(synthetic_table, synthetic_table.round(2), out / "06_vantage_synthetic")
synthetic_table

# %% [markdown]
# One raw answer per task, as cached (dense captioning is scored here with a plain token-F1 caption similarity,
# not the leaderboard's BERTScore, whose roberta-large weights are not installed with the package).

# %%
answers_shown

# %% [markdown]
# ## The leaderboard's files
#
# A submission is one JSONL per task, written record for record as the harness's emitter writes it: the
# leaderboard id of each item (here `<video stem>__q_<index:06d>`), the canonical task string (`video_qa`), the raw
# answer as the assistant turn, the model and the box coordinate order. It is checked as the leaderboard checks
# it (`vantage.validate`: every id of the items once, the id shape, the task string, the turn shape) and
# refused otherwise. `docs/vantage.md` lists what each `sova vantage` command reads and writes.

# %%
described = vantage.describe(stand_in, "vqa", tsvs["vqa"], answers_dir, media_root=tsvs["vqa"].parent / "videos",
                             frames=n_frames, run=RunOptions(show_progress=False, verbose=False))
submission, _ = vantage.submit("vqa", described.items, described.answers, model=stand_in.name,
                               out=Path(work_dir) / "submission" / "vqa.jsonl")
print(submission.read_text(encoding="utf-8").splitlines()[0])
problems, _, _ = vantage.validate(submission, "video_qa", ground_truth=Path(work_dir) / "vqa_gt.jsonl")
print("the leaderboard's checks: " + ("every one passed" if not problems else "; ".join(problems)))

# %% [markdown]
# ## Published numbers
#
# The paper's headline numbers (its Sections 4, 5, C.1 and D.3), as the paper reports them. When `ground_truth_dir`
# and `submissions_dir` are set, each task you scored gets a row of its own below them, named by the model your
# submission records and set on your answer key's items (the paper's domains and horizons are partitions your data
# may not have). Chance levels for reference: VQA and pointing random = mean of 1/#options;
# event verification answering "yes" to everything = p/(1+p) with p the share of "yes"; temporal whole-video
# answers = mean of GT length / video length (the official score of an unreadable answer).

# %%
computed = vantage.score_folder(ground_truth_dir, submissions_dir, scoring=mode, similarity=similarity,
                                bootstrap=n_resamples, seed=seed) if ground_truth_dir and submissions_dir else {}
published = pd.DataFrame(published_comparison(computed))
tables.write_outputs(published, published, out / "06_vantage_published")
published

# %% [markdown]
# How far apart two numbers must be to differ: the paper's median 95% bootstrap half-widths (its appendix G.1,
# 10,000 resamples of the items of each model and task, x100). Two numbers of a task that differ by much less than
# this are within the paper's own uncertainty.

# %%
pd.DataFrame({"task": list(PUBLISHED_HALF_WIDTHS), "median 95% half-width (paper, G.1)": PUBLISHED_HALF_WIDTHS.values()})

# %% [markdown]
# ## Headline numbers

# %%
summary = {
    "hand_cases_match": bool((hand["official"] == hand["official by hand"]).all() and (hand["strict"] == hand["strict by hand"]).all()),
    "hand_cases": len(hand), "mode": mode, "n_resamples": n_resamples,
    "synthetic": {t: {"value": r.value, "ci": list(r.ci), "parse_rate": r.parse_rate} for t, r in street.items()},
    "describer": "rule-based stand-in (not an MLLM), synthetic questions",
    "computed_tasks": sorted(computed), "published_rows": len(published),
}
write_json(out / "06_vantage.json", summary, indent=1)
{key: summary[key] for key in ("hand_cases_match", "hand_cases", "mode", "computed_tasks", "published_rows")}

# %% [markdown]
# The records, one JSON file each under `figures_dir/results/`, collected with every other notebook's into
# `results.csv` (what `sova results` reads).

# %%
for record in made:
    records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
