"""Image-task accuracy: each item answered by the choice sentence closest to its image (SOVABench paper, Table 3).

An item is answered by its image's vectors: the sentence vectors of the
image's description (the MLLM-to-Embedding framework), or one image vector of
a contrastive model. The score of a choice is the maximum cosine between the
choice's vector and the image's vectors (``sova_lib.similarity.set_similarity``);
the prediction is the highest-scoring choice.

Tie rule (``"expected"``, the only one): when ``t`` choices share the highest
score, the item counts ``1/t`` if the correct choice is among them, else 0,
the expected accuracy of picking one of them uniformly. A scorer that says
nothing (every choice tied) gets exactly the chance level ``1/k``, and the
order of the choices in the file carries no information.

Accuracy is in percent: ``100 * mean over items of the credit``, every item
weighing the same. ``bootstrap`` adds a 95% percentile interval from
resampling items (``sova_lib.metrics.bootstrap_ci``).

Baselines: ``chance`` (the Random row: mean over items of ``1/k``),
``oracle`` (each image described by its correct choice, run through
splitting, the encoder and scoring: 100 unless two choices are one sentence).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from sova_lib import metrics
from sova_lib.benchmarks.image_tasks.datasets import ChoiceItem, image_key
from sova_lib.item_vectors import MAX_TEXT_CHARS, embed_descriptions
from sova_lib.records import make_record
from sova_lib.similarity import ItemVectors, l2_normalize, set_similarity

__all__ = ["BENCHMARK", "TIE_RULE", "ImageTaskResult", "chance", "choice_scores", "embed_choices", "oracle",
           "score_descriptions", "score_vectors", "table3_averages", "tie_credit"]

TIE_RULE = "expected"

#: The ``benchmark`` field of an image task's record (``ImageTaskResult.to_record``).
BENCHMARK = "image-tasks"


@dataclass
class ImageTaskResult:
    """Accuracy (percent) of one scorer on one image task."""

    task: str
    value: float
    n_items: int
    ci: tuple | None = None
    ties: str = TIE_RULE
    text_split: str = "sentences+max"
    notes: list = field(default_factory=list)
    per_item: dict = field(default_factory=dict, repr=False)  # item id -> credit in [0, 1]
    context: dict = field(default_factory=dict, repr=False)  # record fields: what was scored and how

    def text(self) -> str:
        """The score as ``sova image-tasks evaluate`` prints it: accuracy, interval, items, tie rule."""
        ci = f"  (95% CI {self.ci[0]:.1f}-{self.ci[1]:.1f})" if self.ci else ""
        return f"{self.task}: accuracy = {self.value:.2f}{ci}  over {self.n_items} items (ties: {self.ties})"

    def to_json(self) -> dict:
        """A JSON-ready dict without the per-item values, as ``sova image-tasks evaluate --json`` prints it: the
        fields, then ``metric`` (``accuracy``) and ``protocol`` (the task)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("per_item", "context")}
        return {**out, "metric": "accuracy", "protocol": self.task}

    def to_record(self, **fields) -> dict:
        """This score as one ``sova_lib.records`` record (one row of ``figures/results.csv``).

        ``benchmark`` is ``image-tasks``; ``protocol`` the task; ``metric``
        ``accuracy``; ``value`` and the interval in percent; ``n_queries`` the
        items scored; ``ties`` and ``text_split`` as scored; ``note`` the
        result's notes joined by ``"; "`` (empty when none). ``context`` and
        then ``fields`` (``kind``, ``source``, ``baseline``, ``encoder``,
        ``bootstrap``, ``seed``, ``cache``, ...) say what was scored and how.
        """
        low, high = self.ci or (None, None)
        return make_record(benchmark=BENCHMARK, protocol=self.task, metric="accuracy",
                           value=self.value, ci_low=low, ci_high=high, n_queries=self.n_items, ties=self.ties,
                           text_split=self.text_split, note="; ".join(self.notes) or None,
                           **{**self.context, **fields})


def embed_choices(items: list[ChoiceItem], encode) -> tuple[ItemVectors, np.ndarray]:
    """Vectors of every choice sentence, one per choice, and each choice's item position.

    ``encode(list[str]) -> (n, D)`` unit vectors (``SentenceEncoder.encode``
    or a contrastive model's text tower). A choice is encoded whole, never
    split. Each distinct sentence is encoded once.
    """
    texts = [c for item in items for c in item.choices]
    item_of = np.repeat(np.arange(len(items)), [len(item.choices) for item in items])
    unique = list(dict.fromkeys(texts))
    row = {t: k for k, t in enumerate(unique)}
    vectors = np.asarray(encode(unique), dtype=np.float32)[[row[t] for t in texts]]
    return ItemVectors(np.arange(len(texts)), np.arange(len(texts)), l2_normalize(vectors)), item_of


def choice_scores(images: ItemVectors, choices: ItemVectors, item_of: np.ndarray, *,
                  block_items: int = 128) -> np.ndarray:
    """Score of every choice: max cosine between the choice's vector(s) and its item's image vectors.

    ``images``: the vectors of the ``n`` items, item ``i`` at position ``i``
    (select them by image first; several items may share vectors).
    ``choices``: one item per choice; ``item_of`` ``(C,)``: the item position
    of each choice. Returns ``(n, K)`` with ``K`` the largest number of
    choices of an item; an item's choices keep their order and the cells past
    its last choice are NaN. Items are scored ``block_items`` at a time (one
    ``set_similarity`` call per block, its block-diagonal part kept); the
    choices are the gallery, so two choices with one sentence tie exactly.
    """
    item_of = np.asarray(item_of, dtype=np.int64)
    n = len(images.ids)
    if item_of.shape != (len(choices.ids),):
        raise ValueError("item_of must give one item position per choice")
    counts = np.bincount(item_of, minlength=n)
    order = np.argsort(item_of, kind="stable")
    slot = np.empty(item_of.size, dtype=np.int64)
    slot[order] = np.arange(item_of.size) - np.repeat(np.cumsum(counts) - counts, counts)
    out = np.full((n, int(counts.max()) if n else 0), np.nan)
    for start in range(0, n, block_items):
        stop = min(start + block_items, n)
        mine = order[(item_of[order] >= start) & (item_of[order] < stop)]
        if not mine.size:
            continue
        # choices as the gallery: identical choice vectors are multiplied once, so they tie exactly
        sims = set_similarity(images.select(np.arange(start, stop)), choices.select(mine), aggregate="max")
        out[item_of[mine], slot[mine]] = sims[item_of[mine] - start, np.arange(mine.size)]
    return out


def tie_credit(scores: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """Expected credit of each item under the tie rule: ``1/t`` if the answer is among the ``t`` best.

    ``scores`` ``(n, K)`` (NaN past an item's last choice), ``answers`` ``(n,)``.
    Returns ``(n,)`` values in [0, 1].
    """
    scores = np.asarray(scores, dtype=np.float64)
    answers = np.asarray(answers, dtype=np.int64)
    filled = np.where(np.isnan(scores), -np.inf, scores)
    best = filled.max(axis=1, keepdims=True)
    winners = filled == best
    hit = winners[np.arange(len(answers)), answers]
    return np.where(hit, 1.0 / winners.sum(axis=1), 0.0)


def score_vectors(task: str, items: list[ChoiceItem], images: ItemVectors, choices: ItemVectors,
                  item_of: np.ndarray, *, allow_missing: bool = False, bootstrap: int = 0, seed: int = 0,
                  text_split: str = "sentences+max") -> ImageTaskResult:
    """Accuracy of answering ``items`` from image vectors keyed by image key (``ChoiceItem.image_key``;
    string ids are read with the same rule, so "000000017697" finds image 17697).

    ``choices``/``item_of`` as made by ``embed_choices`` for the same items
    (for CLIP zero-shot, the model's text vectors of the choices).
    """
    where = {image_key(k) if isinstance(k, str) else k: p for p, k in enumerate(np.asarray(images.ids).tolist())}
    keys = [item.image_key for item in items]
    missing = sorted({k for k in keys if k not in where}, key=str)
    if missing and not allow_missing:
        raise ValueError(f"{len(missing)} image(s) have no vectors (e.g. {missing[:5]}); "
                         "describe or embed them, or allow missing items")
    keep = [i for i, k in enumerate(keys) if k in where]
    if not keep:
        raise ValueError(f"{task}: no item has vectors")
    notes = ([f"{len(items) - len(keep)} item(s) on {len(missing)} image(s) without vectors were left out"]
             if missing else [])
    mine = np.flatnonzero(np.isin(item_of, keep))
    renumber = np.full(len(items), -1)
    renumber[keep] = np.arange(len(keep))
    pos = np.array([where[keys[i]] for i in keep], dtype=np.int64)
    scores = choice_scores(images.select(pos), choices.select(mine), renumber[item_of[mine]])
    kept = [items[i] for i in keep]
    credit = tie_credit(scores, np.array([item.answer for item in kept]))
    ci = None
    if bootstrap:
        low, high = metrics.bootstrap_ci(credit, np.random.default_rng(seed), n_resamples=bootstrap)
        ci = (100 * low, 100 * high)
    return ImageTaskResult(task, float(100 * credit.mean()), len(kept), ci, TIE_RULE, text_split, notes,
                           {item.id: float(c) for item, c in zip(kept, credit)})


def score_descriptions(task: str, items: list[ChoiceItem], texts: dict, encoder, *, sentences: bool = True,
                       max_chars: int = MAX_TEXT_CHARS, allow_missing: bool = False, bootstrap: int = 0,
                       seed: int = 0) -> ImageTaskResult:
    """Accuracy of the MLLM-to-Embedding framework from image descriptions.

    ``texts``: image key -> description, of which the first ``max_chars``
    characters are read. Each description is split into sentences
    (``sentences=False``: kept whole, the Table 5 ablation), each sentence and
    each choice embedded by ``encoder`` (``SentenceEncoder``), and each choice
    scored by its maximum cosine to the sentences
    (``sova_lib.item_vectors.embed_descriptions``).
    """
    images = embed_descriptions(texts, encoder, sentences=sentences, max_chars=max_chars)
    choices, item_of = embed_choices(items, encoder.encode)
    return score_vectors(task, items, images, choices, item_of, allow_missing=allow_missing,
                         bootstrap=bootstrap, seed=seed, text_split="sentences+max" if sentences else "whole text")


def chance(items: list[ChoiceItem]) -> float:
    """The Random row: ``100 * mean over items of 1 / (number of choices)``."""
    if not items:
        raise ValueError("chance of no item is undefined")
    return float(100 * np.mean([1.0 / len(item.choices) for item in items]))


def oracle(task: str, items: list[ChoiceItem], encoder, **kwargs) -> ImageTaskResult:
    """Each item answered from a description that is its correct choice (an upper bound, not a model).

    Items are described one by one (keys are item ids, not images, since
    items on one image have different answers).
    """
    keyed = [ChoiceItem(item.id, f"{item.id}", item.choices, item.answer, item.meta) for item in items]
    texts = {k.image_key: item.choices[item.answer] for k, item in zip(keyed, items)}
    result = score_descriptions(task, keyed, texts, encoder, **kwargs)
    result.notes.append("oracle: each image described by its correct choice sentence (an upper bound, not a model)")
    return result


def table3_averages(values: dict) -> dict:
    """Table 3's averages from column values (percent), keyed by the paper's column names.

    Spatial Avg. = mean of the spatial columns present (SpatialBench InD./OutD.,
    VSR, What's Up A/B), Count Avg. = mean of CountBench and Visual7W-Count,
    Avg. = mean of those two averages (not of all columns). An average with a
    missing column is NaN.
    """
    spatial = ["SpatialBench InD.", "SpatialBench OutD.", "VSR", "What's Up A", "What's Up B"]
    count = ["CountBench", "Visual7W-Count"]

    def mean(columns):
        got = [values.get(c) for c in columns]
        return float(np.mean(got)) if all(v is not None and np.isfinite(v) for v in got) else float("nan")

    s, c = mean(spatial), mean(count)
    return {"Spatial Avg.": s, "Count Avg.": c, "Avg.": (s + c) / 2}
