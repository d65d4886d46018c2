"""Similarity between items that are *sets* of unit vectors.

An item (a clip or an image) is represented by one or more L2-normalised
vectors: one per sentence of its description, or one per frame for a
contrastive model. Vectors of many items are stacked into one ``(M, D)``
array with an ``owner`` array ``(M,)`` giving each vector's item (0 .. n-1).

The similarity of two items is an aggregate of the cosines between all pairs
of their vectors (SOVABench paper, Eq. 3, uses the maximum):

* ``"max"``: the largest pairwise cosine (the paper's choice);
* ``"mean"``: the mean over all ``|a| * |b|`` pairs;
* ``"median"``: the median over all pairs.

``set_similarity`` computes only the rows asked for (the queries of a
protocol) against a gallery, in blocks of query items, with one matrix product
per block and a grouped reduction; it never loops over item pairs in Python.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AGGREGATES", "ItemVectors", "l2_normalize", "set_similarity"]

AGGREGATES = ("max", "mean", "median")


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32). A zero row raises ``ValueError``."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(f"{int((norms == 0).sum())} vector(s) have zero length and no direction")
    return vectors / norms


@dataclass(frozen=True)
class ItemVectors:
    """Vectors of ``n`` items, stacked.

    ``ids`` ``(n,)``: each item's id. ``owner`` ``(M,)``: for each vector, the
    position of its item in ``ids``. ``vectors`` ``(M, D)`` float32, unit rows.
    Every item owns at least one vector.
    """

    ids: np.ndarray
    owner: np.ndarray
    vectors: np.ndarray

    def __post_init__(self):
        ids, owner, vectors = np.asarray(self.ids), np.asarray(self.owner), np.asarray(self.vectors)
        if vectors.ndim != 2 or owner.shape != (vectors.shape[0],):
            raise ValueError(f"owner {owner.shape} must give one item per vector of vectors {vectors.shape}")
        if ids.ndim != 1:
            raise ValueError("ids must be 1-D")
        if owner.size and (owner.min() < 0 or owner.max() >= ids.size):
            raise ValueError("owner holds positions outside ids")
        counts = np.bincount(owner.astype(np.int64), minlength=ids.size)
        if (counts == 0).any():
            first = ids[np.flatnonzero(counts == 0)[:5]].tolist()
            raise ValueError(f"{int((counts == 0).sum())} item(s) own no vector, e.g. ids {first}")

    @property
    def counts(self) -> np.ndarray:
        """Number of vectors of each item, ``(n,)``."""
        return np.bincount(np.asarray(self.owner, dtype=np.int64), minlength=len(self.ids))

    def select(self, positions: np.ndarray) -> "ItemVectors":
        """The items at ``positions`` (in that order), with their vectors grouped by item."""
        positions = np.asarray(positions, dtype=np.int64)
        owner = np.asarray(self.owner, dtype=np.int64)
        order = np.argsort(owner, kind="stable")
        starts = np.concatenate([[0], np.cumsum(self.counts)])
        rows = np.concatenate([order[starts[p]:starts[p + 1]] for p in positions]) if positions.size else np.zeros(0, np.int64)
        new_owner = np.repeat(np.arange(positions.size), self.counts[positions])
        return ItemVectors(np.asarray(self.ids)[positions], new_owner, np.asarray(self.vectors)[rows])


def _grouped(items: ItemVectors):
    """Vectors sorted by owner, with the start row of each item's run."""
    owner = np.asarray(items.owner, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    counts = items.counts
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return np.ascontiguousarray(np.asarray(items.vectors, dtype=np.float32)[order]), starts, counts


def set_similarity(
    queries: ItemVectors,
    gallery: ItemVectors,
    *,
    aggregate: str = "max",
    block_vectors: int = 4096,
) -> np.ndarray:
    """Item-to-item similarity matrix, ``(n_queries, n_gallery)`` float32.

    ``block_vectors`` bounds the number of query vectors multiplied at once
    (memory is about ``block_vectors * M_gallery * 4`` bytes); any value gives
    the same result. Vectors are used as given: pass unit rows for cosines.
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"unknown aggregate {aggregate!r}; choose one of {AGGREGATES}")
    qv, q_starts, q_counts = _grouped(queries)
    gv, g_starts, g_counts = _grouped(gallery)
    if qv.shape[1] != gv.shape[1]:
        raise ValueError(f"query vectors have {qv.shape[1]} dimensions, gallery vectors {gv.shape[1]}")
    if aggregate == "median":
        return _median_similarity(qv, q_starts, q_counts, gv, g_starts, g_counts)
    out = np.empty((q_counts.size, g_counts.size), dtype=np.float32)
    reduce = np.maximum.reduceat if aggregate == "max" else np.add.reduceat
    item = 0
    while item < q_counts.size:
        # Take as many whole query items as fit in one block (at least one).
        stop = item + 1
        rows = q_counts[item]
        while stop < q_counts.size and rows + q_counts[stop] <= block_vectors:
            rows += q_counts[stop]
            stop += 1
        r0 = q_starts[item]
        sims = qv[r0:r0 + rows] @ gv.T  # (rows, M_gallery)
        per_gallery = reduce(sims, g_starts, axis=1)  # (rows, n_gallery)
        per_pair = reduce(per_gallery, q_starts[item:stop] - r0, axis=0)  # (items, n_gallery)
        if aggregate == "mean":
            per_pair /= np.outer(q_counts[item:stop], g_counts)
        out[item:stop] = per_pair
        item = stop
    return out


def _median_similarity(qv, q_starts, q_counts, gv, g_starts, g_counts):
    """Median over sentence pairs: one query item at a time, gallery NaN-padded to (n_g, L_g)."""
    n_g, l_g = g_counts.size, int(g_counts.max())
    g_slot = g_starts[:, None] + np.arange(l_g)[None, :]
    pad = np.arange(l_g)[None, :] >= g_counts[:, None]
    g_slot[pad] = 0
    out = np.empty((q_counts.size, n_g), dtype=np.float32)
    for i, (start, count) in enumerate(zip(q_starts, q_counts)):
        sims = (qv[start:start + count] @ gv.T)[:, g_slot]  # (L_q, n_g, L_g)
        sims[:, pad] = np.nan
        out[i] = np.nanmedian(sims.transpose(1, 0, 2).reshape(n_g, -1), axis=1)
    return out
