"""SOVABench: 14 vehicle actions in 7 opposite pairs, cut from MEVA and VIRAT footage.

``labels`` (the action vocabulary), ``splits`` (the packaged TSVs as
``Clip`` records), ``protocols`` (inter-pair, inter-pair-constrained,
intra-pair, two-class; registered when imported, which the registry of
``sova_lib.protocols`` does on its first read), ``clips/`` (from raw
annotations to clips) and ``data/`` (the metadata, CC-BY-4.0, and a MEVA
annotation sample).
"""
from __future__ import annotations

from sova_lib.benchmarks.sovabench import protocols
from sova_lib.benchmarks.sovabench.labels import PAIRS
from sova_lib.benchmarks.sovabench.splits import SPLITS, Clip, load_split

__all__ = ["PAIRS", "SPLITS", "Clip", "load_split", "protocols"]
