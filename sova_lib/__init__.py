"""sova_lib: SOVABench and the MLLM-to-Embedding framework.

The pipeline, module by module:

* ``sovabench``, ``labels``: the benchmark's clips and its label vocabulary;
* ``kpf``, ``kpf_index``, ``clips``, ``clip_extract``, ``clip_stats``: from
  raw MEVA/VIRAT annotations to cropped, trimmed clips, and their statistics;
* ``video`` (with ``video_decode``): decoding and the paper's frame sampler;
* ``describe``, ``runner``, ``cache``, ``prompts`` and the backends
  (``transformers_backend`` with ``transformers_models`` and
  ``minicpm_backend``, ``openai_backend``, ``motion`` with
  ``motion_tracking``): describing clips, with a resumable cache;
* ``sentences``, ``embed``, ``similarity``: split, embed, compare (max cosine);
* ``metrics``, ``protocols``, ``evaluate``: AP, mAP, Pair-mAP and the
  SOVABench protocols;
* ``cache_scan``, ``results``, ``ablations``, ``benchmark_stats``,
  ``error_analysis``, ``explore``, ``plots``: what the notebooks call to build
  the paper's tables and figures.

Heavy dependencies (torch, transformers, OpenCV, decoders) load only when a
function that needs them runs.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .cache import DescriptionCache
from .clip_extract import extract_clips
from .clip_stats import class_counts, clip_durations, crop_sizes, manifest_frame
from .clips import ManifestRow, manifest_frames_args, plan_clips, read_manifest, write_manifest
from .describe import DESCRIBERS, DescribeRequest, Describer, make_describer, register_describer
from .descriptions import embed_descriptions, read_descriptions, read_embeddings, write_embeddings
from .embed import DEFAULT_ENCODER, SentenceEncoder
from .evaluate import BASELINES, CoverageError, Result, baseline, evaluate, oracle_texts
from .kpf import VIRAT_TO_MEVA, KpfError, find_annotation_files, read_activities
from .labels import ACTIONS, DIMS, DISTRACTOR, INTER_PAIRS, PAIRS, dim_of, opposite_of, pair_of
from .metrics import (
    TIE_RULES, average_precision, average_precision_rows, bootstrap_ci, mean_ap, pair_map, prevalence,
    random_ranking_ap,
)
from .motion import MotionDescriber
from .prompts import PROMPTS, SOVABENCH_SYSTEM_PROMPT, resolve_prompt
from .protocols import PROTOCOLS, Protocol, Task, get_protocol, register_protocol
from .runner import Item, RunSummary, describe_items, manifest_items
from .sentences import split, split_many
from .similarity import AGGREGATES, ItemVectors, l2_normalize, set_similarity
from .sovabench import SPLITS, Clip, load_split, parse_clip_name, read_tsv
from .video import Frames, VideoError, VideoInfo, example_videos, probe, sample_frames, sample_indices

__all__ = [
    "__version__",
    # benchmark metadata and labels
    "SPLITS", "Clip", "load_split", "parse_clip_name", "read_tsv",
    "ACTIONS", "DIMS", "DISTRACTOR", "INTER_PAIRS", "PAIRS", "dim_of", "opposite_of", "pair_of",
    # clips from raw annotations
    "VIRAT_TO_MEVA", "KpfError", "find_annotation_files", "read_activities",
    "ManifestRow", "plan_clips", "read_manifest", "write_manifest", "manifest_frames_args", "extract_clips",
    "class_counts", "clip_durations", "crop_sizes", "manifest_frame",
    # video
    "Frames", "VideoError", "VideoInfo", "example_videos", "probe", "sample_frames", "sample_indices",
    # description
    "DESCRIBERS", "DescribeRequest", "Describer", "make_describer", "register_describer", "MotionDescriber",
    "PROMPTS", "SOVABENCH_SYSTEM_PROMPT", "resolve_prompt",
    "DescriptionCache", "Item", "RunSummary", "describe_items", "manifest_items",
    # split, embed, compare
    "split", "split_many", "DEFAULT_ENCODER", "SentenceEncoder",
    "AGGREGATES", "ItemVectors", "l2_normalize", "set_similarity",
    "embed_descriptions", "read_descriptions", "read_embeddings", "write_embeddings",
    # metrics, protocols, evaluation
    "TIE_RULES", "average_precision", "average_precision_rows", "bootstrap_ci", "mean_ap", "pair_map",
    "prevalence", "random_ranking_ap",
    "PROTOCOLS", "Protocol", "Task", "get_protocol", "register_protocol",
    "BASELINES", "CoverageError", "Result", "baseline", "evaluate", "oracle_texts",
]
