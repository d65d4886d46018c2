"""Retrieval protocols: which clips are queries, which form each gallery, what is relevant.

A protocol turns benchmark records into one or more ``Task`` objects. A task
is a set of query positions ranked against a gallery of positions (both into
the protocol's clip list), with a label per position; a gallery item is
relevant to a query when their labels are equal, and a query is never in its
own ranking. The protocol's score is the mean of per-query AP over a task
(mAP), or the mean over tasks of that (Pair-mAP).

The registry is benchmark-agnostic: each benchmark package registers its
own protocols when it is imported (``sova_lib.benchmarks.sovabench.protocols``
registers SOVABench's, and ``import sova_lib`` imports it). SOVABench's
protocols (spec section 3; SOVABench paper, Sections 3.1-3.2 and Appendix C):

``inter-pair``
    the 1,423 non-distractor clips of the inter-pair file are queries, each
    ranked against the other 9,881 clips (distractors included); relevant =
    same opposite-action pair. mAP.
``inter-pair-constrained``
    the same on the 1,423 query clips alone (Table C.1). mAP.
``intra-pair``
    one task per opposite pair over the 2,300 intra-pair clips; every clip
    of the pair is a query against the pair's other clips; relevant = same
    action. Pair-mAP.
``two-class``
    the inter-pair clips, queries as for inter-pair; relevant = same
    two-class group (``human_vehicle`` or ``vehicle``); distractors are
    relevant to no query. mAP.

New benchmarks add their protocols with ``register_protocol``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["PROTOCOLS", "Protocol", "Task", "get_protocol", "register_protocol"]


@dataclass(frozen=True)
class Task:
    """One ranking task: ``queries`` ranked against ``gallery``.

    ``queries`` and ``gallery`` are int positions into the protocol's clip
    list; ``labels`` gives a label for every position of that list. A query
    position found in ``gallery`` is excluded from its own ranking.
    """

    name: str
    queries: np.ndarray
    gallery: np.ndarray
    labels: np.ndarray

    def relevance(self) -> np.ndarray:
        """``(Q, N)`` bool: gallery item has the query's label."""
        _, codes = np.unique(self.labels, return_inverse=True)  # compare small ints, not strings
        return codes[self.queries][:, None] == codes[self.gallery][None, :]

    def valid(self) -> np.ndarray:
        """``(Q, N)`` bool: False where the gallery item is the query itself."""
        return self.queries[:, None] != self.gallery[None, :]


@dataclass(frozen=True)
class Protocol:
    """A named protocol over a list of clips.

    ``metric`` is ``"mAP"`` (one task) or ``"Pair-mAP"`` (mean over tasks);
    ``clips()`` gives the clip records (anything with an ``index`` id);
    ``tasks()`` the ranking tasks; ``query_class(clip)`` the class a query's
    AP is reported under. ``benchmark`` names the benchmark;
    ``known_ids()`` (optional) gives every id of that benchmark, so that an
    input's foreign ids can be told apart from ids of its other protocols;
    ``oracle_text(clip)`` (optional) is the text of the oracle baseline;
    ``class_name`` says what ``query_class`` returns ("pair", "action", ...),
    for headings.
    """

    name: str
    metric: str
    description: str
    clips: Callable[[], tuple]
    tasks: Callable[[], list[Task]]
    query_class: Callable[[object], str]
    benchmark: str = "benchmark"
    known_ids: Callable[[], frozenset] | None = None
    oracle_text: Callable[[object], str] | None = None
    class_name: str = "class"

    def ids(self) -> np.ndarray:
        """Ids of the protocol's clips, ``(n,)``, in clip-list order: int64 when every id is an int, else str."""
        ids = [c.index for c in self.clips()]
        if all(isinstance(i, (int, np.integer)) for i in ids):
            return np.array(ids, dtype=np.int64)
        return np.array([str(i) for i in ids])


PROTOCOLS: dict[str, Protocol] = {}


def register_protocol(protocol: Protocol) -> Protocol:
    """Add ``protocol`` to ``PROTOCOLS`` under its name."""
    PROTOCOLS[protocol.name] = protocol
    return protocol


def get_protocol(name: str) -> Protocol:
    """The registered protocol called ``name``; ``ValueError`` listing the known names otherwise."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose one of {sorted(PROTOCOLS)}")
    return PROTOCOLS[name]
