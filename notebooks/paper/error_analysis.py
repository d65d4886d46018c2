"""The synthetic demonstration of the error analysis (SOVABench paper, Appendix E; notebook 04_errors).

For a repository without real descriptions, ``synthetic_texts`` builds a
*synthetic demonstration*: every clip described by its own action name,
with a chosen fraction swapped to the opposite action or replaced by a
generic sentence. It is named synthetic wherever it appears; it is not a
model's output. The notebook analyses it (the confusions between opposite
actions, the worst queries, the labelling sheet and the count of error
modes) in its cells; the tests build their synthetic description caches
with it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from sova_lib.benchmarks.sovabench import labels
from sova_lib.protocols import get_protocol

__all__ = ["GENERIC_SENTENCE", "synthetic_texts"]

#: The text a synthetic under-description uses: true of every clip, specific to none.
GENERIC_SENTENCE = "A vehicle is visible in the scene."


def synthetic_texts(protocol: str = "intra-pair", *, swap_fraction: float = 0.2, generic_fraction: float = 0.1,
                    rng: np.random.Generator):
    """Synthetic descriptions of every clip of ``protocol``, with deliberate errors.

    Each clip is described by its action name ("opening trunk"); distractors
    by their activity. Then, drawn with ``rng``, a ``swap_fraction`` of the
    action clips get the *opposite* action's name (a constructed temporal
    misunderstanding) and a further ``generic_fraction`` get
    ``GENERIC_SENTENCE`` (a constructed under-description).

    Returns ``(texts, constructed)``: ``texts`` maps id -> text;
    ``constructed`` is a DataFrame (``id, action, text, constructed_as``)
    saying what was done to each clip (``correct`` when untouched).
    """
    if not (0 <= swap_fraction and 0 <= generic_fraction and swap_fraction + generic_fraction <= 1):
        raise ValueError(f"fractions must be >= 0 and sum to at most 1, got {swap_fraction} and {generic_fraction}")
    clips = get_protocol(protocol).clips()
    draw = rng.random(len(clips))
    texts, rows = {}, []
    for clip, u in zip(clips, draw):
        if clip.is_distractor:
            text, made = clip.activity.replace("_", " "), "correct"
        elif u < swap_fraction:
            text, made = labels.opposite_of(clip.label), "temporal misunderstanding"
        elif u < swap_fraction + generic_fraction:
            text, made = GENERIC_SENTENCE, "under-description"
        else:
            text, made = clip.label, "correct"
        texts[clip.index] = text
        rows.append({"id": clip.index, "action": clip.label, "text": text, "constructed_as": made})
    return texts, pd.DataFrame(rows)
