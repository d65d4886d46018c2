"""``sova clips plan | extract | stats``: from MEVA/VIRAT downloads to SOVABench clips.

::

    sova clips plan    --tsv interpair --annotations MEVA_AND_VIRAT_ANNOTATIONS --out manifest.tsv
    sova clips extract --manifest manifest.tsv --video-root MEVA_AND_VIRAT_VIDEOS --out clips/
    sova clips stats   --manifest manifest.tsv

``--tsv`` takes a SOVABench-format TSV, or the name of a packaged split
(``interpair``, ``interpair_queries``, ``intrapair``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sova_lib.benchmarks.sovabench.clips import kpf
from sova_lib.benchmarks.sovabench.clips import plan as clips
from sova_lib.benchmarks.sovabench.clips import stats as clip_stats
from sova_lib.benchmarks.sovabench.clips.extract import extract_clips
from sova_lib.benchmarks.sovabench.splits import SPLITS, load_split, read_tsv
from sova_lib.cli import CliError

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("clips", help="build SOVABench clips from MEVA/VIRAT: plan, extract, stats",
                              description=__doc__.replace("``", "").replace("::\n", ""),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="clips_command", metavar="STEP", required=True)

    plan = sub.add_parser("plan", help="compute each row's crop region and frame window (no video needed)")
    plan.add_argument("--tsv", required=True, help="SOVABench TSV file, or a packaged split name")
    plan.add_argument("--annotations", required=True, metavar="ROOT",
                      help="folder holding the KPF *.activities.yml / *.geom.yml / *.types.yml files (any depth)")
    plan.add_argument("--out", required=True, metavar="MANIFEST.tsv", help="clip manifest to write")
    plan.add_argument("--cache-dir", default=None,
                      help="where per-video annotation indexes are cached "
                           "(default $SOVA_KPF_INDEX_DIR or ~/.cache/sova_lib/kpf-index)")
    plan.add_argument("--no-cache", action="store_true", help="re-read every annotation file, write no index")
    plan.add_argument("--min-size", type=int, default=None, help="smallest region side in pixels (default 112)")
    plan.add_argument("--buffer-frames", type=int, default=None,
                      help="frames added before vehicle_starts / after vehicle_stops (default 90)")
    plan.add_argument("--workers", type=int, default=1, help="processes reading annotation files (default 1)")
    plan.add_argument("--quiet", action="store_true", help="no progress bar")
    plan.set_defaults(func=_plan)

    ext = sub.add_parser("extract", help="cut, crop and write each planned clip from the source videos")
    ext.add_argument("--manifest", required=True, help="manifest written by 'sova clips plan'")
    ext.add_argument("--video-root", required=True, metavar="DIR",
                     help="folder holding the source videos <name>.avi/.mp4 (any depth)")
    ext.add_argument("--out", required=True, metavar="DIR", help="folder for <clip name>.mp4 and extract_log.jsonl")
    ext.add_argument("--codec", default=None, help="encoder (default libx264, else mpeg4); "
                                                   "libx264rgb with --crf 0 is lossless")
    ext.add_argument("--pix-fmt", default="yuv420p", help="output pixel format (default yuv420p)")
    ext.add_argument("--crf", type=int, default=18, help="x264 constant rate factor (default 18; 0 = lossless)")
    ext.add_argument("--workers", type=int, default=1, help="processes, each decoding one source video (default 1)")
    ext.add_argument("--quiet", action="store_true", help="no progress bar")
    ext.set_defaults(func=_extract)

    st = sub.add_parser("stats", help="clip durations, crop sizes, counts per class and source dataset")
    st.add_argument("--manifest", required=True)
    st.add_argument("--fps", type=float, default=None,
                    help="frame rate for durations (default: 30 for MEVA and VIRAT)")
    st.add_argument("--tsv", default=None,
                    help="TSV (or split name) that gives each index its class (default: the packaged splits)")
    st.set_defaults(func=_stats)


def _clips_of(tsv: str):

    if not Path(tsv).exists() and tsv in SPLITS:
        return load_split(tsv)
    if not Path(tsv).is_file():
        raise CliError(f"--tsv {tsv}: no such file (or give a packaged split: {', '.join(SPLITS)})")
    try:
        return read_tsv(tsv)
    except ValueError as err:
        raise CliError(str(err)) from None


def _plan(args) -> int:

    rows = _clips_of(args.tsv)
    if not Path(args.annotations).is_dir():
        raise CliError(f"--annotations {args.annotations} is not a directory")
    kw = {}
    if args.min_size is not None:
        kw["min_size"] = args.min_size
    if args.buffer_frames is not None:
        kw["buffer_frames"] = args.buffer_frames
    try:
        planned = clips.plan_clips(rows, args.annotations, cache_dir=False if args.no_cache else args.cache_dir,
                                   workers=args.workers, progress=not args.quiet, **kw)
    except kpf.KpfError as err:
        raise CliError(f"{err}\n  fix or remove that annotation file and run the command again") from None
    clips.write_manifest(planned, args.out)
    for line in clips.summary_lines(planned):
        print(line)
    print(f"manifest: {args.out}")
    return 0


def _read_manifest(path):

    try:
        return clips.read_manifest(path)
    except (OSError, ValueError) as err:
        raise CliError(str(err)) from None


def _extract(args) -> int:

    rows = _read_manifest(args.manifest)
    if not Path(args.video_root).is_dir():
        raise CliError(f"--video-root {args.video_root} is not a directory")
    summary = extract_clips(rows, args.video_root, args.out, codec=args.codec, pix_fmt=args.pix_fmt,
                            crf=args.crf, workers=args.workers, progress=not args.quiet)
    for line in summary.lines():
        print(line)
    print(f"clips and extract_log.jsonl: {args.out}")
    return 1 if summary.failed else 0


def _stats(args) -> int:

    df = clip_stats.manifest_frame(_read_manifest(args.manifest))
    fps = clips.DEFAULT_FPS if args.fps is None else args.fps
    labelled = _clips_of(args.tsv) if args.tsv else None
    out = sys.stdout
    print("Rows per status and source dataset", file=out)
    print(clip_stats.status_counts(df).to_string(index=False), file=out)
    print("\nRows and clips per source dataset", file=out)
    print(clip_stats.dataset_counts(df).to_string(index=False), file=out)
    print("\nRows and clips per class", file=out)
    print(clip_stats.class_counts(df, labelled).to_string(index=False), file=out)
    dur = clip_stats.clip_durations(df, fps)
    size = clip_stats.crop_sizes(df)
    if len(dur):
        rate = ", ".join(f"{k} {v:g}" for k, v in fps.items()) if isinstance(fps, dict) else f"{fps:g}"
        print(f"\nClip durations in seconds (Figure 3(b); fps: {rate})", file=out)
        print(dur.groupby("source_dataset")["duration_s"].describe().round(2).to_string(), file=out)
        print("\nCrop sizes in pixels, as annotated (Figure 3(c))", file=out)
        print(size[["width", "height"]].describe().round(1).to_string(), file=out)
    return 0
