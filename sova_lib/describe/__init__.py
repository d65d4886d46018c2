"""Description, the first step of the MLLM-to-Embedding framework (SOVABench paper, Section 4).

An MLLM G answers an instruction p about a visual input I (a clip's sampled frames, or an image) with a text
t = G(I, p), which is then split into sentences and embedded (``sova_lib.sentences``, ``sova_lib.encoder``)::

    describer = make_describer("transformers", model="openbmb/MiniCPM-V-4_5")      # G
    describe_items(describer, items, "cache", prompt="task-aware", fps=1.0)        # t = G(I, p) per item

``contract`` (the ``Describer`` contract and the backend registry),
``prompts`` (the paper's prompt presets), ``item`` (what is described: a
video, part of one, or an image), ``runner`` (the one loop that drives every
backend), ``run_cache`` (a run's outcomes into its cache folder, its options
and summary), ``ray_engine`` (the same run on a pool of Ray actors),
``cache`` (the cache folder, its key and its one manifest writer) and
``backends/`` (transformers, MiniCPM-V, OpenAI-compatible servers, the motion
describer).
"""
# Import lists of the same shape as cli/describe.py's, deliberately: names, one per line (a scan for repeated code
# pairs them; they share no logic).
from __future__ import annotations

from sova_lib.describe.cache import CacheLockedError, DescriptionCache
from sova_lib.describe.contract import (
    DESCRIBERS,
    Describer,
    DescriberEnvironmentError,
    DescribeRequest,
    PromptedDescriber,
    make_describer,
)
from sova_lib.describe.item import IMAGE_SUFFIXES, Item
from sova_lib.describe.prompts import PROMPTS, SOVABENCH_SYSTEM_PROMPT, Prompt, custom_prompt, resolve_prompt
from sova_lib.describe.run_cache import RunSummary
from sova_lib.describe.runner import describe_items

__all__ = ["CacheLockedError", "DescriptionCache", "DESCRIBERS", "DescribeRequest", "Describer",
           "DescriberEnvironmentError", "PromptedDescriber", "make_describer", "PROMPTS",
           "SOVABENCH_SYSTEM_PROMPT", "Prompt", "custom_prompt", "resolve_prompt", "IMAGE_SUFFIXES", "Item", "RunSummary",
           "describe_items"]
