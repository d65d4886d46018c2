"""The one writer of MUVR test data: every MUVR test builds its files here, in the released form.

Both helpers end in ``sova_lib.benchmarks.muvr.synthetic.write_annotations``
(which the synthetic notebook set uses too): ``videos.json`` records with
integer ``id``s from ``FIRST_ID`` on, and every ``query_id`` and ``id_list``
entry written as such an id, as the released files and the official loader
have them (cuvr.py:88-96,114-140).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sova_lib.benchmarks.muvr.features import write_vectors_npz
from sova_lib.benchmarks.muvr.synthetic import FIRST_ID, write_annotations, write_synthetic
from sova_lib.similarity import ItemVectors

__all__ = ["FIRST_ID", "RULES_SCORES", "annotations_dir", "synthetic", "write_partition", "write_rules_case"]


def synthetic(root, seed: int = 0, **options) -> Path:
    """``write_synthetic(root, default_rng(seed), **options)``: the synthetic set, released form."""
    return write_synthetic(root, np.random.default_rng(seed), **options)


def annotations_dir(root, partition: str = "news") -> Path:
    return Path(root) / "annotations" / "retrieval" / partition


def write_partition(root, partition: str = "news", *, videos, queries, positives, prompts=None, tags=None,
                    not_query=(), splits=None) -> dict:
    """One partition's annotation files under ``root`` from names; returns ``{video name: id}``.

    ``videos``: names in gallery order (a query's own video included; the
    names in ``queries`` are marked ``is_query`` unless in ``not_query``);
    ``queries``: ``{name: description}``; ``positives``, ``prompts``,
    ``tags``, ``splits`` as ``write_annotations`` takes them.
    """
    return write_annotations(annotations_dir(root, partition),
                             [(v, v in queries and v not in not_query) for v in videos],
                             list(queries.items()), positives, prompts, tags, splits=splits)


#: The rules case: description (text) score of each query against each gallery video, and the tag
#: phrases' scores; the vectors below are built so that every dot product is one of these numbers.
RULES_SCORES = {
    "q1": {"a": .5, "b": .4, "c": .3, "q1": 0.0, "q2": .2},
    "q2": {"a": .1, "b": .6, "c": .45, "q1": .05, "q2": 0.0},
    "q3": {"a": .7, "b": .25, "c": .35, "q1": .05, "q2": .15},
    "red": {"a": .3, "b": .2, "c": .1, "q1": .4, "q2": .6},
    "blue": {"a": .1, "b": .5, "c": .5, "q1": 0.0, "q2": .3},
}


def write_rules_case(root, partition: str = "news") -> Path:
    """A partition exercising the official loader's and evaluator's rules; returns its vectors' ``.npz``.

    Queries q1, q2, q3 (``is_query`` 1); q4 is in ``queries_en.json`` but
    ``is_query`` 0, so not a query, and its entries (listing x) are skipped;
    an entry for the id 99999 (in no record) is skipped too. q1 lists itself
    and the query video q2 in ``pos_all`` {q1, a, q2}; q2 lists {b, c}; q3 has
    no ``pos_all``. The gallery is {a, b, c, q1, q2}: d and x are listed by
    skipped entries only. Filter: q1 ``+blue`` [b, c] (outside its pos_all),
    ``-red`` [q2, x, q1] (x outside the gallery, q1 its own video),
    ``+red -blue`` [a], ``AND +red +blue`` (skipped); q3 ``+blue`` [c]; q4
    ``+red`` [x] (skipped). Vectors: description of query k = unit axis k;
    tag ``red``/``blue`` = axes 3/4; each gallery video one frame whose
    coordinates on those axes are ``RULES_SCORES`` plus a private axis that
    makes it unit length, so every score is exactly the listed number.
    """
    write_partition(root, partition, videos=["a", "b", "c", "d", "x", "q1", "q2", "q3", "q4"],
                    queries={q: f"query {q}" for q in ("q1", "q2", "q3", "q4")}, not_query=("q4",),
                    positives={"q1": ["q1", "a", "q2"], "q2": ["b", "c"], "q4": ["x"], 99999: ["d"]},
                    prompts={"q1": {"+blue": ["b", "c"], "-red": ["q2", "x", "q1"], "+red -blue": ["a"],
                                    "AND +red +blue": ["a"]},
                             "q3": {"+blue": ["c"]}, "q4": {"+red": ["x"]}},
                    tags={"q1": ["red", "blue"], "q3": ["blue"]})
    axes = ["q1", "q2", "q3", "red", "blue"]
    gallery = ["a", "b", "c", "q1", "q2"]
    dims = len(axes) + len(gallery)
    frames = np.zeros((len(gallery), dims))
    for j, v in enumerate(gallery):
        frames[j, :len(axes)] = [RULES_SCORES[k][v] for k in axes]
        frames[j, len(axes) + j] = np.sqrt(1 - (frames[j] ** 2).sum())
    eye = np.eye(dims)
    texts = ItemVectors(np.array(["q1", "q2", "q3"]), np.arange(3), eye[:3])
    return write_vectors_npz(Path(root) / "rules.npz", ItemVectors(np.array(gallery), np.arange(len(gallery)), frames),
                             texts, {"red": eye[3], "blue": eye[4]})
