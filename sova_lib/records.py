"""One small JSON per evaluation, and the builder that collects them into one CSV.

Every score this library reports travels the same way: an evaluation
(``sova <benchmark> evaluate --out``, a notebook scoring a cache, a baseline)
becomes one flat **record** (``make_record``) written as one JSON file
(``write_record``) whose name comes from its configuration (the model and
the fingerprint of its weights included), so that the same configuration
overwrites its own file and any other, another checkpoint's too, gets a new one; the
builder (``collect_records``) reads a folder of them into one table, sorted
by file name, and writes it as one CSV. Tables and figures are made from that
table alone.

A record's fields (``RECORD_FIELDS``; absent ones are empty):

``kind``
    ``baseline``, ``description cache`` or ``embeddings``;
``source``
    what made the scores, in words (a model and prompt, a baseline, a synthetic demonstration);
``benchmark``, ``protocol``, ``metric``
    where and how it was scored (``mAP``, ``Pair-mAP``, ...);
``value``, ``ci_low``, ``ci_high``
    the score and its 95% bootstrap interval, in percent (2 decimals);
``n_queries``, ``per_class``
    the number of queries scored and the per-class (or per-pair) values;
``n_missing``, ``missing_rule``, ``value_without_missing``
    how many of the protocol's clips the input lacked, what the score made of
    them (``failures``: a missing query scores AP 0 and a missing gallery clip
    ranks last; ``left out``: left out of every ranking; empty when none was
    missing), and the score with them left out;
``chance``, ``chance_without_missing``
    what a uniformly random ranking of the same clips scores under the same
    missing rule, and with the missing clips left out (empty for a baseline
    or a benchmark without that line);
``ties``, ``tie_spread``, ``bootstrap``, ``seed``
    the AP tie rule, how far the score moves between the optimistic and the
    pessimistic order of tied items (points), the number of bootstrap
    resamples and their seed;
``encoder``, ``aggregate``, ``text_split``
    the sentence encoder, the set similarity, ``sentences`` or ``whole text``;
``baseline``, ``cache``, ``config_hash``, ``model``, ``fingerprint``, ``prompt``, ``fps``, ``frames``, ``versions``
    the baseline's name, or the description cache's folder, key hash, model id, fingerprint of the weights,
    prompt, sampling rate or frame count, and the software that wrote the texts
    (``sova_lib.describe.provenance``); for vectors read from a file or folder (``embeddings``), its last name
    and the SHA-256 digest of its content (``sova_lib.item_vectors.vectors_identity``);
``note``
    why a row has no value, or what to know about it;
``library_version``
    the sova_lib version that computed it.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from contextlib import suppress
from pathlib import Path

from sova_lib._version import __version__
from sova_lib.storage import write_text

__all__ = ["RECORD_FIELDS", "collect_records", "fingerprint_label", "format_cell", "make_record", "record_label",
           "record_name", "results_table", "score_cell",
           "write_record"]

RECORD_FIELDS = (
    "kind", "source", "benchmark", "protocol", "metric", "value", "ci_low", "ci_high", "n_queries", "n_missing",
    "missing_rule", "value_without_missing", "chance", "chance_without_missing", "per_class", "ties", "tie_spread",
    "bootstrap", "seed", "encoder", "aggregate", "text_split", "baseline", "cache", "config_hash", "model", "fingerprint", "prompt", "fps", "frames",
    "versions", "note", "library_version",
)

#: The fields that name a record's file: the evaluation it scores (what, made by which model and weights, on which
#: protocol, under which rules), not its numbers nor its interval's resamples, so that a rerun replaces its own
#: record and another checkpoint's never does.
_NAME_FIELDS = ("kind", "benchmark", "protocol", "baseline", "cache", "model", "fingerprint", "encoder", "aggregate",
                "text_split", "ties", "missing_rule")

#: The fields rounded to 2 decimals (``fps`` to 6).
_ROUNDED = ("value", "ci_low", "ci_high", "tie_spread", "value_without_missing", "chance", "chance_without_missing",
            "fps")


def _absent(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _rounded(value, digits: int = 2):
    return None if _absent(value) else round(float(value), digits)


def make_record(result=None, *, kind: str, source: str, **fields) -> dict:
    """A record (all of ``RECORD_FIELDS``) of ``result`` (a ``sova_lib.evaluation.Result``) and ``fields``.

    Without ``result``, the record holds ``fields`` alone (a protocol that
    was not scored: give ``protocol`` and a ``note``). Values are rounded to
    2 decimals; NaN becomes ``None``. Unknown field names raise ``ValueError``.
    """
    unknown = set(fields) - set(RECORD_FIELDS)
    if unknown:
        raise ValueError(f"unknown record fields {sorted(unknown)}; known: {RECORD_FIELDS}")
    record = dict.fromkeys(RECORD_FIELDS)
    record.update(kind=kind, source=source, library_version=__version__)
    if result is not None:
        low, high = result.ci or (None, None)
        per_class = result.per_pair or result.per_class
        record.update(protocol=result.protocol, metric=result.metric, value=result.value, ci_low=low, ci_high=high,
                      n_queries=result.n_queries, per_class={k: _rounded(v) for k, v in per_class.items()},
                      ties=result.ties, tie_spread=result.tie_spread, aggregate=result.aggregate,
                      **{k: getattr(result, k) for k in ("n_missing", "missing_rule", "value_without_missing", "chance",
                                                          "chance_without_missing")
                         if hasattr(result, k)})
    record.update(fields)
    for key in _ROUNDED:  # rounded here, whoever gave them
        record[key] = _rounded(record[key], 2 if key != "fps" else 6)
    return record


def _slug(text) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-.")[:48]


def record_name(record: dict) -> str:
    """The file name of ``record``: readable parts of its configuration and 10 hex digits of all of it
    (``_NAME_FIELDS``: what was scored, the ``model`` and ``fingerprint`` of the weights that made it, where and
    under which rules), so that two checkpoints' records never share a file, whatever their folders are named.

    A ``cache`` of paths (a paired comparison's ``"PATH_A vs PATH_B"``) enters the digest whole (the resolved
    paths: the same comparison on another machine has another digest) and the readable part by the paths' last
    names."""
    config = {k: record.get(k) for k in _NAME_FIELDS}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:10]
    cache = record.get("cache")
    if cache and " vs " in str(cache):  # each side by its last name, shortened so that both show
        cache = "-vs-".join(_slug(Path(p).name)[:22] for p in str(cache).split(" vs "))
    readable = [cache or record.get("baseline") or record.get("kind"), record.get("protocol"),
                record.get("encoder"), record.get("aggregate"), record.get("text_split")]
    return "__".join(_slug(p) for p in readable if p) + f"__{digest}.json"


def write_record(record: dict, folder: str | Path) -> Path:
    """Write ``record`` as ``folder/record_name(record)`` (indented JSON, keys in ``RECORD_FIELDS`` order)."""
    return write_text(Path(folder) / record_name(record), json.dumps({k: record.get(k) for k in RECORD_FIELDS}, indent=1, ensure_ascii=False) + "\n")


def collect_records(folder, csv: str | Path | None = None):
    """Every record JSON of ``folder`` (or of each folder of a list) as one DataFrame (``RECORD_FIELDS``
    columns), sorted by file name (then by folder).

    A value that is an object or a list (``per_class``, ``versions``, ``fingerprint``) is kept as a JSON string,
    so that the CSV holds JSON in every such cell. With ``csv``, the frame is also written there. A file that is
    not a record raises ``ValueError`` naming it.
    """
    import pandas as pd

    folders = [folder] if isinstance(folder, (str, Path)) else list(folder)
    paths = sorted((p for f in folders if Path(f).is_dir() for p in Path(f).glob("*.json")),
                   key=lambda p: (p.name, str(p)))
    rows = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: not a result record ({err})") from None
        if not isinstance(data, dict) or set(data) != set(RECORD_FIELDS):
            raise ValueError(f"{path}: not a result record (expected the fields {RECORD_FIELDS})")
        for col, value in data.items():
            if isinstance(value, (dict, list)):
                data[col] = json.dumps(value)
        rows.append(data)
    frame = pd.DataFrame(rows, columns=list(RECORD_FIELDS))
    for col in _ROUNDED:
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    if csv is not None:
        written = frame.copy()
        for col in ("n_queries", "n_missing", "bootstrap", "seed", "frames"):  # counts stay written as integers beside empty cells
            numbers = pd.to_numeric(written[col], errors="coerce")
            if numbers.notna().sum() == written[col].notna().sum() and (numbers.dropna() % 1 == 0).all():
                written[col] = numbers.astype("Int64")
        write_text(csv, written.to_csv(index=False))
    return frame


def format_cell(value, low=None, high=None, *, digits: int = 1, missing: str = "not computed here") -> str:
    """One table cell: ``value [low, high]``, ``value`` without an interval, or ``missing`` without a value."""
    if _absent(value):
        return missing
    if _absent(low) or _absent(high):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def score_cell(record: dict, *, digits: int = 1, missing: str = "not computed here") -> str:
    """A record's score as one table cell: ``format_cell`` of its value and interval, then, when the scored
    input lacked clips, ``; N missing, V without them`` (``n_missing``, ``value_without_missing``) and
    ``; chance C, C' without them``: what a random ranking of the same clips scores beside each
    (``chance``, ``chance_without_missing``), since the protocol's chance row is for all its clips."""
    cell = format_cell(record.get("value"), record.get("ci_low"), record.get("ci_high"), digits=digits,
                       missing=missing)
    n, without = record.get("n_missing"), record.get("value_without_missing")
    if _absent(n) or not n or _absent(record.get("value")):
        return cell
    cell += f"; {int(n)} missing" + ("" if _absent(without) else f", {without:.{digits}f} without them")
    chance, chance_without = record.get("chance"), record.get("chance_without_missing")
    if _absent(chance):
        return cell
    return cell + f"; chance {chance:.{digits}f}" + (
        "" if _absent(without) or _absent(chance_without) else f", {chance_without:.{digits}f} without them")


def fingerprint_label(fingerprint) -> str | None:
    """A short name of a record's ``fingerprint`` (an object, or its JSON): the tag of a ``--model-tag``, else 8 hex
    digits of the SHA-256 of its JSON (keys sorted); ``None`` for none."""
    if _absent(fingerprint) or fingerprint == "":
        return None
    if isinstance(fingerprint, str):
        with suppress(json.JSONDecodeError):  # a plain text stays as it is
            fingerprint = json.loads(fingerprint)
    if isinstance(fingerprint, dict) and fingerprint.get("method") == "tag" and fingerprint.get("tag"):
        return str(fingerprint["tag"])
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:8]


def record_label(record: dict) -> str:
    """What scored a record, in a table's first column: its ``model`` and the short name of its ``fingerprint``
    (``fingerprint_label``), so two checkpoints of one model read apart; for vectors read from a file or folder
    (``kind`` ``embeddings`` with a ``cache`` and a ``fingerprint``: ``sova_lib.item_vectors.vectors_identity``),
    its name and the short name of its content, so two files of one name read apart; its ``source`` when it names
    no model (a baseline), and a paired comparison's ``source`` (its two names)."""
    model, short = record.get("model"), fingerprint_label(record.get("fingerprint"))
    if _absent(model) or model == "":
        if record.get("kind") == "embeddings" and record.get("cache") and short:
            return f"{record['cache']} @{short}"
        return str(record.get("source"))
    if record.get("kind") == "paired comparison":
        return str(record.get("source"))
    return f"{model} @{short}" if short else str(model)


def results_table(frame, *, digits: int = 2):
    """``collect_records``' frame as the table ``sova results`` prints: one row per record, columns ``scored``
    (``record_label``), ``prompt``, ``benchmark``, ``protocol``, ``metric``, ``value`` (``score_cell``: the value,
    its interval, and the clips missing with the chance level of the same clips) and ``record`` (the cache or
    baseline it names)."""
    import pandas as pd

    rows = []
    for r in frame.to_dict("records"):
        r = {k: (None if _absent(v) else v) for k, v in r.items()}
        rows.append({"scored": record_label(r), "prompt": r.get("prompt"), "benchmark": r.get("benchmark"),
                     "protocol": r.get("protocol"), "metric": r.get("metric"),
                     "value": score_cell(r, digits=digits, missing=r.get("note") or "-"),
                     "record": r.get("cache") or r.get("baseline")})
    return pd.DataFrame(rows, columns=["scored", "prompt", "benchmark", "protocol", "metric", "value", "record"])
