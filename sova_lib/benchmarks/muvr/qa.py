"""MUVR-QA: the yes/no questions, their prompts, asking any describer, and scoring the answers.

Questions (spec Sec. 2): ``annotations/QA/annotations/<partition>.jsonl``,
one ``{"Query", "Target", "Tag", "Label", "prompt_en"}`` object per line;
lines ``2i`` (Label 1) and ``2i+1`` (Label 0) form a pair with one Query and
Tag. ``Tag`` is ``""`` on Base pairs, else ``+phrase`` / ``-phrase``. A
question's id is ``"<partition>/<line>"`` (line counted from 0). Use the
released files; the selection is never regenerated (spec Sec. 8.1).

Prompts (``QA_TEMPLATES``; spec Sec. 8.2): both use the InternVL2 wording of
the paper's Tables 11 (text-only) and 12 (multi-image). ``"code"`` (default)
handles the tag as the official code does (spec Sec. 4): no tag block when
``Tag`` is empty, and a tag becomes "must exist in [Target]: X" or "must not
exist in [Target]: X". ``"paper"`` keeps the paper's tag block, with the tag
as written, on every question. (The code's own sentences are not
reproduced word for word: only its tag handling is known here.) The images are attached by the describer backend, so the
paper's ``<Query Video>`` / ``<Target Video>`` placeholders become a sentence
saying which images are which, and the description loses its ``[<region>]``
marks (``clean_description``; spec Sec. 8.6). Frames (spec Sec. 4): ``n_frames`` target frames
at ``int(s/2 + round(s*i))``, ``s = (F-1)/n_frames``; the multi-image
variant first adds the query video's middle frame (``F // 2``; the paper's
text says its first frame, the code takes the middle).

``run_qa`` asks a describer through the project's one runner
(``describe_items``) and cache: answers land in a description cache folder
whose key holds the template, the frame counts and a hash of the questions.
``score_answers`` gives Accuracy (percent of questions) and the Reranking
Score (over pairs), for All and No Tag, under the official or strict parse.
No Tag is the Tag-less pairs. The official code builds it from the
partition list ``['news', 'instane', 'others', 'region', 'dance']``
(``InternVL/multi_image_comparison.py:225``): the misspelt ``instane``
names no file, which it skips, so the instance partition never enters No
Tag there, and the published No Tag numbers were made so. The official
parse reproduces that subset (``OFFICIAL_NO_TAG``, with a note); the strict
parse takes the Tag-less pairs of every partition, the subset the paper
describes.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sova_lib import storage
from sova_lib.benchmarks.muvr import metrics
from sova_lib.benchmarks.muvr.annotation_files import MuvrDataError
from sova_lib.benchmarks.muvr.annotations import (
    BENCHMARK,
    PARTITIONS,
    canonical_partition,
    clean_description,
    partition_path,
)
from sova_lib.records import make_record

__all__ = ["OFFICIAL_NO_TAG", "QA_MODES", "QA_TEMPLATES", "SCORINGS", "QAQuestion", "QAResult", "find_video", "load_qa",
           "question_text", "read_video_frames", "run_qa", "score_answers", "target_frame_indices"]

QA_MODES = ("multi-image", "text-only")
SCORINGS = ("official", "strict")
#: The partitions whose Tag-less pairs form the official code's No Tag subset: its list misspells ``instance``
#: as ``'instane'`` (``InternVL/multi_image_comparison.py:225``), so that partition's file is never read there.
OFFICIAL_NO_TAG = ("news", "others", "region", "dance")
_INTRO = {
    "text-only": ("I will give you a text query and a video: [Query] and [Target]. Please determine whether any "
                  "part of [Target] is slightly relevant to any part of [Query]."),
    "multi-image": ("I will give you a video query and a video target: [Query] and [Target]. Please determine "
                    "whether any part of [Target] is slightly relevant to any part of [Query] or [Focus]."),
}
_TAG_INTRO = " I will also provide [Tag] that [Target] (if relevant) must feature it."
_OUTPUT = "[Output]:\n If slightly relevant, return Yes. If not, return No."
#: Template name -> how the tag is written (the rest of the text is shared).
QA_TEMPLATES = ("code", "paper")


@dataclass(frozen=True)
class QAQuestion:
    """One yes/no question: ``id`` ``"<partition>/<line>"``, the query and target video ids, tag, label, text."""

    id: str
    partition: str
    query: str
    target: str
    tag: str
    label: int
    text: str


def load_qa(root: str | Path, partitions=PARTITIONS) -> list[QAQuestion]:
    """The questions of ``partitions``, checked: fields, labels 1 then 0 per pair, one Query and Tag per pair."""
    out = []
    for partition in partitions:
        name = canonical_partition(partition)
        path = partition_path(Path(root) / "annotations" / "QA" / "annotations", name,
                              "file not found; expected the released QA layout", ".jsonl")
        lines = [line for _, line in storage.lines(storage.read_text(path))]
        if len(lines) % 2:
            raise MuvrDataError(path, f"line {len(lines)}", "odd number of questions; lines come in pairs")
        for k, line in enumerate(lines):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise MuvrDataError(path, f"line {k + 1}", f"not valid JSON ({err.msg})") from None
            for key, kind in (("Query", str), ("Target", str), ("Tag", str), ("prompt_en", str), ("Label", int)):
                if not isinstance(rec, dict) or key not in rec:
                    raise MuvrDataError(path, f"line {k + 1}: {key}", "missing")
                if not isinstance(rec[key], kind) or isinstance(rec[key], bool):
                    raise MuvrDataError(path, f"line {k + 1}: {key}", f"expected {kind.__name__}")
            if rec["Label"] != (1 if k % 2 == 0 else 0):
                raise MuvrDataError(path, f"line {k + 1}: Label", f"expected {1 if k % 2 == 0 else 0} "
                                    "(a pair is a Label 1 line then a Label 0 line)")
            if k % 2 and (rec["Query"], rec["Tag"]) != (out[-1].query, out[-1].tag):
                raise MuvrDataError(path, f"line {k + 1}: Query", "differs from its pair's line (Query and Tag)")
            out.append(QAQuestion(f"{name}/{k}", name, rec["Query"], rec["Target"], rec["Tag"], rec["Label"],
                                  rec["prompt_en"]))
    return out


def question_text(q: QAQuestion, *, mode: str = "multi-image", template: str = "code", n_frames: int = 6) -> str:
    """The instruction sent with the frames of question ``q`` (see the module docstring)."""
    if mode not in QA_MODES or template not in QA_TEMPLATES:
        raise ValueError(f"mode must be one of {QA_MODES} and template one of {QA_TEMPLATES}")
    description = clean_description(q.text)
    has_tag = bool(q.tag) or template == "paper"
    images = (f"[Query] is the first image (a frame of the query video); [Target] is the next {n_frames} images "
              f"(frames of the target video in time order)." if mode == "multi-image" else
              f"[Target] is the {n_frames} images (frames of the target video in time order).")
    parts = [_INTRO[mode] + (_TAG_INTRO if has_tag else ""), images]
    parts.append(f"[Focus]:\n{description}" if mode == "multi-image" else f"[Query]:\n{description}")
    if has_tag:  # the paper's template writes the tag as it is; the code's says what it asks of [Target]
        sign, phrase = (q.tag[:1], q.tag[1:].strip()) if q.tag[:1] in ("+", "-") else ("+", q.tag)
        tag = q.tag if template == "paper" else f"must {'not ' if sign == '-' else ''}exist in [Target]: {phrase}"
        parts.append(f"[Tag]:\n{tag}")
    parts.append(_OUTPUT)
    return "\n".join(parts)


def target_frame_indices(num_frames: int, n_frames: int = 6) -> list[int]:
    """``int(s/2 + round(s*i))`` for ``i < n_frames``, ``s = (F-1)/n_frames`` (spec Sec. 4)."""
    s = (num_frames - 1) / n_frames
    return [min(num_frames - 1, int(s / 2 + round(s * i))) for i in range(n_frames)]


_VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".flv")
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def find_video(video_root: Path, vid: str) -> Path:
    """``<root>[/<sub>]/<vid>`` as a folder of frame images or a video file; ``FileNotFoundError`` otherwise."""
    for base in [video_root, *sorted(p for p in video_root.iterdir() if p.is_dir())]:
        if (base / vid).is_dir():
            return base / vid
        for suffix in _VIDEO_SUFFIXES:
            if (base / f"{vid}{suffix}").is_file():
                return base / f"{vid}{suffix}"
    raise FileNotFoundError(f"video {vid} is not under {video_root} (a frame folder or {'/'.join(_VIDEO_SUFFIXES)})")


def read_video_frames(path: Path, pick) -> list:
    """RGB PIL images of the frames ``pick(F)`` of a frame folder or a video file (F: its frame count)."""
    from PIL import Image

    from sova_lib.video import probe
    from sova_lib.video.frames import read_frames

    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in _IMAGE_SUFFIXES)
        if not files:
            raise FileNotFoundError(f"{path} holds no frame images")
        out = []
        for i in pick(len(files)):
            with Image.open(files[i]) as img:
                out.append(img.convert("RGB"))
        return out
    return [Image.fromarray(a) for a in read_frames(path, pick(probe(path).num_frames))]


def run_qa(describer, questions: list[QAQuestion], video_root: str | Path, cache_dir: str | Path, *,
           mode: str = "multi-image", template: str = "code", n_frames: int = 6, **options):
    """Ask ``describer`` every question with its frames; answers go to a description cache. Returns the ``RunSummary``.

    ``options`` go to ``sova_lib.describe.runner.describe_items`` (``run``: a
    ``RunOptions``, ...). A video that cannot be found or read is recorded
    in the cache's ``errors.jsonl`` and the run goes on.
    """
    from sova_lib.describe.contract import PromptedDescriber  # describing code, here: scoring answers never loads it
    from sova_lib.describe.item import Item
    from sova_lib.describe.prompts import Prompt
    from sova_lib.describe.runner import LocalEngine, describe_items

    video_root = Path(video_root)
    by_id = {q.id: q for q in questions}
    texts = {q.id: question_text(q, mode=mode, template=template, n_frames=n_frames) for q in questions}
    digest = hashlib.sha256(json.dumps(sorted(texts.items()) + sorted(
        (q.id, q.query, q.target) for q in questions)).encode()).hexdigest()[:16]
    extra = {"mode": mode, "template": template, "target_frames": n_frames,
             "query_frame": "middle" if mode == "multi-image" else None, "questions_sha256": digest}

    def load(item: Item, fps: float):
        q = by_id[item.id]
        frames = []
        if mode == "multi-image":
            frames += read_video_frames(find_video(video_root, q.query), lambda f: [f // 2])
        frames += read_video_frames(find_video(video_root, q.target), lambda f: target_frame_indices(f, n_frames))
        return frames, (), False

    template_text = question_text(QAQuestion("", "", "", "", "+{tag}", 1, "{description}"), mode=mode,
                                  template=template, n_frames=n_frames)
    items = [Item(q.id, video_root / q.target, is_video=False) for q in questions]
    asked = PromptedDescriber(describer, {id: {"prompt": text} for id, text in texts.items()}, "muvr_qa", extra)
    return describe_items(asked, items, cache_dir,
                          prompt=Prompt(f"muvr-qa-{mode}-{template}", template_text, template_text), fps=0.0,
                          engine=LocalEngine(load), **options)


# Field lists of the same shape, deliberately: QAResult, muvr.retrieval.MuvrResult and report.compare.Comparison are
# each a plain record of their own numbers (a scan for repeated code pairs them; they share no logic).
@dataclass
class QAResult:
    """Accuracy (percent) and Reranking Score, over All and No Tag, with the parse used; ``notes`` in words."""

    parse: str
    accuracy: dict
    reranking_score: dict
    n_questions: dict
    unparseable: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    context: dict = field(default_factory=dict, repr=False)  # record fields: what was scored and how

    def text(self) -> str:
        """The scores as ``sova muvr evaluate --version qa`` prints them, one line per subset."""
        return "\n".join(f"MUVR-QA {subset}: accuracy {value:.1f}%  reranking score "
                         f"{self.reranking_score[subset]:+.2f}  over {self.n_questions[subset]} questions"
                         for subset, value in self.accuracy.items())

    def to_json(self) -> dict:
        """A JSON-ready dict, as ``sova muvr evaluate --version qa --json`` prints it: ``benchmark``, ``version``
        (``qa``) and ``source`` (the answers scored, ``context["source"]``), then the fields."""
        fields = {k: v for k, v in asdict(self).items() if k != "context"}
        return {"benchmark": BENCHMARK, "version": "qa", "source": self.context.get("source"), **fields}

    def remarks(self) -> list[str]:
        """The line ``sova muvr evaluate`` adds on stderr below the scores when some answers did not parse: their
        number and the first three ids; none when all did."""
        return [f"  {len(self.unparseable)} unparseable answer(s), e.g. {self.unparseable[:3]}"] if self.unparseable \
            else []

    def to_record(self, **fields) -> dict:
        """These answers' scores as one ``sova_lib.records`` record (one row of ``figures/results.csv``).

        ``benchmark`` is ``muvr``; ``protocol`` ``"qa (<parse> parse)"``;
        ``metric`` ``accuracy`` with ``value`` the accuracy over all questions;
        ``n_queries`` their number; ``per_class`` the accuracy of each subset
        (``all``, ``no_tag``; 2 decimals); ``ties`` ``n/a``; ``note`` the
        Reranking Score of each subset (signed, 2 decimals), the number of
        unparseable answers and the result's notes, ``"; "`` between them.
        ``context`` and then ``fields`` (``kind``, ``source``, ``bootstrap``,
        ``seed``, ``cache``, ...) say what was scored.
        """
        rs = ", ".join(f"{k} {v:+.2f}" for k, v in self.reranking_score.items())
        return make_record(benchmark=BENCHMARK, protocol=f"qa ({self.parse} parse)",
                           metric="accuracy", value=self.accuracy["all"], n_queries=self.n_questions["all"],
                           per_class={k: round(v, 2) for k, v in self.accuracy.items()}, ties="n/a",
                           note="; ".join([f"reranking score {rs}", f"{len(self.unparseable)} unparseable answer(s)",
                                           *self.notes]),
                           **{**self.context, **fields})


def score_answers(questions: list[QAQuestion], answers: dict, *, parse: str = "official") -> QAResult:
    """Score ``answers`` (question id -> text). Strict parse: an unparseable answer counts as "No" and is listed.

    Every question needs an answer (``ValueError`` naming the missing ids).
    No Tag: the Tag-less questions of the ``OFFICIAL_NO_TAG`` partitions
    under the official parse (as the official code builds it, typo included;
    a note says so when an instance question is left out), of every
    partition under the strict parse.
    """
    if parse not in SCORINGS:
        raise ValueError(f"unknown parse {parse!r}; choose one of {SCORINGS}")
    missing = [q.id for q in questions if q.id not in answers]
    if missing:
        raise ValueError(f"{len(missing)} of {len(questions)} questions have no answer (e.g. {missing[:3]})")
    parsed = [(metrics.parse_official if parse == "official" else metrics.parse_strict)(answers[q.id])
              for q in questions]
    unparseable = [q.id for q, value in zip(questions, parsed) if value is None]  # strict only
    preds = np.array([value or 0 for value in parsed])
    labels = np.array([q.label for q in questions])
    tagless = np.array([q.tag == "" for q in questions], dtype=bool)
    no_tag = tagless & np.array([parse == "strict" or q.partition in OFFICIAL_NO_TAG for q in questions], dtype=bool)
    notes = []
    if (tagless & ~no_tag).any():
        notes.append(f"No Tag leaves out the {int((tagless & ~no_tag).sum())} Tag-less questions of the instance "
                     "partition, as the official code does (its partition list spells it 'instane', "
                     "InternVL/multi_image_comparison.py:225); the strict parse keeps them")
    accuracy, rs, count = {}, {}, {}
    for subset, mask in (("all", np.ones(len(questions), bool)), ("no_tag", no_tag)):
        if not mask.any():
            continue
        accuracy[subset] = metrics.qa_accuracy(preds[mask], labels[mask])
        rs[subset] = metrics.reranking_score(preds[mask][0::2], preds[mask][1::2])  # (positive, negative) pairs
        count[subset] = int(mask.sum())
    return QAResult(parse, accuracy, rs, count, unparseable, notes)
