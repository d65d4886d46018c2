"""Result tables: the paper's reported numbers beside what this repository computes.

Four kinds of rows meet here, and each keeps its name:

* **paper** rows, read from ``data/paper_results/paper_results.csv`` beside this module
  (``paper_results``): the numbers the SOVABench paper prints, with the table
  each came from. They are never used in place of a computed number.
* **baseline** rows, computed from the benchmark metadata alone
  (``sova_lib.report.baselines.baseline_rows``): ``prevalence`` (the paper's Random row),
  ``random-ranking`` and ``oracle`` (see ``sova_lib.evaluation``).
* **embeddings** rows (the results notebook scores each frame-embedding cache
  in its cells): frame vectors of a contrastive model (``sova embed``),
  matched to the paper's contrastive rows by model id (``CONTRASTIVE_IDS``).
* **description cache** rows (``cache_scan.find_description_caches``,
  ``evaluate_cache``): a folder ``<cache>/descriptions/<name>__<hash>/``
  holding ``descriptions.jsonl`` and ``manifest.json`` as ``sova describe``
  writes them, scored on every protocol of which it holds clips (the
  clips it lacks counted as failures, their number beside the score). Only caches
  whose ids are SOVABench clip indices are scored; a cache of other videos
  (the quickstart's) is listed with the reason it was skipped.

A computed row is labelled by what made it (``cache_scan.source_label``): an MLLM run
by its model id and prompt, the classical motion describer as such, a
synthetic demonstration as synthetic. A paper row the repository has not
computed says ``not computed here`` (``NOT_COMPUTED``).

All values are percentages (0-100) unless the ``metric`` column says
otherwise; confidence intervals are 95% percentile bootstrap intervals over
queries (within each pair for Pair-mAP).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.describe.provenance import cache_provenance
from sova_lib.evaluation import evaluate
from sova_lib.item_vectors import embed_descriptions
from sova_lib.protocols import get_protocol
from sova_lib.records import format_cell, make_record, score_cell
from sova_lib.report.baselines import BENCHMARK
from sova_lib.report.cache_scan import FoundCache, paper_model

from paper.beside import NOT_COMPUTED

__all__ = ["NOT_COMPUTED", "PAPER_TABLES", "SOURCE_COLUMNS", "CONTRASTIVE_IDS", "paper_results", "evaluate_cache",
           "NOT_IN_PAPER", "HERE_FIELDS", "rows_beside", "computed_as",
           "number_table",
           "format_table"]

PAPER_CSV = "paper_results/paper_results.csv"

#: Paper row (Table 4 / C.1) -> public checkpoints that load through transformers' AutoModel as that model: a
#: frame-embedding cache of one of them (``sova embed``) stands beside that row.
CONTRASTIVE_IDS: dict[str, tuple[str, ...]] = {
    "CLIP-ViT-L-14": ("openai/clip-vit-large-patch14",),
    "SigLIP2-Giant": ("google/siglip2-giant-opt-patch16-384",),
}


# --------------------------------------------------------------------------- paper numbers

def paper_results(table: str | None = None):
    """The paper's reported numbers as a DataFrame (one number per row).

    Columns: ``table, group, model, prompt, encoder, fps, text_split, column,
    metric, value`` (see the README beside the CSV). ``table`` selects one
    table, e.g. ``"Table 4"``; an unknown name raises ``ValueError`` listing
    the known ones.
    """
    path = Path(__file__).resolve().parent / "data" / PAPER_CSV
    frame = pd.read_csv(path, dtype={"fps": str}, keep_default_na=False, na_values={"value": [""]})
    if table is not None:
        known = list(dict.fromkeys(frame["table"]))
        if table not in known:
            raise ValueError(f"the paper has no {table!r} in {PAPER_CSV}; known: {known}")
        frame = frame[frame["table"] == table].reset_index(drop=True)
    return frame


# --------------------------------------------------------------------------- computing rows

def evaluate_cache(cache: FoundCache, encoder, protocols, *, aggregate: str = "max",
                   sentences: bool = True, ties: str = "expected", bootstrap: int = 1000,
                   seed: int = 0, items=None) -> list[dict]:
    """Score ``cache`` on each of ``protocols``; one row per protocol.

    The clips of a protocol the cache lacks count as failures
    (``evaluation.evaluate``); the row's ``n_missing`` says how many and
    ``value_without_missing`` what the score is without them. A protocol of
    which the cache holds no clip gives a row with ``value`` NaN and a
    ``note`` saying so. The cache is named by ``describe.provenance.cache_provenance``, as ``sova sovabench
    evaluate --out`` names it. ``encoder`` embeds the sentences (``SentenceEncoder``);
    ``items`` passes vectors already made (``item_vectors.embed_descriptions``
    of the cache's texts) with the same encoder and ``sentences``.
    """

    rows = []
    common = {"benchmark": BENCHMARK, **cache_provenance(cache.manifest, cache.path), "encoder": encoder.name,
              "aggregate": aggregate, "text_split": "sentences" if sentences else "whole text", "ties": ties,
              "bootstrap": bootstrap, "seed": seed}
    for p in protocols:
        present, needed = cache.coverage[p]
        if not present:
            rows.append(make_record(kind="description cache", source=cache.label, protocol=p,
                                    metric=get_protocol(p).metric, n_missing=needed,
                                    note=f"none of the {needed} clips: not scored", **common))
            continue
        if items is None:
            items = embed_descriptions(cache.texts, encoder, sentences=sentences)
        r = evaluate(p, items, aggregate=aggregate, ties=ties, bootstrap=bootstrap, seed=seed)
        rows.append(r.to_record(kind="description cache", source=cache.label, **common))
    return rows


# --------------------------------------------------------------------------- paper beside computed

#: The paper's tables of every model (Table 4: inter-pair mAP and intra-pair Pair-mAP, Section 5; Table C.1: the
#: inter-pair protocol on the 1,423 query clips alone, Appendix C) -> their computed columns (protocol names, in
#: the paper's order) and the columns copied from the paper alone (Table C.1's efficiency, instances per second on
#: the authors' hardware: not a quantity computed here).
PAPER_TABLES = {"Table 4": (("inter-pair", "intra-pair"), ()),
                "Table C.1": (("inter-pair-constrained",), ("efficiency",))}


#: The fields of a computed record that say what was scored (record field -> its column in ``rows_beside``):
#: the source as written, what kind of input it was, and the settings behind it. Empty where the row was not
#: computed; ``computed_as`` writes them as one cell for reading.
SOURCE_COLUMNS = {"source": "source", "kind": "kind", "baseline": "baseline", "model": "source model",
                  "prompt": "source prompt", "encoder": "encoder", "fps": "fps", "cache": "cache"}


def _present(value):
    """``value``, or ``None`` where a record leaves the field empty (``None``, NaN or ``""``)."""
    return None if value is None or (isinstance(value, float) and np.isnan(value)) or value == "" else value


#: The group of a computed row that stands beside no row of the paper's table.
NOT_IN_PAPER = "Computed here (not in the paper)"

#: The fields of a computed record shown for each protocol: record field -> ``<protocol> <part>``, its column.
HERE_FIELDS = {"value": "here", "ci_low": "CI low", "ci_high": "CI high", "n_missing": "missing",
               "value_without_missing": "without missing", "chance": "chance",
               "chance_without_missing": "chance without missing", "note": "note"}


def rows_beside(computed, table: str) -> "pd.DataFrame":
    """The computed records of ``table``'s protocols (one of ``PAPER_TABLES``), one row per scored input, each named by
    the row of the paper's table it stands beside.

    ``computed``: a DataFrame of records. A record stands beside the paper
    row of the same model id and prompt (a description cache), of its paper
    model (a frame-embedding cache, ``CONTRASTIVE_IDS``), or the
    Random row (the ``prevalence`` baseline); its row takes that row's
    ``group, model, prompt``. Any other input gets a row of its own: group
    ``NOT_IN_PAPER``, its source as model, its prompt ("-" for none). Then,
    for each protocol, ``<protocol> <part>`` (``HERE_FIELDS``: the value, its
    interval, the clips the scored input lacked (counted as failures), the
    value without them, the chance levels, the note), then what was scored
    (``SOURCE_COLUMNS``); where two records give one cell, the later one's
    stands.
    """
    columns, _ = PAPER_TABLES[table]
    paper = paper_results(table)
    groups = {(r.model, r.prompt): r.group for r in paper.itertuples(index=False)}
    out: dict = {}
    for r in computed.to_dict("records"):
        if r["protocol"] not in columns:
            continue
        key = None
        if r["kind"] == "baseline" and r.get("baseline") == "prevalence":
            key = ("Random", "")
        elif r["kind"] == "description cache":
            key = (paper_model(r.get("model", "")), r.get("prompt", ""))
        elif r["kind"] == "embeddings":
            key = (paper_model(r.get("model") or "", CONTRASTIVE_IDS), "")
        if key in groups:
            row = out.setdefault(key, {"group": groups[key], "model": key[0], "prompt": key[1] or "-"})
        else:
            prompt = r.get("prompt")
            row = out.setdefault(("computed", r["source"], r.get("cache", "")), {
                "group": NOT_IN_PAPER, "model": r["source"],
                "prompt": prompt if isinstance(prompt, str) and prompt else "-"})
        row.update({column: _present(r.get(field)) for field, column in SOURCE_COLUMNS.items()})
        row.update({f"{r['protocol']} {part}": r.get(field, np.nan) for field, part in HERE_FIELDS.items()})
        row[f"{r['protocol']} note"] = _present(r.get("note"))
    order = ["group", "model", "prompt", *(f"{c} {part}" for c in columns for part in HERE_FIELDS.values())]
    return pd.DataFrame(list(out.values())).reindex(columns=order + list(SOURCE_COLUMNS.values()))


def computed_as(frame, table: str) -> list[str]:
    """What each row of the paper's table beside the computed rows (``rows_beside``, merged) was computed from, as one cell for reading: the source, then
    ``; encoder E; cache C`` for a description cache (``; cache C`` for a frame-embedding cache), then each
    protocol's note as `` (protocol: note)``; ``not computed here`` for a row without a source."""
    columns, _ = PAPER_TABLES[table]
    cells = []
    for r in frame.to_dict("records"):
        if pd.isna(r["source"]):
            cells.append(NOT_COMPUTED)
            continue
        cell = r["source"]
        if r["kind"] == "description cache":
            cell += f"; encoder {r['encoder']}; cache {r['cache']}"
        elif r["kind"] == "embeddings" and pd.notna(r["cache"]):
            cell += f"; cache {r['cache']}"
        cells.append(cell + "".join(f" ({c}: {r[f'{c} note']})" for c in columns if pd.notna(r[f"{c} note"])))
    return cells


def number_table(frame, table: str) -> "pd.DataFrame":
    """The paper's table beside the computed rows (``rows_beside``, merged) as written to its CSV: ``group, model,
    prompt``, the paper's columns alone, then for each protocol the paper's value, the computed one, its interval,
    the clips missing (a count) and the value without them; then ``computed as`` (``computed_as``)."""
    columns, paper_only = PAPER_TABLES[table]
    numbers = ["group", "model", "prompt", *(f"{c} paper" for c in paper_only),
               *(f"{c} {part}" for c in columns for part in ("paper", "here", "CI low", "CI high", "missing",
                                                               "without missing"))]
    out = frame[numbers].assign(**{"computed as": computed_as(frame, table)})
    return out.astype({f"{c} missing": "Int64" for c in columns})


def format_table(frame, table: str) -> "pd.DataFrame":
    """The paper's table beside the computed rows (``rows_beside``, merged) for reading: ``here`` cells as ``value [low, high]`` or ``not computed
    here``, followed by ``; N missing, V without them; chance C, C' without them`` when the scored input lacked
    clips (``records.score_cell``: the chance levels of the same clips, under each rule)."""
    columns, paper_only = PAPER_TABLES[table]
    shown = frame[["group", "model", "prompt"]].copy()
    for c in paper_only:
        shown[f"{c} (paper)"] = [f"{v:g}" if pd.notna(v) else "-" for v in frame[f"{c} paper"]]
    for c in columns:
        shown[f"{c} (paper)"] = [format_cell(v, missing="-") for v in frame[f"{c} paper"]]
        shown[f"{c} (here, 95% CI)"] = [
            score_cell({"value": v, "ci_low": lo, "ci_high": hi, "n_missing": m, "value_without_missing": w,
                        "chance": ch, "chance_without_missing": cw}, missing=NOT_COMPUTED)
            for v, lo, hi, m, w, ch, cw in zip(frame[f"{c} here"], frame[f"{c} CI low"], frame[f"{c} CI high"],
                                               frame[f"{c} missing"], frame[f"{c} without missing"],
                                               frame[f"{c} chance"], frame[f"{c} chance without missing"])]
    shown["computed as"] = computed_as(frame, table)
    return shown
