"""SOVABench's four retrieval protocols, registered in ``sova_lib.protocols``.

``inter-pair``, ``inter-pair-constrained``, ``intra-pair`` and ``two-class``
(see ``sova_lib.protocols`` for what each ranks and how it is scored).
Importing this module registers them; it is one of the registry's providers
(``sova_lib.protocols.PROTOCOL_PROVIDERS``), and like every provider it is a
benchmark's ``protocols`` module.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from sova_lib.benchmarks.sovabench import labels
from sova_lib.benchmarks.sovabench.splits import SPLITS, Clip, load_split
from sova_lib.protocols import Protocol, Task, register_protocol

__all__ = ["SOVABENCH_PROTOCOLS", "benchmark_ids", "oracle_text"]


def benchmark_ids() -> frozenset:
    """Every SOVABench clip id of every split."""
    return frozenset(c.index for split in SPLITS for c in load_split(split))


def oracle_text(clip: Clip, label_of: Callable[[Clip], str]) -> str:
    """The oracle's description of ``clip``: its class under the protocol (a distractor: its activity)."""
    label = clip.activity if clip.is_distractor else label_of(clip)
    return label.replace("_", " ").replace("/", " or ")


def _one_task(split: str, label_of: Callable[[Clip], str]) -> Callable[[], list[Task]]:
    def tasks() -> list[Task]:
        clips = load_split(split)
        queries = np.array([i for i, c in enumerate(clips) if not c.is_distractor], dtype=np.int64)
        # Distractors get their own position as label, so nothing is relevant to them.
        lab = np.array([f"#distractor{i}" if c.is_distractor else label_of(c) for i, c in enumerate(clips)])
        return [Task(split, queries, np.arange(len(clips), dtype=np.int64), lab)]

    return tasks


def _intra_pair_tasks() -> list[Task]:
    clips = load_split("intrapair")
    lab = np.array([c.label for c in clips])
    pair = np.array([c.pair for c in clips])
    members = {p.name: np.flatnonzero(pair == p.name) for p in labels.PAIRS}
    return [Task(name, clips_of_pair, clips_of_pair, lab) for name, clips_of_pair in members.items()]


def _register(name: str, metric: str, description: str, split: str, label_of: Callable[[Clip], str],
              class_name: str, tasks=None):
    """Register a protocol over ``split``; its tasks default to one task ranked by ``label_of`` (``_one_task``)."""
    register_protocol(Protocol(
        name, metric, description, lambda: load_split(split), tasks or _one_task(split, label_of), label_of,
        benchmark="SOVABench", known_ids=benchmark_ids, oracle_text=lambda clip: oracle_text(clip, label_of),
        class_name=class_name,
    ))


_register("inter-pair", "mAP", "1,423 queries against all 9,882 clips; relevant = same opposite-action pair",
          "interpair", lambda c: c.pair, "pair")
_register("inter-pair-constrained", "mAP", "the 1,423 queries against each other (no distractors); relevant = same pair",
          "interpair_queries", lambda c: c.pair, "pair")
_register("intra-pair", "Pair-mAP",
          "per opposite pair, every clip against the pair's other clips; relevant = same action",
          "intrapair", lambda c: c.label, "action", tasks=_intra_pair_tasks)
_register("two-class", "mAP", "1,423 queries against all 9,882 clips; relevant = same group (human_vehicle / vehicle)",
          "interpair", lambda c: c.dim, "group")

#: The protocol names this module registers, in the order tables list them.
SOVABENCH_PROTOCOLS = ("inter-pair", "inter-pair-constrained", "intra-pair", "two-class")
