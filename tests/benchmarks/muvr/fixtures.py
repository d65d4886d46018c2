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

from sova_lib.benchmarks.muvr.synthetic import FIRST_ID, write_annotations, write_synthetic

__all__ = ["FIRST_ID", "annotations_dir", "synthetic", "write_partition"]


def synthetic(root, seed: int = 0, **options) -> Path:
    """``write_synthetic(root, default_rng(seed), **options)``: the synthetic set, released form."""
    return write_synthetic(root, np.random.default_rng(seed), **options)


def annotations_dir(root, partition: str = "news") -> Path:
    return Path(root) / "annotations" / "retrieval" / partition


def write_partition(root, partition: str = "news", *, videos, queries, positives, prompts=None, tags=None) -> dict:
    """One partition's annotation files under ``root`` from names; returns ``{video name: id}``.

    ``videos``: names in gallery order (a query's own video included; the
    names in ``queries`` are marked ``is_query``); ``queries``: ``{name:
    description}``; ``positives``, ``prompts``, ``tags`` as
    ``write_annotations`` takes them.
    """
    return write_annotations(annotations_dir(root, partition), [(v, v in queries) for v in videos],
                             list(queries.items()), positives, prompts, tags)
