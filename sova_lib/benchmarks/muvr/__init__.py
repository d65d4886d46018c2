"""MUVR: multi-modal untrimmed video retrieval (Base, Filter and QA versions).

Modules: ``annotations`` (a partition of the annotations), ``annotation_files``
(the released annotation files, read and checked), ``features`` (released frame and text
features), ``fusion`` (frame-set maximum cosine and score fusion),
``metrics`` (AP with misses, uAP, R@k, random baseline, QA parses and
Reranking Score), ``retrieval`` (Base and Filter evaluation, per partition and averaged), ``qa`` (QA
questions, prompts, the describer runner), ``framework`` (MLLM-to-Embedding
on untrimmed videos), ``synthetic`` (a synthetic dataset in the released layout),
``synthetic_runs`` (the synthetic set scored, and every tie rule beside random tie orders on a tied synthetic set),
``hand_cases`` (the spec's hand-computed cases, computed by the library),
``api`` (what ``sova muvr`` and the notebooks call: ``describe``,
``evaluate_files``).
"""
from sova_lib.benchmarks.muvr.annotation_files import MuvrDataError
from sova_lib.benchmarks.muvr.annotations import BENCHMARK, PARTITIONS, load_partition, partitions_present
from sova_lib.benchmarks.muvr.api import VERSIONS, describe, evaluate_files
from sova_lib.benchmarks.muvr.features import released_vectors
from sova_lib.benchmarks.muvr.framework import MAX_WINDOWS, WINDOW_SECONDS
from sova_lib.benchmarks.muvr.fusion import QUERY_MODES, TAG_WEIGHT
from sova_lib.benchmarks.muvr.metrics import TIES
from sova_lib.benchmarks.muvr.qa import QA_MODES, QA_TEMPLATES, SCORINGS
from sova_lib.benchmarks.muvr.retrieval import MuvrResult, random_ranking
from sova_lib.benchmarks.muvr.synthetic import dry_run_summary, write_dry_run, write_synthetic

__all__ = ["BENCHMARK", "MAX_WINDOWS", "PARTITIONS", "QA_MODES", "QA_TEMPLATES", "QUERY_MODES", "SCORINGS",
           "TAG_WEIGHT", "TIES", "VERSIONS", "WINDOW_SECONDS", "MuvrDataError", "MuvrResult", "describe", "dry_run_summary",
           "evaluate_files",
           "load_partition", "partitions_present", "random_ranking", "released_vectors", "write_dry_run",
           "write_synthetic"]
