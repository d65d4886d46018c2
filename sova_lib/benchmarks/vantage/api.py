"""What ``sova vantage`` and the notebooks call: ask a describer, score answers, write and check a submission.

``describe`` asks a describer every item of a task (answers cached,
resumable) and gives them back keyed by leaderboard id; ``evaluate_answers`` scores a
submission, cached answers or such answers against an answer key and returns
a ``VantageResult`` whose ``to_record()`` needs no argument; ``submit``
writes the leaderboard's submission JSONL and checks it; ``validate`` checks
one as the leaderboard does; ``score_folder`` evaluates every task of two
folders named as in the leaderboard's archive.
Every benchmark has such a module (``sova_lib.benchmarks.muvr.api``, ...).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.vantage.ground_truth import read_ground_truth
from sova_lib.benchmarks.vantage.inputs import read_items
from sova_lib.benchmarks.vantage.metrics_captions import BERTSCORE_MODEL, make_similarity
from sova_lib.benchmarks.vantage.run import DEFAULT_FRAMES, ROUTES, cached_answers, describe_task
from sova_lib.benchmarks.vantage.scoring import VantageResult, score_answers
from sova_lib.benchmarks.vantage.submissions import check_submission, read_submission, write_submission
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, HARNESS_KEYS, submission_answers, submission_id, task_key
from sova_lib.describe.prompt_file import PromptFile, read_prompt_file
from sova_lib.describe.provenance import folder_provenance, read_cache_manifest
from sova_lib.storage import lines, read_text

__all__ = ["Described", "NoAnswer", "describe", "evaluate_answers", "run_plan", "score_folder",
           "submit", "validate"]


class NoAnswer(LookupError):
    """Cached answers of which none is for an item asked (exit status 1 on the command line: nothing to score)."""


@dataclass
class Described:
    """A ``describe`` run: its ``summary`` (``RunSummary``), the task's ``items`` and the raw ``answers`` they got,
    keyed by leaderboard id (an item without an answer is left out)."""

    summary: object
    items: list
    answers: dict


def _items(task: str, items) -> list:
    """The public items of ``task``: a list as it is, else read from its path (TSV, annotations.json, folder)."""
    if isinstance(items, list):
        return items
    if not Path(items).exists():
        raise FileNotFoundError(f"--items {items}: no such file or folder; give the task's public items")
    return read_items(task_key(task), items)


def _prompts(prompts) -> PromptFile | None:
    """A prompts file as it is, or read from its path (``None``: the library's own prompts)."""
    return prompts if prompts is None or isinstance(prompts, PromptFile) else read_prompt_file(prompts)


def run_plan(folder) -> dict:
    """The plan a ``describe`` cache ``folder`` asked its answers with, from its ``manifest.json``
    (``source_details``, as ``run.describe_task`` writes them): ``task``, ``frames`` (per video; ``None`` for an
    image task), ``route`` (``run.ROUTES``) and, for the prompts-file route, ``prompts_sha256`` and
    ``prompts_file`` (its name). ``ValueError`` naming the folder when it holds no manifest of such a run."""
    manifest = read_cache_manifest(folder)
    details = manifest.get("source_details") if isinstance(manifest, dict) else None
    if not isinstance(details, dict) or details.get("benchmark") != "vantage" or details.get("route") not in ROUTES:
        raise ValueError(f"{folder}: not the cache folder of a vantage describe run (its manifest.json names no "
                         "VANTAGE-Bench run)")
    prompts = details.get("prompts") if isinstance(details.get("prompts"), dict) else {}
    return {"task": details.get("task"), "frames": details.get("frames"), "route": details["route"],
            "prompts_sha256": prompts.get("sha256"),
            "prompts_file": Path(str(details["prompts_file"])).name if details.get("prompts_file") else None}


def _check_plan(task: str, folder, frames: int | None, prompts: PromptFile | None) -> int:
    """The frame count of the cache ``folder``'s plan (``run_plan``), after checking that ``task``, ``frames``
    (``None``: take the plan's) and ``prompts`` agree with it; ``ValueError`` in one line naming the option that
    contradicts it and what the manifest says."""
    plan = run_plan(folder)
    where = f"{Path(folder) / 'manifest.json'}"
    if plan["task"] != task:
        raise ValueError(f"--answers {folder}: holds {plan['task']!r} answers ({where}), not {task!r}")
    if frames is not None and plan["frames"] is not None and frames != plan["frames"]:
        raise ValueError(f"--frames {frames} contradicts the run's plan of {plan['frames']} frames per video "
                         f"({where}); leave --frames out to use the plan")
    if plan["route"] == ROUTES[0] and prompts is not None:
        raise ValueError(f"--prompts {prompts.path}: the answers were asked with the library's prompts ({where}); "
                         "leave --prompts out")
    if plan["route"] == ROUTES[1] and prompts is None:
        raise ValueError(f"--answers {folder}: the answers were asked with the prompts file "
                         f"{plan['prompts_file'] or ''} (sha256 {plan['prompts_sha256']}, {where}); give it "
                         "with --prompts")
    if plan["route"] == ROUTES[1] and prompts.sha256 != plan["prompts_sha256"]:
        raise ValueError(f"--prompts {prompts.path}: its sha256 {prompts.sha256} is not the run's "
                         f"{plan['prompts_sha256']} ({where}); give the prompts file the answers were asked with")
    return plan["frames"] if plan["frames"] is not None else (DEFAULT_FRAMES if frames is None else frames)


def _answers(task: str, answers, items, frames: int | None, prompts=None) -> dict:
    """Raw answers keyed by leaderboard id: ``answers`` as given, or the answers cached in that folder for
    ``items``, asked with the run's plan (``run_plan``: its frame count, prompts route and the prompts file's
    digest; ``frames`` and ``prompts`` must agree with it, ``frames=None`` takes it). ``NoAnswer`` when the
    folder holds no answer for any of ``items``."""
    if isinstance(answers, Mapping):
        return dict(answers)
    if items is None:
        raise ValueError("--answers needs --items (the prompts name each cached answer)")
    found, prompts = _items(task, items), _prompts(prompts)
    frames = _check_plan(task, answers, frames, prompts)
    cached = submission_answers(found, cached_answers(answers, found, frames, prompts))
    if not cached:
        raise NoAnswer(f"--answers {answers}: none of the {len(found)} items of --items has an answer there, "
                       "asked with the run's plan; nothing to score")
    return cached


def describe(describer, task: str, items, cache_dir, *, media_root=None, frames: int = DEFAULT_FRAMES,
             run=None, prompts=None) -> Described:
    """Ask ``describer`` every item of ``task`` (``items``: a list, or the path of the task's public items), with
    ``frames`` frames of a video, the media under ``media_root``; answers go to a cache folder under
    ``cache_dir`` (``run.describe_task``). With ``run.limit`` (``RunOptions``), only the first items are asked,
    and ``Described.items`` holds those (a submission of them). ``prompts``: a prompts file (or its path) whose
    records give each item its exact messages and frame plan (``sova_lib.describe.prompt_file``)."""
    task = task_key(task)
    found = _items(task, items)
    if run is not None and run.limit is not None:
        found = found[:run.limit]
    prompts = _prompts(prompts)
    summary = describe_task(describer, task, found, cache_dir, media_root=media_root, n_frames=frames, run=run,
                            prompts=prompts)
    # the plan is the one just asked with; every item failed: no answer, and the caller says so
    return Described(summary, found, submission_answers(found, cached_answers(summary.folder, found, frames, prompts)))


def evaluate_answers(task: str, ground_truth, *, submission=None, answers=None, items=None,
                     frames: int | None = None, prompts=None, scoring: str = "official",
                     similarity: str = "bertscore", bertscore_model: str | None = None, bootstrap: int = 0,
                     seed: int = 0) -> VantageResult:
    """Score the answers of ``task`` against the answer key ``ground_truth`` in ``scoring`` mode.

    The answers: a ``submission`` JSONL (its box order and model as it records them), or ``answers``, raw answers
    keyed by leaderboard id or the cache folder of a ``describe`` run (with the task's ``items``; the run's
    plan, its frame count and prompts route, is read from its manifest, and ``frames`` and the ``prompts`` file
    must agree with it: ``_answers``; ``NoAnswer`` when none of the items has an answer there). ``similarity`` (and ``bertscore_model``): dense captioning's caption similarity.
    ``bootstrap`` resamples seeded by ``seed`` give the interval (0: none). The answer key's notes are
    ``result.ground_truth_notes``. ``ValueError``, naming an id of each side, when answers are given and none of
    them is for a ground-truth id.
    """
    task = task_key(task)
    truth = read_ground_truth(ground_truth, task)
    info: dict = {}
    if submission is not None:
        answers, info = read_submission(submission)
        if info and info["task"] != task:
            raise ValueError(f"{submission}: holds task {CANONICAL_TASKS[info['task']]!r}, not "
                             f"{CANONICAL_TASKS[task]!r} ({task})")
        context = {"kind": "submission", "source": str(submission), "model": info.get("model"),
                   "fingerprint": info.get("fingerprint"),
                   "cache": f"{Path(submission).parent.name}-{Path(submission).stem}"}
    else:  # raw answers given as such: the caller says what they are in to_record(kind=..., source=...)
        context = {} if isinstance(answers, Mapping) else {"kind": "description cache", "source": str(answers),
                                                            "cache": Path(answers).name,
                                                            **folder_provenance(answers)}  # names its model
        answers = _answers(task, answers, items, frames, prompts)
    if answers and truth and not set(truth) & set(answers):  # an answer without a GT id is counted by the scorer
        raise ValueError(f"none of the {len(answers)} answer ids is a ground-truth id (answer id "
                         f"{next(iter(answers))!r}, ground-truth id {next(iter(truth))!r})")
    name = None if task != "dvc" else similarity + (
        f" {bertscore_model or BERTSCORE_MODEL}" if similarity == "bertscore" else "")
    result = score_answers(task, truth, answers, mode=scoring, box_coord_order=info.get("box_coord_order", "xyxy"),
                           similarity=make_similarity(similarity, bertscore_model) if task == "dvc" else None,
                           rng=np.random.default_rng(seed) if bootstrap > 0 else None, n_resamples=bootstrap)
    result.ground_truth_notes = truth.notes
    result.context.update(seed=seed, similarity=name, **context)
    return result


def score_folder(ground_truth_dir, submissions_dir, *, similarity: str | None = None, **options) -> dict:
    """Task -> ``evaluate_answers``'s result, for every task with an answer key and a submission in the two folders, named
    as in the leaderboard's archive by the task's harness key (``tasks.HARNESS_KEYS``): the submission
    ``<key>.jsonl`` (``grounding.jsonl`` for referring expressions) and the answer key ``<key>_gt.jsonl`` (or
    ``<key>.jsonl``). Dense captioning is scored only with a caption ``similarity``; ``options`` as ``evaluate_answers``
    takes them."""
    gt_dir, sub_dir = Path(ground_truth_dir), Path(submissions_dir)
    out = {}
    for task, key in HARNESS_KEYS.items():
        truth = next((p for p in (gt_dir / f"{key}_gt.jsonl", gt_dir / f"{key}.jsonl") if p.is_file()), None)
        submission = sub_dir / f"{key}.jsonl"
        if truth not in (None, submission) and submission.is_file() and (task != "dvc" or similarity):
            out[task] = evaluate_answers(task, truth, submission=submission, similarity=similarity, **options)
    return out


def submit(task: str, items, answers, *, model: str, out, box_order: str = "xyxy",
           frames: int | None = None, prompts=None) -> tuple[Path | None, int]:
    """Write the leaderboard's submission JSONL of ``task`` to ``out`` from ``answers`` (keyed by leaderboard id,
    or a ``describe`` cache folder, whose plan its manifest gives and ``frames`` and ``prompts`` must agree with),
    with ``model`` and ``box_order`` recorded in it and, in ``metadata.extra``, the route that made the answers
    (``{"prompts": "library-prompts"}``, or ``{"prompts": "prompts-file", "prompts_file": NAME, "prompts_sha256":
    HEX}``) and the ``fingerprint`` of the weights that the cache folder's manifest names (none for answers given
    as such),
    then check it against every id of ``items`` (``submissions.write_submission``: ``InvalidSubmission`` lists what is
    wrong). Returns the file and the number of answers; ``(None, 0)``, writing nothing, when there is none."""
    found = _items(task, items)
    prompts = _prompts(prompts)
    weights = None if isinstance(answers, Mapping) else (read_cache_manifest(answers) or {}).get("fingerprint")
    answers = _answers(task, answers, found, frames, prompts)
    if not answers:
        return None, 0
    extra = ({"prompts": ROUTES[0]} if prompts is None else
             {"prompts": ROUTES[1], "prompts_file": prompts.path.name, "prompts_sha256": prompts.sha256})
    extra |= {} if weights is None else {"fingerprint": weights}
    path = write_submission(out, task, answers, model=model, box_coord_order=box_order,
                            expected_ids=[submission_id(it) for it in found], extra=extra)
    return path, len(answers)


def validate(file, task: str, *, ground_truth=None, items=None) -> tuple[list[str], int, int | None]:
    """Check the submission ``file`` of ``task`` as the leaderboard does (``submissions.check_submission``),
    requiring each id of the answer key ``ground_truth`` or of the public ``items`` once when one is given.
    Returns the problems (one line each; none for a valid file), its records and the ids it had to answer."""
    ids = None
    if ground_truth is not None:
        ids = list(read_ground_truth(ground_truth, task_key(task)))
    elif items is not None:
        ids = [submission_id(it) for it in _items(task, items)]
    if not Path(file).is_file():
        raise FileNotFoundError(f"{file}: no such file")
    problems = check_submission(file, task, ids)
    return problems, sum(1 for _ in lines(read_text(file))), None if ids is None else len(ids)
