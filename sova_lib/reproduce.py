"""``sova reproduce``: regenerate what the repository can regenerate.

Step 1 writes the built-in baselines of every protocol as
``figures/baselines.csv`` and ``figures/baselines.md``.
"""
from __future__ import annotations

import time
from pathlib import Path

__all__ = ["add_commands", "baseline_table", "write_table"]


def baseline_table(*, encoder=None, bootstrap: int = 1000, seed: int = 0):
    """A DataFrame with one row per (protocol, baseline): value and 95% interval in percent."""
    import pandas as pd

    from .evaluate import BASELINES, baseline
    from .protocols import PROTOCOLS

    rows = []
    for protocol in PROTOCOLS:
        for name in BASELINES:
            if name == "oracle" and encoder is None:
                continue
            r = baseline(protocol, name, encoder=encoder, bootstrap=bootstrap, seed=seed)
            rows.append({"protocol": protocol, "baseline": name, "metric": r.metric, "value": round(r.value, 2),
                         "ci_low": round(r.ci[0], 2), "ci_high": round(r.ci[1], 2), "n_queries": r.n_queries})
    return pd.DataFrame(rows)


def write_table(frame, stem: str | Path) -> list[Path]:
    """Write ``frame`` as ``<stem>.csv`` and ``<stem>.md``; returns both paths."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, md = stem.with_suffix(".csv"), stem.with_suffix(".md")
    frame.to_csv(csv, index=False)
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    md.write_text("\n".join([header, rule, *lines]) + "\n")
    return [csv, md]


def run_reproduce(args) -> int:
    from .embed import SentenceEncoder, default_cache_dir

    start = time.time()
    out = Path(args.figures)
    encoder = SentenceEncoder(cache_dir=args.cache_dir or default_cache_dir(), show_progress=False)
    paths = write_table(baseline_table(encoder=encoder, bootstrap=args.bootstrap), out / "baselines")
    for p in paths:
        print(f"wrote {p}")
    print(f"done in {time.time() - start:.0f} s; outputs under {out}/")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("reproduce", help="regenerate every table and figure the repository can make")
    p.add_argument("--figures", default="figures", help="output folder (default: figures)")
    p.add_argument("--cache-dir", default=None, help="cache root (default: $SOVA_CACHE or ./cache)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for intervals")
    p.set_defaults(func=run_reproduce)
