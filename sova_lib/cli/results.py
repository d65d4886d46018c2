"""``sova results``: gather the records of ``--out`` folders into one CSV and print them as a Markdown table.

::

    sova results figures/results runs/ckpt2/results --out results.csv

Every scoring command's ``--out DIR`` writes one record JSON per evaluation
(``sova_lib.records``); this command reads every record of the folders given
(``records.collect_records``), writes them as one CSV and prints one Markdown
row per record (``records.results_table``): the model and a short
fingerprint of its weights (so two checkpoints read apart), prompt,
benchmark, protocol, metric and score. The notebooks read the same CSV.
"""
from __future__ import annotations

import sys
from pathlib import Path

from sova_lib.cli.options import existing_folder

__all__ = ["add_commands", "run_results"]


def add_commands(sub) -> None:
    p = sub.add_parser("results", help="gather the records of --out folders into one CSV and print them as a table",
                       description="Read every record JSON of the folders given (what sova <benchmark> evaluate "
                                   "--out and sova compare --out write), write them as one CSV, and print one "
                                   "Markdown row per record. Example: sova results figures/results --out "
                                   "results.csv")
    p.add_argument("folders", nargs="+", type=existing_folder, metavar="DIR",
                   help="folders of record JSON files")
    p.add_argument("--out", type=Path, default=Path("results.csv"), metavar="FILE.csv",
                   help="the CSV to write (default: results.csv in the current folder)")
    p.set_defaults(func=run_results)


def run_results(args) -> int:
    from sova_lib.records import collect_records, results_table
    from sova_lib.report.tables import markdown_table

    frame = collect_records(args.folders, args.out)
    print(f"wrote {args.out} ({len(frame)} records from {len(args.folders)} folder(s))", file=sys.stderr)
    print(markdown_table(results_table(frame)), end="")
    return 0
