"""Similarity between items that are *sets* of unit vectors (SOVABench paper, Section 4, Eq. 3).

An item (a clip or an image) is represented by one or more L2-normalised
vectors: one per sentence of its description, or one per frame for a
contrastive model. The similarity of two items is an aggregate of the cosines
between all pairs of their vectors; for two items alone it is the plain form
below, a few lines of numpy each:

* ``max_cosine(a, b)``: the largest pairwise cosine (Eq. 3, the paper's choice);
* ``mean_cosine(a, b)``: the mean over all ``|a| * |b|`` pairs;
* ``median_cosine(a, b)``: the median over all pairs.

For sets of items, ``dense_similarity(queries, gallery)`` is the definition:
the full matrix of cosines between all their vectors, reduced per pair of
items.

``set_similarity`` is the fast path that every evaluation uses: vectors of
many items are stacked into one ``(M, D)`` array with an ``owner`` array
``(M,)`` giving each vector's item (0 .. n-1) (``ItemVectors``), and it
computes only the rows asked for (the queries of a protocol) against a
gallery, in blocks of query items, with one matrix product per block and a
grouped reduction; it never loops over item pairs in Python. Its entry
``[i, j]`` equals the plain function of query item ``i`` and gallery item
``j``, and so ``dense_similarity`` (held equal by ``tests/test_similarity.py``),
apart from cosines within ``IDENTICAL_TOLERANCE`` of 1, which it sets to
exactly 1. Its steps: lay items out by their number of vectors
(``_by_count``), multiply each gallery vector once (``_unique_rows``), cut
the queries into blocks (``_query_blocks``), compute each block's rows
(``_block_rows``, ``_block_similarity``) on a few threads (``_run_blocks``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AGGREGATES", "PLAIN", "IDENTICAL_TOLERANCE", "ItemVectors", "cosines", "dense_similarity", "l2_normalize",
           "max_cosine", "mean_cosine", "median_cosine", "set_similarity"]


# --------------------------------------------------------------------------- the definition (two items, then sets)

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


def dense_similarity(queries: ItemVectors, gallery: ItemVectors, aggregate: str = "max") -> np.ndarray:
    """The definition of ``set_similarity``, ``(n_queries, n_gallery)``: every vector of the queries against every
    vector of the gallery in one matrix, then each pair of items reduced over its block of that matrix."""
    full = cosines(queries.vectors, gallery.vectors)  # (M_queries, M_gallery)
    reduce = {"max": np.max, "mean": np.mean, "median": np.median}[aggregate]
    q_owner, g_owner = np.asarray(queries.owner), np.asarray(gallery.owner)
    return np.array([[reduce(full[np.ix_(q_owner == i, g_owner == j)]) for j in range(len(gallery.ids))]
                     for i in range(len(queries.ids))])


# --------------------------------------------------------------------------- the fast path

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


@dataclass(frozen=True)
class _Layout:
    """Items laid out for the fast path: grouped by their number of vectors, each group one dense block.

    ``item_order`` ``(n,)`` lists the items by count; ``groups`` holds
    ``(c, n, first_item, first_row)`` for each distinct count; ``counts``
    ``(n,)`` is each item's count in that order. A group's ``n * c`` rows of
    ``vectors`` are laid out vector-major, as a ``(c, n, D)`` array: row
    ``k * n + i`` is the k-th vector of the group's i-th item, so reductions
    over an item's vectors run over whole contiguous slices.
    """

    vectors: np.ndarray
    item_order: np.ndarray
    groups: list
    counts: np.ndarray


def _by_count(items: ItemVectors, dtype) -> _Layout:
    """Items grouped by their number of vectors ``c``, each group one dense block (see ``_Layout``)."""
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
    return _Layout(np.ascontiguousarray(vectors, dtype=dtype), item_order, groups, counts[item_order])


@dataclass(frozen=True)
class _Gallery:
    """The gallery as every block of queries multiplies it: ``_by_count``'s layout, its rows de-duplicated.

    ``unique`` holds the distinct rows of ``layout.vectors`` and ``column``
    each row's position there (None: all distinct); ``back`` maps the count
    order back to the gallery's own order.
    """

    layout: _Layout
    unique: np.ndarray
    column: np.ndarray | None
    back: np.ndarray

    @classmethod
    def of(cls, gallery: ItemVectors, dtype) -> "_Gallery":
        layout = _by_count(gallery, dtype)
        unique, column = _unique_rows(layout.vectors)
        return cls(layout, unique, column, np.argsort(layout.item_order))


def _check_pair(queries: ItemVectors, gallery: ItemVectors, aggregate: str) -> None:
    """Refuse an unknown aggregate or vectors of two different dimensions."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"unknown aggregate {aggregate!r}; choose one of {AGGREGATES}")
    if np.shape(queries.vectors)[1] != np.shape(gallery.vectors)[1]:
        raise ValueError(f"query vectors have {np.shape(queries.vectors)[1]} dimensions, "
                         f"gallery vectors {np.shape(gallery.vectors)[1]}")


def set_similarity(
    queries: ItemVectors,
    gallery: ItemVectors,
    *,
    aggregate: str = "max",
    block_vectors: int = 256,
    dtype=np.float32,
    consume=None,
) -> np.ndarray | None:
    """Item-to-item similarity matrix, ``(n_queries, n_gallery)``: ``dense_similarity``, fast.

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
    _check_pair(queries, gallery, aggregate)
    query_layout, prepared = _by_count(queries, dtype), _Gallery.of(gallery, dtype)
    out = None
    if consume is None:  # assemble the matrix from the blocks' rows
        out = np.empty((len(queries.ids), len(gallery.ids)), dtype=dtype)
        consume = out.__setitem__

    def run(block):
        consume(*_block_rows(query_layout, block, prepared, aggregate, dtype))

    _run_blocks(run, _query_blocks(query_layout, block_vectors))
    return out


def _query_blocks(layout: _Layout, block_vectors: int) -> list:
    """Blocks of query items ``(c, n, first_item, first_row, i0, b)``: items ``i0 .. i0 + b - 1`` of a count
    group of ``layout.groups`` (``c, n, first_item, first_row``), at most ``block_vectors`` vectors in all (and
    one item at least)."""
    blocks = []
    for c, n, first_item, first_row in layout.groups:
        step = max(1, block_vectors // c)
        blocks += [(c, n, first_item, first_row, i0, min(step, n - i0)) for i0 in range(0, n, step)]
    return blocks


def _block_rows(layout: _Layout, block: tuple, gallery: _Gallery, aggregate: str, dtype):
    """``(query_positions, rows)``: the similarity rows of one block of query items, in the callers' order."""
    c, n, first_item, first_row, i0, b = block
    group = layout.vectors[first_row:first_row + c * n].reshape(c, n, -1)[:, i0:i0 + b]
    per_item = _block_similarity(group, gallery, aggregate, dtype)
    per_item[per_item >= 1 - IDENTICAL_TOLERANCE] = 1  # identical vectors tie exactly
    # Rows and columns back to the callers' order while the block is in cache.
    return layout.item_order[first_item + i0:first_item + i0 + b], per_item[:, gallery.back]


def _block_similarity(group: np.ndarray, gallery: _Gallery, aggregate: str, dtype) -> np.ndarray:
    """Similarity of ``b`` query items of ``c_q`` vectors each to every gallery item, ``(b, n_g)``.

    ``group`` ``(c_q, b, D)``: the query items' vectors, vector-major (as
    ``_by_count`` lays them out); columns are in the gallery's count order.
    One product with the gallery's distinct rows, then, for ``"max"`` and
    ``"mean"``, reductions over each gallery group's vectors and then over
    the query's; ``"median"`` takes the median over all of a pair's cosines
    at once (a median of medians is not the median).
    """
    c_q, b, dim = group.shape
    n_g, column = len(gallery.layout.counts), gallery.column
    reduce = {"max": np.max, "mean": np.sum}.get(aggregate)
    sims = group.reshape(c_q * b, dim) @ gallery.unique.T  # (c_q * b, distinct gallery vectors)
    out = np.empty((b, n_g) if reduce is None else (c_q, b, n_g), dtype=dtype)
    for c_g, n, first_g, row_g in gallery.layout.groups:
        cols = slice(row_g, row_g + c_g * n) if column is None else column[row_g:row_g + c_g * n]
        part = sims[:, cols].reshape(c_q, b, c_g, n)
        out[..., first_g:first_g + n] = np.median(part, axis=(0, 2)) if reduce is None else reduce(part, axis=2)
    if reduce is None:
        return out
    per_item = reduce(out, axis=0)
    if aggregate == "mean":
        per_item /= (c_q * gallery.layout.counts).astype(dtype)
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
