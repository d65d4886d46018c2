"""sova_lib: surveillance video retrieval with multimodal LLMs.

The MLLM-to-Embedding pipeline, stage by stage, with the names a notebook
needs most; everything else is reached through its sub-package:

1. a benchmark's items and protocols: ``load_split``, ``get_protocol``
   (``sova_lib.benchmarks.sovabench``, and ``sova_lib.benchmarks.excerpts``
   with the quickstart's small protocol; the registry of ``sova_lib.protocols``
   imports their ``protocols`` modules on its first lookup);
2. frames: ``sample_indices`` (the paper's sampler), ``sample_frames``
   (``sova_lib.video``), each cropped to its track's region (``sova_lib.crop``);
3. descriptions: ``make_describer``, ``Item``, ``describe_items``
   (``sova_lib.describe``: the contract, the runner, the cache, the backends);
4. sentences and vectors: ``split``, ``SentenceEncoder``, ``embed_descriptions``,
   ``read_descriptions`` (``sova_lib.sentences``, ``sova_lib.encoder``, ``sova_lib.item_vectors``);
5. comparison and scores: ``set_similarity``, ``evaluate``, ``baseline``,
   ``average_precision``, ``mean_ap`` (``sova_lib.similarity``,
   ``sova_lib.evaluation``, ``sova_lib.metrics``).

``sova_lib.report`` compares two scorers, explores a ranking, runs the notebooks (``sova reproduce``) and holds
general plot primitives; ``sova_lib.cli`` is the ``sova`` command. The paper's tables and figures are regenerated
by the notebooks, which draw each figure themselves, with their helper package ``notebooks/paper`` (not
installed). Each name is imported from its module the first time it is read, so ``import sova_lib.metrics`` loads the metrics alone, not the
describers or the benchmarks; heavy dependencies (torch, transformers, OpenCV,
decoders) load only when a function that needs them runs.
"""
from __future__ import annotations

import importlib

from sova_lib._version import __version__

#: Public name -> the module that defines it (imported on first use).
_HOMES = {
    "load_split": "sova_lib.benchmarks.sovabench.splits",
    "get_protocol": "sova_lib.protocols",
    "sample_indices": "sova_lib.video",
    "sample_frames": "sova_lib.video",
    "make_describer": "sova_lib.describe.contract",
    "Item": "sova_lib.describe.item",
    "describe_items": "sova_lib.describe.runner",
    "split": "sova_lib.sentences",
    "SentenceEncoder": "sova_lib.encoder",
    "embed_descriptions": "sova_lib.item_vectors",
    "read_descriptions": "sova_lib.item_vectors",
    "set_similarity": "sova_lib.similarity",
    "evaluate": "sova_lib.evaluation",
    "baseline": "sova_lib.evaluation",
    "average_precision": "sova_lib.metrics",
    "mean_ap": "sova_lib.metrics",
}

__all__ = ["__version__", *_HOMES]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'sova_lib' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # read once, then an ordinary module attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
