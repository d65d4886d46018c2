"""The contrastive rows of Table 4 and Table C.1, from frame-embedding caches (``sova embed``).

``find_embedding_caches(cache_dir)`` reads every folder below
``<cache_dir>/frame-embeddings/`` (``sova_lib.describe.contrastive.store``)
with its manifest and the ids it holds. ``embedding_rows`` scores each cache
on every SOVABench protocol of which it holds clips, the clips it lacks
counted as failures (their number and the score without them beside it), and
labels the row by the model id and pooling.
``cache_scan.paper_model(model_id, CONTRASTIVE_IDS)`` names the paper row a
model id reproduces; ``paper.results.rows_beside`` puts such a row
beside the paper's number.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sova_lib.describe.contrastive import read_cache
from sova_lib.evaluation import evaluate
from sova_lib.protocols import get_protocol
from sova_lib.records import make_record
from sova_lib.report.cache_scan import paper_model
from sova_lib.similarity import ItemVectors, l2_normalize

__all__ = ["CONTRASTIVE_IDS", "FoundEmbeddings", "embedding_rows", "find_embedding_caches"]

#: Paper row (Table 4 / C.1) -> public checkpoints that load through transformers' AutoModel as that model.
CONTRASTIVE_IDS: dict[str, tuple[str, ...]] = {
    "CLIP-ViT-L-14": ("openai/clip-vit-large-patch14",),
    "SigLIP2-Giant": ("google/siglip2-giant-opt-patch16-384",),
}


@dataclass
class FoundEmbeddings:
    """One frame-embedding cache folder: its manifest and vectors (id -> (vectors, frames))."""

    path: Path
    manifest: dict
    vectors: dict

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def model(self) -> str:
        return str(self.manifest.get("model"))

    @property
    def label(self) -> str:
        paper = paper_model(self.model, CONTRASTIVE_IDS)
        shown = f"{paper} [{self.model}]" if paper else self.model
        return f"{shown} (contrastive, {self.manifest.get('pool')} pooling, {self.manifest.get('fps'):g} fps)"

    def items(self, ids) -> ItemVectors:
        """The vectors of ``ids`` (all present), unit rows, one item per id."""
        parts = [self.vectors[i][0] for i in ids]
        owner = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
        return ItemVectors(np.asarray(list(ids)), owner, l2_normalize(np.concatenate(parts)))


def find_embedding_caches(cache_dir: str | Path) -> list[FoundEmbeddings]:
    """Every folder below ``<cache_dir>/frame-embeddings`` that holds a manifest, sorted by path."""
    root = Path(cache_dir) / "frame-embeddings"
    found = []
    for manifest in sorted(root.glob("*/manifest.json")) if root.is_dir() else []:
        try:
            data = json.loads(manifest.read_text())
        except json.JSONDecodeError as err:
            raise ValueError(f"{manifest}: not valid JSON ({err.msg})") from None
        found.append(FoundEmbeddings(manifest.parent, data, read_cache(manifest.parent)))
    return found


def embedding_rows(caches, protocols, *, ties: str = "expected", bootstrap: int = 1000, seed: int = 0) -> list[dict]:
    """One record (``sova_lib.records.make_record``, kind ``embeddings``) per cache and protocol.

    The clips of a protocol the cache lacks count as failures
    (``evaluation.evaluate``; the record's ``n_missing`` and
    ``value_without_missing`` say how many and what the score is without
    them). A protocol of which the cache holds no clip gives a record without
    a value and with a note.
    """
    rows = []
    for cache in caches:
        common = {"kind": "embeddings", "source": cache.label, "cache": cache.name, "model": cache.model,
                  "config_hash": cache.manifest.get("config_hash"), "fps": cache.manifest.get("fps"),
                  "fingerprint": cache.manifest.get("fingerprint"), "frames": cache.manifest.get("frames"),
                  "versions": cache.manifest.get("versions"),
                  "benchmark": "sovabench", "aggregate": "max", "ties": ties, "bootstrap": bootstrap, "seed": seed,
                  "text_split": f"{cache.manifest.get('pool')} pooling"}
        for name in protocols:
            wanted = get_protocol(name).ids().tolist()
            held = [i for i in wanted if i in cache.vectors]
            if not held:
                rows.append(make_record(protocol=name, n_missing=len(wanted),
                                        note=f"none of the {len(wanted)} clips: not scored", **common))
                continue
            r = evaluate(name, cache.items(held), ties=ties, bootstrap=bootstrap, seed=seed)
            rows.append(r.to_record(**common))
    return rows
