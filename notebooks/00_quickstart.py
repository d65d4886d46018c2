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
# # Quickstart: the MLLM-to-Embedding framework, step by step (paper, Section 4 and Figure 4)
#
# The SOVABench paper turns a video into a searchable representation in four steps (Section 4, Figure 4):
#
# 1. **Describe**: a describer answers an instruction about frames sampled from the video;
# 2. **Split**: the answer is cut into lines, then sentences;
# 3. **Embed**: each sentence becomes a unit vector with a sentence encoder: a clip is a *set* of vectors (Eq. 2);
# 4. **Compare**: two clips are as similar as their most similar pair of sentences (maximum cosine, Eq. 3).
#
# This notebook runs the four steps on real footage that ships with the package, three short excerpts of a fixed
# outdoor camera (OpenCV's `vtest.avi`: people walking across a square and a lawn), and shows the data of each
# step: the request a describer gets, an answer, its sentences, one sentence's vector, the matrix of sentence
# cosines between two clips and its maximum. The paper's describers are multimodal LLMs that need a GPU; here the
# describer is a **classical motion describer** (OpenCV background subtraction and tracking, no learning, not an
# MLLM). It answers every instruction with what it measures: what moves, in which direction, when it starts and
# stops. That is enough to see each step, and to see why the temporal direction matters: every excerpt is also
# described **played backwards**, the way SOVABench's "driving forward" clips are "reversing" clips played
# backwards.
#
# The excerpts are not SOVABench clips: nothing here is a SOVABench result. With a GPU, the same notebook runs on
# a multimodal LLM: set `backend` and `model` (for example `backend = "transformers"` and
# `model = "Qwen/Qwen2.5-VL-7B-Instruct"`, or `backend = "openai"` with `base_url` in `backend_options`).

# %% tags=["parameters"]
videos = []  # video files to describe; empty: the three vtest.avi excerpts shipped with the package
with_reversed = True  # also describe each video played backwards (ids end in "-reversed")
fps = 2.0  # frames sampled per second of video (the paper samples 1 per second)
backend = "motion"  # describer: "motion" (classical, CPU, not an MLLM), or an MLLM backend: "transformers", "openai"
model = ""  # the MLLM's hub id or local folder ("": the motion describer has none)
backend_options = {}  # more options of the backend, e.g. {"device": "cuda"} or {"base_url": "http://host:8000/v1"}
prompt = "general"  # instruction preset ("general", "task-aware") or free text; the motion describer ignores it
cache_dir = None  # folder of descriptions/<name>__<hash>/ caches; None: $SOVA_CACHE, else the repository's cache/
figures_dir = "../build/figures"  # output folder (git ignores build/); only sova reproduce writes figures/
encoder_name = "all-MiniLM-L6-v2"  # sentence encoder (loads offline)
query = "vtest_walkway_0200-0259"  # id of the clip to search with and compare (with your videos: a file stem)
top_k = 3  # neighbours to list for the query
interactive = True  # the explorer's live widget beside its static view; False: the static view alone

# %% [markdown]
# Imports and the output folder. Everything below is a call into `sova_lib`, or a line of numpy that the notebook
# checks against it.

# %%
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from sova_lib import SentenceEncoder, embed_descriptions, make_describer, read_descriptions, records, split
from sova_lib.describe.cache import read_failures
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.report import explore, plots, tables
from sova_lib.similarity import max_cosine, mean_cosine, set_similarity
from sova_lib.storage import cache_root, write_json
from sova_lib.video.frames import probe, sample_frames

out = Path(figures_dir)
out.mkdir(parents=True, exist_ok=True)
cache_dir = cache_root(cache_dir, "../cache")  # the rule of sova reproduce and --cache-dir
pd.set_option("display.max_colwidth", None)  # sentences are shown whole

# %% [markdown]
# ## The videos
#
# Each item is a file and an id; a reversed item is the same file read from its last frame to its first.
# `example_clips` lists the `videos` (none given: the bundled excerpts), each followed by its reversed copy (id
# `<stem>-reversed`); each clip's `item()` is what the runner describes. The `query` must be one of their ids
# (with your own `videos`, a file's stem): another stops here, naming them.

# %%
from sova_lib.benchmarks.excerpts import example_clips

items = [clip.item() for clip in example_clips(videos, with_reversed=with_reversed)]  # ids: the file stems
videos_by_id = {it.id: it for it in items}
if query not in videos_by_id:  # a mistyped id, or the default one with your own videos
    raise ValueError(f"query {query!r} is not one of the clips: {', '.join(videos_by_id)}")
infos = [probe(it.path) for it in items]  # each file's header and packets
pd.DataFrame([{"id": it.id, "file": Path(it.path).name, "reversed": it.reverse, "frames": info.num_frames,
               "fps": info.fps, "seconds": round(info.duration, 2)} for it, info in zip(items, infos)])

# %% [markdown]
# ## Step 0: the frames the describer sees
#
# The paper's sampler takes `round(F / r * s) + 1` evenly spaced frames from a clip of `F` frames at `r` frames per
# second, for a sampling rate of `s` frames per second. Below, the sampled frames of each item (times in seconds
# from the start of the clip as it is played).

# %% tags=["figure"]
sampled = [sample_frames(it.path, rate=fps, window=it.window, crop=it.crop, reverse=it.reverse) for it in items]
strips = [(str(it.id), frames.images, frames.timestamps) for it, frames in zip(items, sampled)]
fig = plots.filmstrips(strips, title=f"Frames sampled at {fps:g} per second (up to 5 shown per clip)", max_frames=5,
                       max_pixels=120)
plots.save_figure(fig, out / "00_quickstart_filmstrips", dpi=90)

# %% [markdown]
# ## Step 1: describe
#
# What a describer is sent for one clip, as the runner builds it: the instruction (the `prompt` preset), a system
# prompt when the preset has one, and the sampled frames with their times. An MLLM reads all of it; the motion
# describer reads only the frames.

# %%
from sova_lib.describe.runner import build_request

item = videos_by_id[query]
request, error = build_request(item, fps, resolve_prompt(prompt))  # the request exactly as the runner builds it
if request is None:
    raise ValueError(f"{item.id}: its frames cannot be read ({error})")
width, height = request.frames[0].size
pd.DataFrame({"part": ["instruction", "system prompt", "frames", "frame times (s)"],
              "sent": [request.prompt, request.system_prompt or "(none)",
                       f"{len(request.frames)} RGB images of {width} x {height} pixels",
                       ", ".join(f"{t:.1f}" for t in request.timestamps)]})

# %% [markdown]
# The describer, made from the parameters, and the names the tables and figures below give it.

# %%
describer = make_describer(backend, **({"model": model} if model else {}), **backend_options)
named = model or backend  # the motion describer is named as not an MLLM, any other by its model, never as the paper's
names = ({"short": "motion describer", "long": "the classical motion describer (not an MLLM)",
          "summary": "motion (classical OpenCV motion describer, not an MLLM)"} if backend == "motion" else
         {"short": named, "long": f"{named} ({backend})", "summary": f"{backend}: {named}"})

# %% [markdown]
# The runner (`describe_items`) sends the sampled frames of each item to the describer and appends each answer to a
# cache folder named after everything that changes the text (describer, its settings, prompt, sampling rate, and
# `quickstart` for the bundled excerpts' input), the folder `sova describe --protocol quickstart-direction` finds
# for the same request. Running this cell again reuses the cache: only items missing from it are described, and a
# folder that holds them all is left as it was.

# %%
from sova_lib.benchmarks.excerpts import QUICKSTART_INPUT
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import describe_items

folder = describe_items(describer, items, cache_dir, prompt=resolve_prompt(prompt), fps=fps,
                        input_name=QUICKSTART_INPUT, run=RunOptions(show_progress=False)).folder

# %% [markdown]
# A clip the describer failed on (a server that refused it) is listed with its reason and left out; the rest go on,
# and the score below counts it as a failure. Below, the answer for the query clip, as written.

# %%
done, errors = read_descriptions(folder), folder / "errors.jsonl"
reasons = read_failures(errors) if errors.is_file() else {}  # each failed clip's last line in errors.jsonl
texts = {it.id: done[it.id] for it in items if it.id in done}  # a clip that failed is shown, then left out
failed = pd.DataFrame([{"id": it.id, "reason": reasons.get(it.id, "not described")} for it in items
                       if it.id not in done], columns=["id", "reason"])
print(f"{len(failed)} clip(s) without a description:\n{failed.to_string(index=False)}\n" if len(failed) else "", end="")
if query not in texts:  # the query clip failed: the first clip described stands for it below
    print(f"{query} has no description; {next(iter(texts))} stands for it below")
    query = next(iter(texts))
print(f"cache folder: {folder.name}\n\nthe answer for {query}:\n\n{texts[query]}")

# %% [markdown]
# ## Step 2: split into sentences
#
# The splitter cuts an answer into lines first, then each line into sentences with NLTK's English sentence
# splitter (the paper's `split(t)`). The motion describer writes one sentence per line, so its lines are already
# its sentences. An MLLM writes paragraphs: here is an **illustrative answer in the style of an MLLM, written by
# hand for this notebook** about the query clip (no model produced it; it ships with the package and is never
# scored), and what the splitter makes of it. NLTK is the paper's splitter with its habits: it ends a sentence
# after an abbreviation such as "e.g.".

# %%
answer = Path("paper/data/quickstart/hand_written_answer.txt").read_text(encoding="utf-8")  # written by hand
print(answer)
pieces = pd.DataFrame([{"line": n, "sentence": k, "text": s}  # line by line, to show where each piece comes from
                       for n, line in enumerate(answer.splitlines(), start=1) if line.strip()
                       for k, s in enumerate(split(line), start=1)], columns=["line", "sentence", "text"])
assert pieces["text"].tolist() == split(answer)  # the library's split of the whole answer: the same pieces
pieces

# %% [markdown]
# Every description of the six clips, split the same way. Each sentence will get its own vector.

# %%
sentences = pd.DataFrame([{"id": i, "sentence": k + 1, "text": s} for i, text in texts.items()
                          for k, s in enumerate(split(text))], columns=["id", "sentence", "text"])
tables.write_outputs(sentences, sentences, out / "00_quickstart_sentences")
sentences

# %% [markdown]
# ## Step 3: embed
#
# The sentence encoder turns a sentence into a vector of 384 numbers of length 1, so the dot product of two
# sentences' vectors is their cosine, from -1 to 1. Here is the first sentence of the query clip's answer.

# %%
encoder = SentenceEncoder(encoder_name, cache_dir=cache_dir)  # one progress line over the sentences to encode, if any
sentence = split(texts[query])[0]
vector = encoder.encode([sentence])[0]
print(f"{sentence!r}\n-> shape {vector.shape}, {vector.dtype}, length (L2 norm) {np.linalg.norm(vector):.6f}\n")
print(np.array2string(vector, precision=3, suppress_small=True, max_line_width=118))

# %% [markdown]
# A clip is the set of its sentences' vectors (the paper's Eq. 2): `embed_descriptions` splits every description
# and encodes each distinct sentence once.

# %%
items_vectors = embed_descriptions(texts, encoder)
pd.DataFrame({"id": items_vectors.ids, "sentence vectors": items_vectors.counts})

# %% [markdown]
# ## Step 4: compare two clips
#
# Take the query clip and its reversed copy. Every sentence of one against every sentence of the other is one
# matrix product of their vectors: the cosine matrix below (rows: the query's sentences, columns: the reversed
# copy's). The similarity of the two clips is its largest entry (Eq. 3), boxed in red. Sentences about the same
# people moving in opposite directions still score high: the encoder reads "from right to left" and "from left to
# right" as close.

# %%
from sova_lib.benchmarks.excerpts import REVERSED_SUFFIX

other = query + REVERSED_SUFFIX if query + REVERSED_SUFFIX in texts else next(i for i in texts if i != query)
a, b = items_vectors.vectors_of(query), items_vectors.vectors_of(other)
cosines = a @ b.T  # (sentences of the query, sentences of the other clip)
i, j = np.unravel_index(cosines.argmax(), cosines.shape)
print(f"cosines: shape {cosines.shape}; largest entry cosines[{i}, {j}] = {cosines[i, j]:.4f}")

# %% [markdown]
# The matrix drawn: each cell coloured by its value as printed (2 decimals) on a scale from 0 to 1, the sentences
# numbered on the axes and listed whole under the figure.

# %% tags=["figure"]
shown = cosines.astype(np.float64).round(2)  # as printed
fig, ax = plots.pyplot().subplots(figsize=(0.5 * shown.shape[1] + 2.2, 0.5 * shown.shape[0] + 0.8))
ax.imshow(shown, cmap="viridis", vmin=0.0, vmax=1.0, aspect="equal")
for (row, col), v in np.ndenumerate(shown):  # each cosine in its cell, black on the light ones
    ax.text(col, row, f"{v:.2f}", color="black" if v >= 0.6 else "white", ha="center", va="center", fontsize=7)
ax.set_xticks(range(shown.shape[1]), [f"#{k + 1}" for k in range(shown.shape[1])], fontsize=8)
ax.set_yticks(range(shown.shape[0]), [f"#{k + 1}" for k in range(shown.shape[0])], fontsize=8)
ax.set_xlabel(f"columns: {other}", fontsize=9)
ax.set_ylabel(f"rows: {query}", fontsize=9)
ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=2.5))  # the largest: Eq. 3
fig.colorbar(ax.images[0], ax=ax, label="cosine similarity", fraction=0.046, pad=0.03)
ax.set_title("Sentence cosines of two clips; the largest (red) is the clips'\nsimilarity (Eq. 3)", fontsize=10)
key = (plots.numbered_list(f"rows, the sentences of {query}", split(texts[query]), 110) + "\n\n"
       + plots.numbered_list(f"columns, the sentences of {other}", split(texts[other]), 110))
ax.annotate(key, xy=(0, 0), xycoords="axes fraction", xytext=(-40, -48), textcoords="offset points", va="top",
            ha="left", fontsize=8)  # the sentences, whole, under the x axis's label (a tight save keeps all of it)
plots.save_figure(fig, out / "00_quickstart_sentence_similarity")

# %% [markdown]
# The library computes the same number in two ways: `similarity.max_cosine`, the plain form of Eq. 3 for two
# clips, and `set_similarity`, the blocked fast path that every evaluation runs over all clips at once, here every
# clip against every clip. The cell checks that the three agree (the fast path multiplies in float32 blocks, so it
# may differ in the last bits); the mean over all sentence pairs (the paper's ablation) likewise.

# %%
max_matrix = set_similarity(items_vectors, items_vectors, aggregate="max").astype(np.float64)  # (clips, clips)
mean_matrix = set_similarity(items_vectors, items_vectors, aggregate="mean").astype(np.float64)
clip_ids = [str(i) for i in items_vectors.ids]
fast_max, fast_mean = (m[clip_ids.index(query), clip_ids.index(other)] for m in (max_matrix, mean_matrix))
print(f"maximum: numpy {cosines.max():.6f}, max_cosine {max_cosine(a, b):.6f}, set_similarity {fast_max:.6f}")
print(f"mean:    numpy {cosines.mean():.6f}, mean_cosine {mean_cosine(a, b):.6f}, set_similarity {fast_mean:.6f}")
assert cosines.max() == max_cosine(a, b) and abs(fast_max - cosines.max()) < 1e-6
assert cosines.mean() == mean_cosine(a, b) and abs(fast_mean - cosines.mean()) < 1e-6

# %% [markdown]
# ## Clip similarities
#
# The same number for every pair of clips: the maximum (left panel). The motion describer writes one sentence per
# moving object (its direction, speed, start and stop) and a count by direction, so two answers share a sentence
# only where they tell the same motion. Its sentences are still built from a few templates, so every maximum is
# high, and the mean over all sentence pairs (right panel) spreads the clips further apart. MLLM answers repeat
# themselves too, which is why the choice of aggregate matters.
#
# Each clip and its reversed copy: the describer wrote the opposite directions down, yet the pair scores about as
# high as two clips of the same direction, since the sentence encoder barely registers "left to right" against
# "right to left". Telling opposite actions apart is exactly what SOVABench's intra-pair protocol measures, and
# where the paper finds every model close to chance.

# %% tags=["figure"]
panels = [(np.round(max_matrix.astype(np.float64), 2), "maximum cosine (Eq. 3)"),  # as printed
          (np.round(mean_matrix.astype(np.float64), 2), "mean cosine")]
short_ids = [plots.middle_cut(c, 40) for c in clip_ids]  # ids cut in their middle, both ends kept
side = 0.6 * len(clip_ids) + 0.075 * max(len(c) for c in short_ids) + 0.8
self_cells = np.eye(len(clip_ids), dtype=bool)  # each clip with itself: grey, marked "self"
cmap = plots.pyplot().get_cmap("viridis").with_extremes(bad="0.85")

# %% tags=["figure"]
fig, axes = plots.pyplot().subplots(1, 2, figsize=(side * 2 + 1.6 * 2, side + 0.8), squeeze=False)
for k, (ax, (shown, title)) in enumerate(zip(axes[0], panels)):
    pairs = shown[~self_cells] if len(clip_ids) > 1 else shown.ravel()  # each panel's scale: the clip pairs' range
    low, high = float(pairs.min()), float(pairs.max())
    low, high = (low - 0.005, high + 0.005) if high - low < 0.005 else (low, high)
    ax.imshow(np.ma.masked_array(shown, self_cells), cmap=cmap, vmin=low, vmax=high)
    for (row, col), v in np.ndenumerate(shown):  # black on the light cells and on "self"
        ax.text(col, row, "self" if row == col else f"{v:.2f}", ha="center", va="center", fontsize=7,
                color="black" if row == col or v >= low + 0.6 * (high - low) else "white")
    ax.set_xticks(range(len(clip_ids)), short_ids, rotation=50, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(len(clip_ids)), short_ids if k == 0 else [""] * len(clip_ids), fontsize=8)
    ax.set_title(title, fontsize=11)
    fig.colorbar(ax.images[0], ax=ax, label="clip similarity (cosine)\nscale: the clip pairs' range, not from 0",
                 fraction=0.046, pad=0.03)
fig.suptitle(f"Clip similarity: descriptions by {names['long']}, sentences by {encoder_name}", fontsize=11)
plots.save_figure(fig, out / "00_quickstart_clip_similarity")

# %% [markdown]
# ## Retrieval: the nearest clips to a query
#
# Ranking every other clip by its similarity to the query is retrieval. Each neighbour comes with the two sentences
# that gave the maximum, which is what makes these embeddings interpretable: one can read why a clip was retrieved.
# `rank by mean` is where the same clip ranks when the mean cosine ranks them instead: where it differs from
# `rank`, the aggregate decides what is retrieved.
#
# First every other clip against the query: its maximum and mean cosine (`similarity.max_cosine`, `mean_cosine`),
# and the pair of sentences whose cosine is the maximum.

# %%
query_vectors, query_sentences = items_vectors.vectors_of(query), split(texts[query])
rows = []
for clip in clip_ids:
    if clip == query:
        continue
    clip_vectors = items_vectors.vectors_of(clip)
    pair_cosines = query_vectors @ clip_vectors.T  # (sentences of the query, sentences of this clip)
    pair = np.unravel_index(pair_cosines.argmax(), pair_cosines.shape)  # the sentence pair of the maximum
    rows.append({"id": clip, "max cosine": max_cosine(query_vectors, clip_vectors),
                 "mean cosine": mean_cosine(query_vectors, clip_vectors), "query sentence": query_sentences[pair[0]],
                 "matched sentence": split(texts[clip])[pair[1]]})

# %% [markdown]
# Then the `top_k` best by the maximum cosine (ties keep the clips' order), each with its rank by the mean, the
# cosines rounded to 3 decimals.

# %%
top = pd.DataFrame(rows)
top["rank by mean"] = top["mean cosine"].rank(ascending=False, method="first").astype(int)
top = top.sort_values("max cosine", ascending=False, kind="stable").head(top_k).reset_index(drop=True)
top.insert(0, "rank", range(1, len(top) + 1))
top = top[["rank", "id", "max cosine", "rank by mean", "mean cosine", "query sentence", "matched sentence"]]
top = top.round({"max cosine": 3, "mean cosine": 3})
tables.write_outputs(top, top, out / "00_quickstart_neighbours")
top

# %% [markdown]
# ## A score: does the text tell the direction of time?
#
# The package registers a small protocol on these six clips, `quickstart-direction`: every clip is a query against
# the other five, and the two clips that play in the same direction (forward or reversed) are the relevant ones,
# the question SOVABench's intra-pair protocol asks of opposite actions. The score is mAP with tie-aware expected
# AP, printed beside what a random ranking scores; `tie spread` says how far ties alone could move it. The same
# score comes from the command line:
# `sova sovabench evaluate --protocol quickstart-direction --descriptions <cache folder>`.
# With your own `videos` the same question is asked of their clips (`quickstart-direction (your videos)`).
# Six clips make a demonstration, not a measurement. Both scores are records, the rows of the table below (at the
# end they are also written under `figures_dir/results/`, for `sova results`).

# %%
from sova_lib.benchmarks.excerpts import direction_protocol
from sova_lib.describe.provenance import cache_provenance, read_cache_manifest
from sova_lib.evaluation import baseline, evaluate

direction = direction_protocol(videos, with_reversed=with_reversed)  # with no videos: quickstart-direction
run = {"benchmark": direction.benchmark, "bootstrap": 0, "seed": None}  # mAP alone: no bootstrap interval
scored = {"kind": "description cache", "source": f"{names['short']} + max cosine",
          **cache_provenance(read_cache_manifest(folder), folder),  # what wrote the texts: model, prompt, fps, ...
          "encoder": encoder.name, "text_split": "sentences"}
made = [evaluate(direction, items_vectors).to_record(**scored, note="", **run),  # max cosine, tie-aware
        baseline(direction, "random-ranking").to_record(kind="baseline", source="random ranking (exact expected AP)",
                                                        baseline="random-ranking", tie_spread=0.0, **run)]

# %% [markdown]
# The two records as a table. The random ranking's exact expected AP is the same for every order of tied scores,
# hence its `tie spread` of 0.

# %%
scores = pd.DataFrame(made).rename(columns={"source": "scorer", "value": "mAP", "tie_spread": "tie spread",
                                            "n_queries": "queries"})[["scorer", "mAP", "tie spread", "queries"]]
tables.write_outputs(scores, scores, out / "00_quickstart_direction")
print(scores.to_string(index=False))

# %% [markdown]
# ## Explore: why a clip is retrieved
#
# The retrieval explorer puts the steps together for one query at a time: its AP under `quickstart-direction`, its
# nearest clips with their relevance (same playing direction or not), each clip's description with the sentence
# that matched the query marked, and the first sampled frame of each clip. In JupyterLab it is a widget: pick
# another query by id or among the worst ones. The same output also holds the view as a table and a figure, which
# is what GitHub, nbviewer, `nbconvert` and any run without a browser show (`sova reproduce` passes
# `interactive = False`: the table and the figure alone). With your own `videos` it explores their clips under the
# same question. The same call explores any description cache on a SOVABench protocol, and MUVR's partitions when
# given its data (`muvr_root=`). It needs a description of every clip: after a failed clip it says so instead.

# %%
view = explore.show({names["short"]: (items_vectors, texts)}, [direction], videos=videos_by_id, query=query,
                    k=top_k, interactive=interactive) if failed.empty else \
    print(f"not shown: the explorer ranks every clip of {direction.name}, and {len(failed)} have no description")

# %% [markdown]
# ## Headline numbers
#
# What the tests check: the cache folder (under `cache_dir/descriptions`), how many sentences each clip gave, the
# query's neighbours and the direction score.

# %%
summary_json = {
    "describer": names["summary"], "fps": fps, "prompt": prompt,
    "cache": folder.name, "items": len(items), "described": len(texts),
    "sentences": sentences.groupby("id").size().to_dict(), "encoder": encoder_name, "query": query,
    "vector": {"shape": list(vector.shape), "norm": round(float(np.linalg.norm(vector)), 6)},
    "compared": other, "max_cell": [int(i), int(j)], "max_cosine_pair": round(float(cosines.max()), 6),
    "neighbours_max": top["id"].tolist(), "max_cosine": top["max cosine"].tolist(),
    "ranks_by_mean": top["rank by mean"].tolist(), "mean_cosine": top["mean cosine"].tolist(),
    "direction_protocol": direction.name, "direction_scores": scores.to_dict("records"),
    "explorer": view.summary() if view is not None else None,
}
write_json(out / "00_quickstart.json", summary_json, indent=1)
summary_json["neighbours_max"], summary_json["ranks_by_mean"]

# %% [markdown]
# The two records, one JSON file each under `figures_dir/results/`, collected with every other notebook's into
# `results.csv` (what `sova results` reads).

# %%
for record in made:
    records.write_record(record, out / "results")
records.collect_records(out / "results", out / "results.csv").shape
