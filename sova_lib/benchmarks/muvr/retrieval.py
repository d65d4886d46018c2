"""MUVR-Base and MUVR-Filter evaluation: rank each partition's gallery, score, average (spec Sec. 4).

``evaluate_partition`` scores one partition's queries (Base) or single-literal
tag prompts (Filter) block by block as ``fusion.fused_rows`` hands them
over: per-query AP and R@k are computed on each block, and, for Base, the
fused rows are kept (4 bytes per query and video) for uAP. ``evaluate_vectors``
runs the partitions and reports the mean over partitions of each metric
(evaluate_all_vlm_mul.py:309-316) with each partition's values beside, in
percent. ``random_ranking`` is the exact expected value of a random ranking.

Gallery: ``Partition.gallery`` (the listed videos in ``videos.json`` order,
the order the ``"gallery-order"`` tie rule keeps), each query's own video
left out of its ranking (cuvr.py:250) while other query videos listed in the
gallery are ranked. ``|G_q|`` counts a row's positives in the gallery, scored
or not (``set(positives).intersection(all_db)``, cuvr.py:245,266): a query
listed in its own list counts as a positive it can never rank (a miss), as
in the official evaluator for one topic; a listed positive outside the
gallery (only possible for a Filter list) is not counted. A gallery video
without vectors is never ranked and a note says how many. Base rows are the
queries with a ``pos_all`` list (cuvr.py:546-547); uAP also ranks the pairs
of the queries without one, as negatives (cuvr.py:262-273).

Filter score (``get_final_similarities``, cuvr.py:293-341, with ``mode`` =
``tag_weight``): ``T`` = the sum of the prompt's signed tag scores;
``0 <= p <= 1``: ``S + p * T``; ``p > 1``: with ``K = int(p)``, ``T`` for
the videos whose Base score is at least the ``K``-th largest of the row (the
query's own video included, as it is in the official similarity dict), and
``S - 2`` for the others.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from sova_lib import metrics as core_metrics
from sova_lib.benchmarks.muvr import metrics
from sova_lib.benchmarks.muvr.annotations import BENCHMARK, Partition
from sova_lib.benchmarks.muvr.fusion import (
    TAG_WEIGHT,
    QueryVectors,
    fused_rows,
    tag_rows,
)
from sova_lib.records import make_record
from sova_lib.similarity import ItemVectors
from sova_lib.wording import counted

__all__ = ["VERSIONS", "MuvrResult", "PartitionScore", "evaluate_partition", "evaluate_vectors", "random_ranking",
           "record_metrics", "row_masks", "row_targets", "rows_of"]

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


# Field lists of the same shape, deliberately: MuvrResult, muvr.qa.QAResult and report.compare.Comparison are each a
# plain record of their own numbers (a scan for repeated code pairs them; they share no logic).
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
    context: dict = field(default_factory=dict, repr=False)  # record fields: what was scored and how

    def text(self) -> str:
        """The scores as ``sova muvr evaluate`` prints them: every metric, then each partition's mAP."""
        head = "  ".join(f"{k} {v:.1f}" for k, v in self.metrics.items())
        return "\n".join([f"MUVR-{self.version} ({self.query}, ties {self.ties}): {head}",
                          *(f"  {name:<9} mAP {values['mAP']:5.1f}  over {values['n_rows']} rows"
                            for name, values in self.per_partition.items())])

    def to_json(self) -> dict:
        """A JSON-ready dict without the per-row values, ``benchmark`` first (what ``sova muvr evaluate --json``
        prints)."""
        fields = {k: v for k, v in asdict(self).items() if k not in ("per_row", "context")}
        return {"benchmark": BENCHMARK, **fields}

    def to_record(self, **fields) -> dict:
        """This evaluation as one ``sova_lib.records`` record (one row of ``figures/results.csv``).

        ``benchmark`` is ``muvr``; ``protocol`` the version and query modality, and the tag weight of Filter
        (``"base text+video"``, ``"filter text+video p=0.3"``); ``metric``
        ``mAP`` with ``value`` the mean over partitions and its interval;
        ``n_queries`` the scored rows; ``per_class`` each partition's mAP (2
        decimals); ``ties`` as scored; ``aggregate`` ``max``; ``note`` the
        other metrics as ``"name value"`` pairs (2 decimals) joined by ``", "``
        (``record_metrics`` reads them back), then the result's notes, joined
        by ``"; "``. ``context`` and then ``fields`` (``kind``, ``source``,
        ``bootstrap``, ``seed``, ``baseline``, ``cache``, ``encoder``,
        ``text_split``) say what was scored and how.
        """
        others = ", ".join(f"{k} {v:.2f}" for k, v in self.metrics.items() if k != "mAP")
        weight = f" p={self.tag_weight:g}" if self.version == "filter" else ""
        low, high = self.ci.get("mAP", (None, None))
        return make_record(benchmark=BENCHMARK, protocol=f"{self.version} {self.query}{weight}",
                           metric="mAP", value=self.metrics["mAP"], ci_low=low, ci_high=high, n_queries=self.n_rows,
                           per_class={p: round(v["mAP"], 2) for p, v in self.per_partition.items()}, ties=self.ties,
                           aggregate="max", note="; ".join([others, *self.notes]), **{**self.context, **fields})


def record_metrics(record) -> dict:
    """Every metric of a MUVR retrieval record (``MuvrResult.to_record``): ``mAP`` from ``value``, the others
    read back from the first part of its ``note`` (2 decimals)."""
    others = (record["note"] or "").split("; ")[0]
    pairs = (pair.rsplit(" ", 1) for pair in filter(None, others.split(", ")))
    return {"mAP": record["value"], **{name: float(value) for name, value in pairs}}


def rows_of(partition: Partition, version: str) -> list[tuple]:
    """The scored rows: ``(row id, query id, positives, (sign, tag phrase) conditions)``.

    Base: one row per query with a ``pos_all`` list. Filter: one per prompt
    that is not an AND/OR combination, its id ``"<query id> <prompt>"``.
    """
    if version == "base":
        return [(q.id, q.id, q.positives, ()) for q in partition.queries if q.positives is not None]
    if version == "filter":
        return [(f"{p.query_id} {p.prompt}", p.query_id, p.positives, p.conditions) for p in partition.prompts]
    raise ValueError(f"unknown version {version!r}; choose one of {VERSIONS}")


def _uap_only_rows(partition: Partition) -> list[tuple]:
    """Base: the queries without a ``pos_all`` list, ranked in uAP only, every pair a negative (cuvr.py:262-273)."""
    return [(q.id, q.id, (), ()) for q in partition.queries if q.positives is None]


def row_targets(rows, gallery_ids: list, in_partition: set):
    """Column lists of each row's scored positives, ``|G_q|``, and each row's own column (-1: none)."""
    column = {v: j for j, v in enumerate(gallery_ids)}
    cols, n_positive, own = [], [], []
    for _, qid, positives, _ in rows:
        kept = [p for p in positives if p in in_partition]  # its own video stays: a miss (cuvr.py:245,250)
        n_positive.append(len(kept))
        cols.append(np.array([column[p] for p in kept if p in column], dtype=np.int64))
        own.append(column.get(qid, -1))
    return cols, np.array(n_positive, dtype=np.int64), np.array(own, dtype=np.int64)


def row_masks(indices, cols, own, n):
    """``(relevant, valid)`` ``(len(indices), n)`` of rows ``indices`` (``row_targets``): the own column not valid."""
    relevant = np.zeros((len(indices), n), dtype=bool)
    valid = np.ones((len(indices), n), dtype=bool)
    for i, r in enumerate(indices):
        relevant[i, cols[r]] = True
        if own[r] >= 0:
            valid[i, own[r]] = False
    return relevant, valid


def _score_notes(partition: Partition, reported: list, gallery_ids: list, n_positive: np.ndarray) -> list[str]:
    """The partition's notes, then one line each for unscored gallery videos, positives outside the gallery and
    reported rows with no positive in it."""
    unscored = len(set(partition.gallery) - set(gallery_ids))
    outside = sum(len(set(r[2]) - set(partition.gallery)) for r in reported)
    empty = int((n_positive[:len(reported)] == 0).sum())
    lines = ((unscored, f"{counted(unscored, 'gallery video has', 'gallery videos have')} no vectors; their positives "
                        "count as misses"),
             (outside, f"{counted(outside, 'listed positive is', 'listed positives are')} in no query_rel_lists.json "
                       "list, so not in the gallery; not counted, as in the official evaluator"),
             (empty, f"{empty} row(s) have no positive in the gallery; AP 0, averaged in"))
    return list(partition.notes) + [f"{partition.name}: {line}" for count, line in lines if count]


def _tag_terms(name: str, rows: list, gallery: ItemVectors, queries: QueryVectors, weight: float,
               dtype) -> tuple[np.ndarray, np.ndarray]:
    """The tag score rows of every distinct (query, tag phrase) of ``rows`` ``(P, N)`` (``P = 0`` when there is
    none or ``weight`` is 0), and each row's signed sum over its conditions ``(R, P)``: ``signs @ tags`` is ``T``."""
    pairs = list(dict.fromkeys((r[1], phrase) for r in rows for _, phrase in r[3])) if weight else []
    try:
        vectors = [queries.tag_vector(*pair) for pair in pairs]
    except KeyError as err:
        raise ValueError(f"{name}: {err.args[0]}") from None
    tags = tag_rows(gallery, vectors, dtype=dtype) if pairs else np.zeros((0, len(gallery.ids)), dtype=dtype)
    signs = np.zeros((len(rows), len(pairs)), dtype=dtype)  # row -> signed sum over its conditions' tag rows
    pair_row = {pair: k for k, pair in enumerate(pairs)}
    for r, row in enumerate(rows):
        for sign, phrase in (row[3] if pairs else ()):
            signs[r, pair_row[(row[1], phrase)]] += sign
    return tags, signs


def _filter_block(block: np.ndarray, term: np.ndarray, weight: float, n: int, dtype) -> np.ndarray:
    """The Filter scores of Base rows ``block`` ``(R, N)`` with tag sums ``term`` ``T`` (module docstring)."""
    if weight <= 1:
        return block + np.dtype(dtype).type(weight) * term
    # top-K mode (cuvr.py:293-311,332-341): K-th largest Base score of the whole row, own video included
    kth = -np.sort(-block, axis=1)[:, min(int(weight), n) - 1][:, None]
    return np.where(block >= kth, term, block - 2).astype(dtype)


def evaluate_partition(partition: Partition, gallery: ItemVectors, queries: QueryVectors, *, version: str = "base",
                       query: str = "text+video", tag_weight: float = TAG_WEIGHT, ties: str = "expected",
                       ks=metrics.KS, uap: bool = True, dtype=np.float32) -> PartitionScore:
    """Score one partition. ``gallery`` holds the scored videos (any subset of the partition's, any order).

    ``tag_weight`` is ``p`` (Filter only; 0 scores without the tag prompt).
    ``uap`` is computed for Base only (the paper reports none for Filter).
    """
    if tag_weight < 0:
        raise ValueError(f"tag_weight must be at least 0 (the official mode is), got {tag_weight}")
    reported = rows_of(partition, version)
    rows = reported + (_uap_only_rows(partition) if uap and version == "base" else [])
    gallery_ids = np.asarray(gallery.ids).tolist()
    cols, n_positive, own = row_targets(rows, gallery_ids, set(partition.gallery))
    notes = _score_notes(partition, reported, gallery_ids, n_positive)
    by_query: dict = {}  # query id -> its row indices, queries in first-seen order
    for r, row in enumerate(rows):
        by_query.setdefault(row[1], []).append(r)
    query_ids, rows_by_query = list(by_query), list(by_query.values())
    weight = tag_weight if version == "filter" else 0.0
    tags, signs = _tag_terms(partition.name, rows, gallery, queries, weight, dtype)
    n = len(gallery_ids)
    ap, recall = np.zeros(len(rows)), np.zeros((len(rows), len(ks)))
    kept = np.empty((len(rows), n), dtype=dtype) if uap and version == "base" else None

    def consume(positions, fused):
        indices = [r for p in positions for r in rows_by_query[p]]
        block = fused[[k for k, p in enumerate(positions) for _ in rows_by_query[p]]].astype(dtype)
        if weight:
            block = _filter_block(block, signs[indices] @ tags, weight, n, dtype)
        relevant, valid = row_masks(indices, cols, own, n)
        ap[indices] = metrics.average_precision_misses(block, relevant, valid, n_positive[indices], ties=ties)
        recall[indices] = metrics.recall_at_k(block, relevant, valid, n_positive[indices], ks=ks, ties=ties)
        if kept is not None:
            kept[indices] = block

    fused_rows(gallery, queries, query_ids, query, consume, dtype=dtype)
    value = None
    if kept is not None:
        relevant, valid = row_masks(range(len(rows)), cols, own, n)
        value = metrics.unified_ap(kept, relevant, valid, n_positive, ties=ties)
    m = len(reported)
    return PartitionScore(partition.name, [r[0] for r in reported], ap[:m], recall[:m], value, notes)


def _summarise(scores: list[PartitionScore], *, version, query, source, ties, tag_weight, bootstrap, seed,
               notes=()) -> MuvrResult:
    per_partition, per_row = {}, {}
    for s in scores:
        entry = {"mAP": 100 * float(s.ap.mean()) if s.ap.size else 0.0}
        if s.uap is not None:
            entry["uAP"] = 100 * s.uap
        for j, k in enumerate(metrics.KS):
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


def evaluate_vectors(partitions: list[Partition], vectors, *, version: str = "base", query: str = "text+video",
             tag_weight: float = TAG_WEIGHT, ties: str = "expected", bootstrap: int = 0, seed: int = 0,
             source: str = "") -> MuvrResult:
    """Score every partition with ``vectors(partition) -> (gallery ItemVectors, QueryVectors)``.

    ``bootstrap > 0`` adds a 95% interval of mAP from that many resamples of
    the rows within each partition (``sova_lib.metrics.bootstrap_ci`` with
    the partition as group: the statistic is the mean of partition means),
    drawn from ``numpy.random.default_rng(seed)``.
    """
    if version not in VERSIONS:
        raise ValueError(f"unknown version {version!r}; choose one of {VERSIONS}")
    scores = [evaluate_partition(p, *vectors(p), version=version, query=query, tag_weight=tag_weight, ties=ties)
              for p in partitions]
    return _summarise(scores, version=version, query=query, source=source, ties=ties, tag_weight=tag_weight,
                      bootstrap=bootstrap, seed=seed)


def random_ranking(partitions: list[Partition], *, version: str = "base", bootstrap: int = 0,
                   seed: int = 0) -> MuvrResult:
    """Exact expected mAP, uAP and R@k of a uniformly random ranking of each partition's whole gallery."""
    scores = []
    for partition in partitions:
        rows = rows_of(partition, version)
        gallery = set(partition.gallery)
        _, n_positive, _ = row_targets(rows, [], gallery)
        # a query listed in its own list is a positive it never ranks: the ranking holds the others
        ranked = np.array([len([p for p in r[2] if p in gallery and p != r[1]]) for r in rows], dtype=np.int64)
        n_ranked = np.array([len(gallery) - (r[1] in gallery) for r in rows], dtype=np.int64)
        share = np.where(n_positive > 0, ranked / np.maximum(n_positive, 1), 0.0)
        ap, recall = metrics.random_baseline(ranked, n_ranked)
        ap, recall = ap * share, recall * share[:, None]
        uap = None
        if version == "base" and n_positive.sum():
            extra = sum(len(gallery) - (r[1] in gallery) for r in _uap_only_rows(partition))
            uap = (float(core_metrics.random_ranking_ap(ranked.sum(), n_ranked.sum() + extra)
                         * ranked.sum() / n_positive.sum()) if ranked.sum() else 0.0)
        scores.append(PartitionScore(partition.name, [r[0] for r in rows], ap, recall, uap, list(partition.notes)))
    return _summarise(scores, version=version, query="none", source="random-ranking", ties="n/a", tag_weight=0.0,
                      bootstrap=bootstrap, seed=seed,
                      notes=["random-ranking: exact expected values of a uniformly random ranking, query excluded"])
