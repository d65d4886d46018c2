"""Contrastive frame embeddings: what describing is for an MLLM, embedding frames is for a contrastive model.

A contrastive model (CLIP, SigLIP, X-CLIP, ... through transformers'
``AutoModel``) turns the frames that the paper's sampler picks from a clip,
or a single image, into vectors (``model``; its options are ``ContrastiveOptions``); ``runner.embed_items``
writes them, pooled per clip or kept per frame, to a resumable cache (``store``),
and ``store.export`` writes the ``.npz`` that ``sova <benchmark> evaluate --embeddings``
scores. ``ray_engine.embed_items_ray`` does the same on a pool of Ray actors.
"""
from __future__ import annotations

from sova_lib.describe.contrastive.model import ContrastiveModel, ContrastiveOptions, ModelLoadError
from sova_lib.describe.contrastive.runner import embed_items
from sova_lib.describe.contrastive.store import (
           POOLS,
           EmbeddingCache,
           embedding_folder,
           embedding_key,
           export,
           read_cache,
)

__all__ = ["POOLS", "ContrastiveModel", "ContrastiveOptions", "EmbeddingCache", "ModelLoadError", "embed_items",
           "embedding_folder", "embedding_key", "export", "read_cache"]
