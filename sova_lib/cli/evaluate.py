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

import sys
from pathlib import Path

from sova_lib.benchmarks import sovabench
from sova_lib.cli import CliError
from sova_lib.cli.options import (
    SPLIT_HELP,
    add_answer_limit,
    add_encoder_options,
    add_ranking_options,
    add_scoring_options,
    encoder_of,
    note,
    report,
)
from sova_lib.evaluation import BASELINES
from sova_lib.protocols import PROTOCOLS

__all__ = ["add_sovabench_evaluate", "add_image_task_evaluate", "add_input_options"]


def add_input_options(p, *, baselines, split: str = SPLIT_HELP):
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
    p.add_argument("--protocol", required=True, choices=sorted(PROTOCOLS),
                   help="the retrieval protocol to score: SOVABench's four, or quickstart-direction (the bundled "
                        "example clips)")
    add_input_options(p, baselines=BASELINES)
    add_ranking_options(p)
    p.add_argument("--allow-missing", action="store_true",
                   help="leave the clips missing from the input out of every ranking, which changes the benchmark "
                        "(default: each counts as a failure: a missing query scores AP 0, a missing gallery clip "
                        "ranks below every scored one; both values and the number missing are printed)")
    add_scoring_options(p)
    p.set_defaults(func=run_sovabench)


def add_image_task_evaluate(p) -> None:
    """``sova image-tasks evaluate``: one image task of Table 3."""
    from sova_lib.benchmarks import image_tasks

    p.add_argument("--task", required=True, choices=sorted(image_tasks.DATASETS),
                   help="the image task to score (Table 3 of the SOVABench paper)")
    add_input_options(p, baselines=image_tasks.BASELINES)
    p.add_argument("--annotations", metavar="PATH",
                   help="the task's annotation file, or a folder holding it (default: VSR's files ship with the "
                        "package; the other tasks' are looked for in $SOVA_IMAGE_TASKS)")
    p.add_argument("--text-model", metavar="ID_OR_PATH",
                   help="needed with --embeddings: the contrastive model (the one that made them) whose text tower "
                        "embeds the choice sentences")
    p.add_argument("--allow-missing", action="store_true",
                   help="score the task's items the input has, leaving out the others (default: an item missing "
                        "from the input is an error)")
    add_scoring_options(p)
    p.set_defaults(func=run_image_task)


def _inputs(args) -> dict:
    """The scoring keywords of the options every evaluate command shares."""
    if args.bootstrap == 1:
        note("--bootstrap 1 resamples the queries once: the interval has zero width; use 1000 or so")
    for flag, given in (("--embedder", args.embedder), ("--embedder-option", args.embedder_option)):
        if args.embeddings and given:
            note(f"{flag} does not apply to --embeddings (the vectors are already made); it is ignored")
    if args.embeddings and args.no_split:
        note("--no-split does not apply to --embeddings; it is ignored")
    return {"descriptions": args.descriptions, "embeddings": args.embeddings, "baseline": args.baseline,
            "encoder": encoder_of(args), "sentences": not args.no_split, "max_chars": args.max_answer_chars,
            "allow_missing": args.allow_missing, "bootstrap": args.bootstrap, "seed": args.seed}


def run_sovabench(args) -> int:
    """``sova sovabench evaluate``: the score, per class or pair, beside what a random ranking scores."""
    try:
        result = sovabench.evaluate_files(args.protocol, aggregate=args.aggregate, ties=args.ties, **_inputs(args))
    except RuntimeError as err:
        raise CliError(str(err)) from None
    if args.out and args.descriptions and (Path(args.descriptions) / "manifest.json").is_file():  # the record of
        from sova_lib.describe.provenance import read_cache_manifest  # a describe cache folder names it as the
        from sova_lib.report.cache_scan import source_label  # notebooks do (nothing else shows the source)

        result.context["source"] = source_label(read_cache_manifest(args.descriptions))
    if warning := result.tie_warning():
        print(f"sova: warning: {warning}", file=sys.stderr)
    return report(args, result, None if args.json else result.text(chance=not args.baseline), notes=result.notes)


def run_image_task(args) -> int:
    """``sova image-tasks evaluate``: the accuracy of descriptions, vectors or a baseline on one image task."""
    from sova_lib.benchmarks import image_tasks

    try:
        result = image_tasks.evaluate_files(args.task, annotations=args.annotations, text_model=args.text_model,
                                            **_inputs(args))
    except RuntimeError as err:  # a contrastive model that does not load
        raise CliError(str(err)) from None
    return report(args, result, result.text(), notes=() if args.json else result.notes)
