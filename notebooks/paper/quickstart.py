"""Looking inside the MLLM-to-Embedding framework, one step at a time (the quickstart's helpers).

* ``example_items``: the videos to describe, as runner ``Item`` objects,
  optionally each also played backwards;
* ``describe_missing``: the notebook's call into the runner
  (``describe_items``), which describes only the items its cache lacks;
* ``request_table``: what a describer is sent for one item (the
  instruction, the system prompt, the sampled frames and their times);
* ``neighbours``: a query's top-k clips, each with the pair of sentences
  that decided the match and its rank under the mean cosine too;
* ``direction_protocol``: the built-in ``quickstart-direction`` protocol
  (``sova_lib.benchmarks.excerpts``), or the same question asked of the
  user's own videos;
* ``direction_records``: the clips scored under it, and a random ranking,
  as two records (``sova_lib.records``), the rows of the notebook's table.

Sentences are cut with ``sentences.split`` and embedded with any encoder
that has ``encode(list[str]) -> (n, D)`` unit vectors (``SentenceEncoder``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.benchmarks.excerpts import (
    DIRECTION_PROTOCOL,
    QUICKSTART_INPUT,
    REVERSED_SUFFIX,
    direction_protocol,
    example_clips,
)
from sova_lib.describe.provenance import cache_provenance, read_cache_manifest
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import build_request, describe_items
from sova_lib.evaluation import CoverageError, baseline, evaluate
from sova_lib.protocols import Protocol, get_protocol
from sova_lib.records import make_record
from sova_lib.sentences import split
from sova_lib.similarity import max_cosine, mean_cosine

__all__ = ["DIRECTION_PROTOCOL", "REVERSED_SUFFIX", "example_items", "describe_missing", "direction_protocol",
           "direction_records", "RANDOM_SCORER", "request_table", "neighbours"]


def example_items(videos=(), *, with_reversed: bool = True):
    """Runner ``Item`` objects for ``videos`` (default: ``video.example_videos()``), ids = file stems.

    With ``with_reversed``, each video also appears played backwards, with
    id ``<stem>-reversed``: the same frames in the opposite order, which is
    what tells opposite actions apart.
    """

    return [clip.item() for clip in example_clips(videos, with_reversed=with_reversed)]


def describe_missing(describer, items, cache_dir, *, prompt, fps: float) -> Path:
    """Describe the quickstart's ``items`` through the runner (``describe_items``, which computes the key as
    ``sova describe --protocol quickstart-direction`` does), into the folder of its configuration; returns it.

    Only the items the folder lacks are described; when it holds every one, nothing runs and nothing is rewritten
    (not even the manifest), so re-running a notebook leaves a committed cache as it was. ``prompt`` is a
    ``prompts.Prompt`` or a string ``prompts.resolve_prompt`` reads (a preset name), as for ``describe_items``.
    """
    return describe_items(describer, items, cache_dir, prompt=prompt, fps=fps, input_name=QUICKSTART_INPUT,
                          run=RunOptions(show_progress=False)).folder


def request_table(item, fps: float, prompt):
    """What a describer is sent for ``item``: one row per part (instruction, system prompt, frames, their times).

    The request is the runner's own (``runner.build_request``), the frames
    sampled at ``fps`` per second; ``prompt`` is a ``prompts.Prompt``.
    """
    request, error = build_request(item, fps, prompt)
    if request is None:
        raise ValueError(f"{item.id}: its frames cannot be read ({error})")
    width, height = request.frames[0].size
    return pd.DataFrame({"part": ["instruction", "system prompt", "frames", "frame times (s)"],
                         "sent": [request.prompt, request.system_prompt or "(none)",
                                  f"{len(request.frames)} RGB images of {width} x {height} pixels",
                                  ", ".join(f"{t:.1f}" for t in request.timestamps)]})


def neighbours(items, texts: dict, query, *, k: int = 3):
    """The ``k`` clips most similar to ``query`` (itself left out) by the maximum cosine (Eq. 3), best first.

    Columns: ``rank``, ``id``, ``max cosine``, ``rank by mean`` and
    ``mean cosine`` (the rank and similarity under the mean over all
    sentence pairs, the paper's ablation), ``query sentence`` and
    ``matched sentence`` (the pair whose cosine is the maximum). The
    cosines are the plain ones of ``similarity`` (``max_cosine``,
    ``mean_cosine``) on the clips' vectors (``ItemVectors.vectors_of``),
    rounded to 3 decimals; ties keep the order of ``items``.
    """
    ids = np.asarray(items.ids).tolist()
    if query not in ids:
        raise ValueError(f"query {query!r} is not among the described clips {ids}")
    qv, q_sentences = items.vectors_of(query), split(texts[query])
    rows = []
    for gid in ids:
        if gid == query:
            continue
        gv = items.vectors_of(gid)
        a, b = np.unravel_index(int(np.argmax(qv @ gv.T)), (len(qv), len(gv)))
        rows.append({"id": gid, "max cosine": max_cosine(qv, gv), "mean cosine": mean_cosine(qv, gv),
                     "query sentence": q_sentences[a], "matched sentence": split(texts[gid])[b]})
    frame = pd.DataFrame(rows)
    frame["rank by mean"] = frame["mean cosine"].rank(ascending=False, method="first").astype(int)
    frame = frame.sort_values("max cosine", ascending=False, kind="stable").head(k).reset_index(drop=True)
    frame.insert(0, "rank", range(1, len(frame) + 1))
    frame = frame[["rank", "id", "max cosine", "rank by mean", "mean cosine", "query sentence", "matched sentence"]]
    return frame.round({"max cosine": 3, "mean cosine": 3})


#: The ``source`` of the random ranking's record beside the quickstart's score.
RANDOM_SCORER = "random ranking (exact expected AP)"


def direction_records(items, *, name: str = "described clips", protocol: str | Protocol = DIRECTION_PROTOCOL,
                      cache: str | None = None, encoder: str | None = None, folder=None) -> list[dict]:
    """``items`` (``ItemVectors`` of the example clips) scored under ``protocol``, and a random ranking: two records.

    ``protocol`` is ``quickstart-direction`` or ``direction_protocol(videos)``;
    ``name`` the scorer (the records' ``source``), ``cache`` and ``encoder``
    the description folder and the sentence encoder that made ``items``;
    ``folder``, the description cache folder, names in the score's record
    what wrote the texts (``describe.provenance.cache_provenance``: model,
    fingerprint, prompt, fps, software) when it holds a manifest.
    The score is mAP with tie-aware expected AP (maximum cosine, sentences,
    no bootstrap); the random ranking is the exact expected AP, which no
    order of tied scores moves (``tie_spread`` 0). The protocol's clips
    missing from ``items`` count as failures (``evaluation.evaluate``);
    items that hold none of them (other videos) give a record with no value
    and a note ``not scored: ...``.
    """
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    run = {"benchmark": protocol.benchmark, "bootstrap": 0, "seed": None}
    manifest = None if folder is None else read_cache_manifest(folder)
    scored = {"kind": "description cache", "source": name, **({} if manifest is None else
                                                               cache_provenance(manifest, folder)),
              "cache": cache, "encoder": encoder, "text_split": "sentences"}
    try:
        described = evaluate(protocol, items).to_record(**scored, note="", **run)
    except CoverageError as err:
        described = make_record(**scored, protocol=protocol.name, metric=protocol.metric, aggregate="max",
                                ties="expected", note=f"not scored: {err}", **run)
    random = baseline(protocol, "random-ranking").to_record(kind="baseline", source=RANDOM_SCORER,
                                                           baseline="random-ranking", tie_spread=0.0, **run)
    return [described, random]
