"""Counts in words, for notes and summaries: "1 query has", "2 queries have", never "1 quer(ies)"."""
from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, singular: str, plural: str) -> str:
    """``n`` and the words that agree with it: ``counted(1, "query has", "queries have")`` is ``"1 query has"``,
    ``counted(0, ...)`` and ``counted(2, ...)`` take ``plural``."""
    return f"{n} {singular if n == 1 else plural}"
