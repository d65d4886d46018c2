"""``sova muvr describe | evaluate``: MUVR.

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
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sova_lib.benchmarks.muvr import framework, qa
from sova_lib.benchmarks.muvr.annotations import BENCHMARK, PARTITIONS, load_partition
from sova_lib.benchmarks.muvr.features import npz_vectors, released_vectors
from sova_lib.benchmarks.muvr.fusion import QUERY_MODES, TAG_WEIGHT
from sova_lib.benchmarks.muvr.metrics import KS, TIES
from sova_lib.benchmarks.muvr.retrieval import MuvrResult, evaluate, random_ranking
from sova_lib.cli import CliError
from sova_lib.cli.engine import run_options
from sova_lib.cli.options import (
    add_bootstrap_options,
    add_cache_options,
    add_output_options,
    existing_folder,
    nonnegative_number,
    positive_count,
    positive_rate,
)
from sova_lib.describe.contract import DescriberEnvironmentError
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.encoder import DEFAULT_ENCODER, SentenceEncoder
from sova_lib.item_vectors import read_descriptions
from sova_lib.records import write_record

__all__ = ["add_commands", "add_describe_arguments", "add_evaluate_arguments",
           "run_describe", "run_evaluate"]

VERSIONS = ("base", "filter", "qa")


def add_commands(subparsers) -> None:
    """``sova muvr describe | evaluate``."""
    m = subparsers.add_parser("muvr", help="MUVR: describe the gallery in windows or ask the QA questions; evaluate",
                              description=__doc__.replace("``", "").replace("::\n", ""),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = m.add_subparsers(dest="verb", metavar="VERB", required=True)
    d = verbs.add_parser("describe", help="describe every gallery video in fixed windows, or ask the QA questions",
                         description="Describe MUVR's gallery videos in fixed windows into CACHE_DIR/descriptions/ "
                                     "(the MLLM-to-Embedding framework), or ask MUVR-QA's questions (--version qa). "
                                     "Example: sova muvr describe --data ROOT --video-root VIDEOS --backend openai "
                                     "--model M --base-url URL --prompt general")
    add_describe_arguments(d)
    v = verbs.add_parser("evaluate", help="score released features, vectors, descriptions, QA answers or a baseline",
                         description="Score one input under MUVR Base, Filter or QA (docs/muvr.md lists the files "
                                     "read). Example: sova muvr evaluate --data ROOT --version base "
                                     "--features ROOT/features/VLMs_1_15/EVA-CLIP")
    add_evaluate_arguments(v)


def _data_option(g) -> None:
    g.add_argument("--data", type=existing_folder, required=True, metavar="ROOT",
                   help="the MUVR data root, the folder holding annotations/")
    g.add_argument("--partitions", nargs="+", default=list(PARTITIONS), metavar="NAME",
                   help=f"the partitions to use (default: all of {', '.join(PARTITIONS)}; geng and animal are "
                        "other names of two of them)")


def add_evaluate_arguments(p) -> None:
    """The options of ``sova muvr evaluate``."""
    from sova_lib.cli.evaluate import add_input_options

    src = add_input_options(p, baselines=("random-ranking",),
                            split="embed each query's text whole (default: one vector per sentence); described "
                                  "windows are always split")
    src.add_argument("--features", metavar="DIR",
                     help="the features MUVR released for one model, DIR/<partition>/*.npy")
    src.add_argument("--answers", metavar="CACHE",
                     help="with --version qa: the answers of 'sova muvr describe --version qa' (its cache folder, "
                          "or JSONL)")
    g = p.add_argument_group("MUVR")
    _data_option(g)
    g.add_argument("--version", choices=VERSIONS, default="base",
                   help="base: retrieval; filter: retrieval with each query's tags (--tag-weight); qa: yes/no "
                        "questions (--answers) (default: base)")
    g.add_argument("--query", choices=QUERY_MODES, default="text+video",
                   help="what a query is scored by: its text, its video, or both (default: text+video)")
    g.add_argument("--tag-weight", type=nonnegative_number, default=TAG_WEIGHT, metavar="P",
                   help="--version filter: weight p of the signed tag score (default 0.3; 0: tags unused)")
    g.add_argument("--join-listed", action="store_true",
                   help="let an id listed in the annotations but in no videos.json record join the gallery, without "
                        "features (a positive among them then counts as a miss); by default such an id is an error, "
                        "as for the official loader")
    g.add_argument("--ties", choices=TIES, default=None, metavar="RULE",
                   help="tie rule of AP: expected (default; the mean over all orders of tied videos), optimistic, "
                        "pessimistic (its bounds), gallery-order (tied videos in videos.json order)")
    g.add_argument("--scoring", choices=qa.PARSES, default="official",
                   help="--version qa: official parses the answers as MUVR's own code does (default); strict "
                        "counts only answers whose first word is yes or no")
    add_bootstrap_options(p)
    add_cache_options(p, what="the sentence encoder's vectors are cached under it", retry=False)
    add_output_options(p, out=("DIR", "also write the result as one record JSON into DIR (the tables of "
                                      "sova_lib.records collect them)"), json=True)
    p.set_defaults(func=run_evaluate, benchmark="muvr", aggregate="max", allow_missing=False)


def _record_context(args) -> dict:
    """What a ``sova muvr evaluate`` run scored, for ``MuvrResult.to_record`` / ``QAResult.to_record``."""
    run = {"bootstrap": args.bootstrap, "seed": args.seed}
    if args.version == "qa":
        return {"kind": "description cache", "source": str(args.answers), "cache": Path(args.answers).name, **run}
    if args.baseline:
        return {"kind": "baseline", "source": args.baseline, "baseline": args.baseline, **run}
    if args.descriptions:
        return {"kind": "description cache", "source": str(args.descriptions), "cache": Path(args.descriptions).name,
                "encoder": args.embedder or DEFAULT_ENCODER,
                "text_split": "whole text" if args.no_split else "sentences", **run}
    source = args.features or args.embeddings
    return {"kind": "embeddings", "source": str(source), "cache": Path(source).name, **run}


def _partitions(args):
    if args.data is None:
        raise CliError("--benchmark muvr needs --data ROOT (the folder holding annotations/)")
    return [load_partition(args.data, p, join_listed=args.join_listed) for p in args.partitions]


def _qa(args) -> qa.QAResult:
    if args.answers is None:
        raise CliError("--version qa needs --answers CACHE (a describe cache folder or a JSON Lines file)")
    if args.data is None:
        raise CliError("--benchmark muvr needs --data ROOT (the folder holding annotations/)")
    return qa.score_answers(qa.load_qa(args.data, args.partitions), read_descriptions(args.answers),
                            parse=args.scoring)


def _retrieval(args) -> MuvrResult:
    ties = args.ties or "expected"
    if ties not in TIES:
        raise CliError(f"--ties {ties} does not apply to MUVR; choose one of {', '.join(TIES)}")
    if args.answers:
        raise CliError("--answers applies to --version qa")
    if args.aggregate != "max" or args.allow_missing:
        raise CliError("MUVR scores with the maximum cosine over all gallery videos; drop --aggregate/--allow-missing")
    if args.baseline and args.baseline != "random-ranking":
        raise CliError(f"--baseline {args.baseline} does not apply to MUVR; use random-ranking")
    if not (args.baseline or args.features or args.embeddings or args.descriptions):
        raise CliError("--benchmark muvr needs one of --features, --embeddings, --descriptions, --baseline")
    partitions = _partitions(args)
    options = {"version": args.version, "ks": KS, "bootstrap": args.bootstrap, "seed": args.seed}
    if args.baseline:
        result = random_ranking(partitions, **options)
    else:
        if args.features:
            source, vectors = args.features, released_vectors(args.features, query=args.query, version=args.version)
        elif args.embeddings:
            source, vectors = args.embeddings, npz_vectors(args.embeddings)
        else:
            encoder = SentenceEncoder(args.embedder or DEFAULT_ENCODER, cache_dir=args.cache_dir,
                                      show_progress=not args.json)
            source = args.descriptions
            vectors = framework.framework_vectors(read_descriptions(args.descriptions), encoder,
                                                  split_query=not args.no_split)
        result = evaluate(partitions, vectors, query=args.query, tag_weight=args.tag_weight, ties=ties,
                          source=str(source), **options)
    return result


def run_evaluate(args) -> int:
    """``sova muvr evaluate``: score, print, and with ``--out`` write the run's record."""
    try:
        result = _qa(args) if args.version == "qa" else _retrieval(args)
    except (ValueError, FileNotFoundError, OSError) as err:
        raise CliError(str(err).splitlines()[0] if str(err) else type(err).__name__) from None
    if args.out:
        print(f"wrote {write_record(result.to_record(**_record_context(args)), args.out)}", file=sys.stderr)
    if args.version == "qa":
        out = {"benchmark": BENCHMARK, "version": "qa", "source": str(args.answers), **result.to_json()}
    else:
        out = {"benchmark": BENCHMARK, **result.to_json()}
    if args.json:
        print(json.dumps(out))
    elif out["version"] == "qa":
        for subset in out["accuracy"]:
            print(f"MUVR-QA {subset}: accuracy {out['accuracy'][subset]:.1f}%  reranking score "
                  f"{out['reranking_score'][subset]:+.2f}  over {out['n_questions'][subset]} questions")
        if out["unparseable"]:
            print(f"  {len(out['unparseable'])} unparseable answer(s), e.g. {out['unparseable'][:3]}", file=sys.stderr)
    else:
        head = "  ".join(f"{k} {v:.1f}" for k, v in out["metrics"].items())
        print(f"MUVR-{out['version']} ({out['query']}, ties {out['ties']}): {head}")
        for name, values in out["per_partition"].items():
            print(f"  {name:<9} mAP {values['mAP']:5.1f}  over {values['n_rows']} rows")
    for note in out.get("notes", []):
        print(f"  note: {note}", file=sys.stderr)
    return 0


def _describe_version(text: str) -> str:
    """``--version`` of ``sova muvr describe``: base and filter score described windows, qa asks the questions."""
    if text in ("base", "filter", "windows"):
        return "windows"
    if text == "qa":
        return "qa"
    raise argparse.ArgumentTypeError(f"{text!r}: choose base, filter (describe windows) or qa (ask the questions)")


def add_describe_arguments(d) -> None:
    """The options of ``sova muvr describe``."""
    from sova_lib.cli.describe import add_describe_options

    g = d.add_argument_group("MUVR")
    _data_option(g)
    g.add_argument("--video-root", type=existing_folder, required=True, metavar="DIR",
                   help="the folder of MUVR's videos: DIR[/<sub-folder>]/<id>.mp4 (or .mkv, .webm, .avi, .mov, "
                        ".flv), or DIR[/<sub-folder>]/<id>/ holding its frame images")
    g.add_argument("--version", type=_describe_version, default="windows", metavar="{base,filter,qa}",
                   help="base, filter: describe every video in fixed windows (default); qa: ask the QA questions")
    g.add_argument("--window-seconds", type=positive_rate, default=framework.WINDOW_SECONDS, metavar="S",
                   help=f"length of a described window in seconds (default {framework.WINDOW_SECONDS:g})")
    g.add_argument("--max-windows", type=positive_count, default=framework.MAX_WINDOWS, metavar="N",
                   help=f"most windows per video (default {framework.MAX_WINDOWS})")
    g.add_argument("--qa-mode", choices=qa.MODES, default="multi-image",
                   help="--version qa: the query as frames (multi-image, default) or as its text (text-only)")
    g.add_argument("--qa-template", choices=qa.TEMPLATES, default="code",
                   help="--version qa: the question's tag block as the official code writes it (code, default) or "
                        "as the paper prints it (paper)")
    add_describe_options(d, engine=False)
    d.set_defaults(func=_describe, benchmark="muvr")


def _describe(args) -> int:
    from sova_lib.cli.describe import make_describer_from_args

    return run_describe(args, make_describer_from_args(args))


def run_describe(args, describer) -> int:
    """``sova muvr describe``: windows of every video of the partitions, or the QA questions."""
    if args.data is None or args.video_root is None:
        raise CliError("--benchmark muvr needs --data ROOT and --video-root DIR")
    common = {"run": run_options(args)}
    try:
        if args.version == "qa":
            questions = qa.load_qa(args.data, args.partitions)
            summary = qa.run_qa(describer, questions, args.video_root, args.cache_dir, mode=args.qa_mode,
                                template=args.qa_template, **common)
        else:
            if args.prompt is None:
                raise CliError("describing MUVR windows needs --prompt")
            loaded = [load_partition(args.data, p) for p in args.partitions]
            ids = list(dict.fromkeys([v for p in loaded for v in p.gallery] + [q.id for p in loaded for q in p.queries]))
            summary = framework.describe_windows(describer, ids, args.video_root, args.cache_dir,
                                                 prompt=resolve_prompt(args.prompt, args.system_prompt), fps=args.fps,
                                                 seconds=args.window_seconds, max_windows=args.max_windows, **common)
    except DescriberEnvironmentError as err:  # the model, the server or the machine; not the items
        print(f"sova: error: {err}", file=sys.stderr)
        return 1
    except ValueError as err:
        raise CliError(str(err)) from None
    return 0 if summary.total_done > 0 else 1
