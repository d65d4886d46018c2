"""Throughput of the classical motion describer on the packaged vtest.avi excerpts.

Frame loading (the paper's sampler with each video backend) and describing are
timed separately, over ``--repeats`` passes of the three excerpts, and printed
as items (clips) per second.

    python bench/bench_motion.py [--rates 1 3] [--repeats 5]  (--quick: one pass at 1 fps, to check that it runs)
"""
from __future__ import annotations

import argparse
import time

from sova_lib.describe.backends.motion import MotionDescriber
from sova_lib.describe.contract import DescribeRequest
from sova_lib.video.frames import example_videos, sample_frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--rates", type=float, nargs="+", default=[1.0, 3.0], help="sampling rates (frames/s)")
    parser.add_argument("--repeats", type=int, default=5, help="passes over the excerpts")
    parser.add_argument("--quick", action="store_true", help="one pass at 1 fps: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.rates, args.repeats = [1.0], 1
    paths = example_videos()
    describer = MotionDescriber()
    print(f"{len(paths)} excerpts ({', '.join(p.name for p in paths)}), {args.repeats} passes")
    for rate in args.rates:
        load = {}
        for backend in ("decord", "pyav"):
            start = time.perf_counter()
            for _ in range(args.repeats):
                frames = [sample_frames(p, rate=rate, backend=backend) for p in paths]
            load[backend] = args.repeats * len(paths) / (time.perf_counter() - start)
        requests = [DescribeRequest(id=p.stem, frames=f.images, prompt="", timestamps=tuple(f.timestamps))
                    for p, f in zip(paths, frames)]
        start = time.perf_counter()
        for _ in range(args.repeats):
            for r in requests:
                describer.describe([r])
        describe = args.repeats * len(paths) / (time.perf_counter() - start)
        n = sum(len(f) for f in frames)
        both = 1 / (1 / load["decord"] + 1 / describe)
        print(f"rate {rate:g} fps ({n} frames over {len(paths)} clips): "
              f"load decord {load['decord']:.1f} items/s, load pyav {load['pyav']:.1f} items/s "
              f"(decord/pyav {load['decord'] / load['pyav']:.2f}x); describe {describe:.1f} items/s; "
              f"load (decord) + describe {both:.1f} items/s")


if __name__ == "__main__":
    main()
