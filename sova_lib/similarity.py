"""Similarity between items that are *sets* of unit vectors (SOVABench paper, Section 4, Eq. 3).

An item (a clip or an image) is represented by one or more L2-normalised
vectors: one per sentence of its description, or one per frame for a
contrastive model. The similarity of two items is an aggregate of the cosines
between all pairs of their vectors; for two items alone it is the plain form
below, a few lines of numpy each:

* ``max_cosine(a, b)``: the largest pairwise cosine (Eq. 3, the paper's choice);
* ``mean_cosine(a, b)``: the mean over all ``|a| * |b|`` pairs;
* ``median_cosine(a, b)``: the median over all pairs.

``set_similarity`` is the fast path that every evaluation uses: vectors of
many items are stacked into one ``(M, D)`` array with an ``owner`` array
``(M,)`` giving each vector's item (0 .. n-1) (``ItemVectors``), and it
computes only the rows asked for (the queries of a protocol) against a
gallery, in blocks of query items, with one matrix product per block and a
grouped reduction; it never loops over item pairs in Python. Its entry
``[i, j]`` equals the plain function of query item ``i`` and gallery item
``j`` (held equal by ``tests/test_similarity.py``), apart from cosines within
``IDENTICAL_TOLERANCE`` of 1, which it sets to exactly 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AGGREGATES", "PLAIN", "IDENTICAL_TOLERANCE", "ItemVectors", "cosines", "l2_normalize", "max_cosine",
           "mean_cosine", "median_cosine", "set_similarity"]


# --------------------------------------------------------------------------- the plain form (two items)

def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cosine of every pair of vectors, ``(|a|, |b|)``: ``a`` ``(|a|, D)`` and ``b`` ``(|b|, D)`` unit rows."""
    return np.asarray(a) @ np.asarray(b).T


def max_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Eq. 3: the largest cosine between a vector of item ``a`` and a vector of item ``b`` (unit rows)."""
    return float(cosines(a, b).max())


def mean_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The mean cosine over all ``|a| * |b|`` pairs of vectors of ``a`` and ``b`` (unit rows)."""
    return float(cosines(a, b).mean())


def median_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The median cosine over all ``|a| * |b|`` pairs (the mean of the two middle ones for an even count)."""
    return float(np.median(cosines(a, b)))


#: Aggregate name -> its plain form for two items.
PLAIN = {"max": max_cosine, "mean": mean_cosine, "median": median_cosine}
AGGREGATES = tuple(PLAIN)

#: Similarities within this distance of 1 are set to exactly 1. A sentence's
#: cosine with an identical sentence is 1, but float32 rounding returns
#: 0.9999999 or 1.0000002 depending on the vector, which would break the ties
#: between clips that share a sentence (common with MLLM answers).
IDENTICAL_TOLERANCE = 1e-6


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

    def vectors_of(self, item_id) -> np.ndarray:
        """The vectors of the item with id ``item_id``, ``(count, D)``, in their stored order."""
        where = np.flatnonzero(np.asarray(self.ids) == item_id)
        if where.size != 1:
            raise KeyError(f"{item_id!r} is not one of the {len(self.ids)} item ids")
        return np.asarray(self.vectors)[np.asarray(self.owner) == where[0]]

    def select(self, positions: np.ndarray) -> "ItemVectors":
        """The items at ``positions`` (in that order), with their vectors grouped by item."""
        positions = np.asarray(positions, dtype=np.int64)
        order = np.argsort(np.asarray(self.owner, dtype=np.int64), kind="stable")
        counts = self.counts
        rows = order[_runs(np.cumsum(counts)[positions] - counts[positions], counts[positions])]
        new_owner = np.repeat(np.arange(positions.size), counts[positions])
        return ItemVectors(np.asarray(self.ids)[positions], new_owner, np.asarray(self.vectors)[rows])


def _runs(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ranges ``starts[i] .. starts[i] + lengths[i] - 1``, as one int64 array."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts, lengths) + (np.arange(total) - np.repeat(offsets, lengths))


def _by_count(items: ItemVectors, dtype):
    """Items grouped by their number of vectors ``c``, each group one dense block.

    Returns ``(vectors, item_order, groups)``. ``item_order`` lists the items
    by count; ``groups`` holds ``(c, n, first_item, first_row)`` for each
    distinct count. A group's ``n * c`` rows of ``vectors`` are laid out
    vector-major, as a ``(c, n, D)`` array: row ``k * n + i`` is the k-th
    vector of the group's i-th item, so reductions over an item's vectors run
    over whole contiguous slices.
    """
    counts = items.counts
    by_owner = np.argsort(np.asarray(items.owner, dtype=np.int64), kind="stable")
    starts = np.cumsum(counts) - counts  # each item's first row in owner order
    item_order = np.argsort(counts, kind="stable")
    values, first, sizes = np.unique(counts[item_order], return_index=True, return_counts=True)
    rows, groups, row0 = [], [], 0
    for c, f, n in zip(values.tolist(), first.tolist(), sizes.tolist()):
        item_starts = starts[item_order[f:f + n]]
        rows.append((item_starts[None, :] + np.arange(c)[:, None]).ravel())  # (c, n) vector-major
        groups.append((c, n, f, row0))
        row0 += c * n
    vectors = np.asarray(items.vectors)[by_owner[np.concatenate(rows)]]
    return np.ascontiguousarray(vectors, dtype=dtype), item_order, groups


def set_similarity(
    queries: ItemVectors,
    gallery: ItemVectors,
    *,
    aggregate: str = "max",
    block_vectors: int = 256,
    dtype=np.float32,
    consume=None,
) -> np.ndarray | None:
    """Item-to-item similarity matrix, ``(n_queries, n_gallery)``.

    Items are grouped by their number of vectors; the products of a block of
    query vectors with all gallery vectors then reduce group by group over
    contiguous slices (no per-pair loop). Identical gallery vectors (the same
    sentence in several descriptions) are multiplied once, so they give
    bit-identical scores and tie exactly, as the tie rules of
    ``metrics`` assume; a blocked matrix product could otherwise round the
    same dot product differently at different positions. Results within
    ``IDENTICAL_TOLERANCE`` of 1 are set to 1, for the same reason. ``block_vectors``
    bounds the query vectors per block (memory is about
    ``block_vectors * M_gallery`` floats); another block size can change a
    result by rounding alone (the matrix library may sum a dot product in
    another order for another block shape; one unit in the last place where
    measured).
    ``dtype`` is the precision of the products (float32 by default;
    float64 for exact comparisons). Vectors are used as given: pass unit rows
    for cosines.

    With ``consume``, the matrix is never assembled: each finished block of
    rows is handed to ``consume(query_positions, rows)`` (possibly from
    several threads at once, for disjoint positions) and the function
    returns None. Scoring each block as it comes keeps it in cache.
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"unknown aggregate {aggregate!r}; choose one of {AGGREGATES}")
    if np.shape(queries.vectors)[1] != np.shape(gallery.vectors)[1]:
        raise ValueError(f"query vectors have {np.shape(queries.vectors)[1]} dimensions, "
                         f"gallery vectors {np.shape(gallery.vectors)[1]}")
    qv, q_order, q_groups = _by_count(queries, dtype)
    gv, g_order, g_groups = _by_count(gallery, dtype)
    unique_gv, column = _unique_rows(gv)  # column[r]: where gallery row r lands in the product
    g_counts = gallery.counts[g_order]  # each gallery item's vector count, in count order
    column_of = np.argsort(g_order)  # count order -> the gallery's own order
    out = np.empty((len(q_order), len(g_order)), dtype=dtype) if consume is None else None
    consume = consume or out.__setitem__  # without a consumer, each block's rows fill the matrix

    def run(block):
        c_q, n_q, first_q, row_q, i0, b = block
        group = qv[row_q:row_q + c_q * n_q].reshape(c_q, n_q, qv.shape[1])[:, i0:i0 + b]
        per_item = _block_similarity(group, unique_gv, column, g_groups, g_counts, aggregate, dtype)
        per_item[per_item >= 1 - IDENTICAL_TOLERANCE] = 1  # identical vectors tie exactly
        # Rows and columns back to the callers' order while the block is in cache.
        consume(q_order[first_q + i0:first_q + i0 + b], per_item[:, column_of])

    # A block: items i0 .. i0 + b - 1 of a query count group (c_q, n_q, first_q, row_q), at most block_vectors
    # vectors (and one item at least).
    _run_blocks(run, [(c_q, n_q, first_q, row_q, i0, min(step, n_q - i0))
                      for c_q, n_q, first_q, row_q in q_groups
                      for step in [max(1, block_vectors // c_q)]
                      for i0 in range(0, n_q, step)])
    return out


def _block_similarity(group: np.ndarray, unique_gv: np.ndarray, column, g_groups: list, g_counts: np.ndarray,
                      aggregate: str, dtype) -> np.ndarray:
    """Similarity of ``b`` query items of ``c_q`` vectors each to every gallery item, ``(b, n_g)``.

    ``group`` ``(c_q, b, D)``: the query items' vectors, vector-major (as
    ``_by_count`` lays them out). The gallery is ``_by_count``'s layout:
    ``unique_gv`` its distinct rows and ``column`` each row's position
    there (None: all distinct), ``g_groups`` its count groups and
    ``g_counts`` ``(n_g,)`` each item's count; columns are in that count
    order. One product, then, for ``"max"`` and ``"mean"``, reductions over
    each gallery group's vectors and then over the query's; ``"median"``
    takes the median over all of a pair's cosines at once (a median of
    medians is not the median).
    """
    c_q, b, dim = group.shape
    n_g = len(g_counts)
    reduce = {"max": np.max, "mean": np.sum}.get(aggregate)
    sims = group.reshape(c_q * b, dim) @ unique_gv.T  # (c_q * b, unique gallery vectors)
    out = np.empty((b, n_g) if reduce is None else (c_q, b, n_g), dtype=dtype)
    for c_g, n, first_g, row_g in g_groups:
        cols = slice(row_g, row_g + c_g * n) if column is None else column[row_g:row_g + c_g * n]
        part = sims[:, cols].reshape(c_q, b, c_g, n)
        out[..., first_g:first_g + n] = np.median(part, axis=(0, 2)) if reduce is None else reduce(part, axis=2)
    if reduce is None:
        return out
    per_item = reduce(out, axis=0)
    if aggregate == "mean":
        per_item /= (c_q * g_counts).astype(dtype)
    return per_item


def _unique_rows(vectors: np.ndarray):
    """``(unique, column)``: the distinct rows of ``vectors`` and, for each row, its
    position in ``unique``; ``column`` is None when every row is distinct.

    Rows are first told apart by a random projection, summed row by row with
    numpy's fixed summation order (not a BLAS product, whose rounding can
    depend on a row's position), so equal rows always project alike; rows
    that share a projection are then compared bit for bit, so the result is
    exact.
    """
    rows = np.ascontiguousarray(vectors)
    direction = np.random.default_rng(0).standard_normal(rows.shape[1]).astype(rows.dtype)
    probe = (rows * direction).sum(axis=1, dtype=np.float64)
    _, first, column = np.unique(probe, return_index=True, return_inverse=True)
    column = column.ravel()
    if first.size < rows.shape[0] and not (rows[first[column]] == rows).all():
        # a projection shared by different rows: sort the bytes
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        _, first, column = np.unique(keys, return_index=True, return_inverse=True)
        column = column.ravel()
    return (rows, None) if first.size == rows.shape[0] else (rows[first], column)


def _run_blocks(run, blocks) -> None:
    """Run ``run`` on each block, on one thread per core with one BLAS thread each.

    Each block does its own product and reductions, so the reductions (which
    numpy runs on one thread) are spread over the cores too.
    """
    import os

    workers = min(4, os.cpu_count() or 1, len(blocks))
    if workers < 2:
        for block in blocks:
            run(block)
        return
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(run, blocks))  # each block's exception, if any, is raised here
