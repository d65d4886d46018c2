"""``sova sovabench clips sources | fetch | plan | extract | stats``: from an empty disk to SOVABench clips.

::

    sova sovabench clips sources --tsv inter-pair --annotations ANN --video-root VID --out sources.tsv
    sova sovabench clips fetch   --tsv inter-pair --video-root VID
    sova sovabench clips plan    --tsv inter-pair --annotations MEVA_AND_VIRAT_ANNOTATIONS --out manifest.tsv
    sova sovabench clips extract --manifest manifest.tsv --video-root MEVA_AND_VIRAT_VIDEOS --out clips/
    sova sovabench clips stats   --manifest manifest.tsv

``--tsv`` takes a SOVABench-format TSV, or the name of a protocol, whose
clips are planned (``inter-pair``, ``inter-pair-constrained``, ``intra-pair``,
``two-class``; the names ``sova sovabench evaluate --protocol`` takes).
"""
from __future__ import annotations

from sova_lib.benchmarks import sovabench
from sova_lib.cli import end_interrupted
from sova_lib.cli.options import (
    add_output_options,
    cache_root,
    count,
    existing_file,
    existing_folder,
    note,
    path_type,
    positive_count,
    positive_number,
    positive_rate,
    value_type,
)

__all__ = ["add_steps"]


def add_steps(p) -> None:
    """``sources|fetch|plan|extract|stats`` under the parser ``p`` of ``sova sovabench clips`` (``cli.sovabench``
    adds them when that command is first parsed)."""
    p.description = __doc__.replace("``", "").replace("::\n", "")
    sub = p.add_subparsers(dest="clips_command", metavar="STEP", required=True)
    _add_sources(sub)
    _add_fetch(sub)

    plan = sub.add_parser("plan", help="compute each row's crop region and frame window (no video needed)",
                          description="Compute each benchmark row's crop region and frame window from the KPF "
                                      "annotations into a clip manifest (no video needed). Example: sova sovabench "
                                      "clips plan --tsv inter-pair --annotations ANN --out manifest.tsv")
    _tsv(plan)
    plan.add_argument("--annotations", required=True, type=existing_folder, metavar="ROOT",
                      help="folder holding the KPF *.activities.yml / *.geom.yml / *.types.yml files (any depth)")
    _index(plan)
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
    _manifest(ext)
    _video_root(ext, required=True)
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
    _manifest(st)
    st.add_argument("--source-fps", type=positive_rate, default=None, metavar="F",
                    help="the source videos' own frame rate, for durations (default: 30 for MEVA and VIRAT)")
    st.add_argument("--tsv", default=None, metavar="TSV_OR_PROTOCOL",
                    help="TSV (or protocol name) that gives each index its class (default: the packaged splits)")
    st.set_defaults(func=_stats)


def _tsv(parser) -> None:
    parser.add_argument("--tsv", required=True, metavar="TSV_OR_PROTOCOL",
                        help=f"SOVABench TSV file, or a protocol: {', '.join(sovabench.SOVABENCH_PROTOCOLS)}")


def _index(parser) -> None:
    parser.add_argument("--index-dir", type=cache_root, default=None, metavar="DIR",
                        help="where per-video annotation indexes are cached "
                             "(default $SOVA_KPF_INDEX_DIR or ~/.cache/sova_lib/kpf-index)")
    parser.add_argument("--no-index", action="store_true", help="re-read every annotation file, write no index")


def _manifest(parser) -> None:
    parser.add_argument("--manifest", required=True, type=existing_file, metavar="MANIFEST.tsv",
                        help="manifest written by 'sova sovabench clips plan'")


def _video_root(parser, *, required: bool) -> None:
    parser.add_argument("--video-root", required=required, type=existing_folder, metavar="DIR",
                        help="folder holding the source videos <name>.avi/.mp4 (any depth)")


def _add_sources(sub) -> None:
    src = sub.add_parser("sources", help="list the source videos a protocol needs: where each is published, and "
                                         "whether its annotations and video are on disk",
                         description="List every source video of a protocol's clips: its dataset (MEVA, VIRAT), "
                                     "where it is published (a MEVA video's key in the public bucket), how many rows "
                                     "depend on it, and, when asked, whether its KPF annotations and its video are "
                                     "on disk (each video opened and checked for the frames and frame rate its rows "
                                     "need, and, where its annotations are found, for a frame that holds their "
                                     "boxes). Missing files are listed, not errors. Example: sova sovabench clips "
                                     "sources --tsv inter-pair --annotations ANN --video-root VID --out sources.tsv")
    _tsv(src)
    src.add_argument("--annotations", type=existing_folder, metavar="ROOT",
                     help="folder holding the KPF annotation files (any depth), e.g. a meva-data-repo checkout")
    _index(src)
    _video_root(src, required=False)
    add_output_options(src, out=("FILE", "the list to write: TSV, or JSON for a name ending .json"), required=True)
    src.set_defaults(func=_sources)


#: A folder, or a path not yet made (it is made); an existing file is refused.
_folder = path_type((lambda p: p.exists() and not p.is_dir(), " is a file, not a folder"))


def _add_fetch(sub) -> None:
    f = sub.add_parser("fetch", help="download a protocol's missing MEVA source videos from the public bucket "
                                     "(resumable, each file checked)",
                       description="Download the MEVA source videos of a protocol that are not yet under "
                                   "--video-root from the public MEVA bucket over HTTPS, into <video-root>/drops-123-"
                                   "r13/<date>/<hour>/<name>.avi (--key-template): parallel transfers, a cut transfer "
                                   "resumed with If-Range (run the same command again after Ctrl-C), never more bytes "
                                   "than the server announced, each file checked against the server's size and MD5 "
                                   "ETag, opened and decoded for the frames its rows need (a file that fails is "
                                   "removed), its SHA-256 written to <video-root>/SHA256SUMS. VIRAT "
                                   "videos are not in that bucket: they are named, not fetched. Example: sova "
                                   "sovabench clips fetch --tsv inter-pair --video-root VID --limit 2")
    f.fill_later(_fetch_options)  # the sources module (its default URL) only when fetch is parsed
    f.set_defaults(func=_fetch)


def _fetch_options(f) -> None:
    from sova_lib.benchmarks.sovabench.clips.sources import MEVA_BASE_URL, MEVA_KEY_TEMPLATE, check_key_template

    _tsv(f)
    f.add_argument("--video-root", required=True, type=_folder, metavar="DIR",
                   help="folder for the source videos (made when missing); videos already anywhere under it are "
                        "not fetched again")
    f.add_argument("--base-url", default=MEVA_BASE_URL, metavar="URL",
                   help=f"the bucket's HTTPS address (default {MEVA_BASE_URL})")
    f.add_argument("--key-template", type=value_type(check_key_template), default=MEVA_KEY_TEMPLATE, metavar="TEMPLATE",
                   help="each video's key under --base-url, and its path under --video-root, from the fields {date}, "
                        f"{{hour}} and {{name}} of its name (default {MEVA_KEY_TEMPLATE})")
    f.add_argument("--concurrency", type=positive_count, default=4, metavar="N",
                   help="transfers at once (default 4)")
    f.add_argument("--connect-timeout", type=positive_number, default=10.0, metavar="S",
                   help="seconds to wait for a connection (default 10)")
    f.add_argument("--read-timeout", type=positive_number, default=60.0, metavar="S",
                   help="seconds to wait for the next bytes of a transfer (default 60)")
    f.add_argument("--limit", type=positive_count, default=None, metavar="N",
                   help="fetch the first N missing videos only, for a first try")
    f.add_argument("--dry-run", action="store_true", help="print what would be fetched, and fetch nothing")
    add_output_options(f, progress=True)


def _processes(parser, text: str) -> None:
    parser.add_argument("--processes", type=positive_count, default=1, metavar="N", help=text)


def _index_dir(args):
    return False if args.no_index else args.index_dir


def _sources(args) -> int:
    _, lines = sovabench.sources(args.tsv, args.out, annotations=args.annotations, video_root=args.video_root,
                                 index_dir=_index_dir(args))
    print("\n".join([*lines, f"sources: {args.out}"]))
    return 0


def _fetch(args) -> int:
    summary = sovabench.fetch(args.tsv, args.video_root, base_url=args.base_url, key_template=args.key_template,
                              concurrency=args.concurrency, limit=args.limit, dry_run=args.dry_run,
                              connect_timeout=args.connect_timeout,
                              read_timeout=args.read_timeout, show_progress=not args.no_progress)
    print("\n".join(summary.lines(dry_run=args.dry_run)))
    if summary.interrupted:
        return end_interrupted()
    return 1 if summary.failed or summary.busy else 0


def _plan(args) -> int:
    options = {k: v for k, v in (("min_size", args.min_size), ("buffer_frames", args.buffer_frames)) if v is not None}
    _, lines, notes = sovabench.plan(args.tsv, args.annotations, args.out, workers=args.processes,
                                     cache_dir=_index_dir(args),
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
