"""The image tasks of SOVABench Table 3: spatial relations (VSR, What's Up) and counting (CountBench,
Visual7W-Count), answered by choosing the sentence closest to an image's description or vector.

``datasets`` loads the annotation files into ``ChoiceItem`` objects (VSR's
test splits ship with the package), ``choices`` builds the choice sentences,
``accuracy`` answers each item with its closest choice and computes tie-aware
accuracy, the Random row, the oracle and CLIP-style zero-shot scores; ``api``
holds what ``sova image-tasks`` and the notebooks call (``items``,
``evaluate``).
"""
from __future__ import annotations

from sova_lib.benchmarks.image_tasks.accuracy import (
    BENCHMARK,
    TIE_RULE,
    ImageTaskResult,
    accuracy,
    chance,
    choice_scores,
    embed_choices,
    oracle,
    score_descriptions,
    score_vectors,
    table3_averages,
    tie_credit,
)
from sova_lib.benchmarks.image_tasks.api import BASELINES, evaluate, items
from sova_lib.benchmarks.image_tasks.choices import (
    NUMBER_WORDS,
    negate_caption,
    number_choices,
    visual7w_count_sentence,
    vsr_choices,
)
from sova_lib.benchmarks.image_tasks.datasets import (
    DATASETS,
    ChoiceItem,
    Dataset,
    annotation_path,
    image_key,
    load,
    load_countbench,
    load_visual7w_count,
    load_vsr,
    load_whatsup,
    vendored_vsr,
)

__all__ = [
    "BASELINES", "evaluate", "items",
    "NUMBER_WORDS", "negate_caption", "number_choices", "visual7w_count_sentence", "vsr_choices",
    "DATASETS", "ChoiceItem", "Dataset", "annotation_path", "image_key", "load", "load_countbench",
    "load_visual7w_count", "load_vsr", "load_whatsup", "vendored_vsr",
    "BENCHMARK", "TIE_RULE", "ImageTaskResult", "accuracy", "chance", "choice_scores", "embed_choices", "oracle",
    "score_descriptions", "score_vectors", "table3_averages", "tie_credit",
]
