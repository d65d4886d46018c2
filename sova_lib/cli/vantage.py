"""``sova vantage describe|evaluate|submit|validate``: VANTAGE-Bench answers, scores and leaderboard files.

::

    sova vantage describe --task vqa --items vqa.tsv --media-root videos/ --backend openai --model M \\
        --base-url http://localhost:8000/v1 --cache-dir cache [--ground-truth vqa_gt.jsonl]
    sova vantage evaluate --task vqa --ground-truth vqa_gt.jsonl --submission vqa.jsonl [--items vqa.tsv] \\
        [--out results/]
    sova vantage submit --task vqa --items vqa.tsv --answers cache/descriptions/<folder> --model M --out vqa.jsonl
    sova vantage validate vqa.jsonl --task vqa [--ground-truth vqa_gt.jsonl | --items vqa.tsv]

``--task`` takes the library key (``vqa``), the harness key (``grounding``)
or the canonical task string (``video_qa``). ``describe`` caches raw answers
(resumable), then scores them when ``--ground-truth`` is given and
otherwise writes the submission JSONL; every submission written is checked
as the leaderboard checks it. Exit status: 0 done, 1 no answer at all, 2 bad
input (one line on stderr; one line per problem of an invalid submission,
naming the file, line and id).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.vantage.files import read_submission, write_submission
from sova_lib.benchmarks.vantage.ground_truth import read_ground_truth
from sova_lib.benchmarks.vantage.inputs import VantageDataError, read_items
from sova_lib.benchmarks.vantage.metrics_captions import (
    BERTSCORE_MODEL,
    SIMILARITIES,
    CaptionModelUnavailable,
    make_similarity,
)
from sova_lib.benchmarks.vantage.parsing import MODES
from sova_lib.benchmarks.vantage.run import cached_answers, describe_task
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.submissions import (
    MAX_LISTED,
    InvalidSubmission,
    check_answer_ids,
    check_submission,
    expected_ids,
)
from sova_lib.benchmarks.vantage.task_prompts import DEFAULT_FRAMES
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, canonical_task, submission_answers, task_key
from sova_lib.cli import CliError
from sova_lib.cli.describe import _describer_options
from sova_lib.cli.engine import run_options
from sova_lib.cli.options import (
    add_bootstrap_options,
    add_cache_options,
    add_describer_options,
    add_output_options,
    existing_file,
    existing_folder,
    positive_count,
)
from sova_lib.describe.contract import make_describer
from sova_lib.records import write_record
from sova_lib.storage import lines, read_text

__all__ = ["add_commands"]

_INPUT_ERRORS = (VantageDataError, FileNotFoundError, ValueError, CaptionModelUnavailable)


def _task(name: str) -> str:
    try:
        return task_key(name)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


_TASK_HELP = "task: " + ", ".join(f"{k} ({v})" for k, v in CANONICAL_TASKS.items()) + "; grounding = refex"


#: ``--frames`` of the commands that read cached answers: the frame count names the answers in the cache.
_CACHED_FRAMES = (f"frames per video the cached answers were asked with (default {DEFAULT_FRAMES}); their prompts "
                  "state it, so answers asked with another count are not found")


def _task_args(p, *, items: bool, frames_help: str | None = None) -> None:
    p.add_argument("--task", required=True, type=_task, metavar="TASK", help=_TASK_HELP)
    if items:
        p.add_argument("--items", required=True, type=Path, metavar="PATH",
                       help="the task's public items: its TSV, refex's annotations.json, or sot's folder")
    p.add_argument("--frames", type=positive_count, default=DEFAULT_FRAMES, metavar="N",
                   help=f"frames sampled per video (default {DEFAULT_FRAMES})" if frames_help is None else frames_help)


def _score_args(p) -> None:
    p.add_argument("--scoring", choices=MODES, default="official",
                   help="official: parse the answers as the VANTAGE-Bench harness does (default); strict: count "
                        "only well-formed answers")
    p.add_argument("--similarity", choices=SIMILARITIES, default="bertscore",
                   help="task dvc: how two captions are compared (default: bertscore, as the leaderboard)")
    p.add_argument("--bertscore-model", metavar="NAME_OR_DIR",
                   help=f"--similarity bertscore: a local folder of roberta-large, or a hub id in the local cache "
                        f"(default: {BERTSCORE_MODEL})")
    add_bootstrap_options(p)


def add_commands(sub) -> None:
    v = sub.add_parser("vantage", help="VANTAGE-Bench: describe items, evaluate answers, write a submission",
                       description=__doc__.replace("``", "").replace("::\n", ""),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    vs = v.add_subparsers(dest="vantage_command", metavar="VERB", required=True)
    _add_describe(vs)
    _add_evaluate(vs)
    _add_submit(vs)
    _add_validate(vs)


def _add_describe(vs) -> None:
    d = vs.add_parser("describe", help="ask a describer every item; score (--ground-truth) or write a submission",
                      description="Ask a describer every item of a task, caching the raw answers (resumable); then "
                                  "score them against --ground-truth, or write and check the leaderboard's "
                                  "submission. Example: sova vantage describe --task vqa --items vqa.tsv "
                                  "--media-root videos/ --backend openai --model M --base-url URL --out vqa.jsonl")
    _task_args(d, items=True)
    d.add_argument("--media-root", type=existing_folder, metavar="DIR",
                   help="the folder the items' media paths are relative to (default: the current folder)")
    add_describer_options(d, prompt=False)
    add_cache_options(d, what="answers go to DIR/descriptions/")
    d.add_argument("--ground-truth", type=existing_file, metavar="GT.jsonl",
                   help="score the answers against this answer key instead of writing a submission")
    add_output_options(d, out=("OUT.jsonl", "the submission file to write (default: submission.jsonl in the cache "
                                            "folder)"),
                       progress=True, json=True)
    _score_args(d)
    d.set_defaults(func=run_describe)


def _add_evaluate(vs) -> None:
    s = vs.add_parser("evaluate", help="score a submission or cached answers against a ground-truth JSONL",
                      description="Score a submission JSONL, or a vantage describe cache, against an answer key. "
                                  "Example: sova vantage evaluate --task vqa --ground-truth vqa_gt.jsonl "
                                  "--submission vqa.jsonl --out results/")
    _task_args(s, items=False, frames_help=_CACHED_FRAMES + " (with --answers)")
    s.add_argument("--ground-truth", required=True, type=existing_file, metavar="GT.jsonl",
                   help="the answer key, in the harness's ground-truth JSONL layout")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--submission", type=existing_file, metavar="FILE.jsonl",
                     help="a submission JSONL, as vantage describe or submit (or the harness) writes it")
    src.add_argument("--answers", type=existing_folder, metavar="CACHE_FOLDER",
                     help="the cache folder of a vantage describe run")
    s.add_argument("--items", type=Path, metavar="PATH",
                   help="the task's public items: needed with --answers (the prompts name each cached answer)")
    _score_args(s)
    add_output_options(s, out=("DIR", "also write the score as one record JSON into DIR (the tables of "
                                      "sova_lib.records collect them)"), json=True)
    s.set_defaults(func=run_score)


def _add_submit(vs) -> None:
    u = vs.add_parser("submit", help="write the leaderboard's submission JSONL from cached answers, then check it",
                      description="Write the leaderboard's submission JSONL of a task from a vantage describe cache, "
                                  "then check it as the leaderboard does. Example: sova vantage submit --task vqa "
                                  "--items vqa.tsv --answers cache/descriptions/<folder> --model M --out vqa.jsonl")
    _task_args(u, items=True, frames_help=_CACHED_FRAMES)
    u.add_argument("--answers", required=True, type=existing_folder, metavar="CACHE_FOLDER",
                   help="the cache folder of a vantage describe run")
    u.add_argument("--model", required=True, metavar="NAME", help="the model name written into the submission")
    u.add_argument("--box-order", choices=("xyxy", "yxyx"), default="xyxy",
                   help="order the model writes box coordinates in, recorded in the file (default xyxy)")
    add_output_options(u, out=("OUT.jsonl", "the task's file, named <harness key>.jsonl inside the leaderboard's "
                                            "archive"), required=True)
    u.set_defaults(func=run_submit)


def _add_validate(vs) -> None:
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


def _note(lines) -> None:
    for line in lines:
        print(f"note: {line}", file=sys.stderr)


def _record_context(args, model=None) -> dict:
    """What a ``sova vantage evaluate`` run scored, for ``VantageResult.to_record``."""
    if args.submission is not None:
        source = args.submission
        return {"kind": "submission", "source": str(source), "model": model, "seed": args.seed,
                "cache": f"{source.parent.name}-{source.stem}", "similarity": _similarity_name(args)}
    return {"kind": "description cache", "source": str(args.answers), "cache": args.answers.name, "seed": args.seed,
            "similarity": _similarity_name(args)}


def _similarity_name(args):
    if args.task != "dvc":
        return None
    return args.similarity + (f" {args.bertscore_model or BERTSCORE_MODEL}" if args.similarity == "bertscore" else "")


def _score(args, answers: dict, box_order: str = "xyxy", items=None, model=None) -> int:
    gt = read_ground_truth(args.ground_truth, args.task)
    _note(gt.notes)
    check_answer_ids(gt, answers)
    similarity = make_similarity(args.similarity, args.bertscore_model) if args.task == "dvc" else None
    rng = np.random.default_rng(args.seed) if args.bootstrap > 0 else None
    result = score_answers(args.task, gt, answers, mode=args.scoring, similarity=similarity, box_coord_order=box_order,
                           rng=rng, n_resamples=args.bootstrap)
    if getattr(args, "out", None) and args.vantage_command == "evaluate":
        print(f"wrote {write_record(result.to_record(**_record_context(args, model)), args.out)}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    ci = f"  (95% CI {result.ci[0]:.2f}-{result.ci[1]:.2f}, {result.ci_unit}s)" if result.ci else ""
    print(f"{result.canonical_task} ({result.task}): {result.metric} = {result.value:.2f}{ci}  [{result.mode}; parsed "
          f"{result.n_parsed}/{result.n_items} = {100 * result.parse_rate:.1f}%]")
    for key, value in result.secondary.items():
        print(f"  {key:<24} {value:.4g}")
    for line in result.notes:
        print(f"  note: {line}", file=sys.stderr)
    return 0


def _items(args):
    if not args.items.exists():
        raise CliError(f"--items {args.items}: no such file or folder; give the task's public items")
    return read_items(args.task, args.items)


def _invalid(err: InvalidSubmission) -> CliError:
    """Print each problem on stderr (at most ``MAX_LISTED``) and return the error that ends the command."""
    for line in err.problems[:MAX_LISTED]:
        print(line, file=sys.stderr)
    if len(err.problems) > MAX_LISTED:
        print(f"... and {len(err.problems) - MAX_LISTED} more problems", file=sys.stderr)
    return CliError(str(err))


def _write(args, out, items, answers, model, box_order="xyxy"):
    write_submission(out, args.task, submission_answers(items, answers), model=model, box_coord_order=box_order,
                     expected_ids=expected_ids(items))


def run_describe(args) -> int:
    try:
        items = _items(args)
        describer = make_describer(args.backend, **_describer_options(args))
        summary = describe_task(describer, args.task, items, args.cache_dir, media_root=args.media_root,
                                n_frames=args.frames, run=run_options(args))
        answers = cached_answers(summary.folder, items, args.frames)
        if not answers:
            print("sova: no item has an answer; see errors.jsonl in the cache folder", file=sys.stderr)
            return 1
        if args.ground_truth is not None:
            return _score(args, submission_answers(items, answers), items=items)
        out = args.out or summary.folder / "submission.jsonl"
        _write(args, out, items, answers, args.model or args.backend)
    except InvalidSubmission as err:
        raise _invalid(err) from None
    except _INPUT_ERRORS as err:
        raise CliError(str(err)) from None
    except TypeError as err:
        raise CliError(f"cannot build the {args.backend} backend: {err}") from None
    print(f"submission: {out} ({len(answers)} of {len(items)} items)")
    return 0


def run_score(args) -> int:
    try:
        if args.submission is not None:
            answers, info = read_submission(args.submission)
            if info and info["task"] != args.task:
                raise CliError(f"{args.submission}: holds task {canonical_task(info['task'])!r}, not "
                               f"{canonical_task(args.task)!r} ({args.task})")
            items = _items(args) if args.items is not None else None
            return _score(args, answers, info.get("box_coord_order", "xyxy"), items, info.get("model"))
        if args.items is None:
            raise CliError("--answers needs --items (the prompts name each cached answer)")
        items = _items(args)
        return _score(args, submission_answers(items, cached_answers(args.answers, items, args.frames)), items=items)
    except _INPUT_ERRORS as err:
        raise CliError(str(err)) from None


def run_submit(args) -> int:
    try:
        items = _items(args)
        answers = cached_answers(args.answers, items, args.frames)
        if not answers:
            print(f"sova: no item has an answer in {args.answers}", file=sys.stderr)
            return 1
        _write(args, args.out, items, answers, args.model, args.box_order)
    except InvalidSubmission as err:
        raise _invalid(err) from None
    except _INPUT_ERRORS as err:
        raise CliError(str(err)) from None
    print(f"submission: {args.out} ({len(answers)} {canonical_task(args.task)} answers; valid)")
    return 0


def run_validate(args) -> int:
    try:
        if args.ground_truth is not None:
            ids = list(read_ground_truth(args.ground_truth, args.task))
        elif args.items is not None:
            ids = expected_ids(_items(args))
        else:
            ids = None
        if not args.file.is_file():
            raise CliError(f"{args.file}: no such file")
        problems = check_submission(args.file, args.task, ids)
    except _INPUT_ERRORS as err:
        raise CliError(str(err)) from None
    if problems:
        raise _invalid(InvalidSubmission(args.file, problems))
    n = sum(1 for _ in lines(read_text(args.file)))
    against = "" if ids is None else f", each of the {len(ids)} expected ids once"
    print(f"{args.file}: valid {canonical_task(args.task)} submission ({n} records{against})")
    return 0
