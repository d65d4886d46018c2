"""Benchmark: contrastive frame embedding and set scoring of per-frame vectors.

1. Frames embedded per second by a tiny random CLIP (the test fixture of
   ``tests/tiny_contrastive.py``: 16-d towers, 32x32 input) on the CPU,
   in batches of 32 frames against one frame per call. The model is tiny, so
   this measures the per-call overhead that batching removes (processor and
   forward-pass set-up), not the speed of a real CLIP.
2. The cost of scoring ``--pool none`` vectors as sets: the 1,423 queries of
   the inter-pair protocol against its 9,882 clips, every clip 10 frame
   vectors of 768 dimensions (CLIP ViT-L/14's width), random unit vectors.
   ``set_similarity(aggregate="max")`` against the floor, one plain matrix
   product of the same shape (all query frame vectors times all gallery
   frame vectors), and against the same scoring of mean-pooled vectors (one
   per clip).

Run: ``.venv/bin/python bench/bench_embed.py`` (a few minutes on 2 cores; ``--quick``: small sizes, to check that it
runs).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sova_lib.similarity import ItemVectors, l2_normalize, set_similarity

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tiny model of the tests

FRAMES = 256
CLIPS, QUERIES, PER_CLIP, DIM = 9882, 1423, 10, 768


def frames_per_second(model, images, batch_size: int) -> float:
    model.batch_frames = batch_size
    model.image_features(images[:batch_size])  # warm-up
    start = time.perf_counter()
    if batch_size == 1:
        for image in images:
            model.image_features([image])
    else:
        model.image_features(images)
    return len(images) / (time.perf_counter() - start)


def embedding_speed(frames: int = FRAMES) -> None:
    from PIL import Image

    from sova_lib.describe.contrastive import ContrastiveModel
    from tests.tiny_contrastive import build_tiny_clip

    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)) for _ in range(frames)]
    with tempfile.TemporaryDirectory() as tmp:
        model = ContrastiveModel(model=str(build_tiny_clip(Path(tmp) / "clip")), device="cpu")
        batched = frames_per_second(model, images, 32)
        single = frames_per_second(model, images, 1)
    print(f"tiny random CLIP on CPU, {frames} frames of 160x120: batched (32) {batched:.0f} frames/s, "
          f"one at a time {single:.0f} frames/s, x{batched / single:.1f}")


def items(n, per, rng) -> ItemVectors:
    owner = np.repeat(np.arange(n), per)
    return ItemVectors(np.arange(n), owner, l2_normalize(rng.standard_normal((owner.size, DIM), dtype=np.float32)))


def best_of(fn, repeat=1) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def scoring_cost(clips: int = CLIPS, queries: int = QUERIES) -> None:
    CLIPS, QUERIES = clips, queries  # noqa: N806 - the module's sizes, or the smaller ones given
    rng = np.random.default_rng(0)
    gallery = items(CLIPS, PER_CLIP, rng)
    queries = gallery.select(np.arange(QUERIES))
    sets = best_of(lambda: set_similarity(queries, gallery, aggregate="max"))

    def floor():
        gv = np.asarray(gallery.vectors)
        qv = np.asarray(queries.vectors)
        for i in range(0, qv.shape[0], 256):  # the block size set_similarity uses
            qv[i:i + 256] @ gv.T

    product = best_of(floor)
    pooled_g = ItemVectors(np.arange(CLIPS), np.arange(CLIPS),
                           l2_normalize(np.asarray(gallery.vectors).reshape(CLIPS, PER_CLIP, DIM).mean(axis=1)))
    pooled = best_of(lambda: set_similarity(pooled_g.select(np.arange(QUERIES)), pooled_g, aggregate="max"))
    print(f"set scoring, {QUERIES} x {CLIPS} clips, {PER_CLIP} frames of {DIM}-d each: set_similarity(max) "
          f"{sets:.2f} s; matrix-product floor {product:.2f} s (x{sets / product:.2f}); "
          f"mean-pooled (1 vector per clip) {pooled:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="64 frames, 300 clips: checks that it runs")
    quick = parser.parse_args().quick
    embedding_speed(64 if quick else FRAMES)
    scoring_cost(*((300, 50) if quick else (CLIPS, QUERIES)))
