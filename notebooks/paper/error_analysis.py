"""Per-pair error analysis of the intra-pair protocol (SOVABench paper, Appendix E).

What goes wrong when a describer cannot tell opposite actions apart:

* ``opposite_confusion``: for each pair (and each action), how often a
  query's top-ranked neighbour is a clip of the *opposite* action;
* ``worst_queries``: the queries with the lowest AP, their descriptions and
  their nearest neighbours, to read side by side;
* a labelling sheet (``write_labelling_sheet``, ``read_labels``): a CSV
  with one row per clip and an empty ``error_mode`` column that a
  researcher fills with one of ``ERROR_MODES``, the paper's four modes plus
  ``correct`` (the notebook counts the modes in its cells).

The paper's analysis (MiniCPM-V 4.5, task-aware prompt, the trunk pair, 97
clips) counted 34 hallucinations, 12 under-descriptions, 16 temporal
misunderstandings, 9 action assumptions and 26 correct descriptions; those
counts are in ``paper_results`` (``Appendix E``).

For a repository without real descriptions, ``synthetic_texts`` builds a
*synthetic demonstration*: every clip described by its own action name,
with a chosen fraction swapped to the opposite action or replaced by a
generic sentence. It is named synthetic wherever it appears; it is not a
model's output.

Ties: the top-ranked neighbour is taken tie-aware. When several gallery
clips share the highest score (within ``TIE_TOLERANCE``), each is the top
neighbour with equal probability, so a query contributes the share of
opposite-action clips among its tied best matches.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from sova_lib.benchmarks.sovabench import labels
from sova_lib.describe.provenance import cache_provenance
from sova_lib.protocols import get_protocol
from sova_lib.report.baselines import BENCHMARK as SOVABENCH
from sova_lib.report.cache_scan import FoundCache, find_description_caches
from sova_lib.similarity import set_similarity
from sova_lib.storage import write_text

__all__ = ["ERROR_MODES", "ERROR_MODE_HELP", "GENERIC_SENTENCE", "Analysed", "analysis_texts",
           "score_record", "synthetic_texts", "pair_similarities", "opposite_confusion", "worst_queries",
           "write_labelling_sheet", "read_labels"]

#: The paper's error modes, most severe first, then ``correct`` (Appendix E).
ERROR_MODES = ("hallucination", "under-description", "temporal misunderstanding", "action assumption", "correct")

ERROR_MODE_HELP = {
    "hallucination": "semantically wrong description or invented entities, objects or actions",
    "under-description": "factually right but omits the dynamic event (e.g. no mention of the trunk)",
    "temporal misunderstanding": "right action type, reversed direction (opening described as closing)",
    "action assumption": "right high-level action, required intermediate steps omitted",
    "correct": "the description states the clip's action",
}

#: The text a synthetic under-description uses: true of every clip, specific to none.
GENERIC_SENTENCE = "A vehicle is visible in the scene."


# --------------------------------------------------------------------------- synthetic demonstration

def synthetic_texts(protocol: str = "intra-pair", *, swap_fraction: float = 0.2, generic_fraction: float = 0.1,
                    rng: np.random.Generator):
    """Synthetic descriptions of every clip of ``protocol``, with deliberate errors.

    Each clip is described by its action name ("opening trunk"); distractors
    by their activity. Then, drawn with ``rng``, a ``swap_fraction`` of the
    action clips get the *opposite* action's name (a constructed temporal
    misunderstanding) and a further ``generic_fraction`` get
    ``GENERIC_SENTENCE`` (a constructed under-description).

    Returns ``(texts, constructed)``: ``texts`` maps id -> text;
    ``constructed`` is a DataFrame (``id, action, text, constructed_as``)
    saying what was done to each clip (``correct`` when untouched).
    """
    if not (0 <= swap_fraction and 0 <= generic_fraction and swap_fraction + generic_fraction <= 1):
        raise ValueError(f"fractions must be >= 0 and sum to at most 1, got {swap_fraction} and {generic_fraction}")
    clips = get_protocol(protocol).clips()
    draw = rng.random(len(clips))
    texts, rows = {}, []
    for clip, u in zip(clips, draw):
        if clip.is_distractor:
            text, made = clip.activity.replace("_", " "), "correct"
        elif u < swap_fraction:
            text, made = labels.opposite_of(clip.label), "temporal misunderstanding"
        elif u < swap_fraction + generic_fraction:
            text, made = GENERIC_SENTENCE, "under-description"
        else:
            text, made = clip.label, "correct"
        texts[clip.index] = text
        rows.append({"id": clip.index, "action": clip.label, "text": text, "constructed_as": made})
    return texts, pd.DataFrame(rows)


class Analysed(NamedTuple):
    """The descriptions ``analysis_texts`` chose: ``texts`` (id -> description), ``source`` (what they are, in words),
    ``constructed`` (``synthetic_texts``' record of the deliberate errors; ``None`` for a real cache) and ``cache``
    (the ``FoundCache`` read; ``None`` for the synthetic demonstration)."""

    texts: dict
    source: str
    constructed: object
    cache: FoundCache | None


def analysis_texts(cache_dir, cache_name: str = "", *, swap_fraction: float = 0.2, generic_fraction: float = 0.1,
                   rng: np.random.Generator) -> Analysed:
    """The descriptions to analyse: a real cache when one covers the intra-pair protocol, else a synthetic demonstration.

    ``cache_name`` picks a cache folder (its name under
    ``<cache_dir>/descriptions``); empty picks the first SOVABench cache that
    covers every intra-pair clip. Returns ``Analysed(texts, source,
    constructed, cache)``: ``source`` names what the texts are. A named
    cache that is missing or incomplete raises ``ValueError``.
    """

    caches = find_description_caches(cache_dir)
    if cache_name:
        chosen = [c for c in caches if c.name == cache_name]
        if not chosen:
            raise ValueError(f"no description cache named {cache_name!r} under {cache_dir}/descriptions; "
                             f"found: {[c.name for c in caches]}")
        if not chosen[0].covers("intra-pair"):
            present, needed = chosen[0].coverage["intra-pair"]
            raise ValueError(f"cache {cache_name!r} holds {present} of the {needed} intra-pair clips; "
                             "the error analysis needs all of them")
        return Analysed(chosen[0].texts, chosen[0].label, None, chosen[0])
    for c in caches:
        if c.is_sovabench and c.covers("intra-pair"):
            return Analysed(c.texts, c.label, None, c)
    texts, constructed = synthetic_texts("intra-pair", swap_fraction=swap_fraction,
                                         generic_fraction=generic_fraction, rng=rng)
    source = (f"SYNTHETIC DEMONSTRATION, not a model: each clip described by its action name, "
              f"{swap_fraction:.0%} swapped to the opposite action, {generic_fraction:.0%} replaced by a generic sentence")
    return Analysed(texts, source, constructed, None)


def score_record(result, analysed: Analysed, *, encoder: str) -> dict:
    """The intra-pair score of the analysed descriptions (``evaluate``'s ``result``) as one record (``sova_lib.records``).

    Kind ``description cache``, named by ``analysed.source`` and, for a real
    cache, what wrote it (``describe.provenance.cache_provenance``: folder,
    key hash, model, fingerprint, prompt, sampling, software); sentences and
    ``encoder``; no bootstrap (so no seed).
    """
    cache = analysed.cache
    found = {} if cache is None else cache_provenance(cache.manifest, cache.path)
    return result.to_record(kind="description cache", source=analysed.source, benchmark=SOVABENCH, encoder=encoder,
                            text_split="sentences", bootstrap=0, seed=None, note="", **found)


# --------------------------------------------------------------------------- similarities per pair

def pair_similarities(items, protocol: str = "intra-pair", *, aggregate: str = "max"):
    """For each task of ``protocol`` (a generator): ``(task, ids, sims)``.

    ``ids`` are the benchmark ids of the task's clip positions (all of the
    protocol's clips); ``sims`` is the ``(Q, N)`` query-by-gallery similarity
    with each query's own entry set to ``-inf``. ``items`` (``ItemVectors``)
    must hold every clip of the protocol.
    """

    proto = get_protocol(protocol)
    ids = proto.ids()
    where = {i: k for k, i in enumerate(np.asarray(items.ids).tolist())}
    missing = [i for i in ids.tolist() if i not in where]
    if missing:
        raise ValueError(f"{len(missing)} clips of {protocol!r} have no description (e.g. ids {missing[:5]})")
    pos = np.array([where[i] for i in ids.tolist()])
    for task in proto.tasks():
        sims = set_similarity(items.select(pos[task.queries]), items.select(pos[task.gallery]), aggregate=aggregate)
        sims = sims.astype(np.float64)
        sims[~task.valid()] = -np.inf
        yield task, ids, sims


#: Scores this close to a row's best count as tied with it: float32 products give identical texts
#: cosines that differ in the last bit.
TIE_TOLERANCE = 1e-6


def opposite_confusion(items, *, aggregate: str = "max"):
    """How often the top-ranked neighbour of an intra-pair query is the opposite action.

    Returns a DataFrame with one row per action and one ``all`` row per pair:
    ``pair, action, queries, top-1 opposite (%)`` (tie-aware, see the module
    docstring), ``top-1 same (%)`` (their complement) and ``chance (%)``
    (the share of opposite-action clips in each query's gallery, what a
    random ranking's top neighbour gives on average).
    """
    rows = []
    for task, _, sims in pair_similarities(items, "intra-pair", aggregate=aggregate):
        q_labels = task.labels[task.queries]
        opposite = q_labels[:, None] != task.labels[task.gallery][None, :]
        best = sims >= sims.max(axis=1, keepdims=True) - TIE_TOLERANCE  # tied (within TIE_TOLERANCE) at the top
        share = 100 * (best & opposite).sum(axis=1) / best.sum(axis=1)
        valid = task.valid()
        chance = 100 * (opposite & valid).sum(axis=1) / valid.sum(axis=1)
        for action in list(dict.fromkeys(q_labels.tolist())) + ["all"]:
            keep = q_labels == action if action != "all" else np.ones_like(share, bool)
            rows.append({"pair": task.name, "action": action, "queries": int(keep.sum()),
                         "top-1 opposite (%)": round(float(share[keep].mean()), 2),
                         "top-1 same (%)": round(float(100 - share[keep].mean()), 2),
                         "chance (%)": round(float(chance[keep].mean()), 2)})
    return pd.DataFrame(rows)


def worst_queries(items, texts: dict, result, *, pair: str | None = None, k: int = 10, neighbours: int = 3):
    """The ``k`` intra-pair queries with the lowest AP (of ``pair``, or of all pairs), with their neighbours.

    ``result`` is the intra-pair ``Result`` of ``evaluate`` on ``items`` (its
    ``per_query`` AP). ``k=None`` keeps every query of the pair (ordered by
    AP). Columns: ``id, pair, action, AP (%), description`` and, for each of
    the first ``neighbours`` ranked clips, ``n<j> id``, ``n<j> action``,
    ``n<j> similarity``, ``n<j> description``. Ties in the ranking are
    broken by gallery order.
    """
    rows = []
    for task, ids, sims in pair_similarities(items, "intra-pair", aggregate=result.aggregate):
        if pair is not None and task.name != pair:
            continue
        order = np.argsort(-sims, axis=1, kind="stable")
        for qi, q in enumerate(task.queries):
            qid = int(ids[q])
            row = {"id": qid, "pair": task.name, "action": task.labels[q],
                   "AP (%)": round(100 * result.per_query[qid], 2), "description": texts[qid]}
            for j in range(neighbours):
                g = task.gallery[order[qi, j]]
                gid = int(ids[g])
                row.update({f"n{j + 1} id": gid, f"n{j + 1} action": task.labels[g],
                            f"n{j + 1} similarity": round(float(sims[qi, order[qi, j]]), 3),
                            f"n{j + 1} description": texts[gid]})
            rows.append(row)
    if pair is not None and not rows:

        raise ValueError(f"unknown pair {pair!r}; choose one of {[p.name for p in labels.PAIRS]}")
    frame = pd.DataFrame(rows).sort_values(["AP (%)", "id"], kind="stable").reset_index(drop=True)
    return frame if k is None else frame.head(k)


# --------------------------------------------------------------------------- labelling sheet

_SHEET = ["source", "id", "pair", "action", "AP (%)", "description", "n1 action", "n1 description", "error_mode",
          "note"]


def write_labelling_sheet(frame, path, *, source: str, overwrite: bool = False) -> Path:
    """Write the clips of ``frame`` (``worst_queries`` output) as a CSV to label by hand.

    Columns: ``source`` (what made the descriptions, on every row), ``id,
    pair, action, AP (%), description, n1 action, n1 description`` and the
    empty ``error_mode`` and ``note`` for the researcher (``error_mode``
    takes one of ``ERROR_MODES``). An existing sheet is kept (labels are
    never overwritten) unless ``overwrite``.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        return path
    sheet = frame.assign(source=source).reindex(columns=_SHEET)
    for col in ("error_mode", "note"):
        sheet[col] = sheet[col].astype(object).where(sheet[col].notna(), "")
    return write_text(path, sheet.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC))


def read_labels(path):
    """A filled labelling sheet as a DataFrame; ``error_mode`` checked against ``ERROR_MODES``.

    Empty ``error_mode`` cells mean "not labelled yet". An unknown mode
    raises ``ValueError`` naming the file, the line and the clip id.
    """
    path = Path(path)
    frame = pd.read_csv(path, keep_default_na=False)
    for col in ("id", "error_mode"):
        if col not in frame:
            raise ValueError(f"{path}: no {col!r} column; write the sheet with write_labelling_sheet")
    for line, (cid, mode) in enumerate(zip(frame["id"], frame["error_mode"]), start=2):
        if mode.strip() and mode.strip() not in ERROR_MODES:
            raise ValueError(f"{path}, line {line} (clip {cid}): unknown error mode {mode!r}; "
                             f"use one of {', '.join(ERROR_MODES)} or leave it empty")
    frame["error_mode"] = frame["error_mode"].str.strip()
    return frame
