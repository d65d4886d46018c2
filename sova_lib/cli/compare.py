"""``sova compare``: two caches on the same protocol, query by query (a paired comparison).

``sova compare --protocol intra-pair A B`` scores ``A`` and ``B`` (each
descriptions: JSON Lines, the authors' JSON or a describe cache folder; or an
``.npz`` of vectors; descriptions are embedded one vector per sentence, or
each whole with ``--no-split``, as ``sova sovabench evaluate``) and prints the score of each, the difference ``A - B``
with a paired bootstrap interval over the same queries (within each pair for
Pair-mAP, as ``sova sovabench evaluate --bootstrap``), and the queries where the two
disagree most. The work is done by ``sova_lib.report.compare``.

A module of ``sova_lib.cli`` is named after the command it adds (one module per command), and the library
module behind it may share its name; ``sova_lib.cli.compare`` parses and prints, ``sova_lib.report.compare``
does the work.
"""
from __future__ import annotations

from sova_lib.cli.options import (
    add_encoder_options,
    add_ranking_options,
    add_scoring_options,
    count,
    encoder_of,
    note,
    report,
)
from sova_lib.protocols import PROTOCOLS
from sova_lib.report.compare import compare_files

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
    add_ranking_options(p)
    p.add_argument("--top", type=count, default=10, metavar="K",
                   help="how many queries of largest disagreement to list (default 10)")
    p.add_argument("--allow-missing", action="store_true",
                   help="leave the clips missing from an input out of every ranking; both must still leave the same "
                        "queries (default: each counts as a failure, as sova sovabench evaluate counts it)")
    add_encoder_options(p)
    add_scoring_options(p, record="comparison")
    p.set_defaults(func=run_compare)


def run_compare(args) -> int:
    if args.a.endswith(".npz") and args.b.endswith(".npz") and args.no_split:
        note("--no-split does not apply to two .npz inputs (the vectors are already made); it is ignored")
    name_a, name_b = args.names or (args.a, args.b)
    result = compare_files(args.protocol, args.a, args.b, encoder_of(args, show_progress=False),
                           sentences=not args.no_split, name_a=name_a, name_b=name_b, aggregate=args.aggregate,
                           ties=args.ties, bootstrap=args.bootstrap, seed=args.seed, allow_missing=args.allow_missing)
    return report(args, result, result.text(args.top), result.to_json(args.top))
