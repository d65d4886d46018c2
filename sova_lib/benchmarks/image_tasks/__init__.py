"""The image tasks of SOVABench Table 3: spatial relations (VSR, What's Up) and counting (CountBench,
Visual7W-Count), answered by choosing the sentence closest to an image's description or vector.

``datasets`` loads the annotation files into ``ChoiceItem`` objects (VSR's
test splits ship with the package), ``choices`` builds the choice sentences,
``accuracy`` answers each item with its closest choice and computes tie-aware
accuracy, the Random row, the oracle and CLIP-style zero-shot scores; ``api``
holds what ``sova image-tasks`` and the notebooks call (``items``,
``evaluate_files``).
"""
from __future__ import annotations

from sova_lib.benchmarks.image_tasks.accuracy import (
    BENCHMARK,
    TIE_RULE,
    ImageTaskResult,
    chance,
    oracle,
    score_descriptions,
    table3_averages,
)
from sova_lib.benchmarks.image_tasks.api import BASELINES, evaluate_files, items
from sova_lib.benchmarks.image_tasks.datasets import DATASETS, load

__all__ = ["BASELINES", "BENCHMARK", "DATASETS", "TIE_RULE", "ImageTaskResult", "chance", "evaluate_files", "items", "load",
           "oracle", "score_descriptions", "table3_averages"]
