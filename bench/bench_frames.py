"""Frame loading against the decoder's own cost: ``load_item`` beside a plain decord open and read.

For each packaged example excerpt, the frames the paper's sampler takes at ``--fps`` are loaded two ways, in
alternating rounds (the best round of each is kept, so that load from other processes hits both alike):

1. ``sova_lib.describe.item.load_item``, as the runner's loader threads call it (open, plan, decode, check,
   convert to PIL images);
2. a bare client: ``decord.VideoReader(path)``, ``get_batch`` of the same frame numbers, and the same conversion
   to PIL images.

Both must give the same bytes. Prints items/s of each and their ratio (target: ``load_item`` within 1.05x).

Run: ``python bench/bench_frames.py [--fps 1] [--rounds 7] [--repeats 10]`` (``--quick``: one short round)
"""
from __future__ import annotations

import argparse
import os
import time

from PIL import Image

from sova_lib.describe.item import Item, load_item
from sova_lib.video.decode import _import_decord
from sova_lib.video.frames import example_videos, sample_frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--fps", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (the best of each is kept)")
    parser.add_argument("--repeats", type=int, default=10, help="passes over the excerpts per round")
    parser.add_argument("--quick", action="store_true", help="one round of one pass: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.repeats = 1, 1
    decord = _import_decord()
    paths = example_videos()
    items = [Item(p.stem, p) for p in paths]
    wanted = {p: sample_frames(p, args.fps).source_indices.tolist() for p in paths}

    def ours():
        return [load_item(item, args.fps)[0] for item in items]

    def bare():
        out = []
        for path in paths:
            reader = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=1)
            out.append([Image.fromarray(a) for a in reader.get_batch(wanted[path]).asnumpy()])
        return out

    same = all(a.tobytes() == b.tobytes() for x, y in zip(ours(), bare()) for a, b in zip(x, y))
    best = {"load_item": float("inf"), "bare decord": float("inf")}
    for _ in range(args.rounds):
        for name, load in (("load_item", ours), ("bare decord", bare)):
            start = time.perf_counter()
            for _ in range(args.repeats):
                load()
            best[name] = min(best[name], time.perf_counter() - start)
    n = args.repeats * len(paths)
    frames = sum(len(w) for w in wanted.values())
    print(f"{len(paths)} excerpts at {args.fps:g} fps ({frames} frames), {args.repeats} passes, best of "
          f"{args.rounds} alternating rounds, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, seconds in best.items():
        print(f"  {name:<12} {n / seconds:7.1f} items/s")
    print(f"  load_item / bare decord: {best['load_item'] / best['bare decord']:.3f}x the time (target <= 1.05x); "
          f"same frames: {same}")


if __name__ == "__main__":
    main()
