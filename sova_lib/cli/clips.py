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

from sova_lib.benchmarks import sovabench
from sova_lib.cli.options import (
    add_output_options,
    cache_root,
    count,
    existing_file,
    existing_folder,
    note,
    positive_count,
    positive_rate,
)

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
                      help=f"SOVABench TSV file, or a protocol: {', '.join(sovabench.SOVABENCH_PROTOCOLS)}")
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


def _plan(args) -> int:
    options = {k: v for k, v in (("min_size", args.min_size), ("buffer_frames", args.buffer_frames)) if v is not None}
    _, lines, notes = sovabench.plan(args.tsv, args.annotations, args.out, workers=args.processes,
                                     cache_dir=False if args.no_index else args.index_dir,
                                     show_progress=not args.no_progress, **options)
    print("\n".join(lines))
    for line in notes:
        note(line)
    print(f"manifest: {args.out}")
    return 0


def _extract(args) -> int:
    summary = sovabench.extract(args.manifest, args.video_root, args.out, codec=args.codec, pix_fmt=args.pix_fmt,
                                crf=args.crf, workers=args.processes, show_progress=not args.no_progress)
    print("\n".join([*summary.lines(), f"clips and extract_log.jsonl: {args.out}"]))
    return 1 if summary.failed else 0


def _stats(args) -> int:
    print(sovabench.clip_stats(args.manifest, args.tsv, args.source_fps))
    return 0
