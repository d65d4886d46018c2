"""The evaluations of the synthetic MUVR set, as records, from which the notebook makes its tables.

``run_synthetic(root)`` scores the set ``synthetic.write_synthetic`` wrote:
MUVR-Base under the three query modalities and the exact random ranking,
MUVR-Filter without and with the tag prompt, and MUVR-QA on rule-based
stand-in answers under both parses. ``SyntheticRuns.records()`` turns each
into one ``sova_lib.records`` record (``cache`` ``muvr-synthetic``), from
which the notebook makes its tables (``SyntheticRuns.qa_rows`` gives the QA
stand-ins' scores). Every number measures the code on random vectors, never a
model.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sova_lib.benchmarks.muvr import qa
from sova_lib.benchmarks.muvr.annotations import PARTITIONS, load_partition
from sova_lib.benchmarks.muvr.features import released_vectors
from sova_lib.benchmarks.muvr.retrieval import MuvrResult, evaluate_vectors, random_ranking
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL

__all__ = ["CACHE", "QUERIES", "SOURCE", "STAND_INS", "TAG_WEIGHTS", "SyntheticRuns", "run_synthetic",
           "stand_in_answers"]

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
              for name in STAND_INS for parse in qa.PARSES}
    return SyntheticRuns(base, filtered, scored, bootstrap, seed)
