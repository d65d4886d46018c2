"""MUVR's query scores: frame-set maximum cosine and score fusion (MUVR paper, Sec. 4.1; spec Sec. 3).

A video is a set of unit vectors (15 frame features, or the sentences of its
described windows). ``Score(A, B)`` is the largest cosine between a vector of
``A`` and one of ``B`` (evaluate_all_vlm_mul.py:51-61), computed by
``sova_lib.similarity.set_similarity`` with ``aggregate="max"``:

* ``S_v`` = Score(query frames, target frames): query ``"video"``;
* ``S_t`` = Score({description}, target frames): query ``"text"``;
* ``S_tv`` = ``(S_v + S_t) / 2``: query ``"text+video"`` (scores fused, not features);
* Filter: ``S = S_q + p * s * Score({tag phrase}, target frames)`` with
  ``s = +1`` for ``+tag`` and ``-1`` for ``-tag``, ``p = 0.3`` with the tag
  prompt and 0 without (cuvr.py:313-341); the tag phrase's vector is the
  query's own (``QueryVectors.tag_vector``).

No score is normalised. Only the rows that queries need are computed: the
description rows (one vector per query) and the tag rows (one per distinct
(query, phrase) vector) are whole ``(rows, N)`` matrices, which are small; the frame rows go
through ``set_similarity`` in blocks of ``block_vectors`` query vectors and
are fused and handed to ``consume`` block by block, so no ``(Q*15, N*15)``
product is ever held (for ``"text"`` alone, the description rows are handed
over block by block the same way).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sova_lib.similarity import ItemVectors, set_similarity
from sova_lib.wording import counted

__all__ = ["QUERY_MODES", "TAG_WEIGHT", "QueryVectors", "fused_rows", "tag_rows"]

QUERY_MODES = ("text", "video", "text+video")
#: Weight ``p`` of the tag term "with tag prompt" (Table 8; 3_muvr_filter.sh).
TAG_WEIGHT = 0.3


@dataclass
class QueryVectors:
    """One partition's query side.

    ``frames``: the query videos' vectors (ids = query ids), needed for
    ``"video"`` and ``"text+video"``; ``text``: each query's description
    vectors (ids = query ids; one row for CLIP features, several for split
    sentences); ``tags``: tag phrase -> one unit vector (or ``(k, D)`` rows),
    one vector per phrase for every query; ``query_tags``: query id ->
    {tag phrase: vector}, each query's own tag vectors (the released
    ``<query id>_query_dict.pkl``). A query listed in ``query_tags`` takes
    its phrases from there only, as the official evaluator does
    (evaluate_all_vlm_mul.py:139-147,189-195); the others from ``tags``.
    """

    frames: ItemVectors | None = None
    text: ItemVectors | None = None
    tags: dict = field(default_factory=dict)
    query_tags: dict = field(default_factory=dict)

    def tag_vector(self, query_id, phrase):
        """The vector of ``phrase`` for ``query_id``: its own if it has any, else the shared one; KeyError if none."""
        if query_id in self.query_tags:
            own = self.query_tags[query_id]
            if phrase not in own:
                raise KeyError(f"query {query_id!r} has no vector of its tag phrase {phrase!r} "
                               f"(it has {sorted(own)[:5]})")
            return own[phrase]
        if phrase not in self.tags:
            raise KeyError(f"tag phrase {phrase!r} of query {query_id!r} has no vector")
        return self.tags[phrase]


def _positions(items: ItemVectors, ids, what: str) -> np.ndarray:
    where = {v: i for i, v in enumerate(np.asarray(items.ids).tolist())}
    missing = [i for i in ids if i not in where]
    if missing:
        raise ValueError(f"{counted(len(missing), 'query has', 'queries have')} no {what} vectors (e.g. {missing[:3]})")
    return np.array([where[i] for i in ids], dtype=np.int64)


def fused_rows(gallery: ItemVectors, queries: QueryVectors, query_ids, mode: str, consume, *,
               block_vectors: int = 256, dtype=np.float32) -> None:
    """Hand ``consume(positions, rows)`` the fused scores of ``query_ids`` against ``gallery``, block by block.

    ``positions`` index ``query_ids``; ``rows`` is ``(len(positions), n_gallery)``
    (``S_v``, ``S_t`` or ``S_tv`` as ``mode`` says). ``consume`` may be called
    from several threads at once, for disjoint positions.
    """
    if mode not in QUERY_MODES:
        raise ValueError(f"unknown query {mode!r}; choose one of {QUERY_MODES}")
    query_ids = list(query_ids)
    text = None
    if mode in ("text", "text+video"):
        if queries.text is None:
            raise ValueError(f"query {mode!r} needs description vectors")
        described = queries.text.select(_positions(queries.text, query_ids, "description"))
        if mode == "text":  # the description rows alone, block by block as they are made
            set_similarity(described, gallery, block_vectors=block_vectors, dtype=dtype, consume=consume)
            return
        text = set_similarity(described, gallery, block_vectors=block_vectors, dtype=dtype)
    if queries.frames is None:
        raise ValueError(f"query {mode!r} needs the query videos' vectors")

    def fuse(positions, rows):
        consume(positions, rows if text is None else (rows + text[positions]) / 2)

    set_similarity(queries.frames.select(_positions(queries.frames, query_ids, "video")), gallery,
                   block_vectors=block_vectors, dtype=dtype, consume=fuse)


def tag_rows(gallery: ItemVectors, vectors: list, *, dtype=np.float32) -> np.ndarray:
    """``Score({phrase}, target)`` for each tag phrase's vector (one vector, or ``(k, D)`` rows) of ``vectors``
    against ``gallery``: ``(len(vectors), n_gallery)``."""
    blocks = [np.atleast_2d(np.asarray(v, dtype=np.float32)) for v in vectors]
    owner = np.repeat(np.arange(len(blocks)), [b.shape[0] for b in blocks])
    items = ItemVectors(np.arange(len(blocks)), owner, np.concatenate(blocks))
    return set_similarity(items, gallery, dtype=dtype)
