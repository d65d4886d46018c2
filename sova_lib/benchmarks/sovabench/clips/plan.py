"""Planning SOVABench clips from raw MEVA/VIRAT annotations, and the clip manifest.

SOVABench publishes one row per clip (``sova_lib.benchmarks.sovabench.splits``), not the clips.
:func:`plan_clips` turns each row into a crop region and a frame window by
the rules of the SOVABench spec, section 6, with no video needed:

1. Find the activity named in the clip name with the annotated start and end
   frames (for ``vehicle_drives_forward``, the ``vehicle_reverses`` activity;
   the frames are already swapped back by ``sovabench.parse_clip_name``).
   Activities without actors are skipped; an activity with several
   timespans gives status ``several_timespans``.
2-3. The region is the union of the activity's actors' counted boxes over
   frames ``start <= f < end`` (see ``kpf_index.build_video_index``), with no
   padding; no box gives ``no_boxes``; a region with ``x2 - x1`` or
   ``y2 - y1`` under ``min_size`` (112 px) gives ``region_too_small``.
4. The window is ``start..end``, both included; ``vehicle_starts`` begins
   ``buffer_frames`` (90) frames earlier, clamped at frame 0, and
   ``vehicle_stops`` ends ``buffer_frames`` later. The end is clamped to the
   video's length at extraction, where the length is known.

The result is a clip manifest, one TSV row per input row (``MANIFEST_COLUMNS``):
``index, video, source_video, activity, start_frame, end_frame, x1, y1, x2,
y2, reversed, status``. ``video`` is the clip name (the output file is
``<video>.mp4``); ``activity`` is the annotated activity the clip was cut
from (``vehicle_reverses`` for a ``vehicle_drives_forward`` clip, which has
``reversed`` True); the region is as annotated (MEVA boxes may pass the
frame's edge: extraction clamps). Fields that could not be computed are empty.
Statistics of a manifest are in ``sova_lib.benchmarks.sovabench.clips.stats``.
"""
from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from sova_lib.benchmarks.sovabench.clips import kpf
from sova_lib.benchmarks.sovabench.clips.kpf_index import VideoIndex, load_video_index
from sova_lib.benchmarks.sovabench.splits import REVERSED_ACTIVITY, Clip, source_dataset_of
from sova_lib.storage import file_errors, write_text

__all__ = ["ANNOTATION_SOURCES", "BUFFERED_ACTIVITIES", "DEFAULT_FPS", "INT_COLUMNS", "MANIFEST_COLUMNS", "MIN_REGION_SIZE",
           "REVERSED_SOURCE_ACTIVITY", "START_STOP_BUFFER_FRAMES", "STATUSES", "ManifestRow", "check_name",
           "manifest_frames_args", "plan_clip", "plan_clips", "read_manifest", "summary_lines", "write_manifest", "write_tsv"]

MANIFEST_COLUMNS = ("index", "video", "source_video", "activity", "start_frame", "end_frame",
                    "x1", "y1", "x2", "y2", "reversed", "status")

#: Smallest region side, in pixels, that yields a clip (spec section 6, step 3).
MIN_REGION_SIZE = 112
#: Frames added before ``vehicle_starts`` and after ``vehicle_stops`` (3 s at 30 fps).
START_STOP_BUFFER_FRAMES = 90
#: Activities whose window is widened by the buffer: (buffers before, buffers after).
BUFFERED_ACTIVITIES: dict[str, tuple[int, int]] = {"vehicle_starts": (1, 0), "vehicle_stops": (0, 1)}
#: The annotated activity a ``vehicle_drives_forward`` clip is cut from (and played backwards).
REVERSED_SOURCE_ACTIVITY = "vehicle_reverses"
#: Frame rate per source dataset used for durations when no video is at hand
#: (MEVA is recorded at 30 fps; the VIRAT ground videos at 30 fps, a few at 29.97).
DEFAULT_FPS: dict[str, float] = {"MEVA": 30.0, "VIRAT": 30.0}
#: Where each source dataset's KPF annotations come from: Kitware's MEVA annotation repository (meva-data-repo,
#: linked from mevadata.org) and its VIRAT one (viratannotations, named by the SOVABench authors' README).
ANNOTATION_SOURCES: dict[str, str] = {
    "MEVA": "git clone https://gitlab.kitware.com/meva/meva-data-repo.git",
    "VIRAT": "git clone https://gitlab.kitware.com/viratdata/viratannotations.git",
}

#: Status -> what it means. Every row of a manifest has one.
STATUSES: dict[str, str] = {
    "ok": "the clip can be cut",
    "annotation_missing": "no activities or geom file for the source video under the annotation root",
    "activity_not_found": "no activity with actors has this name and these annotated frames",
    "several_timespans": "the matching activity has several timespans (ambiguous window)",
    "no_boxes": "the actors have no counted box inside the activity's frames",
    "region_too_small": "the region is narrower or lower than the minimum size (112 px)",
}


@dataclass(frozen=True)
class ManifestRow:
    """One row of a clip manifest (see the module docstring).

    ``start_frame``/``end_frame`` are the window to cut, both included,
    buffers included; ``x1, y1, x2, y2`` the region in source pixels (x2/y2
    exclusive edges, so width = x2 - x1); None where not computed.
    """

    index: int
    video: str
    source_video: str
    activity: str
    start_frame: int | None
    end_frame: int | None
    x1: int | None
    y1: int | None
    x2: int | None
    y2: int | None
    reversed: bool
    status: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def region(self) -> tuple[int, int, int, int] | None:
        if None in (self.x1, self.y1, self.x2, self.y2):
            return None
        return (self.x1, self.y1, self.x2, self.y2)


def plan_clip(clip: Clip, index: VideoIndex | None, *, min_size: int = MIN_REGION_SIZE,
              buffer_frames: int = START_STOP_BUFFER_FRAMES) -> ManifestRow:
    """The manifest row of one clip, given its video's index (None: annotations missing)."""
    activity = REVERSED_SOURCE_ACTIVITY if clip.activity == REVERSED_ACTIVITY else clip.activity
    before, after = BUFFERED_ACTIVITIES.get(activity, (0, 0))
    start, end = max(0, clip.start_frame - before * buffer_frames), clip.end_frame + after * buffer_frames
    row = dict(index=clip.index, video=clip.name, source_video=clip.source_video, activity=activity,
               start_frame=start, end_frame=end, x1=None, y1=None, x2=None, y2=None,
               reversed=clip.reversed)
    if index is None:
        return ManifestRow(**row, status="annotation_missing")
    matches = [a for a in index.find(activity, clip.start_frame, clip.end_frame) if a.actor_ids]
    if not matches:
        return ManifestRow(**row, status="activity_not_found")
    act = matches[0]
    if len(act.timespans) > 1:
        return ManifestRow(**row, status="several_timespans")
    if act.region is None:
        return ManifestRow(**row, status="no_boxes")
    x1, y1, x2, y2 = act.region
    row.update(x1=x1, y1=y1, x2=x2, y2=y2)
    if x2 - x1 < min_size or y2 - y1 < min_size:
        return ManifestRow(**row, status="region_too_small")
    return ManifestRow(**row, status="ok")


def plan_clips(clips: Sequence[Clip], annotations_root: str | Path, *, cache_dir=None,
               min_size: int = MIN_REGION_SIZE, buffer_frames: int = START_STOP_BUFFER_FRAMES,
               workers: int = 1, show_progress: bool = False) -> list[ManifestRow]:
    """Plan every clip, in input order: one :class:`ManifestRow` per clip.

    Annotation files are found anywhere under ``annotations_root`` by video
    name (``kpf.find_annotation_files``; a MEVA source video's ``.rNN``
    release suffix is dropped when needed). Each video's index is read once,
    from ``cache_dir`` when valid (see ``kpf_index.load_video_index``;
    ``False`` disables the cache), by ``workers`` processes in parallel when
    ``workers > 1``. A malformed annotation file raises ``kpf.KpfError``
    naming the file and line. ``show_progress`` draws a progress bar.
    """
    found = kpf.find_annotation_files(annotations_root)
    by_video: dict[str, list[int]] = {}
    for k, clip in enumerate(clips):
        by_video.setdefault(clip.source_video, []).append(k)
    files_of = {}
    for video in by_video:
        files = next((found[n] for n in kpf.annotation_names(video) if n in found), None)
        if files is not None and files.activities is not None and files.geom is not None:
            files_of[video] = files

    from tqdm.auto import tqdm

    out: list[ManifestRow | None] = [None] * len(clips)
    bar = tqdm(total=len(clips), desc="planning clips", unit="row", disable=not show_progress)

    def plan_video(video: str, index: VideoIndex | None) -> None:
        for k in by_video[video]:
            out[k] = plan_clip(clips[k], index, min_size=min_size, buffer_frames=buffer_frames)
        bar.update(len(by_video[video]))

    for video in by_video:
        if video not in files_of:
            plan_video(video, None)
    if workers > 1 and len(files_of) > 1:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(workers) as pool:
            jobs = {pool.submit(load_video_index, files, cache_dir): video for video, files in files_of.items()}
            for job in as_completed(jobs):
                plan_video(jobs[job], job.result())
    else:
        for video, files in files_of.items():
            plan_video(video, load_video_index(files, cache_dir))
    bar.close()
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------- manifest files


def write_tsv(path: str | Path, columns: Sequence[str], rows: Iterable[Sequence]) -> Path:
    """Write ``rows`` (one value per column; None an empty cell) to ``path`` as tab-separated text, under a header
    of ``columns``."""
    text = io.StringIO()
    csv.writer(text, delimiter="\t", lineterminator="\n").writerows([columns, *rows])
    return write_text(path, text.getvalue())


def write_manifest(rows: Iterable[ManifestRow], path: str | Path) -> Path:
    """Write ``rows`` as a tab-separated manifest with a ``MANIFEST_COLUMNS`` header."""
    return write_tsv(path, MANIFEST_COLUMNS, ([getattr(r, c) for c in MANIFEST_COLUMNS] for r in rows))


def check_name(value: str, column: str) -> str:
    """``value`` if it is a plain file name (a clip or a video, as a manifest names one), else ``ValueError``.

    A clip is written to ``<out>/<video>.mp4``: a name with a folder separator, a ``..``, a drive or an absolute
    path would put it elsewhere, so none is accepted.
    """
    if not value or value in (".", "..") or any(c in value for c in "/\\\0") or value[1:2] == ":":
        raise ValueError(f"{column} {value!r} is not a plain file name (no folder, '..', drive or absolute path): "
                         "a clip is written as <out>/<video>.mp4")
    return value


#: The manifest columns that hold integers (empty where there is none).
INT_COLUMNS = ("index", "start_frame", "end_frame", "x1", "y1", "x2", "y2")


def read_manifest(path: str | Path) -> list[ManifestRow]:
    """Read a manifest written by :func:`write_manifest`.

    Raises ``ValueError`` naming the file and line of a malformed row.
    """
    path = Path(path)
    rows = []
    with file_errors(path, "read"), open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        if tuple(reader.fieldnames or ()) != MANIFEST_COLUMNS:
            raise ValueError(f"{path}: expected manifest columns {MANIFEST_COLUMNS}, found {reader.fieldnames}")
        for line, rec in enumerate(reader, start=2):
            try:
                values = {c: rec[c] or "" for c in MANIFEST_COLUMNS}
                values.update({c: int(values[c]) if values[c] else None for c in INT_COLUMNS})
                if rec["reversed"] not in ("True", "False"):
                    raise ValueError(f"'reversed' must be True or False, not {rec['reversed']!r}")
                values["reversed"] = rec["reversed"] == "True"
                if values["index"] is None:
                    raise ValueError("empty 'index'")
                check_name(values["video"], "video")
                check_name(values["source_video"], "source_video")
                if values["status"] not in STATUSES:
                    raise ValueError(f"unknown status {values['status']!r}; known: {', '.join(STATUSES)}")
                row = ManifestRow(**values)
                if row.ok and (row.region is None or row.start_frame is None or row.end_frame is None):
                    raise ValueError("an 'ok' row needs start_frame, end_frame and x1..y2")
            except (ValueError, TypeError) as err:
                raise ValueError(f"{path}, line {line}: {err}") from None
            rows.append(row)
    return rows


def manifest_frames_args(row: ManifestRow) -> dict:
    """Keyword arguments that read ``row``'s clip straight from its source video.

    Returns ``{"window": (start_frame, end_frame), "crop": (x1, y1, x2, y2),
    "reverse": bool}``, the arguments of the frame sampler
    ``video.sample_frames(path, rate, window=..., crop=..., reverse=...)``
    (window both ends included, crop in source pixels with exclusive
    x2/y2). The crop is as annotated (it may pass the frame's edge) and the window end may pass the video's last
    frame: the reader clamps both (``sova_lib.crop.clamp``).
    Raises ``ValueError`` for a row whose status is not ``ok``. For example::

        path = clip_extract.find_source_videos(video_root, [row.source_video])[row.source_video]
        frames = video.sample_frames(path, 1.0, **manifest_frames_args(row))
    """
    if not row.ok:
        raise ValueError(f"manifest row {row.index} ({row.video}) has no clip: status {row.status!r}")
    return {"window": (row.start_frame, row.end_frame), "crop": row.region, "reverse": row.reversed}


def summary_lines(rows: Sequence[ManifestRow]) -> list[str]:
    """Human-readable status summary of a manifest: one line per status, then per source dataset the rows
    planned and why the others were not (with where a dataset's missing annotations come from)."""
    counts = Counter(r.status for r in rows)
    lines = [f"{len(rows)} rows: {counts.get('ok', 0)} clips planned"]
    lines += [f"  {s}: {counts[s]} ({STATUSES[s]})" for s in STATUSES if s != "ok" and counts.get(s)]
    missing = sorted({r.source_video for r in rows if r.status == "annotation_missing"})
    if missing:
        lines.append(f"  {len(missing)} source video(s) without annotations, e.g. {missing[0]} "
                     "('sova sovabench clips sources' lists them)")
    by_dataset: dict[str, Counter] = {}
    for r in rows:
        by_dataset.setdefault(source_dataset_of(r.source_video), Counter())[r.status] += 1
    for dataset in sorted(by_dataset):
        c = by_dataset[dataset]
        others = ", ".join(f"{s} {c[s]}" for s in STATUSES if s != "ok" and c.get(s))
        lines.append(f"  {dataset}: {sum(c.values())} rows, {c.get('ok', 0)} planned"
                     + (f"; not planned: {others}" if others else ""))
        if c.get("annotation_missing") and dataset in ANNOTATION_SOURCES:
            lines.append(f"    {dataset} annotations: {ANNOTATION_SOURCES[dataset]}")
    return lines
