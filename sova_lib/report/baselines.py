"""The built-in baselines of SOVABench's protocols as records.

``baseline_rows`` scores ``prevalence`` (the paper's Random row),
``random-ranking`` and ``oracle`` (``sova_lib.evaluation.baseline``) on each
protocol and names each row for what it is. ``sova reproduce`` writes them
first, as ``figures/baselines.csv`` and ``.md``; the results notebook puts
them beside the paper's rows.
"""
from __future__ import annotations

from sova_lib.evaluation import BASELINES, baseline

__all__ = ["BENCHMARK", "baseline_rows"]

#: The benchmark these rows are about (the ``benchmark`` field of their records).
BENCHMARK = "SOVABench"


def baseline_rows(protocols, *, encoder=None, bootstrap: int = 1000, seed: int = 0,
                  ties: str = "expected") -> list[dict]:
    """Rows of the built-in baselines on ``protocols`` (``oracle`` only when an encoder is given), protocol by
    protocol. ``ties`` is the oracle's tie rule (the other baselines rank nothing)."""

    names = {"prevalence": "prevalence (the paper's Random: mean class prevalence)",
             "random-ranking": "random ranking (exact expected AP, query excluded)",
             "oracle": "oracle (each clip described by its class name; an upper bound)"}
    rows = []
    for p in protocols:
        for name in BASELINES:
            if name == "oracle" and encoder is None:
                continue
            r = baseline(p, name, encoder=encoder, bootstrap=bootstrap, seed=seed, ties=ties)
            rows.append(r.to_record(kind="baseline", source=names[name], benchmark=BENCHMARK, baseline=name,
                                    encoder=encoder.name if name == "oracle" else None, bootstrap=bootstrap,
                                    seed=seed))
    return rows
