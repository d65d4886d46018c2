"""A paired comparison of two scorers (description or vector caches) on the same protocol.

``compare(protocol, items_a, items_b)`` scores both under one protocol and
answers the paper's comparative question ("does the task-aware prompt beat
the general one?") on the same queries:

* the per-query AP difference ``A - B`` (points);
* the difference of the protocol's scores (mAP, or Pair-mAP: the mean over
  pairs of the mean per-query difference) and a paired percentile bootstrap
  interval (``metrics.paired_bootstrap_ci``): each resample draws one set of
  queries, within each pair for Pair-mAP, the same unit as the single-scorer
  intervals of ``evaluate``, from ``numpy.random.default_rng(seed)``;
* the queries where the two disagree most.

``compare_files(protocol, path_a, path_b, encoder, sentences=...)`` reads
two inputs (descriptions, embedded by the sentence encoder split into
sentences or each whole, or ``.npz`` vectors) and compares them; the
comparison keeps how the texts were split (``text_split``).

``Comparison.to_record`` turns the result into one record of
``sova_lib.records`` (kind ``paired comparison``), so it is collected into
``figures/results.csv`` with every other score. The record names both sides
(``sides``: each input's resolved path and, for a describe cache folder, the
model, fingerprint, prompt and frame plan of its manifest) and the rules they
were scored under, and its file name comes from that: two comparisons never
share a file, and one comparison however its paths are spelled is one record.

A module of ``sova_lib.cli`` is named after the command it adds (one module per command), and the library
module behind it may share its name; ``sova_lib.cli.compare`` parses and prints, ``sova_lib.report.compare``
does the work.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from sova_lib import metrics
from sova_lib.describe.provenance import folder_provenance
from sova_lib.evaluation import check_bootstrap, evaluate
from sova_lib.item_vectors import embed_descriptions, read_descriptions, read_embeddings
from sova_lib.protocols import Protocol, get_protocol
from sova_lib.records import make_record

__all__ = ["Comparison", "compare", "compare_files", "load_items", "side"]


def side(path) -> dict:
    """One side of a comparison as its record names it: ``path`` resolved (``path``) and, for a describe cache
    folder, its manifest's fields (``sova_lib.describe.provenance.folder_provenance``: ``cache``, ``model``,
    ``fingerprint``, ``prompt``, ``fps``, ``frames``, ``config_hash``); else ``cache`` is the file's name."""
    resolved = Path(path).resolve()
    return {"path": str(resolved), "cache": resolved.name, **folder_provenance(resolved)}


def _plan(side: dict):
    """A side's frame plan in words (``8 frames``, ``2 fps``), ``None`` when not known."""
    if side.get("frames") is not None:
        return f"{side['frames']} frames"
    return None if side.get("fps") is None else f"{side['fps']:g} fps"


def _both(a, b):
    """``"a vs b"`` of two sides' values (``None`` written as ``unknown``), ``None`` when neither is known."""
    if a is None and b is None:
        return None
    words = [v if isinstance(v, str) else "unknown" if v is None else json.dumps(v, sort_keys=True) for v in (a, b)]
    return " vs ".join(words)


# Field lists of the same shape, deliberately: Comparison, muvr.qa.QAResult and muvr.retrieval.MuvrResult are each a
# plain record of their own numbers (a scan for repeated code pairs them; they share no logic).
@dataclass
class Comparison:
    """Two scorers on one protocol. ``value_*``, ``difference`` and ``ci`` are in points (percent).

    ``per_query`` is a DataFrame with one row per query (``id``, ``class``,
    ``AP A``, ``AP B``, ``difference``, in points, and ``missing``: ``A``,
    ``B``, ``A, B`` for the inputs that lack the query's clip, else empty),
    largest disagreement first (ties kept in id order).
    ``text_split`` says how descriptions were embedded (``sentences`` or
    ``whole text``, the records' ``text_split``), or
    ``None`` when not known or both inputs were vectors; ``encoder`` names
    the sentence encoder that embedded them (``None``: not known, or vectors).
    ``sides`` names the two inputs (``side``; empty when compared in memory),
    ``missing_rule`` what the scores made of clips an input lacks
    (``failures`` or ``left out``) and ``n_missing`` how many each lacked.
    """

    protocol: str
    metric: str
    name_a: str
    name_b: str
    value_a: float
    value_b: float
    difference: float
    ci: tuple | None
    n_queries: int
    bootstrap: int
    seed: int
    ties: str
    aggregate: str
    per_query: object = field(repr=False)
    per_class: dict = field(default_factory=dict)
    text_split: str | None = None
    encoder: str | None = None
    sides: tuple = ()
    missing_rule: str = "failures"
    n_missing: tuple = (0, 0)

    def to_record(self, *, encoder: str | None = None, text_split: str | None = None,
                  benchmark: str | None = None) -> dict:
        """The comparison as one record (``sova_lib.records``, kind ``paired comparison``).

        ``value`` is A minus B in points, with its paired interval; ``source``
        ``"A minus B"`` (the names); ``cache`` ``"PATH_A vs PATH_B"``, the
        resolved inputs, which name the file; ``model``, ``fingerprint``,
        ``prompt``, ``config_hash`` and ``frames`` (the frame plan, ``2 fps`` or
        ``8 frames``) each ``"A's vs B's"`` when either side's is known;
        ``missing_rule`` the rule both were scored under; ``per_class`` the
        per-class differences; ``note`` both scores and the clips each lacked.
        ``encoder``, ``text_split`` and ``benchmark`` say how the two were scored;
        ``encoder`` and ``text_split`` default to the comparison's own.
        """
        low, high = self.ci or (None, None)
        text_split = self.text_split if text_split is None else text_split
        encoder = self.encoder if encoder is None else encoder
        a, b = self.sides or ({"path": self.name_a}, {"path": self.name_b})
        named = {key: _both(a.get(key), b.get(key)) for key in ("model", "fingerprint", "prompt", "config_hash")}
        scores = [f"{name}: {value:.2f}" + (f" ({n} clip(s) missing, {self.missing_rule})" if n else "")
                  for name, value, n in zip((self.name_a, self.name_b), (self.value_a, self.value_b), self.n_missing)]
        return make_record(
            kind="paired comparison", source=f"{self.name_a} minus {self.name_b}", benchmark=benchmark,
            protocol=self.protocol, metric=f"{self.metric} difference", value=self.difference, ci_low=low,
            ci_high=high, n_queries=self.n_queries, per_class={k: round(float(v), 2) for k, v in self.per_class.items()},
            ties=self.ties, bootstrap=self.bootstrap, seed=self.seed, encoder=encoder, aggregate=self.aggregate,
            text_split=text_split, cache=f"{a['path']} vs {b['path']}", frames=_both(_plan(a), _plan(b)),
            missing_rule=self.missing_rule, **named,
            note=", ".join(scores) + "; paired bootstrap over the same queries",
        )

    def summary(self) -> dict:
        """A JSON-ready dict of the numbers, at full precision, keys in snake_case as ``Result.to_json`` has them
        (per-query values left out): ``value_a``, ``value_b``, ``difference`` and ``ci`` in points, ``a_better``,
        ``b_better``, ``equal`` counts of queries."""
        diff = self.per_query["difference"]
        return {"protocol": self.protocol, "metric": self.metric, "name_a": self.name_a, "name_b": self.name_b,
                "value_a": float(self.value_a), "value_b": float(self.value_b), "difference": float(self.difference),
                "ci": None if self.ci is None else [float(self.ci[0]), float(self.ci[1])],
                "n_queries": self.n_queries, "a_better": int((diff > 0).sum()), "b_better": int((diff < 0).sum()),
                "equal": int((diff == 0).sum()), "bootstrap": self.bootstrap, "seed": self.seed, "ties": self.ties,
                "aggregate": self.aggregate, "text_split": self.text_split, "missing_rule": self.missing_rule,
                "n_missing_a": int(self.n_missing[0]), "n_missing_b": int(self.n_missing[1])}

    def to_json(self, top: int = 10) -> dict:
        """``summary()`` and the ``top`` queries of largest disagreement (``id``, ``class``, ``ap_a``, ``ap_b``,
        ``difference``, in points, full precision, and ``missing``): what ``sova compare --json`` prints."""
        rows = self.per_query.head(top).rename(columns={"AP A": "ap_a", "AP B": "ap_b"})
        return {**self.summary(), "disagreements": rows.to_dict("records")}

    def text(self, top: int = 10) -> str:
        """A plain-text report: the difference and its interval first (one line), each scorer, then a small aligned
        table of the ``top`` queries of largest disagreement (AP in points, ``A - B`` signed). When an input lacks
        clips, a line says how many each lacks and what the scores made of them, and the table marks the queries
        whose clip is missing (``missing``: ``A``, ``B`` or ``A, B``)."""
        s = self.summary()
        ci = f"95% paired CI {s['ci'][0]:+.2f} to {s['ci'][1]:+.2f}" if s["ci"] else "no interval"
        how = (f"paired bootstrap: {self.bootstrap} resamples of the queries{' within each pair' if self.metric == 'Pair-mAP' else ''}, "
               f"seed {self.seed}" if s["ci"] else "no interval: bootstrap 0")
        lines = [f"{self.protocol} ({self.metric}, {self.n_queries} queries): A - B = {self.difference:+.2f} points, {ci}",
                 f"  A = {self.value_a:6.2f}  {self.name_a}", f"  B = {self.value_b:6.2f}  {self.name_b}",
                 f"  A better on {s['a_better']} queries, B on {s['b_better']}, equal on {s['equal']}",
                 f"  ({how}; AP ties: {self.ties})"]
        if any(self.n_missing):
            rule = ("left out of every ranking of both" if self.missing_rule == "left out" else
                    "counted as failures: a missing query scores AP 0, a missing gallery clip ranks last; "
                    "--allow-missing leaves them out of both")
            lines.append(f"  missing clips: A lacks {self.n_missing[0]}, B lacks {self.n_missing[1]} ({rule})")
        rows = self.per_query.head(top)
        if len(rows):
            marked = any(self.n_missing)
            cells = [["query", "class", "AP A", "AP B", "A - B", *(["missing"] if marked else [])]] + [
                [str(r["id"]), str(r["class"]), f"{r['AP A']:.2f}", f"{r['AP B']:.2f}", f"{r['difference']:+.2f}",
                 *([r["missing"]] if marked else [])]
                for r in rows.to_dict("records")]
            widths = [max(len(c[j]) for c in cells) for j in range(len(cells[0]))]
            lines.append("the query where A and B disagree most (AP in points):" if len(rows) == 1 else
                         f"the {len(rows)} queries where A and B disagree most (AP in points):")
            lines += ["  " + "  ".join(v.ljust(w) if j < 2 or j == 5 else v.rjust(w)
                                       for j, (v, w) in enumerate(zip(c, widths))).rstrip() for c in cells]
        return "\n".join(lines)


def _query_groups(protocol: Protocol) -> dict:
    """id -> the name of the one task the clip is a query of."""
    ids = protocol.ids().tolist()
    out = {}
    for task in protocol.tasks():
        for q in task.queries.tolist():
            if ids[q] in out and out[ids[q]] != task.name:
                raise ValueError(f"clip {ids[q]!r} is a query of two tasks of {protocol.name!r}; "
                                 "a paired comparison needs one query per clip")
            out[ids[q]] = task.name
    return out


def compare(protocol: str, items_a, items_b, *, name_a: str = "A", name_b: str = "B", aggregate: str = "max",
            ties: str = "expected", bootstrap: int = 1000, seed: int = 0, allow_missing: bool = False) -> Comparison:
    """Score ``items_a`` and ``items_b`` (``ItemVectors``) under ``protocol`` and compare them query by query.

    Evaluation errors (``evaluate.CoverageError``) propagate. Clips an input
    lacks count as failures (``evaluation.evaluate``), so both are scored on
    every query; with ``allow_missing`` they are left out, and both must
    still leave the same queries (else ``ValueError`` says how many differ
    and that the default rule scores both on every query). ``bootstrap = 0``
    gives no interval.
    """
    import pandas as pd

    check_bootstrap(bootstrap)
    kwargs = dict(aggregate=aggregate, ties=ties, allow_missing=allow_missing)
    result_a, result_b = evaluate(protocol, items_a, **kwargs), evaluate(protocol, items_b, **kwargs)
    if allow_missing and set(result_a.per_query) != set(result_b.per_query):
        only_a, only_b = set(result_a.per_query) - set(result_b.per_query), set(result_b.per_query) - set(result_a.per_query)
        raise ValueError(f"with --allow-missing the two inputs leave different queries ({len(only_a)} only in "
                         f"{name_a}, {len(only_b)} only in {name_b}); without --allow-missing both are scored on "
                         "every query, each missing clip counted as a failure")
    protocol = get_protocol(result_a.protocol)
    groups = _query_groups(protocol)
    clips = {c.index: c for c in protocol.clips()}
    ids = [i for i in protocol.ids().tolist() if i in result_a.per_query]
    a = np.array([result_a.per_query[i] for i in ids])
    b = np.array([result_b.per_query[i] for i in ids])
    diff = a - b
    lacks = set(result_a.missing), set(result_b.missing)
    frame = pd.DataFrame({"id": ids, "class": [protocol.query_class(clips[i]) for i in ids],
                          "AP A": 100 * a, "AP B": 100 * b, "difference": 100 * diff,
                          "missing": [", ".join(s for s, lack in zip("AB", lacks) if i in lack) for i in ids]})
    frame = frame.iloc[np.argsort(-np.abs(diff), kind="stable")].reset_index(drop=True)
    g = np.array([groups[i] for i in ids]) if protocol.metric == "Pair-mAP" else None
    if g is None:
        difference = 100 * float(diff.mean())
    else:
        difference = 100 * float(np.mean([diff[g == name].mean() for name in np.unique(g)]))
    ci = None
    if bootstrap:
        low, high = metrics.paired_bootstrap_ci(a, b, np.random.default_rng(seed), groups=g, n_resamples=bootstrap)
        ci = (100 * low, 100 * high)
    per_class = frame.groupby("class", sort=True)["difference"].mean().to_dict()
    return Comparison(protocol=protocol.name, metric=protocol.metric, name_a=name_a, name_b=name_b,
                      value_a=result_a.value, value_b=result_b.value, difference=difference, ci=ci,
                      n_queries=len(ids), bootstrap=bootstrap, seed=seed, ties=result_a.ties,
                      aggregate=result_a.aggregate, per_query=frame, per_class=per_class,
                      missing_rule="left out" if allow_missing else "failures",
                      n_missing=(result_a.n_missing, result_b.n_missing))


def load_items(path, encoder, *, sentences: bool = True):
    """The ``ItemVectors`` of one input: ``.npz`` vectors as they are, or descriptions embedded.

    Descriptions (JSON Lines, the authors' JSON or a describe cache folder)
    are embedded by ``encoder()`` (a callable that makes the sentence encoder,
    called only here), one vector per sentence, or (``sentences=False``) one
    per description, as ``sova sovabench evaluate --no-split``. A path that
    does not exist raises ``FileNotFoundError`` naming it.
    """
    path = str(path)
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.endswith(".npz"):
        return read_embeddings(path)
    return embed_descriptions(read_descriptions(path), encoder(), sentences=sentences)


def compare_files(protocol: str, path_a, path_b, encoder, *, sentences: bool = True, **kwargs) -> Comparison:
    """Read two inputs (``load_items``), score both under ``protocol`` and compare them (``compare``).

    ``encoder`` makes the sentence encoder, once, when an input is descriptions. ``sentences`` applies to the
    description inputs; the comparison's ``text_split`` records it and its ``encoder`` the encoder's name (both
    ``None`` when both inputs are vectors), its ``sides`` the two inputs (``side``). ``kwargs`` go to
    ``compare``.
    """
    made = cache(encoder)  # one encoder for both inputs
    result = compare(protocol, load_items(path_a, made, sentences=sentences),
                     load_items(path_b, made, sentences=sentences), **kwargs)
    result.sides = (side(path_a), side(path_b))
    vectors = str(path_a).endswith(".npz") and str(path_b).endswith(".npz")
    result.text_split = None if vectors else "sentences" if sentences else "whole text"
    result.encoder = None if vectors else made().name
    return result
