"""The evaluations of the synthetic MUVR set, as records, from which the notebook makes its tables.

``run_synthetic(root)`` scores the set ``synthetic.write_synthetic`` wrote:
MUVR-Base under the three query modalities and the exact random ranking,
MUVR-Filter without and with the tag prompt, and MUVR-QA on rule-based
stand-in answers under both parses. ``SyntheticRuns.records()`` turns each
into one ``sova_lib.records`` record (``cache`` ``muvr-synthetic``), from
which the notebook makes its tables (``SyntheticRuns.qa_rows`` gives the QA
stand-ins' scores). Every number measures the code on random vectors, never a
model.

Tied scores (``tie_study``): the official ``CuVR.evaluate`` ranks a gallery built with ``list(set(...))``
over video names (its order follows Python's string hashing) with numpy's
default, unstable ``argsort``: on tied scores its numbers change from one
process to the next. ``write_tied_synthetic`` builds a synthetic partition in the released
layout whose gallery videos share frames in groups (so their scores tie), and ``tie_study``
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

from sova_lib.benchmarks.muvr import qa
from sova_lib.benchmarks.muvr.annotations import PARTITIONS, load_partition
from sova_lib.benchmarks.muvr.features import released_vectors
from sova_lib.benchmarks.muvr.metrics import TIES
from sova_lib.benchmarks.muvr.retrieval import MuvrResult, evaluate_vectors, random_ranking
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL, write_synthetic

__all__ = ["CACHE", "QUERIES", "SOURCE", "STAND_INS", "TAG_WEIGHTS", "SyntheticRuns", "TieStudy", "run_synthetic",
           "stand_in_answers", "tie_study", "write_tied_synthetic"]

#: The ``cache`` field of every synthetic record (it names their files).
CACHE = "muvr-synthetic"
SOURCE = "synthetic MUVR set (random vectors: measures the code, not a model)"
QUERIES = ("text", "video", "text+video")
TAG_WEIGHTS = (0.0, 0.3)
#: The rule-based QA stand-ins, in the order the table lists them.
STAND_INS = ("always 'Yes'", "always 'No'", "label, lower case")
_RANDOM = "random ranking"


def stand_in_answers(questions: list) -> dict:
    """Stand-in name -> question id -> answer: always "Yes", always "No", and the label in lower case."""
    return {"always 'Yes'": {q.id: "Yes" for q in questions}, "always 'No'": {q.id: "No" for q in questions},
            "label, lower case": {q.id: "yes" if q.label else "no" for q in questions}}


@dataclass
class SyntheticRuns:
    """The synthetic set's results: ``base`` (query modality, or ``"random ranking"``, -> result), ``filter``
    (``"p = <weight>"`` -> result), ``qa`` (``(stand-in, parse)`` -> ``qa.QAResult``), and the run's settings."""

    base: dict
    filter: dict
    qa: dict
    bootstrap: int
    seed: int

    def records(self) -> list[dict]:
        """One record per result. Base takes the run's bootstrap; the random ranking and Filter have no interval."""
        random = {"kind": "baseline", "baseline": "random-ranking", "bootstrap": 0}
        embeddings = {"kind": "embeddings", "bootstrap": self.bootstrap}
        out = [r.to_record(source=SOURCE, cache=CACHE, seed=self.seed, **(random if name == _RANDOM else embeddings))
               for name, r in self.base.items()]
        out += [r.to_record(kind="embeddings", source=SOURCE, cache=CACHE, bootstrap=0, seed=self.seed)
                for r in self.filter.values()]
        out += [r.to_record(kind="baseline", source=name, baseline="stand-in", cache=f"{CACHE} QA {name}",
                            bootstrap=0, seed=self.seed) for (name, _), r in self.qa.items()]
        return out

    def qa_rows(self) -> list[dict]:
        """The QA stand-ins' scores at full precision, one dict per (stand-in, parse): accuracy and Reranking Score
        per subset, unparseable answers."""
        return [{"stand-in": name, "parse": parse, **{f"accuracy {k}": v for k, v in s.accuracy.items()},
                 **{f"reranking score {k}": v for k, v in s.reranking_score.items()}, "unparseable": len(s.unparseable)}
                for (name, parse), s in self.qa.items()]


def run_synthetic(root: str | Path, *, ties: str = "expected", bootstrap: int = 0, seed: int = 0) -> SyntheticRuns:
    """Score the synthetic set at ``root`` (``synthetic.write_synthetic``): Base, random ranking, Filter, QA.

    Base under each of ``QUERIES`` (``bootstrap`` resamples of the queries,
    seed ``seed``) and the exact random ranking; Filter at each of
    ``TAG_WEIGHTS``; QA on each of ``STAND_INS`` under each parse.
    """
    root = Path(root)
    partitions = [load_partition(root, p) for p in PARTITIONS]
    features = root / "features" / "VLMs_1_15" / SYNTHETIC_MODEL
    base: dict[str, MuvrResult] = {
        q: evaluate_vectors(partitions, released_vectors(features, query=q), query=q, ties=ties, bootstrap=bootstrap,
                    seed=seed, source="synthetic") for q in QUERIES}
    base[_RANDOM] = random_ranking(partitions)
    filtered = {f"p = {w:g}": evaluate_vectors(partitions, released_vectors(features, version="filter"), version="filter",
                                       tag_weight=w, ties=ties, source="synthetic") for w in TAG_WEIGHTS}
    questions = qa.load_qa(root)
    answers = stand_in_answers(questions)
    scored = {(name, parse): qa.score_answers(questions, answers[name], parse=parse)
              for name in STAND_INS for parse in qa.SCORINGS}
    return SyntheticRuns(base, filtered, scored, bootstrap, seed)


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
