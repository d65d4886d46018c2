"""MUVR-Base and MUVR-Filter evaluation: rank each partition's gallery, score, average (spec Sec. 4).

``evaluate_partition`` scores one partition's queries (Base) or single-literal
tag prompts (Filter) block by block as ``scoring.fused_rows`` hands them
over: per-query AP and R@k are computed on each block, and, for Base, the
fused rows are kept (4 bytes per query and video) for uAP. ``evaluate``
runs the partitions and reports the mean over partitions of each metric
(evaluate_all_vlm_mul.py:309-316) with each partition's values beside, in
percent. ``random_ranking`` is the exact expected value of a random ranking.

Gallery: ``Partition.gallery`` (the listed videos in ``videos.json`` order,
the order the ``"gallery-order"`` tie rule keeps), each query's own video
left out of its ranking. ``|G_q|`` counts a query's positives in the gallery, scored or not;
a gallery video without vectors is never ranked and a note says how many.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from sova_lib import metrics as core_metrics
from sova_lib.benchmarks.muvr import metrics
from sova_lib.benchmarks.muvr.data import Partition
from sova_lib.benchmarks.muvr.scoring import (
    TAG_WEIGHT,
    QueryVectors,
    fused_rows,
    tag_rows,
)
from sova_lib.similarity import ItemVectors

__all__ = ["VERSIONS", "MuvrResult", "PartitionScore", "evaluate", "evaluate_partition", "random_ranking",
           "rows_of"]

VERSIONS = ("base", "filter")


@dataclass
class PartitionScore:
    """Per-row values of one partition: ``ap`` ``(Q,)``, ``recall`` ``(Q, K)`` in [0, 1], ``uap`` or None."""

    name: str
    row_ids: list
    ap: np.ndarray
    recall: np.ndarray
    uap: float | None
    notes: list = field(default_factory=list)


@dataclass
class MuvrResult:
    """Percentages: ``metrics`` are means over partitions, ``per_partition`` each partition's values."""

    version: str
    query: str
    source: str
    ties: str
    tag_weight: float
    metrics: dict
    per_partition: dict
    n_rows: int
    ci: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    per_row: dict = field(default_factory=dict, repr=False)  # "partition/row id" -> AP (0-1)

    def to_json(self) -> dict:
        """A JSON-ready dict without the per-row values."""
        out = asdict(self)
        out.pop("per_row")
        return out


def rows_of(partition: Partition, version: str) -> list[tuple]:
    """The ranked rows: ``(row id, query id, positives, tag phrase or None, sign)``.

    Base: one row per query (``pos_all``). Filter: one per single-literal
    prompt, its id ``"<query id> <prompt>"``.
    """
    if version == "base":
        return [(q.id, q.id, q.positives, None, 0) for q in partition.queries]
    if version == "filter":
        return [(f"{p.query_id} {p.prompt}", p.query_id, p.positives, p.phrase, p.sign) for p in partition.prompts]
    raise ValueError(f"unknown version {version!r}; choose one of {VERSIONS}")


def _targets(rows, gallery_ids: list, in_partition: set):
    """Column lists of each row's scored positives, ``|G_q|``, and each row's own column (-1: none)."""
    column = {v: j for j, v in enumerate(gallery_ids)}
    cols, n_positive, own = [], [], []
    for _, qid, positives, _, _ in rows:
        kept = [p for p in positives if p in in_partition and p != qid]
        n_positive.append(len(kept))
        cols.append(np.array([column[p] for p in kept if p in column], dtype=np.int64))
        own.append(column.get(qid, -1))
    return cols, np.array(n_positive, dtype=np.int64), np.array(own, dtype=np.int64)


def _masks(indices, cols, own, n):
    relevant = np.zeros((len(indices), n), dtype=bool)
    valid = np.ones((len(indices), n), dtype=bool)
    for i, r in enumerate(indices):
        relevant[i, cols[r]] = True
        if own[r] >= 0:
            valid[i, own[r]] = False
    return relevant, valid


def evaluate_partition(partition: Partition, gallery: ItemVectors, queries: QueryVectors, *, version: str = "base",
                       query: str = "text+video", tag_weight: float = TAG_WEIGHT, ties: str = "expected",
                       ks=metrics.KS, uap: bool = True, block_vectors: int = 256, dtype=np.float32) -> PartitionScore:
    """Score one partition. ``gallery`` holds the scored videos (any subset of the partition's, any order).

    ``tag_weight`` is ``p`` (Filter only; 0 scores without the tag prompt).
    ``uap`` is computed for Base only (the paper reports none for Filter).
    """
    rows = rows_of(partition, version)
    gallery_ids = np.asarray(gallery.ids).tolist()
    notes = list(partition.notes)
    unscored = len(set(partition.gallery) - set(gallery_ids))
    if unscored:
        notes.append(f"{partition.name}: {unscored} gallery video(s) have no vectors; their positives count as misses")
    cols, n_positive, own = _targets(rows, gallery_ids, set(partition.gallery))
    empty = int((n_positive == 0).sum())
    if empty:
        notes.append(f"{partition.name}: {empty} row(s) have no positive in the gallery; AP 0, averaged in")
    query_ids = list(dict.fromkeys(r[1] for r in rows))
    q_index = {q: i for i, q in enumerate(query_ids)}
    rows_by_query = [[] for _ in query_ids]
    for r, row in enumerate(rows):
        rows_by_query[q_index[row[1]]].append(r)
    weight = tag_weight if version == "filter" else 0.0
    pairs = list(dict.fromkeys((r[1], r[3]) for r in rows if r[3] is not None)) if weight else []
    try:
        vectors = {k: queries.tag_vector(*pair) for k, pair in enumerate(pairs)}
    except KeyError as err:
        raise ValueError(f"{partition.name}: {err.args[0]}") from None
    tags = tag_rows(gallery, vectors, range(len(pairs)), block_vectors=block_vectors, dtype=dtype) if pairs else None
    pair_row = {pair: k for k, pair in enumerate(pairs)}
    n = len(gallery_ids)
    ap, recall = np.zeros(len(rows)), np.zeros((len(rows), len(ks)))
    kept = np.empty((len(rows), n), dtype=dtype) if uap and version == "base" else None

    def consume(positions, fused):
        indices = [r for p in positions for r in rows_by_query[p]]
        block = fused[[k for k, p in enumerate(positions) for _ in rows_by_query[p]]].astype(dtype)
        if tags is not None:
            signs = np.array([rows[r][4] for r in indices], dtype=dtype)[:, None]
            block = block + np.dtype(dtype).type(weight) * signs * tags[[pair_row[(rows[r][1], rows[r][3])] for r in indices]]
        relevant, valid = _masks(indices, cols, own, n)
        ap[indices] = metrics.average_precision_misses(block, relevant, valid, n_positive[indices], ties=ties)
        recall[indices] = metrics.recall_at_k(block, relevant, valid, n_positive[indices], ks=ks, ties=ties)
        if kept is not None:
            kept[indices] = block

    fused_rows(gallery, queries, query_ids, query, consume, block_vectors=block_vectors, dtype=dtype)
    value = None
    if kept is not None:
        relevant, valid = _masks(range(len(rows)), cols, own, n)
        value = metrics.unified_ap(kept, relevant, valid, n_positive, ties=ties)
    return PartitionScore(partition.name, [r[0] for r in rows], ap, recall, value, notes)


def _summarise(scores: list[PartitionScore], *, version, query, source, ties, tag_weight, ks, bootstrap, seed,
               notes=()) -> MuvrResult:
    per_partition, per_row = {}, {}
    for s in scores:
        entry = {"mAP": 100 * float(s.ap.mean()) if s.ap.size else 0.0}
        if s.uap is not None:
            entry["uAP"] = 100 * s.uap
        for j, k in enumerate(ks):
            entry[f"R@{k}"] = 100 * float(s.recall[:, j].mean()) if s.ap.size else 0.0
        entry["n_rows"] = int(s.ap.size)
        per_partition[s.name] = entry
        per_row.update({f"{s.name}/{r}": float(v) for r, v in zip(s.row_ids, s.ap)})
    keys = [k for k in per_partition[scores[0].name] if k != "n_rows"]
    summary = {k: float(np.mean([per_partition[s.name][k] for s in scores])) for k in keys}
    ci = {}
    if bootstrap:
        values = np.concatenate([s.ap for s in scores])
        groups = np.concatenate([np.full(s.ap.size, i) for i, s in enumerate(scores)])
        low, high = core_metrics.bootstrap_ci(values, np.random.default_rng(seed), groups=groups,
                                              n_resamples=bootstrap)
        ci["mAP"] = (100 * low, 100 * high)
    all_notes = [n for s in scores for n in s.notes] + list(notes)
    return MuvrResult(version, query, source, ties, tag_weight if version == "filter" else 0.0, summary,
                      per_partition, int(sum(s.ap.size for s in scores)), ci, all_notes, per_row)


def evaluate(partitions: list[Partition], vectors, *, version: str = "base", query: str = "text+video",
             tag_weight: float = TAG_WEIGHT, ties: str = "expected", ks=metrics.KS, bootstrap: int = 0,
             seed: int = 0, source: str = "", block_vectors: int = 256, dtype=np.float32) -> MuvrResult:
    """Score every partition with ``vectors(partition) -> (gallery ItemVectors, QueryVectors)``.

    ``bootstrap > 0`` adds a 95% interval of mAP from that many resamples of
    the rows within each partition (``sova_lib.metrics.bootstrap_ci`` with
    the partition as group: the statistic is the mean of partition means),
    drawn from ``numpy.random.default_rng(seed)``.
    """
    if version not in VERSIONS:
        raise ValueError(f"unknown version {version!r}; choose one of {VERSIONS}")
    scores = []
    for partition in partitions:
        gallery, queries = vectors(partition)
        scores.append(evaluate_partition(partition, gallery, queries, version=version, query=query,
                                         tag_weight=tag_weight, ties=ties, ks=ks, block_vectors=block_vectors,
                                         dtype=dtype))
    return _summarise(scores, version=version, query=query, source=source, ties=ties, tag_weight=tag_weight,
                      ks=ks, bootstrap=bootstrap, seed=seed)


def random_ranking(partitions: list[Partition], *, version: str = "base", ks=metrics.KS, bootstrap: int = 0,
                   seed: int = 0) -> MuvrResult:
    """Exact expected mAP, uAP and R@k of a uniformly random ranking of each partition's whole gallery."""
    scores = []
    for partition in partitions:
        rows = rows_of(partition, version)
        gallery = set(partition.gallery)
        _, n_positive, _ = _targets(rows, [], gallery)
        n_ranked = np.array([len(gallery) - (r[1] in gallery) for r in rows], dtype=np.int64)
        ap, recall = metrics.random_baseline(n_positive, n_ranked, ks=ks)
        uap = None
        if version == "base" and n_positive.sum():
            uap = float(core_metrics.random_ranking_ap(n_positive.sum(), n_ranked.sum()))
        scores.append(PartitionScore(partition.name, [r[0] for r in rows], ap, recall, uap, list(partition.notes)))
    return _summarise(scores, version=version, query="none", source="random-ranking", ties="n/a", tag_weight=0.0,
                      ks=ks, bootstrap=bootstrap, seed=seed,
                      notes=["random-ranking: exact expected values of a uniformly random ranking, query excluded"])
