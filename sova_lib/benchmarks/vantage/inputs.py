"""The public VANTAGE-Bench inputs: one ``VantageItem`` per question, read from the released files.

Formats (spec section 3; harness ``scripts/RUN_LMUData.md``), all paths
relative to a media root chosen by the caller:

===================  ==========================================================
task                 file and columns
===================  ==========================================================
vqa                  TSV ``index, video, question, options``
event_verification   TSV ``index, video, system_prompt, question``
temporal, dvc        TSV ``index, video, question``
pointing             TSV ``index, question_id, image_path, question, A, B, C, D``
astro                TSV ``index, image_path`` (``question`` optional; the
                     release documents no table for this task)
refex                ``annotations.json``: a list of ``{image, sentence, width,
                     height}`` (``id`` optional; else the list position)
sot                  a folder of ``<sequence>/gt.json`` ``{frame_ids,
                     init_bbox}`` with ``<sequence>/frames/fNN.png`` (NN = position, 00 = the anchor)
===================  ==========================================================

A video task's ``video`` names its file as the harness's loaders read it
(``video_file``): temporal localization stores the bare stem and the loader
appends ``.mp4``; VQA and dense captioning append ``.mp4`` when it is
missing; event verification takes the name as given.

Item ids are the ``index`` column (the sequence name for tracking), as text;
they name cached answers. The leaderboard's ids are built from them by
``tasks.submission_id``.
A malformed file raises ``VantageDataError``, whose message names the file,
the line and the field.
"""
from __future__ import annotations

import csv
import json
import string
from dataclasses import dataclass, field
from pathlib import Path

from sova_lib.storage import JsonlError, read_jsonl

__all__ = ["LMU_DATASETS", "TSV_COLUMNS", "VantageDataError", "VantageItem", "jsonl_objects", "read_items", "read_refex", "read_sot", "read_tsv",
           "turn_value", "video_file"]

#: Required TSV columns per task.
TSV_COLUMNS = {
    "vqa": ("index", "video", "question", "options"),
    "event_verification": ("index", "video", "system_prompt", "question"),
    "temporal": ("index", "video", "question"),
    "dvc": ("index", "video", "question"),
    "pointing": ("index", "question_id", "image_path", "question", "A", "B", "C", "D"),
    "astro": ("index", "image_path"),
}


def video_file(task: str, name: str) -> str:
    """The file a video task's TSV ``video`` value ``name`` names, relative to the folder of the task's videos,
    as the harness's loader forms it (a path that is absolute stays so when joined):

    - ``temporal``: ``name + ".mp4"`` always, the TSV holding the bare stem
      (``vlmeval/dataset/vantage_temporal.py:313``; ``scripts/run_lmudata.py:908-909`` stores the stem);
    - ``vqa``, ``dvc``: ``name``, with ``.mp4`` appended when it does not end so
      (``vantage_vqa.py:430-431``, ``vantage_dvc.py:154``; ``run_lmudata.py:611, 840`` store names with ``.mp4``);
    - ``event_verification``: ``name`` as given (``vantage_event_verification.py:139``, under the dataset's
      ``videos/``; ``run_lmudata.py:761`` stores names with ``.mp4``).

    ``ValueError`` for a task that is not a video task.
    """
    if task == "temporal":
        return name + ".mp4"
    if task in ("vqa", "dvc"):
        return name if name.endswith(".mp4") else name + ".mp4"
    if task == "event_verification":
        return name
    raise ValueError(f"task {task!r} has no video; the video tasks are vqa, event_verification, temporal, dvc")


#: Task -> the harness's dataset name: its folder under ``LMUData/datasets/`` and, for a TSV task, the TSV's stem
#: (``scripts/run_lmudata.py:16-23``, ``TASK_CONFIG`` at 152-200): ``<name>/<name>.tsv`` beside ``<name>/videos/``.
LMU_DATASETS = {
    "vqa": "VANTAGE_VQA",
    "event_verification": "VANTAGE_EventVerification",
    "temporal": "VANTAGE_Temporal",
    "dvc": "VANTAGE_DVC",
    "refex": "VANTAGE_2DGrounding",
    "pointing": "VANTAGE_2DPointing",
    "astro": "Astro2D",
    "sot": "VANTAGE_SOT",
}


class VantageDataError(ValueError):
    """A malformed input, ground-truth or submission file: ``<file>, line <n>, field '<name>': <what>``."""

    def __init__(self, path, line: int | None, field_name: str | None, message: str):
        self.path, self.line, self.field = str(path), line, field_name
        where = str(path) + (f", line {line}" if line is not None else "")
        where += f", field '{field_name}'" if field_name else ""
        super().__init__(f"{where}: {message}")


def jsonl_objects(path: Path):
    """``(line number, object)`` of each non-blank line of a JSONL file (the harness's ground truth and
    submissions; ``sova_lib.storage.read_jsonl``); ``VantageDataError`` naming the line where one is not a JSON object."""
    try:
        for number, rec in read_jsonl(path):
            if not isinstance(rec, dict):
                raise VantageDataError(path, number, None, "not a JSON object")
            yield number, rec
    except JsonlError as err:
        raise VantageDataError(path, err.line, None, f"not a JSON object ({err.reason})") from None


def turn_value(rec: dict, speaker: str, path, line: int, *, last: bool = False):
    """The ``value`` of a harness record's first (``last``: last) ``conversations`` turn ``from`` ``speaker``;
    ``VantageDataError`` naming the line where there is none."""
    turns = rec.get("conversations")
    if not isinstance(turns, list):
        raise VantageDataError(path, line, "conversations", "expected a list of {from, value} turns")
    for turn in reversed(turns) if last else turns:
        if isinstance(turn, dict) and turn.get("from") == speaker and "value" in turn:
            return turn["value"]
    raise VantageDataError(path, line, "conversations", f"no turn from {speaker!r} with a 'value'")


@dataclass(frozen=True)
class VantageItem:
    """One question of one task.

    ``media``: the video, the image, or (tracking) the frame files in order,
    frame 0 first, as given (relative to the media root). ``options``: the
    options, one line each as the prompt lists them (VQA: as listed in the TSV, a JSON list of bare texts labelled
    ``A. <text>``, ``B. <text>``, ... as the harness's loader labels them; pointing: ``A. <text of A>``
    to ``D. <text of D>``).
    ``extra``: task data the prompt or metric needs (``width``/``height``,
    ``init_bbox`` and ``frame_ids`` for tracking, ``question_id``).
    """

    id: str
    task: str
    media: tuple[str, ...]
    question: str = ""
    options: tuple[str, ...] = ()
    system_prompt: str | None = None
    extra: dict = field(default_factory=dict, compare=False)


def _split_options(text: str, path, line: int) -> tuple[str, ...]:
    text = text.strip()
    if not text.startswith(("[", "{")):
        return tuple(row.strip() for row in text.splitlines() if row.strip())
    kind = "list of option texts" if text[0] == "[" else "object of options"
    try:
        value = json.loads(text)
    except ValueError as err:
        raise VantageDataError(path, line, "options", f"a JSON {kind} did not parse ({err})") from None
    if isinstance(value, dict):
        return tuple(f"{k}. {v}" for k, v in value.items())
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise VantageDataError(path, line, "options", "expected a JSON list of option texts")
    texts = tuple(v.strip() for v in value)
    letters = string.ascii_uppercase[:len(texts)]
    if all(t.startswith(f"{c}. ") for c, t in zip(letters, texts)):  # labelled already: as listed
        return texts
    # the harness's layout: bare texts (run_lmudata.py:632), labelled A., B., ... by the loader (vantage_vqa.py:402-403)
    return tuple(f"{c}. {t}" for c, t in zip(letters, texts))


def read_tsv(path, task: str) -> list[VantageItem]:
    """The items of a task's public TSV (columns ``TSV_COLUMNS[task]``; extra columns are ignored)."""
    if task not in TSV_COLUMNS:
        raise ValueError(f"task {task!r} has no TSV; choose one of {sorted(TSV_COLUMNS)}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    items, seen = [], {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        missing = [c for c in TSV_COLUMNS[task] if c not in (reader.fieldnames or [])]
        if missing:
            raise VantageDataError(path, 1, missing[0], f"the header lacks column(s) {missing} of a {task} TSV "
                                                        f"({', '.join(TSV_COLUMNS[task])})")
        for row in reader:
            line = reader.line_num
            for col in TSV_COLUMNS[task]:
                if row.get(col) is None or (col in ("index", "video", "image_path") and not row[col].strip()):
                    raise VantageDataError(path, line, col, "empty or missing value")
            idx = row["index"].strip()
            if idx in seen:
                raise VantageDataError(path, line, "index", f"id {idx} appears again (first on line {seen[idx]})")
            seen[idx] = line
            items.append(_tsv_item(task, idx, row, path, line))
    return items


def _tsv_item(task: str, idx: str, row: dict, path, line: int) -> VantageItem:
    media = row["video" if "video" in TSV_COLUMNS[task] else "image_path"]
    if task == "vqa":
        options = _split_options(row["options"], path, line)
    else:
        options = tuple(f"{c}. {row[c]}" for c in "ABCD") if task == "pointing" else ()
    return VantageItem(idx, task, (media,), row.get("question") or "", options,
                       system_prompt=row["system_prompt"] if task == "event_verification" else None,
                       extra={"question_id": row["question_id"]} if task == "pointing" else {})


def _json_file(path: Path):
    """The JSON value of the file ``path``; ``VantageDataError`` naming its line where it is not valid JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise VantageDataError(path, getattr(err, "lineno", None), None, f"not valid JSON ({err})") from None


def read_refex(path) -> list[VantageItem]:
    """The referring-expression items of ``annotations.json``."""
    path = Path(path)
    entries = _json_file(path)
    if not isinstance(entries, list):
        raise VantageDataError(path, None, None, "expected a JSON list of annotations")
    items = []
    for k, entry in enumerate(entries):
        where = f"entry {k}"
        for key in ("image", "sentence", "width", "height"):
            if not isinstance(entry, dict) or key not in entry:
                raise VantageDataError(path, None, key, f"{where} lacks it")
        try:
            size = {"width": float(entry["width"]), "height": float(entry["height"])}
        except (TypeError, ValueError):
            raise VantageDataError(path, None, "width", f"{where}: width and height must be numbers") from None
        # ``position``: the list position, the index of the leaderboard id (``tasks.submission_id``).
        items.append(VantageItem(str(entry.get("id", k)), "refex", (entry["image"],), entry["sentence"],
                                 extra={**size, "position": k}))
    return items


def read_sot(folder) -> list[VantageItem]:
    """The tracking items of a folder of ``<sequence>/gt.json`` files, in sequence-name order."""
    folder = Path(folder)
    files = sorted(folder.glob("*/gt.json"))
    if not files:
        raise FileNotFoundError(f"no <sequence>/gt.json under {folder}")
    items = []
    for path in files:
        gt = _json_file(path)
        ids, init = gt.get("frame_ids") if isinstance(gt, dict) else None, gt.get("init_bbox") if isinstance(gt, dict) else None
        if not isinstance(ids, list) or len(ids) < 2:
            raise VantageDataError(path, None, "frame_ids", "expected a list of at least two frame ids")
        if not (isinstance(init, list) and len(init) == 4 and all(isinstance(v, (int, float)) for v in init)):
            raise VantageDataError(path, None, "init_bbox", "expected four numbers [x1, y1, x2, y2]")
        seq = path.parent.name
        media = tuple(f"{seq}/frames/f{k:02d}.png" for k in range(len(ids)))
        items.append(VantageItem(seq, "sot", media, extra={"frame_ids": [str(f) for f in ids],
                                                            "init_bbox": [float(v) for v in init]}))
    return items


def read_items(task: str, path) -> list[VantageItem]:
    """The public items of ``task`` from ``path`` (a TSV, ``annotations.json``, or the tracking folder)."""
    readers = {"refex": read_refex, "sot": read_sot}
    return readers[task](path) if task in readers else read_tsv(path, task)
