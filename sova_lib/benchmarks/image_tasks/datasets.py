"""Loaders of the image tasks of SOVABench Table 3: VSR, What's Up, CountBench, Visual7W-Count.

Each loader turns an annotation file into ``ChoiceItem`` objects: an image, a
tuple of choice sentences and the position of the correct one. An item's id
is its 0-based line (VSR) or record index (the others; for Visual7W the index
of the question-answer pair in file order) in the annotation file, so ids are
stable across runs and subsets.

Only VSR's test splits ship with the package (Apache-2.0, see
``data/vsr/README.md``). The other annotation files are read from a path the
user gives, a folder holding the file under its public name, or the folder
named by ``$SOVA_IMAGE_TASKS``; a missing file raises ``FileNotFoundError``
naming the file expected and where it is published (``DATASETS``).

``image_key``: descriptions and image vectors are made once per image and
keyed by the image file's stem (digit-only stems read as integers, as
``sova_lib.item_vectors.read_descriptions`` reads ids), so several items on
one image share them. CountBench ships image URLs only; its images are
expected as ``<id>.<ext>`` under the image root.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from sova_lib.benchmarks.image_tasks.choices import number_choices, visual7w_count_sentence, vsr_choices
from sova_lib.storage import read_jsonl

__all__ = ["DATASETS", "ChoiceItem", "Dataset", "annotation_path", "image_key", "load", "load_countbench",
           "load_visual7w_count", "load_vsr", "load_whatsup", "vendored_vsr"]

@dataclass(frozen=True)
class ChoiceItem:
    """One multiple-choice item: ``choices[answer]`` is the correct sentence.

    ``image``: the image's path relative to the image root (a file name for
    VSR, Visual7W and CountBench, the dataset's own relative path for What's
    Up). ``meta``: fields of the source record worth keeping (relation, label,
    question, count ...).
    """

    id: int
    image: str
    choices: tuple
    answer: int
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def image_key(self):
        return image_key(self.image)


def image_key(image: str):
    """The id an image's description or vector carries: its file stem (digit-only stems as int)."""
    stem = Path(str(image)).stem
    return int(stem) if stem.isdigit() else stem


@dataclass(frozen=True)
class Dataset:
    """A Table 3 column: its loader, its annotation file, and where that file is published."""

    name: str
    column: str  # the paper's column name (Table 3)
    group: str  # "spatial" or "count"
    file: str  # the annotation file's public name
    source: str  # where to get it
    prompt: str  # the task-aware prompt preset (sova_lib.describe.prompts)
    vendored: bool = False


#: Dataset name -> ``Dataset``. Names are also the evaluation protocol names.
DATASETS: dict[str, Dataset] = {d.name: d for d in [
    *(Dataset(f"vsr-{split}", column, "spatial", f"{split}_test.jsonl",
              f"github.com/cambridgeltl/visual-spatial-reasoning data/splits/{split}/test.jsonl", "task-aware-vsr",
              vendored=True) for split, column in (("zeroshot", "VSR"), ("random", "VSR (random split)"))),
    *(Dataset(f"whatsup-{subset.lower()}", f"What's Up {subset}", "spatial", f"controlled_{kind}_dataset.json",
              f"github.com/amitakamath/whatsup_vlms (Google Drive id {drive_id})", "task-aware-whatsup")
      for subset, kind, drive_id in (("A", "images", "1ap8mmmpQjLIjPGuplkpBgc1hoEHCj4hm"),
                                     ("B", "clevr", "1unNNosLbdy9NDjgj4l8fsQP3WiAAGA6z"))),
    Dataset("countbench", "CountBench", "count", "CountBench.json",
            "github.com/teaching-clip-to-count/teaching-clip-to-count.github.io CountBench.json",
            "task-aware-countbench"),
    Dataset("visual7w-count", "Visual7W-Count", "count", "dataset_v7w_telling.json",
            "http://ai.stanford.edu/~yukez/papers/resources/dataset_v7w_telling.zip (Visual7W toolkit)",
            "task-aware-visual7w-count"),
]}


def vendored_vsr(split: str = "zeroshot") -> Path:
    """Path of a vendored VSR test file (``split``: ``"zeroshot"`` or ``"random"``)."""
    if split not in ("zeroshot", "random"):
        raise ValueError(f"VSR split must be 'zeroshot' or 'random', got {split!r}")
    return Path(str(resources.files(__package__) / "data" / "vsr" / f"{split}_test.jsonl"))


def annotation_path(name: str, path: str | Path | None = None) -> Path:
    """The annotation file of dataset ``name`` (one not vendored): ``path`` (a file or a folder holding it), else
    ``$SOVA_IMAGE_TASKS/<file>``.

    Raises ``FileNotFoundError`` naming the expected file and its public source.
    """
    dataset = DATASETS[name]
    path = (os.environ.get("SOVA_IMAGE_TASKS") or None) if path is None else path
    candidate = None if path is None else Path(path)
    if candidate is not None and candidate.is_dir():
        candidate = candidate / dataset.file
    if candidate is None or not candidate.is_file():
        where = "no path was given and $SOVA_IMAGE_TASKS is not set" if candidate is None else f"{candidate} does not exist"
        raise FileNotFoundError(f"{dataset.column}: annotation file {dataset.file} not found ({where}); "
                                f"it is published at {dataset.source}")
    return candidate


def _read_json(path: Path, expected: type):
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    if not isinstance(data, expected):
        raise ValueError(f"{path}: expected a JSON {expected.__name__} at the top level, got {type(data).__name__}")
    return data


def _field(record, key, kind, where):
    if not isinstance(record, dict) or key not in record:
        raise ValueError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"{where}: field {key!r} is {type(value).__name__}, expected {kind.__name__}")
    return value


def load_vsr(path: str | Path | None = None, *, split: str = "zeroshot") -> list[ChoiceItem]:
    """VSR items from a JSON Lines file (default: the vendored ``split`` test file).

    Choices: the caption and its negation (``choices.vsr_choices``); the
    answer is 0 for a true caption (``label`` 1), 1 for a false one.
    """
    path = vendored_vsr(split) if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"VSR annotation file {path} does not exist; the test splits are published at "
                                f"{DATASETS['vsr-zeroshot'].source}")
    items = []
    for line_number, record in read_jsonl(path):
        number, where = line_number - 1, f"{path}, line {line_number}"
        caption, relation = _field(record, "caption", str, where), _field(record, "relation", str, where)
        label = _field(record, "label", int, where)
        try:
            choices, answer = vsr_choices(caption, relation, label)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        items.append(ChoiceItem(number, _field(record, "image", str, where), choices, answer,
                                {"relation": relation, "label": label, "caption": caption}))
    return items


def load_whatsup(path: str | Path | None = None, *, subset: str = "A") -> list[ChoiceItem]:
    """What's Up (Controlled_Images subset ``A`` or ``B``) from its JSON list.

    Each record holds ``image_path`` and four ``caption_options``, the first
    of which is correct (answer 0; tie-aware scoring makes the position
    carry no information).
    """
    subset = subset.upper()
    if subset not in ("A", "B"):
        raise ValueError(f"What's Up subset must be 'A' or 'B', got {subset!r}")
    path = annotation_path(f"whatsup-{subset.lower()}", path)
    items = []
    for index, record in enumerate(_read_json(path, list)):
        where = f"{path}, record {index}"
        options = _field(record, "caption_options", list, where)
        if len(options) < 2 or not all(isinstance(o, str) for o in options):
            raise ValueError(f"{where}: caption_options must be a list of at least two strings")
        items.append(ChoiceItem(index, _field(record, "image_path", str, where), tuple(options), 0))
    return items


def load_countbench(path: str | Path | None = None, *, numbers=range(2, 11)) -> list[ChoiceItem]:
    """CountBench from its JSON list of ``{"image_url", "text", "number"}``.

    Choices: the caption with its number word replaced by each of ``numbers``
    (two .. ten by default: 9 choices, chance 11.1%; ``range(1, 11)`` gives
    10). The image of item ``i`` is ``<i>.<ext>`` under the image root; the
    record's URL stays in ``meta["url"]``.
    """
    path = annotation_path("countbench", path)
    items = []
    for index, record in enumerate(_read_json(path, list)):
        where = f"{path}, record {index}"
        text, number = _field(record, "text", str, where), _field(record, "number", int, where)
        try:
            choices, answer = number_choices(text, number, numbers)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        items.append(ChoiceItem(index, f"{index}.jpg", choices, answer,
                                {"number": number, "url": record.get("image_url"), "caption": text}))
    return items


def load_visual7w_count(path: str | Path | None = None, *, split: str | None = "test") -> list[ChoiceItem]:
    """Visual7W-Count: the "how many" questions of ``dataset_v7w_telling.json``.

    An item's id is the index of its question-answer pair among all pairs of
    the file, in file order (``qa_id`` is kept in ``meta``). ``split`` keeps
    the images of one split (``None``: all). Choices: the answer and the three
    ``multiple_choices``, each as a template sentence
    (``choices.visual7w_count_sentence``; not the paper's ChatGPT sentences).
    """
    path = annotation_path("visual7w-count", path)
    data = _read_json(path, dict)
    images = _field(data, "images", list, str(path))
    items, index = [], -1
    for i, image in enumerate(images):
        where = f"{path}, images[{i}]"
        pairs = _field(image, "qa_pairs", list, where)
        keep = split is None or image.get("split") == split
        for j, qa in enumerate(pairs):
            index += 1
            question = _field(qa, "question", str, f"{where}.qa_pairs[{j}]")
            if not keep or not question.strip().lower().startswith("how many"):
                continue
            wrong = _field(qa, "multiple_choices", list, f"{where}.qa_pairs[{j}]")
            options = [_field(qa, "answer", str, f"{where}.qa_pairs[{j}]"), *wrong]
            try:
                choices = tuple(visual7w_count_sentence(question, str(o)) for o in options)
            except ValueError as err:
                raise ValueError(f"{where}.qa_pairs[{j}]: {err}") from None
            items.append(ChoiceItem(index, _field(image, "filename", str, where), choices, 0,
                                    {"question": question, "qa_id": qa.get("qa_id"), "options": options}))
    return items


def load(name: str, path: str | Path | None = None) -> list[ChoiceItem]:
    """The items of dataset ``name`` (a key of ``DATASETS``) with its default options."""
    if name not in DATASETS:
        raise ValueError(f"unknown image task {name!r}; choose one of {sorted(DATASETS)}")
    if name.startswith("vsr-"):
        return load_vsr(path, split=name.split("-", 1)[1])
    if name.startswith("whatsup-"):
        return load_whatsup(path, subset=name[-1])
    return load_countbench(path) if name == "countbench" else load_visual7w_count(path)
