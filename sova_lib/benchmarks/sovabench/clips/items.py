"""Describer items of SOVABench clips: cut clip files, or a manifest's rows read from the source videos.

``protocol_items(protocol, video_root)`` finds each clip file of a protocol
(``clip_path``); ``manifest_items(manifest, video_root)`` reads the clips of
a clip manifest straight from their source videos, without cutting them.
Both give ``sova_lib.describe.item.Item`` records whose ids are benchmark indices.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import astuple
from pathlib import Path

from sova_lib.benchmarks.sovabench.clips.extract import VIDEO_EXTENSIONS, find_source_videos
from sova_lib.benchmarks.sovabench.clips.frame_size import header_size, rows_reach, size_mismatch
from sova_lib.benchmarks.sovabench.clips.plan import STATUSES, manifest_frames_args, read_manifest
from sova_lib.describe.item import Item
from sova_lib.protocols import get_protocol

__all__ = ["clip_path", "manifest_items", "protocol_items"]


def clip_path(video_root: Path, name: str, prefix: str) -> Path:
    """Where a clip lies: ``root/name.mp4``, else ``root/<tail of prefix>/name.mp4``; the first if none exists."""
    parts = Path(prefix).parts
    candidates = [video_root / f"{name}.mp4",
                  *(video_root.joinpath(*parts[start:]) / f"{name}.mp4" for start in range(len(parts)))]
    return next((c for c in candidates if c.is_file()), candidates[0])


def protocol_items(protocol: str, video_root: str | Path) -> tuple[list[Item], str]:
    """One item per clip file of ``protocol`` under ``video_root``, and the crop source ``"clip-files"``.

    A clip file that does not exist gives an item that fails when loaded, so
    it is recorded in ``errors.jsonl`` rather than dropped.
    """
    root = Path(video_root)
    clips = get_protocol(protocol).clips()
    return [Item(c.index, clip_path(root, c.name, c.prefix), is_video=True) for c in clips], "clip-files"


def manifest_items(manifest, video_root: str | Path) -> tuple[list[Item], str]:
    """Items that read the clips of a clip manifest straight from their source videos.

    ``manifest`` is the path of a manifest TSV (``sova sovabench clips plan``) or its
    rows (``sova_lib.benchmarks.sovabench.clips.plan.ManifestRow``). Every row gives one ``Item`` whose
    id is the benchmark index, in manifest order:

    * an ``ok`` row reads its source video, found anywhere under
      ``video_root`` (``clip_extract.find_source_videos``), with the row's
      window, crop and reversal (``clips.manifest_frames_args``). The sampler
      then sees exactly the frames of the clip ``sova sovabench clips extract`` cuts for
      that row, before that clip is encoded: the window's end clamped to the
      video's last frame, the crop clamped to the frame, x2/y2 exclusive, the
      frames played backwards for a reversed row. (A lossless extraction,
      ``--codec libx264rgb --crf 0``, decodes to the same pixels; the default
      H.264 4:2:0 output is lossy and evens an odd crop side.)
    * a row whose status is not ``ok`` gives an item whose ``error`` is its
      status and what the status means; so does an ``ok`` row whose source
      video is not under ``video_root``, or whose source video's frame (its
      header) is smaller than its rows' regions reach
      (``frame_size.size_mismatch``: a stand-in or a resized copy, which would
      be cropped at the wrong places). The runner records these in
      ``errors.jsonl``; they are never silently dropped.

    Returns ``(items, crop_source)``, where ``crop_source`` is
    ``"manifest:<SHA-256>"`` of the ``ok`` rows (all columns, sorted by index,
    as JSON): a cache key part that no run on clip files shares, and that
    changes when any planned window, region or reversal changes. Raises
    ``ValueError`` for a malformed manifest or an index that appears twice.
    """
    if isinstance(manifest, (str, Path)):
        rows, place = read_manifest(manifest), lambda k: f"{manifest}, line {k + 2}"  # line 1: the header
    else:
        rows, place = list(manifest), lambda k: f"manifest row {k}"
    first: dict[int, int] = {}
    for k, row in enumerate(rows):
        if row.index in first:
            raise ValueError(f"{place(k)}: index {row.index} appears again (first at {place(first[row.index])}); "
                             "ids must be unique")
        first[row.index] = k
    ok = [r for r in rows if r.ok]
    videos = find_source_videos(video_root, {r.source_video for r in ok}) if ok else {}
    mismatch = _size_mismatches(ok, videos)
    items = []
    for row in rows:
        if row.ok and row.source_video in videos and row.source_video not in mismatch:
            items.append(Item(row.index, videos[row.source_video], is_video=True, **manifest_frames_args(row)))
            continue
        error = (f"manifest status {row.status}: {STATUSES.get(row.status, 'no clip')}" if not row.ok else
                 mismatch[row.source_video] if row.source_video in mismatch else
                 f"source video {row.source_video} ({'/'.join(VIDEO_EXTENSIONS)}) not found under {video_root}")
        items.append(Item(row.index, Path(row.source_video), is_video=True, error=error))
    used = json.dumps([astuple(r) for r in sorted(ok, key=lambda r: r.index)], separators=(",", ":"))
    return items, "manifest:" + hashlib.sha256(used.encode("utf-8")).hexdigest()


def _size_mismatches(ok_rows, videos: dict) -> dict[str, str]:
    """Source video -> why its file (``videos[name]``) is not the one its ``ok_rows`` were planned on
    (``frame_size.size_mismatch`` of its header's size), for the videos that are not."""
    by_video: dict[str, list] = {}
    for row in ok_rows:
        if row.source_video in videos:
            by_video.setdefault(row.source_video, []).append(row)
    out = {}
    for name, group in by_video.items():
        size = header_size(videos[name])
        why = size and size_mismatch(*size, rows_reach(group))
        if why:
            out[name] = f"{videos[name]}: {why}"
    return out
