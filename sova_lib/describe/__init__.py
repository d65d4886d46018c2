"""Describing: visual input plus an instruction -> text, into a resumable cache.

``contract`` (the ``Describer`` contract and the backend registry),
``prompts`` (the paper's prompt presets), ``runner`` (the one loop that
drives every backend), ``run_cache`` (a run's outcomes into its cache
folder, its options and summary), ``ray_engine`` (the same run on a pool of Ray
actors), ``cache`` (the cache folder, its key and its one manifest writer) and ``backends/`` (transformers, MiniCPM-V, OpenAI-compatible
servers, the motion describer).
"""
from __future__ import annotations

from sova_lib.describe.cache import CacheLockedError, DescriptionCache
from sova_lib.describe.contract import (
    DESCRIBERS,
    Describer,
    DescriberEnvironmentError,
    DescribeRequest,
    make_describer,
    register_describer,
)
from sova_lib.describe.item import IMAGE_SUFFIXES, Item
from sova_lib.describe.prompts import PROMPTS, SOVABENCH_SYSTEM_PROMPT, Prompt, resolve_prompt
from sova_lib.describe.run_cache import RunSummary
from sova_lib.describe.runner import describe_items

__all__ = ["CacheLockedError", "DescriptionCache", "DESCRIBERS", "DescribeRequest", "Describer",
           "DescriberEnvironmentError", "make_describer",
           "register_describer", "PROMPTS", "SOVABENCH_SYSTEM_PROMPT", "Prompt", "resolve_prompt", "IMAGE_SUFFIXES",
           "Item", "RunSummary", "describe_items"]
