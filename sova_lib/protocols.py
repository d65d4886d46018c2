"""Retrieval protocols: which clips are queries, which form each gallery, what is relevant.

A protocol turns benchmark records into one or more ``Task`` objects. A task
is a set of query positions ranked against a gallery of positions (both into
the protocol's clip list), with a label per position; a gallery item is
relevant to a query when their labels are equal, and a query is never in its
own ranking. The protocol's score is the mean of per-query AP over a task
(mAP), or the mean over tasks of that (Pair-mAP).

The registry is benchmark-agnostic and filled on its first read: ``PROTOCOLS``
imports each module named in ``PROTOCOL_PROVIDERS`` once (each registers its
protocols with ``register_protocol``), the first time a protocol is looked
up or the registry is listed; nothing is registered by importing the package.
``protocols`` is one named module in the core and in each benchmark that
offers protocols: this one is the registry, and each provider is its
benchmark's ``protocols`` module (``sova_lib.benchmarks.sovabench.protocols``,
``sova_lib.benchmarks.excerpts.protocols``). SOVABench's protocols (spec
section 3; SOVABench paper, Sections 3.1-3.2 and Appendix C):

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

A new benchmark writes a ``protocols`` module that calls ``register_protocol``
and adds its name to ``PROTOCOL_PROVIDERS``.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["PROTOCOLS", "PROTOCOL_PROVIDERS", "Protocol", "Task", "get_protocol", "register_protocol"]


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


#: The modules that register protocols, imported (once, in this order) on the registry's first read.
PROTOCOL_PROVIDERS = (
    "sova_lib.benchmarks.sovabench.protocols",
    "sova_lib.benchmarks.excerpts.protocols",
)


class ProtocolRegistry(Mapping):
    """Protocol name -> ``Protocol``, read-only; the first read imports every module of ``providers``.

    ``register_protocol`` adds to it without reading it, so a provider can
    register while it is being imported. Every read imports the providers, which Python does once: a later read
    finds them in ``sys.modules`` (a read while they import sees what they registered so far), and a provider
    that failed to import raises on that read and is tried again on the next one.
    """

    def __init__(self, providers: tuple[str, ...]):
        self.providers = providers
        self._protocols: dict[str, Protocol] = {}

    def _filled(self) -> dict[str, Protocol]:
        """The protocols, after importing the providers."""
        for module in self.providers:
            importlib.import_module(module)
        return self._protocols

    def __getitem__(self, name: str) -> Protocol:
        return self._filled()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._filled()))

    def __len__(self) -> int:
        return len(self._filled())


PROTOCOLS = ProtocolRegistry(PROTOCOL_PROVIDERS)


def register_protocol(protocol: Protocol) -> None:
    """Add ``protocol`` to ``PROTOCOLS`` under its name (a provider calls it when imported)."""
    PROTOCOLS._protocols[protocol.name] = protocol  # without reading it: a provider registers while imported


def get_protocol(name: str) -> Protocol:
    """The registered protocol called ``name``; ``ValueError`` listing the known names otherwise."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose one of {sorted(PROTOCOLS)}")
    return PROTOCOLS[name]
