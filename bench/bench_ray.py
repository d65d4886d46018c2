"""Items/s of the Ray engine against the local engine, and of the openai backend over one and two servers.

1. The motion describer (a CPU describer, not an MLLM) over the three
   bundled excerpts repeated to ``--items`` items at 1 fps: the local engine,
   then Ray with 1 and 2 actors (one CPU each) on a local Ray instance of
   ``--num-cpus`` CPUs. Ray's start-up (``ray.init``) and the first batch's
   wait (actors starting, the describer built in each) are printed apart from
   the steady rate.
2. The openai backend through the local engine against local chat-completions
   servers that answer every request after ``--latency`` s: one server, then
   two, at ``--concurrency`` requests in flight per server. Frames are decoded
   once, so the numbers measure the backend and the runner.

Run: ``python bench/bench_ray.py [--items 102] [--num-cpus 2]`` (``--quick``: a few items, to check that it runs)
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_openai import start_server  # noqa: E402  (the same local server, answering after a fixed latency)

from sova_lib.describe.backends.openai import OpenAIDescriber  # noqa: E402
from sova_lib.describe.contract import make_describer  # noqa: E402
from sova_lib.describe.item import Item  # noqa: E402
from sova_lib.describe.ray_engine import describe_items_ray  # noqa: E402
from sova_lib.describe.ray_options import RayOptions  # noqa: E402
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items
from sova_lib.video.frames import example_videos, sample_frames  # noqa: E402
from tests.ray_support import local_ray  # noqa: E402  (Ray started as the tests start it)

QUIET = RunOptions(show_progress=False, verbose=False)


def motion_items(n: int) -> list[Item]:
    paths = example_videos()
    return [Item(f"{paths[i % len(paths)].stem}-{i}", paths[i % len(paths)]) for i in range(n)]


def bench_motion(args) -> None:
    items = motion_items(args.items)
    # Ray's processes skip the slow import explained in tests/ray_lean/ (as the tests' do).
    root = Path(__file__).resolve().parents[1]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root / "tests" / "ray_lean"), str(root),
                                                           os.environ.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        s = describe_items(make_describer("motion"), items, Path(tmp) / "local", prompt="Describe.",
                           run=QUIET)
        local = time.perf_counter() - start
        assert s.done == len(items), s
        print(f"motion, local engine: {len(items)} items in {local:.1f} s = {len(items) / local:.2f} items/s")
        with local_ray(num_cpus=args.num_cpus, nice=-10 if os.geteuid() == 0 else None) as session:
            print(f"Ray start-up (ray.init, local instance of {args.num_cpus} CPUs): {session.start_seconds:.1f} s")
            for workers in (1, 2):
                start = time.perf_counter()
                s = describe_items_ray("motion", {}, items, Path(tmp) / f"ray{workers}", prompt="Describe.",
                                       ray=RayOptions(workers=workers, items_per_call=args.items_per_call), run=QUIET)
                seconds = time.perf_counter() - start
                assert s.done == len(items), s
                print(f"motion, Ray, {workers} worker(s), {args.items_per_call} items per call: {len(items)} items in "
                      f"{seconds:.1f} s = {len(items) / seconds:.2f} items/s (Ray already running; includes "
                      f"starting the actors)")


def bench_openai(args) -> None:
    frames = sample_frames(next(p for p in example_videos() if "square" in p.name), rate=1.0)
    loaded = (list(frames.images), tuple(frames.timestamps), True)
    servers = [start_server(args.latency) for _ in range(2)]
    urls = [f"http://127.0.0.1:{s.server_address[1]}/v1" for s in servers]
    items = [Item(i, Path(f"item{i}.mp4")) for i in range(args.requests)]
    try:
        rates = {}
        for n in (1, 2):
            describer = OpenAIDescriber(model="bench/vlm", base_url=urls[:n], concurrency=args.concurrency)
            with tempfile.TemporaryDirectory() as cache:
                start = time.perf_counter()
                s = describe_items(describer, items, cache, prompt="Describe.",
                                   engine=LocalEngine(lambda item, fps: loaded), run=QUIET)
                seconds = time.perf_counter() - start
            assert s.done == len(items), s
            rates[n] = len(items) / seconds
            print(f"openai, {n} server(s) x concurrency {args.concurrency}, {args.latency * 1000:.0f} ms per answer: "
                  f"{len(items)} items in {seconds:.2f} s = {rates[n]:.1f} items/s")
        print(f"two servers / one: {rates[2] / rates[1]:.2f}x (ideal 2x)")
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--items", type=int, default=102, help="motion items (the 3 excerpts repeated)")
    parser.add_argument("--items-per-call", type=int, default=4, help="items per Ray actor call")
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--requests", type=int, default=64, help="openai items")
    parser.add_argument("--latency", type=float, default=0.2, help="server answer time in seconds")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per server")
    parser.add_argument("--quick", action="store_true", help="a few items, 20 ms answers: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.items, args.requests, args.latency = 6, 8, 0.02
    bench_openai(args)
    bench_motion(args)


if __name__ == "__main__":
    main()
