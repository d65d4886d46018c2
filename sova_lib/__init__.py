"""sova_lib: SOVABench and the MLLM-to-Embedding framework.

The public API is re-exported here; see each module's docstring for details.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .describe import DESCRIBERS, DescribeRequest, Describer, make_describer, register_describer
from .labels import ACTIONS, DIMS, DISTRACTOR, INTER_PAIRS, PAIRS, dim_of, opposite_of, pair_of
from .sovabench import SPLITS, Clip, load_split, parse_clip_name, read_tsv

__all__ = [
    "__version__",
    # labels
    "ACTIONS", "DIMS", "DISTRACTOR", "INTER_PAIRS", "PAIRS", "dim_of", "opposite_of", "pair_of",
    # benchmark metadata
    "SPLITS", "Clip", "load_split", "parse_clip_name", "read_tsv",
    # description
    "DESCRIBERS", "DescribeRequest", "Describer", "make_describer", "register_describer",
]
