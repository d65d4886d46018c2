"""Speed of clip planning and memory of the streaming KPF geometry reader.

1. Rows planned per second on the packaged MEVA annotation sample (the 127
   SOVABench rows of its 4 videos): cold (every geometry file parsed, index
   written) and warm (indexes read back from the on-disk cache); then all
   12,182 rows of both splits with the index warm (most have no annotations
   in the sample: this measures the per-row cost).
2. Geometry files of growing size (generated, MEVA-style lines): seconds,
   MB/s and the peak memory (resident set size, measured in a fresh process
   per file) while building the index. The peak should stay flat as the
   file grows.

Run: python bench/bench_clips.py  (about half a minute on 2 cores; --quick: files of 0.2 and 0.4 MB, to check that
it runs)
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.sovabench.clips import kpf, kpf_index
from sova_lib.benchmarks.sovabench.clips import plan as clips
from sova_lib.benchmarks.sovabench.splits import DATA_DIR, load_split

SAMPLE = DATA_DIR / "meva-annotations-sample"


def bench_planning(tmp: Path) -> None:
    rows = [*load_split("interpair"), *load_split("intrapair")]
    names = set(kpf.find_annotation_files(SAMPLE))
    sample = [r for r in rows if set(kpf.annotation_names(r.source_video)) & names]
    cache = tmp / "index"
    t = time.perf_counter()
    planned = clips.plan_clips(sample, SAMPLE, cache_dir=cache)
    cold = time.perf_counter() - t
    assert all(p.ok for p in planned)
    warm = []
    for _ in range(5):
        t = time.perf_counter()
        clips.plan_clips(sample, SAMPLE, cache_dir=cache)
        warm.append(time.perf_counter() - t)
    t = time.perf_counter()
    clips.plan_clips(rows, SAMPLE, cache_dir=cache)
    full = time.perf_counter() - t
    geom_mb = sum(f.geom.stat().st_size for f in kpf.find_annotation_files(SAMPLE).values()) / 1e6
    w = float(np.median(warm))
    print(f"planning, {len(sample)} sample rows over 4 videos ({geom_mb:.1f} MB of geometry):")
    print(f"  cold  {cold:6.3f} s  {len(sample) / cold:9.0f} rows/s")
    print(f"  warm  {w:6.3f} s  {len(sample) / w:9.0f} rows/s  (median of 5; {cold / w:.1f}x faster than cold)")
    print(f"  all {len(rows)} rows of both splits, warm: {full:.3f} s, {len(rows) / full:.0f} rows/s")


def write_geom(path: Path, target_mb: float, rng: np.random.Generator) -> int:
    """A MEVA-style geometry file of about ``target_mb`` MB: 100-frame tracks of 1,000 objects, cycling."""
    written = lines = 0
    frame0 = 0
    with open(path, "w") as f:
        while written < target_mb * 1e6:
            ids = rng.integers(1, 1001, size=50)
            x = rng.integers(0, 1700, size=50)
            y = rng.integers(0, 900, size=50)
            block = "".join(
                f"- {{'geom': {{'g0': '{x[k] + t} {y[k]} {x[k] + t + 120} {y[k] + 150}', 'id0': {lines + k * 100 + t}, "
                f"'id1': {ids[k]}, 'keyframe': False, 'ts0': {frame0 + t}}}}}\n"
                for k in range(50) for t in range(100))
            f.write(block)
            written += len(block)
            lines += 5000
            frame0 += 100
    return lines


def write_activities(path: Path, rng: np.random.Generator, n_frames: int) -> None:
    with open(path, "w") as f:
        for k in range(300):
            s = int(rng.integers(0, max(1, n_frames - 200)))
            actors = ", ".join(f"{{'id1': {int(o)}, 'timespan': [{{'tsr0': [{s}, {s + 150}]}}]}}"
                               for o in rng.choice(1000, size=2, replace=False) + 1)
            f.write(f"- {{'act': {{'act2': {{'vehicle_turns_left': 1.0}}, 'actors': [{actors}], 'id2': {k}, "
                    f"'timespan': [{{'tsr0': [{s}, {s + 150}]}}]}}}}\n")


def _child(folder: str) -> None:
    """Build the index of ``folder``'s video in this fresh process; print seconds and memory as JSON."""
    files = kpf.find_annotation_files(folder)["v"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    index = kpf_index.build_video_index(files)
    secs = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n_regions = sum(a.region is not None for a in index.activities)
    print(json.dumps({"seconds": secs, "rss_before_mb": before, "rss_peak_mb": after, "regions": n_regions}))


def bench_geometry(tmp: Path, sizes_mb) -> None:
    rng = np.random.default_rng(0)
    print("\nbuilding a video index from generated geometry files, each in a fresh process")
    print("(peak RSS above the process's RSS after imports):")
    print(f"  {'file MB':>8} {'lines':>10} {'seconds':>8} {'MB/s':>6} {'peak MB':>8}")
    peaks = []
    for mb in sizes_mb:
        d = tmp / f"g{mb:g}"
        d.mkdir()
        n = write_geom(d / "v.geom.yml", mb, rng)
        write_activities(d / "v.activities.yml", rng, n // 50)
        size = (d / "v.geom.yml").stat().st_size / 1e6
        out = subprocess.run([sys.executable, __file__, "--child", str(d)], check=True, capture_output=True,
                             text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        assert r["regions"] > 0
        peak = r["rss_peak_mb"] - r["rss_before_mb"]
        peaks.append(peak)
        print(f"  {size:8.1f} {n:10d} {r['seconds']:8.2f} {size / r['seconds']:6.1f} {peak:8.1f}")
        (d / "v.geom.yml").unlink()
    print(f"  peak memory, largest / smallest file: {peaks[-1] / max(peaks[0], 1e-9):.2f}x "
          f"for a {sizes_mb[-1] / sizes_mb[0]:.0f}x larger file")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--sizes-mb", type=float, nargs="+", default=[20, 80, 160])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="files of 0.2 and 0.4 MB: checks that it runs")
    args = ap.parse_args()
    if args.quick:
        args.sizes_mb = [0.2, 0.4]
    if args.child:
        return _child(args.child)
    with tempfile.TemporaryDirectory() as tmp:
        bench_planning(Path(tmp))
        bench_geometry(Path(tmp), args.sizes_mb)


if __name__ == "__main__":
    main()
