"""What ``sova muvr`` and the notebooks call: describe the gallery or ask the QA questions, and score one input.

``describe`` runs a describer over MUVR's videos through the one runner (the
MLLM-to-Embedding framework's fixed windows, or MUVR-QA's questions);
``evaluate_files`` scores released features, vectors, described windows or
the random ranking under Base or Filter (``retrieval``), or QA answers
(``qa``), and returns a result whose ``to_record()`` needs no argument. The
files each reads are listed in docs/muvr.md.
Every benchmark has such a module (``sova_lib.benchmarks.vantage.api``, ...).
"""
from __future__ import annotations

from pathlib import Path

from sova_lib.benchmarks.muvr import framework, qa, retrieval
from sova_lib.benchmarks.muvr.annotations import load_partition, partitions_present
from sova_lib.benchmarks.muvr.features import npz_vectors, released_vectors
from sova_lib.benchmarks.muvr.framework import MAX_WINDOWS, WINDOW_SECONDS
from sova_lib.benchmarks.muvr.fusion import TAG_WEIGHT
from sova_lib.describe.provenance import folder_provenance
from sova_lib.encoder import SentenceEncoder
from sova_lib.item_vectors import read_descriptions, vectors_identity

__all__ = ["VERSIONS", "describe", "evaluate_files"]

#: The versions: Base and Filter rank the gallery (``retrieval``), QA asks yes/no questions (``qa``).
VERSIONS = ("base", "filter", "qa")


def describe(describer, data, video_root, cache_dir, *, version: str = "base", partitions=None, prompt="general",
             fps: float | None = 1.0, frames: int | None = None, max_frames: int | None = None,
             window_seconds: float = WINDOW_SECONDS, max_windows: int = MAX_WINDOWS,
             qa_mode: str = "multi-image", qa_template: str = "code",
             run=None):
    """Describe every gallery and query video of ``partitions`` of the MUVR root ``data`` in fixed windows with
    ``prompt`` (a ``sova_lib.describe.prompts.Prompt`` or a preset name; ``version`` base or filter), or ask MUVR-QA's questions
    (``version="qa"``, as ``qa_mode`` and ``qa_template`` say), into ``cache_dir``; returns the run's summary.
    ``fps``, ``frames`` and ``max_frames``: each window's frames, as for ``sova_lib.describe.runner.describe_items`` (the
    QA questions send frames of their own). ``partitions`` None: every partition the root holds
    (``partitions_present``)."""
    partitions = partitions or partitions_present(data, qa=version == "qa")
    if version == "qa":
        return qa.run_qa(describer, qa.load_qa(data, partitions), video_root, cache_dir, mode=qa_mode,
                         template=qa_template, run=run)
    loaded = [load_partition(data, p) for p in partitions]
    ids = list(dict.fromkeys([v for p in loaded for v in p.gallery] + [q.id for p in loaded for q in p.queries]))
    return framework.describe_windows(describer, ids, video_root, cache_dir, prompt=prompt, fps=fps, frames=frames,
                                      max_frames=max_frames, seconds=window_seconds, max_windows=max_windows,
                                      run=run)


def evaluate_files(data, *, version: str = "base", partitions=None, features=None, embeddings=None,
             descriptions=None, baseline: str | None = None, answers=None, query: str = "text+video",
             tag_weight: float = TAG_WEIGHT, ties: str = "expected", scoring: str = "official", encoder=None,
             split_query: bool = True, join_listed: bool = False, bootstrap: int = 0, seed: int = 0):
    """Score one input on ``partitions`` of the MUVR root ``data``.

    Base and Filter (``retrieval.evaluate_vectors``): the ``features`` MUVR released for one model
    (``DIR/<partition>/*.npy``), an ``.npz`` of ``embeddings``, described windows (``descriptions``, embedded by
    ``encoder``, a ``SentenceEncoder`` or a function that makes one; each query's text split into sentences
    unless ``split_query=False``) or the ``random-ranking`` ``baseline``, scored by ``query`` modality, ``ties``
    and, for Filter, ``tag_weight``. QA (``qa.score_answers``): the ``answers`` of ``describe(version="qa")``,
    parsed as ``scoring`` says. ``join_listed`` lets listed ids missing from videos.json join the gallery.
    ``partitions`` None: every partition the root holds (``partitions_present``). The record of ``features`` or
    ``embeddings`` names the folder or file and its content digest (``item_vectors.vectors_identity``).
    """
    partitions = partitions or partitions_present(data, qa=version == "qa")
    run = {"bootstrap": bootstrap, "seed": seed}
    if version == "qa":
        if answers is None:
            raise ValueError("--version qa needs --answers CACHE (a describe cache folder or a JSON Lines file)")
        result = qa.score_answers(qa.load_qa(data, partitions), read_descriptions(answers), parse=scoring)
        result.context.update({"kind": "description cache", "source": str(answers), "cache": Path(answers).name,
                               **folder_provenance(answers), **run})  # a describe cache names its model
        return result
    if answers is not None:
        raise ValueError("--answers applies to --version qa")
    loaded = [load_partition(data, p, join_listed=join_listed) for p in partitions]
    if baseline is not None:
        result = retrieval.random_ranking(loaded, version=version, **run)
        result.context.update(kind="baseline", source=baseline, baseline=baseline, **run)
        return result
    context = {"kind": "embeddings"}
    if features is not None:
        source, vectors = features, released_vectors(features, query=query, version=version)
    elif embeddings is not None:
        source, vectors = embeddings, npz_vectors(embeddings)
    else:
        made = encoder() if callable(encoder) else encoder or SentenceEncoder()
        source, vectors = descriptions, framework.framework_vectors(read_descriptions(descriptions), made,
                                                                    split_query=split_query)
        context = {"kind": "description cache", "encoder": made.name,
                   "text_split": "sentences" if split_query else "whole text",
                   **folder_provenance(descriptions)}  # a describe cache names its model
    result = retrieval.evaluate_vectors(loaded, vectors, query=query, tag_weight=tag_weight, ties=ties, source=str(source),
                                        version=version, **run)
    if descriptions is None:  # vectors named by their content: another file of the same name is another record
        context.update(vectors_identity(source))
    result.context.update({"source": str(source), "cache": Path(source).name, **context, **run})
    return result
