"""Cutting planned SOVABench clips out of the source videos.

:func:`extract_clips` reads a clip manifest (``sova_lib.benchmarks.sovabench.clips.plan``) and writes
each ``ok`` row's clip to ``<out>/<video>.mp4``: frames ``start_frame`` to
``end_frame`` (both included, counted from 0 in decoding order), cropped to
the region clamped to the frame, at the source frame rate, in reverse order
where ``reversed`` is true. A window that runs past the video's last frame
is clamped to it (the log records the frames written).

Each source video is decoded once, from its first frame, for all of its
clips (decoders cannot seek to an exact frame in every container), and only
frames inside some window are converted to pixels. Forward clips are encoded
as their frames arrive; reversed clips keep their cropped frames in memory
until the window ends. A clip is written to a hidden temporary file and
renamed when complete, so an interrupted run leaves no partial clip (the
next run removes those of a killed one an hour later), and a rerun skips
clips that exist. A clip's name must be a plain file name (no folder, ``..``
or absolute path; ``plan.check_name``), so nothing is written outside
``<out>``. Every clip's outcome (written or failed, with
the reason) is appended to ``<out>/extract_log.jsonl``; a failing clip or
video does not stop the run.

Output encoding: H.264 (``libx264``, CRF 18, ``yuv420p``) by default, or
``mpeg4`` when the PyAV build lacks libx264. 4:2:0 pixel formats need even
sides, so an odd crop width or height loses its last column or row there;
``codec="libx264rgb", crf=0`` writes lossless RGB at the exact crop size.
"""
from __future__ import annotations

import json
import os
import time
from contextlib import suppress
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Sequence

from sova_lib.benchmarks.sovabench.clips.plan import ManifestRow, check_name
from sova_lib.benchmarks.sovabench.splits import source_dataset_of
from sova_lib.crop import clamp, crop
from sova_lib.storage import STALE_SECONDS, atomic_file, remove_temporary

__all__ = ["SIZE_SLACK", "VIDEO_EXTENSIONS", "ExtractSummary", "cut_clips", "default_codec", "extract_clips",
           "find_source_videos", "size_mismatch"]

#: How far past a source video's frame its rows' regions may reach (a fraction of its width and height) before the
#: video is taken for another than the annotated one: annotated boxes pass the frame's edge by a few pixels
#: (``plan``), a stand-in or a resized copy by a multiple of its size (a 320x176 copy of a 1920x1072 video: 6x).
SIZE_SLACK = 1.25

#: File extensions searched for a source video, in order of preference.
VIDEO_EXTENSIONS = (".avi", ".mp4", ".mkv", ".mov")
LOG_NAME = "extract_log.jsonl"


def default_codec() -> str:
    """``libx264`` when this PyAV build can encode with it, else ``mpeg4``."""
    import av

    try:
        av.Codec("libx264", "w")
        return "libx264"
    except Exception:  # noqa: BLE001  (PyAV raises several types for a missing codec)
        return "mpeg4"


def find_source_videos(root: str | Path, names) -> dict[str, Path]:
    """Paths of the source videos ``names`` anywhere under ``root``.

    A video ``NAME`` is the file ``NAME.avi`` / ``.mp4`` / ``.mkv`` / ``.mov``
    (``VIDEO_EXTENSIONS`` order); where several folders hold it, the first
    path in sorted order wins. Names not found are absent from the result.
    """
    wanted = set(names)
    hits: dict[str, list[tuple[int, str]]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for fn in filenames:
            stem, ext = os.path.splitext(fn)
            if stem in wanted and ext.lower() in VIDEO_EXTENSIONS:
                hits.setdefault(stem, []).append((VIDEO_EXTENSIONS.index(ext.lower()), os.path.join(dirpath, fn)))
    return {name: Path(sorted(v)[0][1]) for name, v in hits.items()}


@dataclass
class ExtractSummary:
    """Outcome of :func:`extract_clips`: counts, ``(index, video, reason)`` per failure, and per source dataset
    (``MEVA``, ``VIRAT``) the clips ``written``, ``skipped`` as already present and ``missing`` their source
    video (``by_dataset[dataset][outcome]``)."""

    written: int = 0
    skipped: int = 0
    failed: int = 0
    not_ok: int = 0
    clamped: int = 0
    errors: list[tuple[int, str, str]] = field(default_factory=list)
    by_dataset: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, clip: str, outcome: str) -> None:
        """One more clip named ``clip`` with ``outcome`` (``written``, ``skipped``, ``missing``) for its dataset."""
        per = self.by_dataset.setdefault(source_dataset_of(clip), {"written": 0, "skipped": 0, "missing": 0})
        per[outcome] += 1

    def lines(self) -> list[str]:
        out = [f"clips written: {self.written}, already present: {self.skipped}, failed: {self.failed}, "
               f"rows without a clip (status not ok): {self.not_ok}"]
        for dataset, per in sorted(self.by_dataset.items()):
            out.append(f"  {dataset}: written {per['written']}, already present {per['skipped']}, "
                       f"missing their source video {per['missing']}")
        if self.clamped:
            out.append(f"  {self.clamped} window(s) ran past the video's end and were clamped")
        missing = sum(per["missing"] for per in self.by_dataset.values())
        for index, video, reason in [e for e in self.errors if not e[2].startswith("source video ")][:10]:
            out.append(f"  failed {index} {video}: {reason}")
        if len(self.errors) - missing > 10:
            out.append(f"  ... and {len(self.errors) - missing - 10} more (see {LOG_NAME})")
        if missing:
            out.append(f"  {missing} clip(s) miss their source video ('sova sovabench clips sources' lists the "
                       f"videos, 'sova sovabench clips fetch' downloads MEVA's; each is in {LOG_NAME})")
        return out


class _Writer:
    """One clip being written (``storage.atomic_file``: no reader of ``<out>/*.mp4`` sees a partial clip)."""

    def __init__(self, row, path: Path, region, rate, codec, pix_fmt, crf):
        import av

        self.row = row
        x1, y1, x2, y2 = region
        w, h = x2 - x1, y2 - y1
        if pix_fmt in ("yuv420p", "yuvj420p", "nv12") or codec == "mpeg4":
            w, h = w - w % 2, h - h % 2  # 4:2:0 needs even sides
        if w <= 0 or h <= 0:
            raise ValueError(f"the crop {region} leaves no pixels inside the frame")
        self.crop = (x1, y1, x1 + w, y1 + h)
        self.file = atomic_file(path)
        self.container = av.open(self.file.file, "w", format="mp4")
        try:
            self.stream = self.container.add_stream(codec, rate=rate)
            self.stream.width, self.stream.height = w, h
            if pix_fmt:
                self.stream.pix_fmt = pix_fmt
            if crf is not None and codec.startswith("libx264"):
                self.stream.options = {"crf": str(crf)}
        except Exception:
            self.abort()
            raise
        self.buffer = [] if row.reversed else None
        self.frames = 0

    def add(self, rgb):
        piece = crop(rgb, self.crop)
        if self.buffer is not None:
            self.buffer.append(piece)
        else:
            self._encode(piece)
        self.frames += 1

    def _encode(self, piece):
        import av

        frame = av.VideoFrame.from_ndarray(piece, format="rgb24")
        for packet in self.stream.encode(frame):
            self.container.mux(packet)

    def close(self):
        if self.buffer is not None:
            for piece in reversed(self.buffer):
                self._encode(piece)
        for packet in self.stream.encode():
            self.container.mux(packet)
        self.container.close()
        self.file.commit()

    def abort(self):
        with suppress(Exception):
            self.container.close()
        self.file.discard()


def cut_clips(video_path: str | Path, rows: Sequence[ManifestRow], out_dir: str | Path, *,
              codec: str | None = None, pix_fmt: str | None = "yuv420p", crf: int | None = 18,
              on_done=None) -> list[dict]:
    """Cut ``rows`` (all ``ok``, all from this video) in one decoding pass.

    Returns one record per row: ``{"index", "video", "status": "written" |
    "failed", "frames", "window", "crop", "fps", "reason"}``; ``window`` is
    the window actually written (clamped to the video), ``crop`` the crop
    actually applied. ``on_done(record)`` is called as each clip finishes.
    """
    import av

    codec = codec or default_codec()
    if codec != "libx264rgb" and pix_fmt in ("rgb24", "bgr24"):
        raise ValueError(f"pix_fmt {pix_fmt} needs codec libx264rgb")
    if codec == "libx264rgb" and pix_fmt == "yuv420p":
        pix_fmt = "rgb24"
    cut = _Cut(Path(out_dir), codec, pix_fmt, crf, on_done)
    pending = sorted(rows, key=lambda r: (r.start_frame, r.end_frame))
    container = None
    try:
        container = av.open(str(video_path))
        stream = container.streams.video[0]
        mismatch = size_mismatch(stream.codec_context.width, stream.codec_context.height, pending)
        if mismatch:
            for row in pending:
                cut.finish(row, "failed", f"{video_path}: {mismatch}")
            return cut.records
        cut.decode(container, pending)
    except Exception as err:  # noqa: BLE001  (an error fails this video's clips not yet done only)
        reason = (f"cannot open {video_path}: {err}" if container is None
                  else f"decoding {video_path} failed: {type(err).__name__}: {err}")
        done = {r["video"] for r in cut.records}
        for wr in cut.active:
            wr.abort()
        for row in pending:
            if row.video not in done:
                cut.finish(row, "failed", reason)
    finally:
        if container is not None:
            container.close()
    return cut.records


def size_mismatch(width: int, height: int, rows: Sequence[ManifestRow]) -> str | None:
    """Why a ``width x height`` source video is not the one ``rows`` (its clip manifest rows) were annotated on:
    their regions reach past its frame by more than ``SIZE_SLACK`` of it; None when they fit."""
    reach = (max(r.x2 for r in rows), max(r.y2 for r in rows))
    if reach[0] <= width * SIZE_SLACK and reach[1] <= height * SIZE_SLACK:
        return None
    return (f"the video is {width}x{height}, but the annotations of its {len(rows)} clip(s) reach x {reach[0]}, "
            f"y {reach[1]}: it is not the annotated video (a stand-in or a resized copy?); put the original "
            "under --video-root")


class _Cut:
    """One decoding pass of ``cut_clips``: the clips being written (``active``) and the records of those done."""

    def __init__(self, out_dir: Path, codec: str, pix_fmt: str | None, crf: int | None, on_done):
        self.out_dir, self.codec, self.pix_fmt, self.crf, self.on_done = out_dir, codec, pix_fmt, crf, on_done
        self.records: list[dict] = []
        self.active: list[_Writer] = []
        self.fps: float | None = None

    def finish(self, row, status, reason="", writer=None):
        rec = {"index": row.index, "video": row.video, "status": status, "reason": reason,
               "frames": writer.frames if writer else 0,
               "window": [row.start_frame, row.start_frame + writer.frames - 1] if writer and writer.frames else None,
               "crop": list(writer.crop) if writer else None, "fps": self.fps}
        self.records.append(rec)
        if self.on_done is not None:
            self.on_done(rec)

    def decode(self, container, pending) -> None:
        """Decode up to the last window's end, opening, feeding and closing each row's writer on its frames."""
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        if not rate:
            raise ValueError("the video stream has no frame rate")
        rate = Fraction(rate)
        self.fps = float(rate)
        last = max(r.end_frame for r in pending)
        nxt = decoded = 0
        for i, frame in enumerate(container.decode(stream)):
            decoded = i + 1
            while nxt < len(pending) and pending[nxt].start_frame <= i:
                self.open(pending[nxt], frame, rate)
                nxt += 1
            if self.active:
                self.feed(i, frame.to_ndarray(format="rgb24"))
            if i >= last:
                break
        self.close_clamped()
        for row in pending[nxt:]:
            self.finish(row, "failed", f"window starts at frame {row.start_frame}, but the video has "
                                       f"{decoded} frames")

    def open(self, row, frame, rate) -> None:
        try:
            region = clamp(row.region, frame.width, frame.height)
            self.active.append(_Writer(row, self.out_dir / f"{row.video}.mp4", region, rate, self.codec,
                                       self.pix_fmt, self.crf))
        except Exception as err:  # noqa: BLE001
            self.finish(row, "failed", f"{type(err).__name__}: {err}")

    def feed(self, i: int, rgb) -> None:
        """Frame ``i`` to every open writer; a writer whose window ends here is closed."""
        for wr in list(self.active):
            try:
                wr.add(rgb)
            except Exception as err:  # noqa: BLE001
                self.active.remove(wr)
                self.fail(wr, err)
                continue
            if i >= wr.row.end_frame:
                self.active.remove(wr)
                self.close(wr)

    def close_clamped(self) -> None:
        """The video ended before some windows did: clamp them to its last frame."""
        for wr in self.active:
            self.close(wr, f"window clamped at the video's last frame {wr.row.start_frame + wr.frames - 1}")
        self.active = []

    def close(self, wr: _Writer, reason: str = "") -> None:
        """Finish ``wr``'s clip; a clip that cannot be written fails alone."""
        try:
            wr.close()
        except Exception as err:  # noqa: BLE001
            self.fail(wr, err)
        else:
            self.finish(wr.row, "written", reason, writer=wr)

    def fail(self, wr: _Writer, err: Exception) -> None:
        wr.abort()
        self.finish(wr.row, "failed", f"{type(err).__name__}: {err}")


def _clips_to_cut(rows, out_dir: Path, summary: ExtractSummary) -> dict[str, list[ManifestRow]]:
    """Source video -> its ``ok`` rows whose clip is not yet in ``out_dir`` (one row per clip name).

    Clips already present are counted in ``summary.skipped``.
    """
    todo: dict[str, list[ManifestRow]] = {}
    seen = set()
    for r in rows:
        if not r.ok or r.video in seen:
            continue
        try:
            check_name(r.video, "video")
        except ValueError as err:
            raise ValueError(f"manifest row {r.index}: {err}") from None
        seen.add(r.video)
        if (out_dir / f"{r.video}.mp4").exists():
            summary.skipped += 1
            summary.count(r.video, "skipped")
            continue
        todo.setdefault(r.source_video, []).append(r)
    return todo


def _log_outcome(log, summary: ExtractSummary, bar, rec: dict) -> None:
    """Append one clip's record (with the time) to the open extraction log and count it in ``summary``."""
    rec = {**rec, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
    log.write(json.dumps(rec) + "\n")
    log.flush()
    if rec["status"] == "written":
        summary.written += 1
        summary.count(rec["video"], "written")
        if rec["reason"]:
            summary.clamped += 1
    else:
        summary.failed += 1
        summary.errors.append((rec["index"], rec["video"], rec["reason"]))
    bar.update(1)


def extract_clips(rows: Sequence[ManifestRow], video_root: str | Path, out_dir: str | Path, *,
                  codec: str | None = None, pix_fmt: str | None = "yuv420p", crf: int | None = 18,
                  workers: int = 1, show_progress: bool = False) -> ExtractSummary:
    """Write every ``ok`` row's clip to ``<out_dir>/<video>.mp4`` (see the module docstring).

    Source videos are found under ``video_root`` by name
    (:func:`find_source_videos`). Clips already present are skipped; rows
    sharing a clip name are written once. With ``workers > 1``, that many
    processes each decode one source video at a time. Returns an
    :class:`ExtractSummary`; each outcome is also appended to
    ``<out_dir>/extract_log.jsonl``. ``show_progress`` draws a progress bar.
    ``ValueError`` when none of the source videos still needed is under ``video_root`` (nothing is written).
    """
    out_dir = Path(out_dir)
    summary = ExtractSummary(not_ok=sum(1 for r in rows if not r.ok))
    todo = _clips_to_cut(rows, out_dir, summary)  # checks every clip name before anything is written
    videos = find_source_videos(video_root, todo) if todo else {}
    if todo and not videos:
        raise ValueError(f"--video-root {video_root}: none of the {len(todo)} source videos the manifest needs "
                         f"is under it (e.g. {min(todo)}); give the folder that holds the MEVA/VIRAT videos")
    out_dir.mkdir(parents=True, exist_ok=True)
    remove_temporary(out_dir, older_than=STALE_SECONDS)  # a killed run's partial clips, not another run's
    n_todo = sum(len(v) for v in todo.values())

    from tqdm.auto import tqdm

    bar = tqdm(total=n_todo, desc="extracting clips", unit="clip", disable=not show_progress or not n_todo)
    with open(out_dir / LOG_NAME, "a", encoding="utf-8") as log:
        on_done = partial(_log_outcome, log, summary, bar)
        for source, group in todo.items():
            if source not in videos:
                for r in group:
                    summary.count(r.video, "missing")
                    on_done({"index": r.index, "video": r.video, "status": "failed", "frames": 0,
                             "window": None, "crop": None, "fps": None,
                             "reason": f"source video {source} ({'/'.join(VIDEO_EXTENSIONS)}) not found under {video_root}"})
        found = [(videos[source], group) for source, group in todo.items() if source in videos]
        options = dict(codec=codec or default_codec(), pix_fmt=pix_fmt, crf=crf)
        if workers > 1 and len(found) > 1:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(workers) as pool:
                jobs = [pool.submit(cut_clips, path, group, out_dir, **options) for path, group in found]
                for job in as_completed(jobs):
                    for rec in job.result():
                        on_done(rec)
        else:
            for path, group in found:
                bar.set_postfix_str(path.stem[-40:])
                cut_clips(path, group, out_dir, on_done=on_done, **options)
    bar.close()
    return summary
