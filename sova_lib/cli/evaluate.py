"""``sova sovabench evaluate`` and ``sova image-tasks evaluate``: score descriptions, vectors or a baseline.

``sova sovabench evaluate --protocol P`` scores a retrieval protocol
(``sova_lib.protocols``: SOVABench's four and the bundled
``quickstart-direction``) by mAP, and prints beside it what a random ranking
scores. ``sova image-tasks evaluate --task T`` scores an image task of
Table 3 (``sova_lib.benchmarks.image_tasks``: ``vsr-zeroshot``,
``vsr-random``, ``whatsup-a``, ``whatsup-b``, ``countbench``,
``visual7w-count``) by tie-aware accuracy. For an image task, descriptions
and vectors are keyed by image file stem (``sova image-tasks describe``,
``sova image-tasks embed``); ``--embeddings`` then needs ``--text-model``, the
contrastive model whose text tower embeds the choice sentences (the CLIP
zero-shot row); ``--baseline random`` is the chance row, ``--baseline
oracle`` the upper bound; ``--annotations`` gives the annotation file (VSR
ships with the package). Each command accepts only its own options.

A module of ``sova_lib.cli`` is named after the command it adds (one module per command), and the library
module behind it may share its name; ``sova_lib.cli.evaluate`` parses and prints, ``sova_lib.evaluation`` does
the work.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from sova_lib.benchmarks import image_tasks
from sova_lib.cli import CliError
from sova_lib.cli.options import (
    AGGREGATE_HELP,
    TIES_HELP,
    add_answer_limit,
    add_bootstrap_options,
    add_cache_options,
    add_encoder_options,
    add_output_options,
    note,
    old_spelling,
)
from sova_lib.describe.contrastive import ContrastiveModel
from sova_lib.encoder import DEFAULT_ENCODER, SentenceEncoder
from sova_lib.evaluation import BASELINES, CoverageError, baseline, evaluate
from sova_lib.item_vectors import cut_note, embed_descriptions, empty_note, read_descriptions, read_embeddings
from sova_lib.metrics import TIE_RULES
from sova_lib.protocols import PROTOCOLS, get_protocol
from sova_lib.records import write_record
from sova_lib.similarity import AGGREGATES

__all__ = ["add_sovabench_evaluate", "add_image_task_evaluate", "add_input_options", "run_evaluate"]


def add_input_options(p, *, baselines, split: bool | str = True):
    """The scored input (one of ``--descriptions``, ``--embeddings``, ``--baseline``), then the sentence encoder
    group (``sova_lib.cli.options.add_encoder_options``; ``split`` as there). Returns the input's exclusive group."""
    g = p.add_argument_group("input")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--descriptions", metavar="PATH",
                     help="descriptions: JSONL {id, text}, the authors' JSON {id: text}, or a describe cache folder")
    src.add_argument("--embeddings", metavar="FILE.npz", help="vectors: an .npz with arrays ids, owner, vectors")
    src.add_argument("--baseline", choices=baselines, help="a built-in baseline instead of a model's output")
    add_answer_limit(g, "of a longer description only the first characters are embedded, with a note")
    add_encoder_options(p, split=split)
    return src


def add_sovabench_evaluate(p) -> None:
    """``sova sovabench evaluate``: a retrieval protocol."""
    p.add_argument("--protocol", required=True, choices=sorted(n for n in PROTOCOLS if n not in image_tasks.DATASETS),
                   help="the retrieval protocol to score: SOVABench's four, or quickstart-direction (the bundled "
                        "example clips)")
    add_input_options(p, baselines=BASELINES)
    p.add_argument("--aggregate", choices=AGGREGATES, default="max", help=AGGREGATE_HELP)
    p.add_argument("--ties", choices=TIE_RULES, default="expected", help=TIES_HELP)
    p.add_argument("--allow-missing", action="store_true",
                   help="score the protocol's clips the input has, leaving out the others (default: a clip missing "
                        "from the input is an error)")
    _common(p)
    p.set_defaults(func=run_evaluate, benchmark="sovabench", annotations=None, text_model=None)


def add_image_task_evaluate(p) -> None:
    """``sova image-tasks evaluate``: one image task of Table 3."""
    p.add_argument("--task", dest="protocol", required=True, choices=sorted(image_tasks.DATASETS),
                   help="the image task to score (Table 3 of the SOVABench paper)")
    add_input_options(p, baselines=("random", "oracle"))
    p.add_argument("--annotations", metavar="PATH",
                   help="the task's annotation file, or a folder holding it (default: VSR's files ship with the "
                        "package; the other tasks' are looked for in $SOVA_IMAGE_TASKS)")
    p.add_argument("--text-model", metavar="ID_OR_PATH",
                   help="needed with --embeddings: the contrastive model (the one that made them) whose text tower "
                        "embeds the choice sentences")
    p.add_argument("--allow-missing", action="store_true",
                   help="score the task's items the input has, leaving out the others (default: an item missing "
                        "from the input is an error)")
    _common(p)
    p.set_defaults(func=run_evaluate, benchmark="image-tasks", aggregate="max", ties="expected")


def _common(p) -> None:
    add_bootstrap_options(p)
    add_cache_options(p, what="the sentence encoder's vectors are cached under it", retry=False)
    add_output_options(p, out=("DIR", "also write the result as one record JSON into DIR (the tables of "
                                      "sova_lib.records collect them)"), json=True, dest="results_dir")
    old_spelling(p, "--results-dir", "--out", dest="results_dir")


#: Tie spread (points) above which a warning says the ties decide part of the score.
TIE_WARNING_POINTS = 1.0


def _check_options(args) -> None:
    if args.bootstrap == 1:
        note("--bootstrap 1 resamples the queries once: the interval has zero width; use 1000 or so")
    if args.embeddings and args.embedder:
        note("--embedder does not apply to --embeddings (the vectors are already made); it is ignored")
    if args.embeddings and args.no_split:
        note("--no-split does not apply to --embeddings; it is ignored")


def run_evaluate(args) -> int:
    _check_options(args)

    def encoder():
        return SentenceEncoder(args.embedder or DEFAULT_ENCODER, cache_dir=args.cache_dir,
                               show_progress=not args.json)

    if args.protocol in image_tasks.DATASETS:
        return _run_image_task(args, encoder)
    try:
        if args.baseline:
            result = baseline(args.protocol, args.baseline, encoder=encoder() if args.baseline == "oracle" else None,
                              bootstrap=args.bootstrap, seed=args.seed)
        else:
            if args.embeddings:
                items = read_embeddings(args.embeddings)
            else:
                texts = read_descriptions(args.descriptions)
                items = embed_descriptions(texts, encoder(), sentences=not args.no_split,
                                           max_chars=args.max_answer_chars)
            result = evaluate(args.protocol, items, aggregate=args.aggregate, ties=args.ties,
                              allow_missing=args.allow_missing, bootstrap=args.bootstrap, seed=args.seed)
            if not args.embeddings:
                result.notes.extend(empty_note(texts) + cut_note(texts, args.max_answer_chars))
    except CoverageError as err:  # name the file whose ids do not match
        flag, path = ("--embeddings", args.embeddings) if args.embeddings else ("--descriptions", args.descriptions)
        raise CliError(f"{flag} {path}: {err}") from None
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        raise CliError(str(err)) from None
    if result.tie_spread is not None and result.tie_spread > TIE_WARNING_POINTS:
        print(f"sova: warning: ties between clip scores move {result.metric} by up to {result.tie_spread:.2f} "
              f"points (optimistic minus pessimistic); the score uses the {result.ties!r} tie rule", file=sys.stderr)
    if args.results_dir:
        path = write_record(result.to_record(**_record_context(args)), args.results_dir)
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json(), indent=None))
    else:
        _print_table(result, PROTOCOLS[result.protocol].class_name)
        if not args.baseline:
            chance = baseline(args.protocol, "random-ranking")
            print(f"  a random ranking scores {chance.value:.2f} {chance.metric} (--baseline random-ranking)")
    for line in result.notes:
        print(f"  note: {line}", file=sys.stderr)
    return 0


def _run_image_task(args, encoder) -> int:
    """Accuracy of descriptions, vectors or a baseline on one image task (see the module docstring)."""
    task = args.protocol
    if args.embeddings and not args.text_model:
        raise CliError("--embeddings on an image task needs --text-model, the model whose text tower embeds "
                       "the choice sentences")
    if args.text_model and not args.embeddings:
        raise CliError("--text-model goes with --embeddings")
    try:
        items = image_tasks.load(task, args.annotations)
        common = dict(allow_missing=args.allow_missing, bootstrap=args.bootstrap, seed=args.seed)
        if args.baseline == "random":
            result = image_tasks.ImageTaskResult(task, image_tasks.chance(items), len(items), ties="n/a",
                                                 text_split="n/a", notes=["random: mean over items of 1/(choices)"])
        elif args.baseline == "oracle":
            result = image_tasks.oracle(task, items, encoder(), bootstrap=args.bootstrap, seed=args.seed)
        elif args.descriptions:
            texts = read_descriptions(args.descriptions)
            cut = {key: text[:args.max_answer_chars] for key, text in texts.items()}
            result = image_tasks.score_descriptions(task, items, cut, encoder(), sentences=not args.no_split, **common)
            result.notes.extend(cut_note(texts, args.max_answer_chars))
        else:
            model = ContrastiveModel(args.text_model, batch_size=256)
            choices, item_of = image_tasks.embed_choices(items, model.text_features)
            result = image_tasks.score_vectors(task, items, read_embeddings(args.embeddings), choices, item_of,
                                               text_split="n/a (contrastive)", **common)
            result.notes.append(f"zero-shot: choice sentences embedded by the text tower of {args.text_model}")
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        raise CliError(str(err)) from None
    if args.results_dir:
        print(f"wrote {write_record(result.to_record(**_image_task_context(args)), args.results_dir)}",
              file=sys.stderr)
    if args.json:
        print(json.dumps({**result.to_json(), "protocol": task}, indent=None))
        return 0
    ci = f"  (95% CI {result.ci[0]:.1f}-{result.ci[1]:.1f})" if result.ci else ""
    print(f"{task}: accuracy = {result.value:.2f}{ci}  over {result.n_items} items (ties: {result.ties})")
    for line in result.notes:
        print(f"  note: {line}", file=sys.stderr)
    return 0


def _record_context(args) -> dict:
    """What a ``sova sovabench evaluate`` run scored, for ``Result.to_record``: kind, source, cache, encoder, ..."""
    run = {"bootstrap": args.bootstrap, "seed": args.seed, "benchmark": get_protocol(args.protocol).benchmark}
    if args.baseline:
        return {"kind": "baseline", "source": args.baseline, "baseline": args.baseline,
                "encoder": (args.embedder or DEFAULT_ENCODER) if args.baseline == "oracle" else None, **run}
    if args.embeddings:
        return {"kind": "embeddings", "source": str(args.embeddings), **run}
    return {"kind": "description cache", "source": str(args.descriptions), "cache": Path(args.descriptions).name,
            "encoder": args.embedder or DEFAULT_ENCODER, "text_split": "whole text" if args.no_split else "sentences",
            **run}


def _image_task_context(args) -> dict:
    """What a ``sova image-tasks evaluate`` run scored, for ``ImageTaskResult.to_record``."""
    return {"kind": "baseline" if args.baseline else ("embeddings" if args.embeddings else "description cache"),
            "source": args.baseline or str(args.embeddings or args.descriptions), "bootstrap": args.bootstrap,
            "seed": args.seed, "baseline": args.baseline,
            "encoder": None if args.embeddings or args.baseline == "random" else (args.embedder or DEFAULT_ENCODER)}


def _print_table(result, class_name: str) -> None:
    ci = f"  (95% CI {result.ci[0]:.1f}-{result.ci[1]:.1f})" if result.ci else ""
    print(f"{result.protocol}: {result.metric} = {result.value:.2f}{ci}  over {result.n_queries} queries"
          f"  (ties: {result.ties})")
    if result.per_pair:
        title, table = "per pair (mAP over the pair's queries)", result.per_pair
    else:  # what the protocol groups queries by: an opposite-action pair, an action, a group
        title, table = f"per {class_name} (mean AP of its queries)", result.per_class
    print(f"  {title}:")
    for key, value in table.items():
        print(f"    {key:<24} {value:6.2f}")
