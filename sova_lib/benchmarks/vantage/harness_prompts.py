"""A prompts file from the VANTAGE-Bench harness itself: its own ``build_prompt`` run on every item.

``harness_prompts(harness, task, items, model_family=..., out=...)`` puts
the user's checkout of the harness (``Clemson-Capstone/VANTAGE-Bench``) first
on ``sys.path``, imports the task's dataset class from it
(``HARNESS_CLASSES``), and calls that class's ``build_prompt`` for every row
of the task's TSV, read by the harness's own ``vlmeval.smp.load``. It writes
one prompts-file record per item (``sova_lib.describe.prompt_file``): the
text parts of the harness's message in order, where the media go among them,
and the frame plan (``nframe``, ``fps``, ``max_frames``, ``max_pixels``,
``total_pixels``, as the dataset object holds them). This repository holds
no harness text: every word in the file comes from the checkout.

The dataset object is made without its ``__init__`` (which wants the
harness's ``LMUData`` layout): it gets every keyword default of the class's
``__init__`` as an attribute, then ``options`` (``nframe=8``, ...), then
``data`` (the TSV), ``data_root`` (``media_root``, the folder the harness's
``prepare_dataset`` would return as ``root``: ``.../videos`` for VQA,
temporal and DVC, the dataset folder for event verification, which adds
``videos/`` itself; by default that folder of a TSV in its LMUData dataset
folder, ``harness_data_root``) and ``model_family``. The loader finds each
video as ``inputs.video_file`` says (``loader_video``): a message without
media names the file it looked for.

``video_input``: ``"frames"`` asks for the message a frame-list model gets
(``build_prompt(line, video_llm=False)``: the frames as images, then the
harness's frame-count sentence and the question); the frames themselves are
not extracted (the harness's ``save_video_frames`` is replaced on the object
by one that only counts them: ``nframe``, or the ``fps`` rule of
``video_base.py:94-105`` on the probed video), since ``sova vantage
describe`` samples the same frames from the plan. ``"video"`` asks for the
message a video model gets (``video_llm=True``: the video, then the text);
that model's own reader picks the frames from the plan, and sova samples
them by the plan's rule, which may differ from that reader's.

Only the video tasks are supported: the harness's tracking message
interleaves images and text, and its image tasks are built by other classes.
"""
from __future__ import annotations

import importlib
import inspect
import json
import sys
from contextlib import contextmanager
from pathlib import Path

from sova_lib.benchmarks.vantage.inputs import video_file
from sova_lib.benchmarks.vantage.tasks import task_key
from sova_lib.storage import write_text

__all__ = ["HARNESS_CLASSES", "PLAN_OPTIONS", "VIDEO_INPUTS", "HarnessDependencyMissing", "harness_data_root", "harness_prompts",
           "loader_video", "message_record"]

#: Task -> (module, class) of its dataset class in the harness (``vlmeval/dataset/vantage_*.py``).
HARNESS_CLASSES = {
    "vqa": ("vlmeval.dataset.vantage_vqa", "VANTAGE_VQA"),
    "event_verification": ("vlmeval.dataset.vantage_event_verification", "VANTAGE_EventVerification"),
    "temporal": ("vlmeval.dataset.vantage_temporal", "VANTAGE_Temporal"),
    "dvc": ("vlmeval.dataset.vantage_dvc", "VANTAGE_DVC"),
}
#: What ``video_input`` may be: the message of a frame-list model, or of a video model.
VIDEO_INPUTS = ("frames", "video")
#: The dataset object's frame plan, which ``options`` may set and every record holds.
PLAN_OPTIONS = ("nframe", "fps", "max_frames", "max_pixels", "total_pixels")
#: What ``save_video_frames`` takes for a video file without appending ``.mp4`` (``video_base.py:79-85``).
_VIDEO_EXTS = (".mp4", ".mov", ".avi", ".mkv", ".webm", ".m4v", ".mpeg", ".mpg")


def harness_data_root(task: str, items) -> Path:
    """The ``data_root`` the harness's ``prepare_dataset`` gives ``task`` whose TSV ``items`` lies in its LMUData
    dataset folder (``scripts/run_lmudata.py:16-19``: ``<dataset>/<dataset>.tsv`` beside ``<dataset>/videos/``):
    that ``videos/`` folder for vqa, temporal and dvc (``vantage_vqa.py:199``, ``vantage_temporal.py:180``,
    ``vantage_dvc.py:140``), the dataset folder itself for event verification (``vantage_event_verification.py:117``,
    which adds ``videos/`` when it opens a video)."""
    folder = Path(items).parent
    return folder if task_key(task) == "event_verification" else folder / "videos"


def loader_video(task: str, data_root, name: str) -> Path:
    """The video file the harness's ``build_prompt`` of ``task`` opens for the TSV value ``name`` under its
    ``data_root`` (``inputs.video_file``; event verification under ``data_root/videos``,
    ``vantage_event_verification.py:139``)."""
    task = task_key(task)
    folder = Path(data_root) / "videos" if task == "event_verification" else Path(data_root)
    return folder / video_file(task, str(name))


def message_record(item_id, message: list, plan: dict, video: Path | None = None) -> dict:
    """The prompts-file record of one harness message (a list of ``{"type", "value"}`` parts: ``text``,
    ``image``, ``video``; a part with ``role: system`` is the system message): the texts in order as the user
    parts, the media before the first text that follows them, and ``plan``. ``ValueError`` when the media are
    split among the texts or missing (naming ``video``, the file the harness looked for, when given)."""
    system, parts, media_at, media_runs, last = None, [], 0, 0, None
    for part in message:
        if not isinstance(part, dict):
            raise ValueError(f"item {item_id}: a message part is {type(part).__name__}, not an object")
        kind = part.get("type", "text")
        if part.get("role") == "system":
            system = str(part.get("value", part.get("content", "")))
        elif kind == "text":
            parts.append(str(part["value"]))
        else:
            if last != "media":
                media_runs, media_at = media_runs + 1, len(parts)
            kind = "media"
        last = "media" if kind == "media" else "text"
    if media_runs > 1:
        raise ValueError(f"item {item_id}: the harness's message puts media in {media_runs} places; a prompts "
                         "file holds one")
    if media_runs == 0:  # the harness's build_prompt leaves the media out when it finds no video file
        looked = f" at {video}" if video is not None else ""
        raise ValueError(f"item {item_id}: the harness's message holds no video or frames, so the harness found no "
                         f"video{looked}: give as --media-root the folder its prepare_dataset returns as the root")
    messages = ([{"role": "system", "content": system}] if system is not None else []) + [
        {"role": "user", "content": parts}]
    return {"id": str(item_id), "messages": messages, "media_at": media_at, "frames": plan}


class HarnessDependencyMissing(ImportError):
    """A package the harness imports is not installed: ``package``, and the harness's ``requirements.txt`` that
    lists its dependencies."""

    def __init__(self, package: str, requirements: Path):
        self.package, self.requirements = package, requirements
        super().__init__(f"the VANTAGE-Bench harness needs {package}, a dependency of the harness (not of sova_lib), "
                         f"which is not installed: pip install -r {requirements}")


@contextmanager
def _harness_code(harness: Path, module: str):
    """Run the harness's code (importing ``module`` of the checkout ``harness``, or calling it): a package it
    imports that is not installed raises ``HarnessDependencyMissing`` (the harness's own modules are all in the
    checkout, so any other missing top-level package is one of the harness's dependencies)."""
    try:
        yield
    except ModuleNotFoundError as err:
        top = (err.name or "").split(".")[0]
        if not top or top == "vlmeval":
            raise FileNotFoundError(f"--harness {harness}: the checkout lacks {err.name or module}; give the folder "
                                    "of a complete VANTAGE-Bench checkout") from None
        raise HarnessDependencyMissing(top, harness / "requirements.txt") from None


def _dataset(cls, options: dict, data, media_root: Path, model_family: str):
    """An instance of the harness's dataset class ``cls`` without its ``__init__``: the keyword defaults of
    ``__init__``, then ``options``, ``data``, ``data_root`` and ``model_family``."""
    obj = cls.__new__(cls)
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if param.default is not inspect.Parameter.empty:
            setattr(obj, name, param.default)
    for name, value in {**options, "data": data, "data_root": str(media_root), "model_family": model_family,
                        "custom_prompt": options.get("custom_prompt")}.items():
        setattr(obj, name, value)
    return obj


def _frame_counter(obj, media_root: Path):
    """A stand-in for the harness's ``save_video_frames`` that extracts nothing: as many placeholder names as
    the harness would save frames (``nframe``, or ``fps`` frames a second, ``video_base.py:94-105``)."""
    def count(video):
        if (obj.nframe or 0) > 0:
            n = int(obj.nframe)
        else:
            from sova_lib.video.frames import probe

            name = str(video)  # video_base.py:79-85: .mp4 appended unless the name ends with a video extension
            name = name if name.lower().endswith(_VIDEO_EXTS) else name + ".mp4"
            path = Path(name) if Path(name).is_absolute() else media_root / name
            info = probe(path)
            n = int(info.num_frames / info.fps * obj.fps)
        return [f"<frame {k + 1} of {n}>" for k in range(n)]
    return count


def harness_prompts(harness, task: str, items, *, model_family: str, out, media_root=None,
                    video_input: str = "frames", options: dict | None = None) -> tuple[Path, int]:
    """Write the prompts file ``out`` of ``task`` from the harness checkout ``harness`` (see the module text).

    ``items``: the task's TSV; ``media_root``: the harness's ``data_root`` for
    the task (default: ``harness_data_root(task, items)``); ``options``: dataset settings
    (``nframe``, ``fps``, ``max_frames``, ``max_pixels``, ``total_pixels``)
    over the class's defaults. Returns the file and its record count.
    ``FileNotFoundError`` for a folder that is no checkout; ``ValueError`` for
    a task without a supported class; ``HarnessDependencyMissing`` naming a
    package the harness imports that is not installed.
    """
    task = task_key(task)
    if task not in HARNESS_CLASSES:
        raise ValueError(f"harness prompts cover the video tasks ({', '.join(HARNESS_CLASSES)}), not {task}: the "
                         "harness's tracking message interleaves images and text, and its image tasks are built "
                         "by other classes")
    if video_input not in VIDEO_INPUTS:
        raise ValueError(f"video_input must be one of {VIDEO_INPUTS}")
    harness, items = Path(harness).resolve(), Path(items)
    module_name, class_name = HARNESS_CLASSES[task]
    if not (harness / Path(*module_name.split("."))).with_suffix(".py").is_file():
        raise FileNotFoundError(f"--harness {harness}: no {module_name.replace('.', '/')}.py; give the folder of "
                                "a VANTAGE-Bench checkout")
    if not items.is_file():
        raise FileNotFoundError(f"--items {items}: no such file")
    # absolute, as the harness's LMUDataRoot() is: event verification hands save_video_frames a path under it
    # (vantage_event_verification.py:167-168), which video_base.py:85 joins to data_root again
    media_root = (Path(media_root) if media_root is not None else harness_data_root(task, items)).absolute()
    if str(harness) not in sys.path:
        sys.path.insert(0, str(harness))
    with _harness_code(harness, module_name):
        cls = getattr(importlib.import_module(module_name), class_name)
    with _harness_code(harness, "vlmeval.smp"):
        load = importlib.import_module("vlmeval.smp").load
    data = load(str(items))
    obj = _dataset(cls, dict(options or {}), data, media_root, model_family)
    if not ((getattr(obj, "nframe", 0) or 0) > 0 or (getattr(obj, "fps", 0) or 0) > 0):
        raise ValueError(f"give --nframe or --fps: {class_name} has neither set by default, and the harness needs "
                         "one of them (video_base.py:50-53)")
    if video_input == "frames":
        obj.save_video_frames = _frame_counter(obj, media_root)
    plan = {k: getattr(obj, k, None) for k in PLAN_OPTIONS}
    plan = {k: v for k, v in plan.items() if v is not None and not (k in ("nframe", "fps") and v <= 0)}
    lines = []
    for position in range(len(data)):
        row = data.iloc[position]
        with _harness_code(harness, module_name):  # build_prompt may import more of the harness's packages
            message = obj.build_prompt(row, video_llm=video_input == "video")
        record = message_record(row["index"], message, plan, loader_video(task, media_root, row["video"]))
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return write_text(out, "".join(lines)), len(lines)
