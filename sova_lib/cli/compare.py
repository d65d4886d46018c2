"""``sova compare``: two caches on the same protocol, query by query (a paired comparison).

``sova compare --protocol intra-pair A B`` scores ``A`` and ``B`` (each
descriptions: JSON Lines, the authors' JSON or a describe cache folder; or an
``.npz`` of vectors; descriptions are embedded one vector per sentence, or
each whole with ``--no-split``, as ``sova sovabench evaluate``) and prints the score of each, the difference ``A - B``
with a paired bootstrap interval over the same queries (within each pair for
Pair-mAP, as ``sova evaluate --bootstrap``), and the queries where the two
disagree most. The work is done by ``sova_lib.paper.compare``.

A module of ``sova_lib.cli`` is named after the command it adds (one module per command), and the library
module behind it may share its name; ``sova_lib.cli.compare`` parses and prints, ``sova_lib.paper.compare``
does the work.
"""
from __future__ import annotations

import json
import sys

from sova_lib.cli import CliError
from sova_lib.cli.options import (
    AGGREGATE_HELP,
    TIES_HELP,
    add_bootstrap_options,
    add_cache_options,
    add_encoder_options,
    add_output_options,
    count,
    note,
    old_spelling,
)
from sova_lib.encoder import DEFAULT_ENCODER, SentenceEncoder
from sova_lib.evaluation import CoverageError
from sova_lib.metrics import TIE_RULES
from sova_lib.paper.compare import compare_files
from sova_lib.protocols import PROTOCOLS
from sova_lib.records import write_record
from sova_lib.similarity import AGGREGATES

__all__ = ["add_commands", "run_compare"]


def add_commands(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare two caches on the same protocol, query by query (paired bootstrap)",
        description="Score two description or vector caches under one protocol and compare them on the same "
                    "queries: the difference A - B with a paired bootstrap interval, and the queries where "
                    "they disagree most.",
    )
    p.add_argument("a", metavar="A", help="the first scorer's descriptions (JSONL, the authors' JSON, or a describe "
                                          "cache folder) or vectors (.npz)")
    p.add_argument("b", metavar="B", help="the second scorer's, the same way")
    p.add_argument("--protocol", required=True, choices=sorted(PROTOCOLS), help="the retrieval protocol to score")
    p.add_argument("--names", nargs=2, metavar=("NAME_A", "NAME_B"),
                   help="the two scorers' names to print (default: the paths)")
    p.add_argument("--aggregate", choices=AGGREGATES, default="max", help=AGGREGATE_HELP)
    p.add_argument("--ties", choices=TIE_RULES, default="expected", help=TIES_HELP)
    p.add_argument("--top", type=count, default=10, metavar="K",
                   help="how many queries of largest disagreement to list (default 10)")
    p.add_argument("--allow-missing", action="store_true",
                   help="score the clips each input has, leaving out the others; both must still leave the same "
                        "queries (default: a clip missing from an input is an error)")
    add_encoder_options(p)
    add_bootstrap_options(p)
    add_cache_options(p, what="the sentence encoder's vectors are cached under it", retry=False)
    add_output_options(p, out=("DIR", "also write the comparison as one record JSON into DIR (the tables of "
                                      "sova_lib.records collect them)"), json=True, dest="results_dir")
    old_spelling(p, "--results-dir", "--out", dest="results_dir")
    p.set_defaults(func=run_compare)


def run_compare(args) -> int:
    made = []

    def encoder():
        if not made:
            made.append(SentenceEncoder(args.embedder or DEFAULT_ENCODER, cache_dir=args.cache_dir,
                                        show_progress=False))
        return made[0]

    name_a, name_b = args.names or (args.a, args.b)
    vectors = args.a.endswith(".npz") and args.b.endswith(".npz")
    if vectors and args.no_split:
        note("--no-split does not apply to two .npz inputs (the vectors are already made); it is ignored")
    try:
        result = compare_files(args.protocol, args.a, args.b, encoder, sentences=not args.no_split,
                               name_a=name_a, name_b=name_b, aggregate=args.aggregate, ties=args.ties,
                               bootstrap=args.bootstrap, seed=args.seed, allow_missing=args.allow_missing)
    except (CoverageError, ValueError, FileNotFoundError) as err:
        raise CliError(str(err)) from None
    if args.results_dir:
        record = result.to_record(encoder=None if vectors else (args.embedder or DEFAULT_ENCODER))
        print(f"wrote {write_record(record, args.results_dir)}", file=sys.stderr)
    if args.json:
        text = json.dumps(result.to_json(args.top))
    else:
        text = result.text(args.top)
    print(text)  # a reader that stops early (``| head``) is handled once, by ``sova_lib.cli.main``
    return 0
