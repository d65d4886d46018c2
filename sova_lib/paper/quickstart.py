"""Looking inside the MLLM-to-Embedding framework, one step at a time (the quickstart's helpers).

* ``example_items``: the videos to describe, as runner ``Item`` objects,
  optionally each also played backwards;
* ``sentence_table``: every description split into its sentences;
* ``sentence_similarity``: the cosine between every pair of sentences of
  every description (the numbers the maximum of Eq. 3 is taken over);
* ``item_similarity``: the clip-to-clip similarity (maximum cosine);
* ``neighbours``: a query's top-k clips, each with the pair of sentences
  that decided the match;
* ``direction_protocol``: the built-in ``quickstart-direction`` protocol
  (``sova_lib.benchmarks.excerpts``), or the same question asked of the
  user's own videos;
* ``direction_records``: the clips scored under it, and a random ranking,
  as two records (``sova_lib.records``); ``direction_table`` reads them back
  from the collected records.

Sentences are cut with ``sentences.split`` and embedded with any encoder
that has ``encode(list[str]) -> (n, D)`` unit vectors (``SentenceEncoder``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sova_lib.benchmarks.excerpts import DIRECTION_PROTOCOL, REVERSED_SUFFIX, example_clips
from sova_lib.describe.cache import cache_folder, cache_key
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import describe_items
from sova_lib.evaluate import CoverageError, baseline, evaluate
from sova_lib.item_vectors import read_descriptions
from sova_lib.paper.results import select_rows
from sova_lib.protocols import Protocol, Task, get_protocol
from sova_lib.records import make_record
from sova_lib.sentences import split
from sova_lib.similarity import set_similarity
from sova_lib.video.frames import probe, sample_frames

__all__ = ["DIRECTION_PROTOCOL", "REVERSED_SUFFIX", "example_items", "describe_missing", "direction_protocol",
           "direction_records", "direction_table", "RANDOM_SCORER",
           "items_table", "sampled_frames", "sentence_table", "sentence_similarity", "item_similarity", "neighbours"]


def example_items(videos=(), *, with_reversed: bool = True):
    """Runner ``Item`` objects for ``videos`` (default: ``video.example_videos()``), ids = file stems.

    With ``with_reversed``, each video also appears played backwards, with
    id ``<stem>-reversed``: the same frames in the opposite order, which is
    what tells opposite actions apart.
    """

    return [clip.item() for clip in example_clips(videos, with_reversed=with_reversed)]


def describe_missing(describer, items, cache_dir, *, prompt, fps: float, crop_source: str = "none") -> Path:
    """Describe, through the runner, the items its cache folder lacks; returns the folder.

    The folder is the runner's (``runner.cache_folder`` of the configuration).
    When it already holds every item, nothing runs and nothing is rewritten
    (not even the manifest), so re-running a notebook leaves a committed
    cache as it was. ``prompt`` is a ``prompts.Prompt``.
    """

    folder = cache_folder(cache_dir, cache_key(describer.name, describer.config(), prompt, fps,
                                                crop_source=crop_source))
    try:
        done = read_descriptions(folder)
    except (FileNotFoundError, ValueError):  # no folder yet, or a torn line that the runner repairs
        done = {}
    if all(it.id in done for it in items):
        return folder
    summary = describe_items(describer, items, cache_dir, prompt=prompt, fps=fps, crop_source=crop_source,
                             run=RunOptions(show_progress=False))
    return summary.folder


def items_table(items):
    """One row per item: ``id, file, reversed, frames, fps, seconds`` (read from each file's header and packets)."""
    import pandas as pd


    rows = []
    for it in items:
        info = probe(it.path)
        rows.append({"id": it.id, "file": Path(it.path).name, "reversed": it.reverse, "frames": info.num_frames,
                     "fps": info.fps, "seconds": round(info.duration, 2)})
    return pd.DataFrame(rows)


def sampled_frames(items, fps: float):
    """The frames the paper's sampler picks from each item: a list of ``(id, images, timestamps in s)``."""

    strips = []
    for it in items:
        frames = sample_frames(it.path, rate=fps, window=it.window, crop=it.crop, reverse=it.reverse)
        strips.append((str(it.id), frames.images, frames.timestamps))
    return strips


def _pieces(texts: dict, ids) -> list[list[str]]:

    return [split(texts[i]) for i in ids]


def sentence_table(texts: dict):
    """One row per sentence: ``id``, ``sentence`` (1-based number within its description), ``text``."""
    import pandas as pd

    ids = list(texts)
    rows = [{"id": i, "sentence": k + 1, "text": s} for i, piece in zip(ids, _pieces(texts, ids))
            for k, s in enumerate(piece)]
    return pd.DataFrame(rows, columns=["id", "sentence", "text"])


def sentence_similarity(texts: dict, encoder, first, second):
    """Cosine between each sentence of description ``first`` (rows) and each of ``second`` (columns).

    Returns ``(matrix (S1, S2), row labels, column labels)``; a label reads
    ``#<k> <sentence>``. The maximum of the matrix is the two clips'
    similarity under the paper's Eq. 3.
    """
    for key in (first, second):
        if key not in texts:
            raise ValueError(f"no description with id {key!r}; ids: {list(texts)}")
    a, b = _pieces(texts, [first, second])
    va = np.asarray(encoder.encode(a), dtype=np.float64)
    vb = np.asarray(encoder.encode(b), dtype=np.float64)
    return va @ vb.T, [f"#{k + 1} {t}" for k, t in enumerate(a)], [f"#{k + 1} {t}" for k, t in enumerate(b)]


def item_similarity(items, *, aggregate: str = "max"):
    """Clip-to-clip similarity of ``ItemVectors``: ``(matrix (n, n), ids)``; the diagonal is each clip with itself."""

    return set_similarity(items, items, aggregate=aggregate).astype(np.float64), [str(i) for i in items.ids]


def neighbours(items, texts: dict, query, *, k: int = 3, aggregate: str = "max"):
    """The ``k`` clips most similar to ``query`` (itself left out), best first by ``aggregate``.

    Columns: ``rank, id, max cosine, mean cosine`` (over all sentence
    pairs), ``query sentence`` and ``matched sentence`` (the pair whose
    cosine is the maximum). Ranked by ``aggregate`` (``max`` or ``mean``);
    ties keep the order of ``items``.
    """
    import pandas as pd

    ids = [i for i in np.asarray(items.ids).tolist()]
    if query not in ids:
        raise ValueError(f"query {query!r} is not among the described clips {ids}")
    pieces = _pieces(texts, ids)
    owner = np.asarray(items.owner)
    vectors = np.asarray(items.vectors, dtype=np.float64)
    order = np.argsort(owner, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=len(ids)))])
    q = ids.index(query)
    qv = vectors[order[starts[q]:starts[q + 1]]]
    rows = []
    for g, gid in enumerate(ids):
        if g == q:
            continue
        sims = qv @ vectors[order[starts[g]:starts[g + 1]]].T
        a, b = np.unravel_index(int(np.argmax(sims)), sims.shape)
        rows.append({"id": gid, "max cosine": float(sims[a, b]), "mean cosine": float(sims.mean()),
                     "query sentence": pieces[q][a], "matched sentence": pieces[g][b]})
    if aggregate not in ("max", "mean"):
        raise ValueError(f"aggregate must be 'max' or 'mean', got {aggregate!r}")
    frame = pd.DataFrame(rows).sort_values(f"{aggregate} cosine", ascending=False, kind="stable").head(k)
    frame.insert(0, "rank", range(1, len(frame) + 1))
    return frame.reset_index(drop=True).round({"max cosine": 3, "mean cosine": 3})


def direction_protocol(videos=(), *, with_reversed: bool = True) -> Protocol:
    """The protocol that asks the quickstart's question of ``videos``: does a clip find those of its playing direction?

    No ``videos``: the registered ``quickstart-direction`` (the bundled
    excerpts and their reversed copies). Other videos: a protocol of the
    same rule on their clips (``example_clips(videos, with_reversed)``),
    named ``quickstart-direction (your videos)``: every clip a query against
    the others, relevant when it plays in the same direction. Without
    reversed copies every clip plays forward, so every other clip is
    relevant and every AP is 1; a clip alone has nothing to rank.
    """
    if not list(videos) and with_reversed:
        return get_protocol(DIRECTION_PROTOCOL)
    clips = example_clips(videos, with_reversed=with_reversed)

    def tasks():
        every = np.arange(len(clips), dtype=np.int64)
        return [Task(DIRECTION_PROTOCOL, every, every, np.array([c.direction for c in clips]))]

    return Protocol(f"{DIRECTION_PROTOCOL} (your videos)", "mAP", "the given videos (and their reversed copies), "
                    "each against the others; relevant = same playing direction", lambda: clips, tasks,
                    lambda c: c.direction, benchmark="your videos", class_name="direction")


#: The ``source`` of the random ranking's record beside the quickstart's score.
RANDOM_SCORER = "random ranking (exact expected AP)"


def direction_records(items, *, name: str = "described clips", protocol: str | Protocol = DIRECTION_PROTOCOL,
                      cache: str | None = None, encoder: str | None = None) -> list[dict]:
    """``items`` (``ItemVectors`` of the example clips) scored under ``protocol``, and a random ranking: two records.

    ``protocol`` is ``quickstart-direction`` or ``direction_protocol(videos)``;
    ``name`` the scorer (the records' ``source``), ``cache`` and ``encoder``
    the description folder and the sentence encoder that made ``items``.
    The score is mAP with tie-aware expected AP (maximum cosine, sentences,
    no bootstrap); the random ranking is the exact expected AP, which no
    order of tied scores moves (``tie_spread`` 0). Items that do not cover
    the protocol's clips (other videos, no reversed copies) give a record
    with no value and a note ``not scored: ...``.
    """
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    run = {"benchmark": protocol.benchmark, "bootstrap": 0, "seed": None}
    scored = {"kind": "description cache", "source": name, "cache": cache, "encoder": encoder, "text_split": "sentences"}
    try:
        described = evaluate(protocol, items).to_record(**scored, note="", **run)
    except CoverageError as err:
        described = make_record(**scored, protocol=protocol.name, metric=protocol.metric, aggregate="max",
                                ties="expected", note=f"not scored: {err}", **run)
    random = baseline(protocol, "random-ranking").to_record(kind="baseline", source=RANDOM_SCORER,
                                                           baseline="random-ranking", tie_spread=0.0, **run)
    return [described, random]


def direction_table(collected, protocol: str, *, cache: str | None = None, encoder: str | None = None):
    """The quickstart's score beside the random ranking, from a collected record table (``sova_lib.records``).

    Selects the ``direction_records`` of ``protocol`` (its name) made from
    ``cache`` with ``encoder``. One row per scorer: ``scorer``, ``mAP``
    (percent), ``tie spread`` (points) and ``queries``. A score without a
    value gives an empty table with the record's note in ``attrs["note"]``.
    """
    import pandas as pd

    columns = ["scorer", "mAP", "tie spread", "queries"]
    run = {"protocol": protocol, "bootstrap": 0}
    described = select_rows(collected, kind="description cache", cache=cache, encoder=encoder, **run)
    random = select_rows(collected, kind="baseline", baseline="random-ranking", **run)
    if len(described) != 1 or len(random) != 1 or pd.isna(described["value"][0]):
        table = pd.DataFrame(columns=columns)
        notes = described["note"].dropna().tolist()
        table.attrs["note"] = notes[0] if notes else f"not scored: no record of {protocol} in the collected table"
        return table
    rows = pd.concat([described, random], ignore_index=True)
    return pd.DataFrame({"scorer": rows["source"], "mAP": rows["value"], "tie spread": rows["tie_spread"],
                         "queries": rows["n_queries"].astype(int)}, columns=columns)
