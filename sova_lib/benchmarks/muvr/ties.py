"""Tied scores in MUVR: every tie rule beside the spread of random tie orders.

The official ``CuVR.evaluate`` ranks a gallery built with ``list(set(...))``
over video names (its order follows Python's string hashing) with numpy's
default, unstable ``argsort``: on tied scores its numbers change from one
process to the next. This module builds a synthetic partition in the released
layout whose gallery videos share frames in groups (so their scores tie), and
scores it under each tie rule of :func:`~sova_lib.benchmarks.muvr.retrieval.evaluate_vectors`
and under ``orders`` random orders of the gallery (each scored with
``gallery-order``). The mean of the random orders estimates the expected value
that the ``expected`` rule computes exactly.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.benchmarks.muvr.annotations import load_partition
from sova_lib.benchmarks.muvr.features import released_vectors
from sova_lib.benchmarks.muvr.metrics import TIES
from sova_lib.benchmarks.muvr.retrieval import evaluate_vectors
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL, write_synthetic

__all__ = ["TieStudy", "tie_study", "write_tied_synthetic"]


def write_tied_synthetic(root: Path, rng: np.random.Generator, *, group: int = 4) -> list:
    """Write a synthetic ``news`` partition whose gallery ties in groups of ``group`` videos.

    Every ``group`` consecutive gallery videos get the first one's frame features,
    so each scores the same against every query. Returns the loaded partitions
    (one) for :func:`evaluate_vectors`; the folder ``root`` is replaced.
    """
    root = Path(root)
    shutil.rmtree(root, ignore_errors=True)
    write_synthetic(root, rng, partitions=("news",), topics=4, videos_per_topic=12)
    partition = load_partition(root, "news")
    folder = root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL / "news"
    for start in range(0, len(partition.gallery), group):
        first = partition.gallery[start]
        for vid in partition.gallery[start + 1:start + group]:
            shutil.copy(folder / f"{first}.npy", folder / f"{vid}.npy")
    return [partition]


@dataclass(frozen=True)
class TieStudy:
    """Metrics of one tied dataset under each tie rule and over random tie orders.

    ``rules``: rule name (each of ``metrics.TIES``, in order) -> metric name -> value (as ``MuvrResult.metrics``).
    ``random_orders``: statistic (``mean``, ``standard error``, ``min``, ``max``)
    -> metric name -> value, over ``orders`` random orders of the gallery.
    """

    rules: dict[str, dict[str, float]]
    random_orders: dict[str, dict[str, float]]
    orders: int

    def rows(self) -> dict[str, dict[str, float]]:
        """One row per rule, then one per statistic named ``"<orders> random orders: <statistic>"``."""
        return {**self.rules, **{f"{self.orders} random orders: {stat}": values
                                 for stat, values in self.random_orders.items()}}


def tie_study(root: Path, *, seed: int = 0, orders: int = 200) -> TieStudy:
    """Score a tied synthetic dataset (written to ``root``) under each rule and ``orders`` random orders.

    Same ``seed``, same study.
    """
    rng = np.random.default_rng(seed)
    partitions = write_tied_synthetic(root, rng)
    vectors = released_vectors(Path(root) / "features" / "VLMs_1_15" / SYNTHETIC_MODEL)
    rules = {rule: dict(evaluate_vectors(partitions, vectors, ties=rule).metrics) for rule in TIES}

    order_rng = np.random.default_rng(seed)

    def shuffled(partition):
        gallery, queries = vectors(partition)
        return gallery.select(order_rng.permutation(len(gallery.ids))), queries

    draws = pd.DataFrame([evaluate_vectors(partitions, shuffled, ties="gallery-order").metrics for _ in range(orders)])
    stats = {"mean": draws.mean(), "standard error": draws.sem(), "min": draws.min(), "max": draws.max()}
    return TieStudy(rules=rules, random_orders={stat: values.to_dict() for stat, values in stats.items()},
                    orders=orders)
