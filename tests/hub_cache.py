"""A Hugging Face hub cache written by a test: one model, ``org/tiny``, at two commits, for revision look-ups."""
from __future__ import annotations

from pathlib import Path

#: The commits of ``org/tiny``'s ``main`` and ``v1`` refs.
MAIN, V1 = "a" * 40, "b" * 40


def write_hub_cache(hub: Path) -> Path:
    """``hub/models--org--tiny`` with refs ``main`` -> ``MAIN`` and ``v1`` -> ``V1``, each snapshot holding a
    ``config.json``; returns that model folder."""
    repo = hub / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(MAIN)
    (repo / "refs" / "v1").write_text(V1)
    for commit in (MAIN, V1):
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / "config.json").write_text("{}")
    return repo
