"""sova_lib: surveillance video retrieval with multimodal LLMs.

The MLLM-to-Embedding pipeline, stage by stage, with the names a notebook
needs most; everything else is reached through its sub-package:

1. a benchmark's items and protocols: ``load_split``, ``get_protocol``
   (``sova_lib.benchmarks.sovabench``; its protocols are registered here);
2. frames: ``sample_indices`` (the paper's sampler), ``sample_frames``
   (``sova_lib.video``);
3. descriptions: ``make_describer``, ``Item``, ``describe_items``
   (``sova_lib.describe``: the contract, the runner, the cache, the backends);
4. sentences and vectors: ``split``, ``SentenceEncoder``, ``embed_descriptions``,
   ``read_descriptions`` (``sova_lib.sentences``, ``sova_lib.embed``, ``sova_lib.items``);
5. comparison and scores: ``set_similarity``, ``evaluate``, ``baseline``,
   ``average_precision``, ``mean_ap`` (``sova_lib.similarity``,
   ``sova_lib.evaluate``, ``sova_lib.metrics``).

``sova_lib.paper`` regenerates the paper's tables and figures; ``sova_lib.cli``
is the ``sova`` command. Heavy dependencies (torch, transformers, OpenCV,
decoders) load only when a function that needs them runs.
"""
from __future__ import annotations

from sova_lib._version import __version__
from sova_lib.benchmarks.sovabench.splits import load_split
from sova_lib.describe import Item, describe_items, make_describer
from sova_lib.embed import SentenceEncoder
from sova_lib.evaluate import baseline, evaluate
from sova_lib.items import embed_descriptions, read_descriptions
from sova_lib.metrics import average_precision, mean_ap
from sova_lib.protocols import get_protocol
from sova_lib.sentences import split
from sova_lib.similarity import set_similarity
from sova_lib.video import sample_frames, sample_indices

__all__ = [
    "__version__", "load_split", "get_protocol", "sample_indices", "sample_frames", "make_describer", "Item",
    "describe_items", "split", "SentenceEncoder", "embed_descriptions", "read_descriptions", "set_similarity",
    "evaluate", "baseline", "average_precision", "mean_ap",
]
