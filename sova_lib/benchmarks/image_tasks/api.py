"""What ``sova image-tasks`` and the notebooks call: the items of a folder of images, and the accuracy of one task.

``items`` makes describer items of image files, keyed as the tasks look
descriptions up (``datasets.image_key``); ``evaluate_files`` scores
descriptions, image vectors (the CLIP zero-shot row) or a baseline on one task and returns
an ``ImageTaskResult`` whose ``to_record()`` needs no argument.
Every benchmark has such a module (``sova_lib.benchmarks.sovabench.api``, ...).
"""
from __future__ import annotations

import glob
from pathlib import Path
from typing import TYPE_CHECKING

from sova_lib.benchmarks.image_tasks.accuracy import (
    ImageTaskResult,
    chance,
    embed_choices,
    oracle,
    score_descriptions,
    score_vectors,
)
from sova_lib.benchmarks.image_tasks.datasets import image_key, load
from sova_lib.describe.provenance import folder_provenance
from sova_lib.encoder import SentenceEncoder
from sova_lib.item_vectors import MAX_TEXT_CHARS, cut_note, read_descriptions, read_embeddings, vectors_identity

if TYPE_CHECKING:  # the items' module (and the video code it imports) only where items are made: scoring needs neither
    from sova_lib.describe.item import Item

__all__ = ["BASELINES", "evaluate_files", "items"]

BASELINES = ("random", "oracle")


def items(images: str) -> list[Item]:
    """One item per image file of the folder or glob ``images``, its id the file stem (a digit-only stem as an
    integer: ``000000017697.jpg`` is 17697); ``ValueError`` for no image or two files of one id."""
    from sova_lib.describe.item import IMAGE_SUFFIXES, Item

    path = Path(images)
    files = sorted(path.iterdir()) if path.is_dir() else sorted(Path(p) for p in glob.glob(images, recursive=True))
    files = [f for f in files if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES]
    if not files:
        raise ValueError(f"--images {images!r} matches no image file ({', '.join(sorted(IMAGE_SUFFIXES))})")
    owners: dict = {}
    for f in files:
        key = image_key(f)
        if key in owners:
            raise ValueError(f"--images: {owners[key]} and {f} have the same id {key!r}; ids are file stems")
        owners[key] = f
    return [Item(key, f, is_video=False) for key, f in owners.items()]


def evaluate_files(task: str, *, descriptions=None, embeddings=None, baseline: str | None = None, annotations=None,
             text_model: str | None = None, encoder=None, sentences: bool = True, max_chars: int = MAX_TEXT_CHARS,
             allow_missing: bool = False, bootstrap: int = 0, seed: int = 0) -> ImageTaskResult:
    """Tie-aware accuracy on ``task`` (``datasets.DATASETS``) of ``descriptions`` (keyed by image file stem; at
    most ``max_chars`` of each read), of image ``embeddings`` (an ``.npz``) whose choice sentences the text tower
    of ``text_model`` embeds, or of a ``baseline``: ``random`` (the mean of 1/choices) or ``oracle`` (each image
    described by its answer). ``annotations``: the task's file or a folder holding it (``datasets.load``);
    ``encoder``: a ``SentenceEncoder`` or a function that makes one. The result's ``to_record()`` records what
    was scored.
    """
    if (embeddings is None) != (text_model is None):
        raise ValueError("--embeddings on an image task needs --text-model, the model whose text tower embeds "
                         "the choice sentences" if text_model is None else "--text-model goes with --embeddings")
    found = load(task, annotations)
    common = {"allow_missing": allow_missing, "bootstrap": bootstrap, "seed": seed}
    made = None
    if baseline == "random":
        result = ImageTaskResult(task, chance(found), len(found), ties="n/a", text_split="n/a",
                                 notes=["random: mean over items of 1/(choices)"])
    elif embeddings is not None:
        from sova_lib.describe.contrastive import ContrastiveModel

        choices, item_of = embed_choices(found, ContrastiveModel(model=text_model, batch_frames=256).text_features)
        result = score_vectors(task, found, read_embeddings(embeddings), choices, item_of,
                                        text_split="n/a (contrastive)", **common)
        result.notes.append(f"zero-shot: choice sentences embedded by the text tower of {text_model}")
    else:
        made = encoder() if callable(encoder) else encoder or SentenceEncoder()
        if baseline == "oracle":
            result = oracle(task, found, made, bootstrap=bootstrap, seed=seed)
        else:
            texts = read_descriptions(descriptions)
            result = score_descriptions(task, found, texts, made, sentences=sentences, max_chars=max_chars, **common)
            result.notes.extend(cut_note(texts, max_chars))
    kind = "baseline" if baseline else ("embeddings" if embeddings is not None else "description cache")
    result.context.update(kind=kind, source=baseline or str(embeddings or descriptions), bootstrap=bootstrap, seed=seed,
                          baseline=baseline, encoder=made and made.name)
    if kind == "description cache":  # a describe cache names its model
        result.context.update(folder_provenance(descriptions))
    elif kind == "embeddings":  # vectors are named by their content, and the choices by the text tower
        result.context.update(encoder=text_model, **vectors_identity(embeddings))
    return result
