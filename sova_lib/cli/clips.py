"""``sova sovabench clips plan | extract | stats``: from MEVA/VIRAT downloads to SOVABench clips.

::

    sova sovabench clips plan    --tsv inter-pair --annotations MEVA_AND_VIRAT_ANNOTATIONS --out manifest.tsv
    sova sovabench clips extract --manifest manifest.tsv --video-root MEVA_AND_VIRAT_VIDEOS --out clips/
    sova sovabench clips stats   --manifest manifest.tsv

``--tsv`` takes a SOVABench-format TSV, or the name of a protocol, whose
clips are planned (``inter-pair``, ``inter-pair-constrained``, ``intra-pair``,
``two-class``; the names ``sova sovabench evaluate --protocol`` takes).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sova_lib.benchmarks.sovabench.clips import kpf
from sova_lib.benchmarks.sovabench.clips import plan as clips
from sova_lib.benchmarks.sovabench.clips import stats as clip_stats
from sova_lib.benchmarks.sovabench.clips.extract import extract_clips, find_source_videos
from sova_lib.benchmarks.sovabench.protocols import SOVABENCH_PROTOCOLS
from sova_lib.benchmarks.sovabench.splits import read_tsv
from sova_lib.cli import CliError
from sova_lib.cli.options import (
    add_output_options,
    cache_root,
    count,
    existing_file,
    existing_folder,
    positive_count,
    positive_rate,
)
from sova_lib.protocols import get_protocol

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    """``clips plan|extract|stats`` under ``subparsers`` (``sova sovabench clips``)."""
    p = subparsers.add_parser("clips", help="build SOVABench clips from MEVA/VIRAT: plan, extract, stats",
                              description=__doc__.replace("``", "").replace("::\n", ""),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="clips_command", metavar="STEP", required=True)

    plan = sub.add_parser("plan", help="compute each row's crop region and frame window (no video needed)",
                          description="Compute each benchmark row's crop region and frame window from the KPF "
                                      "annotations into a clip manifest (no video needed). Example: sova sovabench "
                                      "clips plan --tsv inter-pair --annotations ANN --out manifest.tsv")
    plan.add_argument("--tsv", required=True, metavar="TSV_OR_PROTOCOL",
                      help=f"SOVABench TSV file, or a protocol: {', '.join(SOVABENCH_PROTOCOLS)}")
    plan.add_argument("--annotations", required=True, type=existing_folder, metavar="ROOT",
                      help="folder holding the KPF *.activities.yml / *.geom.yml / *.types.yml files (any depth)")
    plan.add_argument("--index-dir", type=cache_root, default=None, metavar="DIR",
                      help="where per-video annotation indexes are cached "
                           "(default $SOVA_KPF_INDEX_DIR or ~/.cache/sova_lib/kpf-index)")
    plan.add_argument("--no-index", action="store_true", help="re-read every annotation file, write no index")
    plan.add_argument("--min-size", type=count, default=None, metavar="PIXELS",
                      help="smallest region side in pixels (default 112)")
    plan.add_argument("--buffer-frames", type=count, default=None, metavar="N",
                      help="frames added before vehicle_starts / after vehicle_stops (default 90)")
    _processes(plan, "processes reading annotation files (default 1)")
    add_output_options(plan, out=("MANIFEST.tsv", "clip manifest to write"), required=True, progress=True)
    plan.set_defaults(func=_plan)

    ext = sub.add_parser("extract", help="cut, crop and write each planned clip from the source videos",
                         description="Cut, crop and write each planned clip of a manifest from the source videos. "
                                     "Example: sova sovabench clips extract --manifest manifest.tsv --video-root VID "
                                     "--out clips/")
    ext.add_argument("--manifest", required=True, type=existing_file, metavar="MANIFEST.tsv",
                     help="manifest written by 'sova sovabench clips plan'")
    ext.add_argument("--video-root", required=True, type=existing_folder, metavar="DIR",
                     help="folder holding the source videos <name>.avi/.mp4 (any depth)")
    ext.add_argument("--codec", default=None, help="encoder (default libx264, else mpeg4); "
                                                   "libx264rgb with --crf 0 is lossless")
    ext.add_argument("--pix-fmt", default="yuv420p", help="output pixel format (default yuv420p)")
    ext.add_argument("--crf", type=count, default=18, help="x264 constant rate factor (default 18; 0 = lossless)")
    _processes(ext, "processes, each decoding one source video (default 1)")
    add_output_options(ext, out=("DIR", "folder for <clip name>.mp4 and extract_log.jsonl"), required=True,
                       progress=True)
    ext.set_defaults(func=_extract)

    st = sub.add_parser("stats", help="clip durations, crop sizes, counts per class and source dataset",
                        description="Clip durations, crop sizes and counts per class and source dataset of a clip "
                                    "manifest. Example: sova sovabench clips stats --manifest manifest.tsv")
    st.add_argument("--manifest", required=True, type=existing_file, metavar="MANIFEST.tsv",
                    help="manifest written by 'sova sovabench clips plan'")
    st.add_argument("--source-fps", type=positive_rate, default=None, metavar="F",
                    help="the source videos' own frame rate, for durations (default: 30 for MEVA and VIRAT)")
    st.add_argument("--tsv", default=None, metavar="TSV_OR_PROTOCOL",
                    help="TSV (or protocol name) that gives each index its class (default: the packaged splits)")
    st.set_defaults(func=_stats)


def _processes(parser, text: str) -> None:
    parser.add_argument("--processes", type=positive_count, default=1, metavar="N", help=text)


def _clips_of(tsv: str):

    if not Path(tsv).exists():
        if tsv in SOVABENCH_PROTOCOLS:
            return get_protocol(tsv).clips()
    if not Path(tsv).is_file():
        raise CliError(f"--tsv {tsv}: no such file (or give a protocol: {', '.join(SOVABENCH_PROTOCOLS)})")
    try:
        return read_tsv(tsv)
    except ValueError as err:
        raise CliError(str(err)) from None


def _plan(args) -> int:

    rows = _clips_of(args.tsv)
    kw = {}
    if args.min_size is not None:
        kw["min_size"] = args.min_size
    if args.buffer_frames is not None:
        kw["buffer_frames"] = args.buffer_frames
    try:
        planned = clips.plan_clips(rows, args.annotations, cache_dir=False if args.no_index else args.index_dir,
                                   workers=args.processes, show_progress=not args.no_progress, **kw)
    except kpf.KpfError as err:
        raise CliError(f"{err}\n  fix or remove that annotation file and run the command again") from None
    clips.write_manifest(planned, args.out)
    for line in clips.summary_lines(planned):
        print(line)
    if planned and not any(r.ok for r in planned):
        found = next(Path(args.annotations).rglob("*.yml"), None)
        why = "it holds no KPF annotation file (*.yml)" if found is None else "no row matched its annotations"
        print(f"sova: note: --annotations {args.annotations}: none of the {len(planned)} rows got a clip; {why}",
              file=sys.stderr)
    print(f"manifest: {args.out}")
    return 0


def _read_manifest(path):

    try:
        return clips.read_manifest(path)
    except (OSError, ValueError) as err:
        raise CliError(f"--manifest {path}: {err}") from None


def _extract(args) -> int:

    rows = _read_manifest(args.manifest)
    needed = sorted({r.source_video for r in rows if r.ok and not (Path(args.out) / f"{r.video}.mp4").exists()})
    if needed and not find_source_videos(args.video_root, needed):
        raise CliError(f"--video-root {args.video_root}: none of the {len(needed)} source videos the manifest needs "
                       f"is under it (e.g. {needed[0]}); give the folder that holds the MEVA/VIRAT videos")
    summary = extract_clips(rows, args.video_root, args.out, codec=args.codec, pix_fmt=args.pix_fmt,
                            crf=args.crf, workers=args.processes, show_progress=not args.no_progress)
    for line in summary.lines():
        print(line)
    print(f"clips and extract_log.jsonl: {args.out}")
    return 1 if summary.failed else 0


def _stats(args) -> int:

    df = clip_stats.manifest_frame(_read_manifest(args.manifest))
    fps = clips.DEFAULT_FPS if args.source_fps is None else args.source_fps
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
