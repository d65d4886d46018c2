"""Counts in words, for notes and summaries: "1 query has", "2 queries have", never "1 quer(ies)"; failures
counted by kind, with the first ids of each."""
from __future__ import annotations

__all__ = ["counted", "kinds_line"]


def counted(n: int, singular: str, plural: str) -> str:
    """``n`` and the words that agree with it: ``counted(1, "query has", "queries have")`` is ``"1 query has"``,
    ``counted(0, ...)`` and ``counted(2, ...)`` take ``plural``."""
    return f"{n} {singular if n == 1 else plural}"


def kinds_line(by_kind: dict, examples: int = 3) -> str:
    """Failures counted by kind, in the order of ``by_kind`` (kind -> the ids that failed so), each with its first
    ``examples`` ids: ``kinds_line({"decode": [4, 7, 9, 12], "refused": [5]})`` is
    ``"4 decode (4, 7, 9, ...); 1 refused (5)"``. Summaries print it after ``"failed by kind: "``."""
    return "; ".join(f"{len(ids)} {kind} ({', '.join(map(str, ids[:examples]))}"
                     f"{', ...' if len(ids) > examples else ''})" for kind, ids in by_kind.items())
