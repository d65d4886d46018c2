"""The explorer's data, pure (no drawing): one query's ranking, and the queries of lowest AP.

``query_view(protocol, items, query)``: the query's AP under the protocol,
its top-k gallery items with their relevance, and for each item the pair of
sentences (one of the query, one of the item) whose cosine is the item's
similarity (the maximum of the paper's Eq. 3). ``worst_queries`` lists the
queries of lowest AP; ``load_cache`` reads a description cache or an
``.npz`` of vectors.

MUVR (``muvr_view``, ``muvr_worst_queries``, ``load_muvr_cache``): a
partition's Base queries ranked against its gallery by the score of
``sova_lib.benchmarks.muvr.fusion`` (``S_t``, ``S_v`` or their mean), with
the AP of ``muvr.retrieval.evaluate_vectors`` (a positive without vectors is a miss, the
query's own video is not ranked, the same tie rules); ``muvr_partitions``
and ``muvr_caches_of`` find a data root's partitions and released features.

``sova_lib.report.explore`` draws these views and puts them in a widget.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib import metrics
from sova_lib.benchmarks.muvr import PARTITIONS, MuvrDataError, load_partition, released_vectors
from sova_lib.benchmarks.muvr import metrics as muvr_metrics
from sova_lib.benchmarks.muvr.annotations import Partition, clean_description
from sova_lib.benchmarks.muvr.features import npz_vectors
from sova_lib.benchmarks.muvr.framework import framework_vectors, pool_windows
from sova_lib.benchmarks.muvr.fusion import fused_rows
from sova_lib.benchmarks.muvr.retrieval import evaluate_partition, row_masks, row_targets, rows_of
from sova_lib.evaluation import evaluate
from sova_lib.item_vectors import embed_descriptions, read_descriptions, read_embeddings
from sova_lib.protocols import Protocol, get_protocol
from sova_lib.sentences import split
from sova_lib.similarity import ItemVectors, max_cosine

__all__ = ["QueryView", "load_cache", "load_muvr_cache", "muvr_caches_of", "muvr_partitions", "muvr_view",
           "muvr_worst_queries", "query_view", "worst_queries"]

@dataclass
class QueryView:
    """One query's ranking. ``ap`` is in [0, 1]; ``hits`` is a DataFrame, best first.

    ``hits`` columns: ``rank``, ``id``, ``similarity`` (maximum cosine),
    ``relevant``, ``query sentence``, ``item sentence`` (the pair that gave
    the similarity; ``None`` for a cache of vectors without text),
    ``sentence pair`` (their 0-based positions), ``description``; a MUVR
    view adds ``text score`` (``S_t``) and ``video score`` (``S_v``), NaN
    where the query mode does not use them. ``ap`` is NaN for a query with
    no relevant item. ``notes`` says what the numbers leave out.
    """

    protocol: str
    query: object
    query_class: str
    ap: float
    n_relevant: int
    n_gallery: int
    query_description: str | None
    hits: object = field(repr=False)
    notes: list = field(default_factory=list)

    def summary(self) -> dict:
        """A JSON-ready dict: ``query``, ``AP`` (percent, 2 decimals; None when undefined), ``top``, ``relevant``."""
        return {"protocol": self.protocol, "query": self.query,
                "AP": None if np.isnan(self.ap) else round(100 * self.ap, 2),
                "top": self.hits["id"].tolist(), "relevant": [bool(r) for r in self.hits["relevant"]]}


def _task_of(protocol: Protocol, query):
    ids = protocol.ids().tolist()
    if query not in ids:
        raise ValueError(f"{query!r} is not a clip of protocol {protocol.name!r} (e.g. {ids[:3]})")
    pos = ids.index(query)
    for task in protocol.tasks():
        if pos in task.queries.tolist():
            return task, task.queries.tolist().index(pos), ids
    raise ValueError(f"clip {query!r} is not a query of protocol {protocol.name!r}")


def _sentences(texts, key, count):
    """The sentences of ``texts[key]`` when they are the item's vectors (one each, in order), else ``None``."""
    if texts is None or key not in texts:
        return None
    pieces = split(texts[key])
    return pieces if len(pieces) == count else None


def _hits(ids: list, scores: np.ndarray, relevant: np.ndarray, valid: np.ndarray, k: int, texts: dict | None,
          query_sentences, best, extra=()) -> pd.DataFrame:
    """The ``k`` best valid gallery items by ``scores`` (ties in gallery order): ``QueryView.hits``.

    ``best(n)`` gives gallery position ``n``'s vectors, the sentence pair
    (query row, item row) that gave its similarity and the values of the
    ``extra`` columns (a dict); ``query_sentences`` name the query's rows and
    ``texts`` (id -> description) the items' (None where unknown).
    """
    order = [n for n in np.argsort(-scores, kind="stable") if valid[n]][:k]
    rows = []
    for rank, n in enumerate(order, start=1):
        g = ids[n]
        target, pair, more = best(n)
        g_sentences = _sentences(texts, g, len(target))
        rows.append({"rank": rank, "id": g, "similarity": float(scores[n]), "relevant": bool(relevant[n]),
                     "query sentence": query_sentences[pair[0]] if query_sentences else None,
                     "item sentence": g_sentences[pair[1]] if g_sentences else None, "sentence pair": pair,
                     "description": texts.get(g) if texts else None, **more})
    return pd.DataFrame(rows, columns=["rank", "id", "similarity", "relevant", "query sentence", "item sentence",
                                       "sentence pair", "description", *extra])


def query_view(protocol: str | Protocol, items: ItemVectors, query, *, texts: dict | None = None, k: int = 5,
               ties: str = "expected") -> QueryView:
    """The ranking of ``query`` under ``protocol`` by the maximum sentence cosine of ``items``.

    ``texts`` (id -> description) gives the sentences; the item's vectors
    must be its ``sentences.split`` sentences in order (what
    ``embed_descriptions`` makes), else the sentence columns are ``None``.
    Every gallery clip must be in ``items`` (``ValueError`` otherwise). The
    AP counts the whole gallery under ``ties`` (``metrics.TIE_RULES``); the
    hits are the ``k`` best, ties in gallery order.
    """
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    task, row, ids = _task_of(protocol, query)
    have = set(np.asarray(items.ids).tolist())
    gallery = [ids[g] for g in task.gallery.tolist()]
    missing = [g for g in gallery + [query] if g not in have]
    if missing:
        raise ValueError(f"{len(missing)} clip(s) of the gallery of {query!r} have no vectors (e.g. {missing[:3]})")
    qv = items.vectors_of(query).astype(np.float64)
    targets = [items.vectors_of(g).astype(np.float64) for g in gallery]
    scores = np.array([max_cosine(qv, t) for t in targets])
    relevant, valid = task.relevance()[row], task.valid()[row]
    ap = float(metrics.average_precision_rows(scores[None], relevant[None], valid[None], ties=ties)[0])
    hits = _hits(gallery, scores, relevant, valid, k, texts, _sentences(texts, query, qv.shape[0]),
                 lambda n: (targets[n], _best_pair(qv, targets[n])[1], {}))
    clip = {c.index: c for c in protocol.clips()}[query]
    return QueryView(protocol=protocol.name, query=query, query_class=str(protocol.query_class(clip)), ap=ap,
                     n_relevant=int((relevant & valid).sum()), n_gallery=int(valid.sum()),
                     query_description=texts.get(query) if texts else None, hits=hits)


def worst_queries(protocol: str | Protocol, items: ItemVectors, *, n: int = 20, ties: str = "expected"):
    """The ``n`` queries of lowest AP under ``protocol`` (DataFrame ``id, class, AP`` in percent; ties by id order)."""
    proto = get_protocol(protocol) if isinstance(protocol, str) else protocol
    result = evaluate(proto, items, ties=ties)
    clips = {c.index: c for c in proto.clips()}
    frame = pd.DataFrame([{"id": i, "class": proto.query_class(clips[i]), "AP": 100 * v}
                          for i, v in result.per_query.items()])
    return frame.sort_values("AP", kind="stable").head(n).reset_index(drop=True)


def load_cache(source, encoder=None):
    """``(ItemVectors, texts or None)`` of a description cache (folder, JSONL, JSON) or an ``.npz`` of vectors.

    ``source`` may also be such a pair already. Descriptions need ``encoder``.
    """
    if isinstance(source, tuple):
        return source
    path = Path(source)
    if path.suffix == ".npz":
        return read_embeddings(path), None
    if encoder is None:
        raise ValueError(f"{path}: descriptions need a sentence encoder to be explored")
    texts = read_descriptions(path)
    return embed_descriptions(texts, encoder), texts


# --------------------------------------------------------------------------- MUVR

def muvr_partitions(root) -> dict:
    """name -> ``Partition`` of every partition of ``muvr.PARTITIONS`` present under the data ``root``.

    A partition folder that is absent is skipped; none at all raises
    ``MuvrDataError`` naming the folder looked in. Other annotation errors
    propagate (``load_partition`` names the file and key).
    """
    found = {}
    for name in PARTITIONS:
        try:
            found[name] = load_partition(root, name)
        except MuvrDataError as err:
            if "no such folder" not in str(err):
                raise
    if not found:
        raise MuvrDataError(Path(root) / "annotations" / "retrieval", None,
                            f"no partition folder of {PARTITIONS}; expected the released layout")
    return found


def muvr_caches_of(root) -> dict:
    """name -> folder of each released feature set under ``root/features/VLMs_1_15`` (the release's layout)."""
    base = Path(root) / "features" / "VLMs_1_15"
    return {f.name: f for f in sorted(base.iterdir()) if f.is_dir()} if base.is_dir() else {}


def load_muvr_cache(source, encoder=None, *, query: str = "text+video"):
    """``(vectors, texts or None)`` of a MUVR scorer: ``vectors(partition) -> (gallery, QueryVectors)``.

    ``source`` is a folder of released features (``<partition>/<video>.npy``
    and query dicts: ``muvr.released_vectors``), an ``.npz`` of
    ``write_vectors_npz``, a description cache of windows (a folder holding
    ``descriptions.jsonl``, or a ``.jsonl``/``.json`` file: the
    MLLM-to-Embedding framework, embedded by ``encoder``; ``texts`` are then
    each video's windows pooled), a ``vectors`` function, or such a pair.
    """
    if isinstance(source, tuple):
        return source
    if callable(source):
        return source, None
    path = Path(source)
    if path.suffix == ".npz":
        return npz_vectors(path), None
    if path.suffix in (".jsonl", ".json") or (path / "descriptions.jsonl").is_file():
        if encoder is None:
            raise ValueError(f"{path}: described windows need a sentence encoder to be explored")
        windows = read_descriptions(path)
        return framework_vectors(windows, encoder), pool_windows(windows)
    if not path.is_dir():
        raise ValueError(f"{path}: no such feature folder, .npz or description cache")
    return released_vectors(path, query=query), None


def _query_rows(vectors, query_id):
    """The rows of ``query_id`` in ``vectors`` (``ItemVectors`` or None), float64; None when absent."""
    if vectors is None or query_id not in np.asarray(vectors.ids).tolist():
        return None
    return vectors.vectors_of(query_id).astype(np.float64)


def _best_pair(rows, target):
    """``(cosine, (row, column))`` of the largest entry of ``rows @ target.T``; ``(nan, None)`` without rows."""
    if rows is None:
        return float("nan"), None
    sims = rows @ target.T
    a, b = np.unravel_index(int(np.argmax(sims)), sims.shape)
    return float(sims[a, b]), (int(a), int(b))


def muvr_view(partition: Partition, vectors, query_id, *, query: str = "text+video", texts: dict | None = None,
              k: int = 5, ties: str = "expected") -> QueryView:
    """The ranking of MUVR Base query ``query_id`` against ``partition``'s gallery.

    ``vectors`` is ``vectors(partition) -> (gallery, QueryVectors)``
    (``load_muvr_cache``) or that pair. The scores are ``fusion.fused_rows``'
    (``S_t``, ``S_v`` or ``S_tv`` as ``query`` says), the relevance and AP
    those of ``muvr.retrieval.evaluate_vectors`` (``retrieval.evaluate_partition``): positives
    are the query's ``pos_all`` videos in the gallery, ``|G_q|`` counts those
    without vectors as misses, the query's own video is not ranked, and
    ``ties`` is one of ``muvr.metrics.TIES``. Hits: the ``k`` best ranked
    videos, ties in the gallery's order. The sentence columns show the pair
    of the description and the video (``query`` ``text`` or ``text+video``)
    or of the query video and the video (``video``), with ``texts`` (video
    id -> pooled window text) giving the sentences.
    """
    rows = {r[0]: r for r in rows_of(partition, "base")}
    if query_id not in rows:
        raise ValueError(f"{query_id!r} is not a scored Base query of MUVR partition {partition.name!r} "
                         f"(e.g. {list(rows)[:3]})")
    gallery, queries = vectors(partition) if callable(vectors) else vectors
    _, qid, positives, _ = rows[query_id]
    cols, n_positive, own = row_targets([rows[query_id]], np.asarray(gallery.ids).tolist(), set(partition.gallery))
    (relevant,), (valid,) = row_masks([0], cols, own, len(gallery.ids))
    got = []
    fused_rows(gallery, queries, [qid], query, lambda _, block: got.append(np.asarray(block[0], dtype=np.float32)))
    scores = got[0]
    ap = float(muvr_metrics.average_precision_misses(scores[None], relevant[None], valid[None], n_positive,
                                                     ties=ties)[0])
    # the query's sides: a single description row is named by the description itself, the video's rows by the
    # sentences of texts[qid]
    text_rows = _query_rows(queries.text, qid) if query != "video" else None
    frame_rows = _query_rows(queries.frames, qid) if query != "text" else None
    description = clean_description(partition.query(qid).text)
    if query == "video":
        named = None if frame_rows is None else _sentences(texts, qid, len(frame_rows))
    elif text_rows is None:
        named = None
    else:
        named = [description] if len(text_rows) == 1 else _sentences({qid: description}, qid, len(text_rows))
    all_vectors, owner = np.asarray(gallery.vectors, dtype=np.float64), np.asarray(gallery.owner)

    def best(n):  # the pair of the description (text, text+video) or of the query video (video) with video n
        target = all_vectors[owner == n]
        s_t, t_pair = _best_pair(text_rows, target)
        s_v, v_pair = _best_pair(frame_rows, target)
        return target, v_pair if query == "video" else t_pair, {"text score": s_t, "video score": s_v}

    hits = _hits(np.asarray(gallery.ids).tolist(), scores, relevant, valid, k, texts, named, best,
                 ("text score", "video score"))
    notes = []
    unscored = int(n_positive[0]) - len(cols[0])  # |G_q| counts the positives without vectors: misses
    if qid in positives and qid in partition.gallery:
        notes.append("the query's own video is listed as its positive: a miss it can never rank (as in muvr.evaluate)")
    if unscored:
        notes.append(f"{unscored} positive(s) have no vectors: misses")
    return QueryView(protocol=f"MUVR {partition.name} ({query})", query=qid, query_class=partition.name, ap=ap,
                     n_relevant=int(n_positive[0]), n_gallery=int(valid.sum()), query_description=description,
                     hits=hits, notes=notes)


def muvr_worst_queries(partition: Partition, vectors, *, query: str = "text+video", n: int = 20,
                       ties: str = "expected"):
    """The ``n`` Base queries of ``partition`` of lowest AP (``retrieval.evaluate_vectors``'s); DataFrame ``id, class, AP`` (percent)."""
    gallery, queries = vectors(partition) if callable(vectors) else vectors
    score = evaluate_partition(partition, gallery, queries, query=query, ties=ties, uap=False)
    frame = pd.DataFrame({"id": score.row_ids, "class": partition.name, "AP": 100 * np.asarray(score.ap)})
    return frame.sort_values("AP", kind="stable").head(n).reset_index(drop=True)
