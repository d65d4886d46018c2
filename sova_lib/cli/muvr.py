"""``sova muvr describe | evaluate | synthetic``: MUVR.

Evaluation (``--out DIR``: one record JSON per run, ``sova_lib.records``; the files read and
written are listed in docs/muvr.md)::

    sova muvr evaluate --data ROOT --version base --query text+video --features DIR [--json]
    sova muvr evaluate --data ROOT --version filter --tag-weight 0.3 --embeddings FILE.npz
    sova muvr evaluate --data ROOT --version base --descriptions CACHE     (described windows)
    sova muvr evaluate --data ROOT --version base --baseline random-ranking
    sova muvr evaluate --data ROOT --version qa --answers CACHE [--scoring strict]

Describing (through the one runner into a description cache)::

    sova muvr describe --data ROOT --video-root DIR --backend B --model M --prompt P --cache-dir C
    sova muvr describe --version qa --data ROOT --video-root DIR --backend B --model M --cache-dir C

A dry run on made-up data in the released layout (stand-in videos under DIR/videos)::

    sova muvr synthetic --out DIR
"""
from __future__ import annotations

from pathlib import Path

from sova_lib.benchmarks import muvr
from sova_lib.cli import CliError, add_benchmark
from sova_lib.cli.options import (
    add_scoring_options,
    encoder_of,
    existing_folder,
    nonnegative_number,
    positive_count,
    positive_rate,
    report,
)

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    """``sova muvr describe | evaluate | synthetic``."""
    verbs = add_benchmark(subparsers, "muvr", "MUVR: describe the gallery in windows or ask the QA questions; "
                                              "evaluate", __doc__)
    _add_describe(verbs)
    _add_evaluate(verbs)
    _add_synthetic(verbs)


def _add_describe(verbs) -> None:
    """``sova muvr describe``: the gallery in windows, or the QA questions (its options added when it is parsed, so
    that ``sova muvr evaluate`` imports no describing code)."""
    d = verbs.add_parser("describe", help="describe every gallery video in fixed windows, or ask the QA questions",
                         description="Describe MUVR's gallery videos in fixed windows into CACHE_DIR/descriptions/ "
                                     "(the MLLM-to-Embedding framework), or ask MUVR-QA's questions (--version qa). "
                                     "Example: sova muvr describe --data ROOT --video-root VIDEOS --backend openai "
                                     "--model M --base-url URL --prompt general")
    d.fill_later(_describe_options)


def _describe_options(d) -> None:
    from sova_lib.cli.describe import add_describe_options

    g = d.add_argument_group("MUVR")
    _data_option(g)
    g.add_argument("--video-root", type=existing_folder, required=True, metavar="DIR",
                   help="the folder of MUVR's videos: DIR[/<sub-folder>]/<id>.mp4 (or .mkv, .webm, .avi, .mov, "
                        ".flv), or DIR[/<sub-folder>]/<id>/ holding its frame images")
    g.add_argument("--version", choices=muvr.VERSIONS, default="base",
                   help="base, filter: describe every video in fixed windows (default); qa: ask the QA questions")
    g.add_argument("--window-seconds", type=positive_rate, default=muvr.WINDOW_SECONDS, metavar="S",
                   help=f"length of a described window in seconds (default {muvr.WINDOW_SECONDS:g})")
    g.add_argument("--max-windows", type=positive_count, default=muvr.MAX_WINDOWS, metavar="N",
                   help=f"most windows per video (default {muvr.MAX_WINDOWS})")
    g.add_argument("--qa-mode", choices=muvr.QA_MODES, default="multi-image",
                   help="--version qa: the query as frames (multi-image, default) or as its text (text-only)")
    g.add_argument("--qa-template", choices=muvr.QA_TEMPLATES, default="code",
                   help="--version qa: the question's tag block as the official code writes it (code, default) or "
                        "as the paper prints it (paper)")
    add_describe_options(d, engine=False)
    d.set_defaults(func=run_describe)


def _add_evaluate(verbs) -> None:
    """``sova muvr evaluate``: features, vectors, descriptions, QA answers or a baseline."""
    from sova_lib.cli.evaluate import add_input_options

    v = verbs.add_parser("evaluate", help="score released features, vectors, descriptions, QA answers or a baseline",
                         description="Score one input under MUVR Base, Filter or QA (docs/muvr.md lists the files "
                                     "read). Example: sova muvr evaluate --data ROOT --version base "
                                     "--features ROOT/features/VLMs_1_15/EVA-CLIP")
    src = add_input_options(v, baselines=("random-ranking",),
                            split="embed each query's text whole (default: one vector per sentence); described "
                                  "windows are always split")
    src.add_argument("--features", metavar="DIR",
                     help="the features MUVR released for one model, DIR/<partition>/*.npy")
    src.add_argument("--answers", metavar="CACHE",
                     help="with --version qa: the answers of 'sova muvr describe --version qa' (its cache folder, "
                          "or JSONL)")
    g = v.add_argument_group("MUVR")
    _data_option(g)
    g.add_argument("--version", choices=muvr.VERSIONS, default="base",
                   help="base: retrieval; filter: retrieval with each query's tags (--tag-weight); qa: yes/no "
                        "questions (--answers) (default: base)")
    g.add_argument("--query", choices=muvr.QUERY_MODES, default="text+video",
                   help="what a query is scored by: its text, its video, or both (default: text+video)")
    g.add_argument("--tag-weight", type=nonnegative_number, default=muvr.TAG_WEIGHT, metavar="P",
                   help="--version filter: weight p of the signed tag score (default 0.3; 0: tags unused)")
    g.add_argument("--join-listed", action="store_true",
                   help="let an id listed in the annotations but in no videos.json record join the gallery, without "
                        "features (a positive among them then counts as a miss); by default such an id is an error, "
                        "as for the official loader")
    g.add_argument("--ties", choices=muvr.TIES, default="expected", metavar="RULE",
                   help="tie rule of AP: expected (default; the mean over all orders of tied videos), optimistic, "
                        "pessimistic (its bounds), gallery-order (tied videos in videos.json order)")
    g.add_argument("--scoring", choices=muvr.SCORINGS, default="official",
                   help="--version qa: official parses the answers as MUVR's own code does (default); strict "
                        "counts only answers whose first word is yes or no")
    add_scoring_options(v)
    v.set_defaults(func=run_evaluate)


def _data_option(g) -> None:
    g.add_argument("--data", type=existing_folder, required=True, metavar="ROOT",
                   help="the MUVR data root, the folder holding annotations/")
    g.add_argument("--partitions", nargs="+", metavar="NAME",
                   help=f"the partitions to use (default: every one of {', '.join(muvr.PARTITIONS)} the root holds; "
                        "geng and animal are other names of two of them)")


def _add_synthetic(verbs) -> None:
    """``sova muvr synthetic``: made-up data and stand-in videos for a dry run."""
    s = verbs.add_parser("synthetic", help="write a small synthetic dataset in MUVR's layout, with stand-in videos",
                         description="Write a small synthetic dataset in MUVR's released layout (annotations, QA "
                                     "questions, random features of one made-up model) and a folder of stand-in "
                                     "videos (links to the package's street excerpts), for a dry run of describe "
                                     "and evaluate; no number it gives is a result. Example: sova muvr synthetic "
                                     "--out build/muvr-synthetic")
    s.add_argument("--out", type=Path, required=True, metavar="DIR", help="the folder to write (the data root)")
    s.add_argument("--partitions", nargs="+", default=list(muvr.PARTITIONS), choices=muvr.PARTITIONS,
                   metavar="NAME", help=f"the partitions to write (default: all of {', '.join(muvr.PARTITIONS)})")
    s.set_defaults(func=run_synthetic)


def run_evaluate(args) -> int:
    """``sova muvr evaluate``: score, print, and with ``--out`` write the run's record."""
    try:
        result = muvr.evaluate_files(args.data, version=args.version, partitions=args.partitions,
                                     features=args.features, embeddings=args.embeddings,
                                     descriptions=args.descriptions, baseline=args.baseline, answers=args.answers,
                                     query=args.query, tag_weight=args.tag_weight, ties=args.ties,
                                     scoring=args.scoring, encoder=encoder_of(args), split_query=not args.no_split,
                                     join_listed=args.join_listed, bootstrap=args.bootstrap, seed=args.seed)
    except (ValueError, OSError) as err:
        raise CliError(str(err).splitlines()[0] if str(err) else type(err).__name__) from None
    remarks = result.remarks() if args.version == "qa" and not args.json else []
    return report(args, result, result.text(), notes=result.notes, remarks=remarks)


def run_describe(args) -> int:
    """``sova muvr describe``: windows of every video of the partitions, or the QA questions."""
    from sova_lib.cli.describe import frame_options, make_describer
    from sova_lib.cli.engine import run_options
    from sova_lib.describe.prompts import resolve_prompt

    summary = muvr.describe(make_describer(args), args.data, args.video_root, args.cache_dir, version=args.version,
                            partitions=args.partitions, prompt=resolve_prompt(args.prompt, args.system_prompt), **frame_options(args),
                            window_seconds=args.window_seconds, max_windows=args.max_windows, qa_mode=args.qa_mode,
                            qa_template=args.qa_template, run=run_options(args))
    return 0 if summary.total_done > 0 else 1


def run_synthetic(args) -> int:
    """``sova muvr synthetic``: write the data and the videos, then say what was written and what to run."""
    print(muvr.dry_run_summary(muvr.write_dry_run(args.out, partitions=args.partitions)))
    return 0
