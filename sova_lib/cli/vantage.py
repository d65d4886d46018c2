"""``sova vantage describe|evaluate|submit|validate|harness-prompts|synthetic``: VANTAGE-Bench answers, scores
and leaderboard files.

::

    sova vantage describe --task vqa --items vqa.tsv --media-root videos/ --backend openai --model M \\
        --base-url http://localhost:8000/v1 --cache-dir cache [--ground-truth vqa_gt.jsonl] [--prompts P.jsonl]
    sova vantage harness-prompts --harness VANTAGE-Bench/ --task vqa --items vqa.tsv --model-family gpt \\
        --out vqa_prompts.jsonl
    sova vantage evaluate --task vqa --ground-truth vqa_gt.jsonl --submission vqa.jsonl [--items vqa.tsv] \\
        [--out results/]
    sova vantage submit --task vqa --items vqa.tsv --answers cache/descriptions/<folder> --model M --out vqa.jsonl
    sova vantage validate vqa.jsonl --task vqa [--ground-truth vqa_gt.jsonl | --items vqa.tsv]
    sova vantage synthetic --out DIR        (synthetic questions on bundled street clips, for a dry run)

``--task`` takes the library key (``vqa``), the harness key (``grounding``)
or the canonical task string (``video_qa``). ``--prompts`` gives every item
its exact messages and frame plan from a prompts file, which
``harness-prompts`` writes from a checkout of the harness (its own
``build_prompt``); without it the library's own prompts are sent.
``describe`` caches raw answers
(resumable), then scores them when ``--ground-truth`` is given and
otherwise writes the submission JSONL; every submission written is checked
as the leaderboard checks it. Exit status: 0 done, 1 no answer at all, 2 bad
input (one line on stderr; one line per problem of an invalid submission,
naming the file, line and id).
"""
from __future__ import annotations

import sys
from pathlib import Path

from sova_lib.benchmarks import vantage
from sova_lib.cli import add_benchmark
from sova_lib.cli.options import (
    add_bootstrap_options,
    add_cache_options,
    add_describer_options,
    add_output_options,
    existing_file,
    existing_folder,
    positive_count,
    positive_number,
    release_notes,
    report,
    value_type,
)

__all__ = ["add_commands"]


#: ``--task``: the library key, the harness key or the canonical task string, as ``vantage.task_key`` reads it.
_task = value_type(vantage.task_key)

_TASK_HELP = "task: " + ", ".join(f"{k} ({v})" for k, v in vantage.CANONICAL_TASKS.items()) + "; grounding = refex"


#: ``--frames`` of the commands that read cached answers: the run's manifest gives it; a different count is refused.
_CACHED_FRAMES = ("frames per video the cached answers were asked with (default: the run's own, from its "
                  "manifest.json; a different count is refused)")


def _task_args(p, *, items: bool, cached: bool = False) -> None:
    p.add_argument("--task", required=True, type=_task, metavar="TASK", help=_TASK_HELP)
    if items:
        p.add_argument("--items", required=True, type=Path, metavar="PATH",
                       help="the task's public items: its TSV, refex's annotations.json, or sot's folder")
    if cached:
        p.add_argument("--frames", type=positive_count, metavar="N", help=_CACHED_FRAMES)
    else:
        p.add_argument("--frames", type=positive_count, default=vantage.DEFAULT_FRAMES, metavar="N",
                       help=f"frames sampled per video (default {vantage.DEFAULT_FRAMES})")


_PROMPTS_HELP = ("a prompts file: each item asked exactly its record's messages, with the frames of its plan "
                 "(sova vantage harness-prompts writes one from the harness); default: this library's prompts")
_CACHED_PROMPTS = ("the prompts file the cached answers were asked with, when the run's manifest says one was (it "
                   "names each answer; another file is refused)")


def _score_args(p) -> None:
    p.add_argument("--scoring", choices=vantage.MODES, default="official",
                   help="official: parse the answers as the VANTAGE-Bench harness does (default); strict: count "
                        "only well-formed answers")
    p.add_argument("--similarity", choices=vantage.SIMILARITIES, default="bertscore",
                   help="task dvc: how two captions are compared (default: bertscore, as the leaderboard)")
    p.add_argument("--bertscore-model", metavar="NAME_OR_DIR",
                   help=f"--similarity bertscore: a local folder of roberta-large, or a hub id in the local cache "
                        f"(default: {vantage.BERTSCORE_MODEL})")
    add_bootstrap_options(p)


def add_commands(sub) -> None:
    vs = add_benchmark(sub, "vantage", "VANTAGE-Bench: describe items, evaluate answers, write a submission", __doc__)
    _add_describe(vs)
    _add_evaluate(vs)
    _add_submit(vs)
    _add_validate(vs)
    _add_harness_prompts(vs)
    _add_synthetic(vs)


def _add_describe(vs) -> None:
    """``sova vantage describe``: ask a describer every item, then score or write a submission (its options added
    when it is parsed, so that the other verbs import no describing code)."""
    d = vs.add_parser("describe", help="ask a describer every item; score (--ground-truth) or write a submission",
                      description="Ask a describer every item of a task, caching the raw answers (resumable); then "
                                  "score them against --ground-truth, or write and check the leaderboard's "
                                  "submission. Example: sova vantage describe --task vqa --items vqa.tsv "
                                  "--media-root videos/ --backend openai --model M --base-url URL --out vqa.jsonl")
    d.fill_later(_describe_options)


def _describe_options(d) -> None:
    _task_args(d, items=True)
    d.add_argument("--media-root", type=existing_folder, metavar="DIR",
                   help="the folder the items' media paths are relative to, for a video task the folder of its "
                        "videos (default: the current folder)")
    add_describer_options(d, prompt=False)
    d.add_argument("--prompts", type=existing_file, metavar="FILE.jsonl", help=_PROMPTS_HELP)
    add_cache_options(d, what="answers go to DIR/descriptions/")
    d.add_argument("--ground-truth", type=existing_file, metavar="GT.jsonl",
                   help="score the answers against this answer key instead of writing a submission")
    add_output_options(d, out=("OUT.jsonl", "the submission file to write (default: submission.jsonl in the cache "
                                            "folder)"),
                       progress=True, json=True)
    _score_args(d)
    d.set_defaults(func=run_describe)


def _add_evaluate(vs) -> None:
    """``sova vantage evaluate``: score a submission or cached answers."""
    s = vs.add_parser("evaluate", help="score a submission or cached answers against a ground-truth JSONL",
                      description="Score a submission JSONL, or a vantage describe cache, against an answer key. "
                                  "Example: sova vantage evaluate --task vqa --ground-truth vqa_gt.jsonl "
                                  "--submission vqa.jsonl --out results/")
    _task_args(s, items=False, cached=True)
    s.add_argument("--ground-truth", required=True, type=existing_file, metavar="GT.jsonl",
                   help="the answer key, in the harness's ground-truth JSONL layout")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--submission", type=existing_file, metavar="FILE.jsonl",
                     help="a submission JSONL, as vantage describe or submit (or the harness) writes it")
    src.add_argument("--answers", type=existing_folder, metavar="CACHE_FOLDER",
                     help="the cache folder of a vantage describe run")
    s.add_argument("--items", type=Path, metavar="PATH",
                   help="the task's public items: needed with --answers (the prompts name each cached answer)")
    s.add_argument("--prompts", type=existing_file, metavar="FILE.jsonl", help=_CACHED_PROMPTS + " (with --answers)")
    _score_args(s)
    add_output_options(s, record="score", json=True)
    s.set_defaults(func=run_evaluate)


def _add_submit(vs) -> None:
    """``sova vantage submit``: write the leaderboard's submission from cached answers."""
    u = vs.add_parser("submit", help="write the leaderboard's submission JSONL from cached answers, then check it",
                      description="Write the leaderboard's submission JSONL of a task from a vantage describe cache, "
                                  "then check it as the leaderboard does. Example: sova vantage submit --task vqa "
                                  "--items vqa.tsv --answers cache/descriptions/<folder> --model M --out vqa.jsonl")
    _task_args(u, items=True, cached=True)
    u.add_argument("--answers", required=True, type=existing_folder, metavar="CACHE_FOLDER",
                   help="the cache folder of a vantage describe run")
    u.add_argument("--prompts", type=existing_file, metavar="FILE.jsonl",
                   help=_CACHED_PROMPTS + "; the submission's metadata records the route")
    u.add_argument("--model", required=True, metavar="NAME", help="the model name written into the submission")
    u.add_argument("--box-order", choices=("xyxy", "yxyx"), default="xyxy",
                   help="order the model writes box coordinates in, recorded in the file (default xyxy)")
    add_output_options(u, out=("OUT.jsonl", "the task's file, named <harness key>.jsonl inside the leaderboard's "
                                            "archive"), required=True)
    u.set_defaults(func=run_submit)


def _add_validate(vs) -> None:
    """``sova vantage validate``: check a submission as the leaderboard does."""
    c = vs.add_parser("validate", help="check a submission JSONL as the leaderboard does",
                      description="Check a submission JSONL as the leaderboard does: one line per problem, exit "
                                  "status 2 when there is one. Example: sova vantage validate vqa.jsonl --task vqa "
                                  "--items vqa.tsv")
    c.add_argument("file", type=Path, metavar="FILE.jsonl", help="the submission file to check")
    c.add_argument("--task", required=True, type=_task, metavar="TASK", help=_TASK_HELP)
    ids = c.add_mutually_exclusive_group()
    ids.add_argument("--ground-truth", type=Path, metavar="GT.jsonl",
                     help="require exactly this answer key's ids, once each")
    ids.add_argument("--items", type=Path, metavar="PATH",
                     help="require exactly the ids of the task's public items, once each")
    c.set_defaults(func=run_validate)


def _add_harness_prompts(vs) -> None:
    """``sova vantage harness-prompts``: a prompts file from the harness's own prompts."""
    h = vs.add_parser("harness-prompts", help="write a prompts file from a checkout of the VANTAGE-Bench harness",
                      description="Import your checkout of the VANTAGE-Bench harness and call its dataset class's "
                                  "build_prompt for every item; write each item's messages and frame plan as a "
                                  "prompts file for vantage describe --prompts. Needs the harness's own "
                                  "dependencies (pandas, ...; see docs/vantage.md). Example: sova vantage "
                                  "harness-prompts --harness VANTAGE-Bench/ --task vqa --items vqa.tsv "
                                  "--model-family gpt --out vqa_prompts.jsonl")
    h.add_argument("--harness", required=True, type=existing_folder, metavar="DIR",
                   help="your checkout of Clemson-Capstone/VANTAGE-Bench (put first on the import path)")
    h.add_argument("--task", required=True, type=_task, metavar="TASK",
                   help="a video task: " + ", ".join(vantage.HARNESS_CLASSES))
    h.add_argument("--items", required=True, type=existing_file, metavar="PATH", help="the task's TSV")
    h.add_argument("--media-root", type=existing_folder, metavar="DIR",
                   help="the harness's data root for the task: the folder of its videos (vqa, temporal, dvc) or the "
                        "dataset folder holding videos/ (event_verification); default: that folder of a TSV in its "
                        "LMUData dataset folder")
    h.add_argument("--model-family", required=True, metavar="F",
                   help="the harness's model family of the model to be asked (set on the dataset object)")
    h.add_argument("--video-input", choices=vantage.VIDEO_INPUTS, default="frames",
                   help="frames: the message of a model given frames as images (default); video: of a model given "
                        "the video")
    for name in vantage.PLAN_OPTIONS:
        h.add_argument(f"--{name.replace('_', '-')}", type=positive_number if name == "fps" else positive_count,
                       metavar="N", help=f"the dataset's {name} (default: the harness class's own)")
    add_output_options(h, out=("FILE.jsonl", "the prompts file to write"), required=True)
    h.set_defaults(func=run_harness_prompts)


def _add_synthetic(vs) -> None:
    """``sova vantage synthetic``: synthetic questions and answer keys on the bundled street clips."""
    y = vs.add_parser("synthetic", help="write synthetic questions and answer keys on bundled street clips",
                      description="Write synthetic items of the four video tasks (vqa, event_verification, temporal, "
                                  "dvc) on the package's three street clips, laid out as the harness's LMUData "
                                  "folder (DIR/datasets/<name>/<name>.tsv beside videos/), with an answer key "
                                  "DIR/<task>_gt.jsonl per task, for a dry run of describe and evaluate; no number "
                                  "it gives is a result. Example: sova vantage synthetic --out build/vantage-street")
    y.add_argument("--out", type=Path, required=True, metavar="DIR", help="the folder to write")
    y.set_defaults(func=run_synthetic)


def _evaluate(args, **inputs) -> int:
    """Score the answers ``inputs`` name against ``--ground-truth``; print the score and its notes (a similarity
    that cannot run here, ``CaptionModelUnavailable``, is a ``ValueError``: one line, exit status 2)."""
    result = vantage.evaluate_answers(args.task, args.ground_truth, frames=args.frames, scoring=args.scoring,
                                      similarity=args.similarity, bertscore_model=args.bertscore_model,
                                      bootstrap=args.bootstrap, seed=args.seed, **inputs)
    for line in result.ground_truth_notes:
        print(f"note: {line}", file=sys.stderr)
    return report(args, result, result.text(), notes=() if args.json else result.notes)


def run_describe(args) -> int:
    from sova_lib.cli.describe import make_describer
    from sova_lib.cli.engine import run_options

    described = vantage.describe(make_describer(args), args.task, args.items, args.cache_dir,
                                 media_root=args.media_root, frames=args.frames, run=run_options(args),
                                 prompts=args.prompts)
    if not described.answers:
        print("sova: no item has an answer; see errors.jsonl in the cache folder", file=sys.stderr)
        return 1
    if args.ground_truth is not None:
        args.out = None  # the submission's path, not a folder for records
        return _evaluate(args, answers=described.answers)
    out, _ = vantage.submit(args.task, described.items, described.summary.folder, model=args.model or args.backend,
                            out=args.out or described.summary.folder / "submission.jsonl", frames=args.frames,
                            prompts=args.prompts)  # the folder: its manifest names the weights
    print(f"submission: {out} ({len(described.answers)} of {len(described.items)} items)")
    return 0


def _no_answer(err) -> int:
    """Cached answers of which none is for an item asked: one line, exit status 1, nothing written."""
    release_notes(show=False)
    print(f"sova: error: {err}", file=sys.stderr)
    return 1


def run_evaluate(args) -> int:
    try:
        return _evaluate(args, submission=args.submission, answers=args.answers, items=args.items,
                         prompts=args.prompts)
    except vantage.NoAnswer as err:
        return _no_answer(err)


def run_submit(args) -> int:
    try:
        out, count = vantage.submit(args.task, args.items, args.answers, model=args.model, out=args.out,
                                    box_order=args.box_order, frames=args.frames,
                                    prompts=args.prompts)  # an invalid file: InvalidSubmission
    except vantage.NoAnswer as err:
        return _no_answer(err)
    print(f"submission: {out} ({count} {vantage.CANONICAL_TASKS[args.task]} answers; valid)")
    return 0


def run_validate(args) -> int:
    problems, records, expected = vantage.validate(args.file, args.task, ground_truth=args.ground_truth,
                                                   items=args.items)
    if problems:
        raise vantage.InvalidSubmission(args.file, problems)
    against = "" if expected is None else f", each of the {expected} expected ids once"
    print(f"{args.file}: valid {vantage.CANONICAL_TASKS[args.task]} submission ({records} records{against})")
    return 0


def run_harness_prompts(args) -> int:
    options = {name: getattr(args, name) for name in vantage.PLAN_OPTIONS if getattr(args, name) is not None}
    try:
        out, count = vantage.harness_prompts(args.harness, args.task, args.items, model_family=args.model_family,
                                             out=args.out, media_root=args.media_root, video_input=args.video_input,
                                             options=options)
    except vantage.HarnessDependencyMissing as err:  # the environment: exit status 1, as a missing package of sova's
        print(f"sova: vantage harness-prompts: {err}", file=sys.stderr)
        return 1
    print(f"prompts: {out} ({count} {vantage.CANONICAL_TASKS[args.task]} items, from the harness at {args.harness})")
    return 0


def run_synthetic(args) -> int:
    """``sova vantage synthetic``: write the street set, then say what was written and what to run."""
    from sova_lib.benchmarks.vantage.synthetic import street_dry_run_summary, write_street_dry_run

    print(street_dry_run_summary(args.out, write_street_dry_run(args.out)))
    return 0
