"""Writing tables: one CSV for machines and one Markdown view for readers, side by side."""
from __future__ import annotations

from pathlib import Path

__all__ = ["markdown_table", "write_table"]


def markdown_table(frame) -> str:
    """``frame`` as a Markdown table (no index)."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *lines]) + "\n"


def write_table(frame, stem: str | Path, *, readable=None) -> list[Path]:
    """Write ``frame`` as ``<stem>.csv`` and, as Markdown, ``readable`` (default ``frame``) as ``<stem>.md``."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, md = stem.with_suffix(".csv"), stem.with_suffix(".md")
    frame.to_csv(csv, index=False)
    md.write_text(markdown_table(frame if readable is None else readable))
    return [csv, md]
