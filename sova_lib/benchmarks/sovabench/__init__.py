"""SOVABench: 14 vehicle actions in 7 opposite pairs, cut from MEVA and VIRAT footage.

``labels`` (the action vocabulary), ``splits`` (the packaged TSVs as
``Clip`` records), ``protocols`` (inter-pair, inter-pair-constrained,
intra-pair, two-class; registered when imported, which the registry of
``sova_lib.protocols`` does on its first read), ``clips/`` (from raw
annotations to clips), ``data/`` (the metadata, CC-BY-4.0, and a MEVA
annotation sample) and ``api`` (what ``sova sovabench`` and the notebooks
call: ``evaluate_files``, ``sources``, ``fetch``, ``plan``, ``extract``, ``clip_stats``,
``items``, ``import_authors``).
"""
from __future__ import annotations

from sova_lib.benchmarks.sovabench import protocols
from sova_lib.benchmarks.sovabench.api import (
    INPUT_NAME,
    clip_stats,
    clips_of,
    evaluate_files,
    extract,
    fetch,
    import_authors,
    items,
    plan,
    sources,
)
from sova_lib.benchmarks.sovabench.labels import PAIRS
from sova_lib.benchmarks.sovabench.protocols import SOVABENCH_PROTOCOLS
from sova_lib.benchmarks.sovabench.splits import SPLITS, Clip, load_split

__all__ = ["INPUT_NAME", "PAIRS", "SOVABENCH_PROTOCOLS", "SPLITS", "Clip", "clip_stats", "clips_of", "evaluate_files", "extract", "fetch",
           "import_authors", "items", "load_split", "plan", "protocols", "sources"]
