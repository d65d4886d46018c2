"""Benchmark: a partition-sized MUVR-Base evaluation against its floor and an official-style loop.

SYNTHETIC data shaped like MUVR's largest setting (MUVR paper, Table 6, all
1,050 queries against a partition-sized gallery): 1,050 queries x 14,000
gallery videos x 15 frames x 768 dimensions (float32), random unit frame
vectors, one description vector per query, 80 random positives per query.
Prints, measured in one run:

1. the whole text+video evaluation (``retrieval.evaluate_partition``: S_t,
   S_v in blocks, fusion, expected-tie AP, R@k, uAP);
2. the floor: the plain matrix products of the same shape (every query
   vector, 15 frames + 1 description per query, times every gallery frame
   vector), in blocks, results discarded: what any exact method pays;
3. a per-query Python loop in the official style (a max over each query-video
   pair's frame products, ``np.argsort(s)[::-1]``, AP) on a subset of
   queries, timed and extrapolated to all queries, and the largest AP
   difference from our ``"gallery-order"``-tie result on that subset (< 1e-6).

Target: within 2x of the floor.
Run: ``.venv/bin/python bench/bench_muvr.py [--dims 768 --gallery 14000 ...]`` (``--quick``: 20 queries x 200 videos,
to check that it runs).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from sova_lib.benchmarks.muvr.annotations import MuvrQuery, Partition
from sova_lib.benchmarks.muvr.fusion import QueryVectors
from sova_lib.benchmarks.muvr.retrieval import evaluate_partition
from sova_lib.similarity import ItemVectors, l2_normalize


def unit_rows(rng, n, dim):
    return l2_normalize(rng.standard_normal((n, dim), dtype=np.float32))


def synthetic(rng, queries, gallery, frames, dim, positives):
    ids = np.array([f"g{i}" for i in range(gallery)])
    gallery_items = ItemVectors(ids, np.repeat(np.arange(gallery), frames), unit_rows(rng, gallery * frames, dim))
    qids = np.array([f"q{i}" for i in range(queries)])
    query_frames = ItemVectors(qids, np.repeat(np.arange(queries), frames), unit_rows(rng, queries * frames, dim))
    text = ItemVectors(qids, np.arange(queries), unit_rows(rng, queries, dim))
    rows = tuple(MuvrQuery(q, "", None, tuple(ids[rng.choice(gallery, positives, replace=False)])) for q in qids)
    partition = Partition("synthetic", tuple(ids), rows, (), {})
    return partition, gallery_items, QueryVectors(query_frames, text, {})


def floor(gallery: ItemVectors, queries: QueryVectors, block: int = 256) -> float:
    """Seconds of the blocked products query vectors x gallery vectors (what set_similarity's blocks do)."""
    vectors = np.concatenate([queries.frames.vectors, queries.text.vectors])
    g = np.ascontiguousarray(gallery.vectors)
    start = time.perf_counter()
    for i in range(0, vectors.shape[0], block):
        vectors[i:i + block] @ g.T
    return time.perf_counter() - start


def official_loop(partition, gallery, queries, n_queries):
    """Per query, per gallery video: max of the frame products; fuse; a stable descending sort (ties in gallery order); AP."""
    frames = [gallery.vectors[gallery.owner == k] for k in range(len(gallery.ids))]
    out = []
    for qi in range(n_queries):
        qf = queries.frames.vectors[queries.frames.owner == qi]
        qt = queries.text.vectors[qi]
        scores = np.array([(float(np.max(qf @ f.T)) + float(np.max(f @ qt))) / 2 for f in frames])
        relevant = np.isin(np.asarray(gallery.ids), partition.queries[qi].positives)
        ranked = relevant[np.argsort(-scores, kind="stable")]
        hits = np.cumsum(ranked)
        out.append(float((hits[ranked] / (np.flatnonzero(ranked) + 1)).sum() / relevant.sum()))
    return np.array(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--queries", type=int, default=1050)
    parser.add_argument("--gallery", type=int, default=14000)
    parser.add_argument("--frames", type=int, default=15)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--positives", type=int, default=80)
    parser.add_argument("--subset", type=int, default=8, help="queries of the official-style loop")
    parser.add_argument("--quick", action="store_true", help="20 queries x 200 videos: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.queries, args.gallery, args.frames, args.dims, args.positives, args.subset = 20, 200, 3, 32, 5, 2
    rng = np.random.default_rng(0)
    partition, gallery, queries = synthetic(rng, args.queries, args.gallery, args.frames, args.dims, args.positives)
    print(f"SYNTHETIC MUVR-Base partition: {args.queries} queries x {args.gallery} videos x {args.frames} frames "
          f"x {args.dims} dims (float32)")
    start = time.perf_counter()
    ours = evaluate_partition(partition, gallery, queries, query="text+video", ties="expected")
    t_ours = time.perf_counter() - start
    with threadpool_limits(limits=None):
        t_floor = floor(gallery, queries)
    print(f"  whole evaluation (S_t, S_v, fusion, AP, R@k, uAP): {t_ours:8.2f} s   mAP {100 * ours.ap.mean():.3f}"
          f"  uAP {100 * ours.uap:.3f}")
    print(f"  floor (plain blocked matrix products, same shape):  {t_floor:8.2f} s   ratio {t_ours / t_floor:.2f}x"
          " (target <= 2x)")
    sub = Partition("subset", partition.gallery, partition.queries[:args.subset], (), {})
    official = evaluate_partition(sub, gallery, queries, query="text+video", ties="gallery-order", uap=False)
    start = time.perf_counter()
    naive = official_loop(partition, gallery, queries, args.subset)
    t_naive = time.perf_counter() - start
    per_query = t_naive / args.subset
    print(f"  official-style Python loop, {args.subset} queries: {t_naive:8.2f} s   ({per_query:.2f} s per query; "
          f"~{per_query * args.queries / 60:.0f} min for all {args.queries}: {per_query * args.queries / t_ours:.0f}x "
          "our whole evaluation)")
    print(f"  largest AP difference, loop vs ours (gallery-order ties): {np.abs(naive - official.ap).max():.2e}")


if __name__ == "__main__":
    main()
