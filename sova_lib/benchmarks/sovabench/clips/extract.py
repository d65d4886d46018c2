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

from sova_lib.benchmarks.sovabench.clips.frame_size import rows_reach, size_mismatch
from sova_lib.benchmarks.sovabench.clips.plan import ManifestRow, check_name
from sova_lib.benchmarks.sovabench.splits import source_dataset_of
from sova_lib.crop import clamp, crop
from sova_lib.storage import STALE_SECONDS, atomic_file, remove_temporary
from sova_lib.wording import kinds_line

__all__ = ["KINDS", "VIDEO_EXTENSIONS", "ExtractSummary", "cut_clips", "default_codec", "extract_clips",
           "find_source_videos"]

#: The kinds of failure of a clip (``extract_log.jsonl``'s ``kind``, the summary's count by kind) -> what each is.
KINDS: dict[str, str] = {
    "video missing": "its source video is not under --video-root",
    "size mismatch": "its source video's frame is smaller than its annotations (frame_size.size_mismatch)",
    "decode": "its source video does not open or stops decoding",
    "video too short": "its window starts after the source video's last frame",
    "region empty": "its crop leaves no pixels inside the frame",
    "encode": "the encoder refuses the clip (an unknown codec, a pixel format it lacks)",
    "write": "the finished clip cannot be written",
}

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


#: How many failures of each kind (with different reasons) a summary shows with their reasons.
REASONS_SHOWN = 2


@dataclass
class ExtractSummary:
    """Outcome of :func:`extract_clips`: counts, ``(index, video, reason)`` per failure, per source dataset
    (``MEVA``, ``VIRAT``) the clips ``written``, ``skipped`` as already present and ``missing`` their source
    video (``by_dataset[dataset][outcome]``), and per kind of failure (``KINDS``) the indices that failed so
    (``by_kind``) and the first ``REASONS_SHOWN`` failures of each kind whose reasons differ (``examples``: kind ->
    ``(index, video, reason)``), so that a few clips of one kind are not hidden behind thousands of another."""

    written: int = 0
    skipped: int = 0
    failed: int = 0
    not_ok: int = 0
    clamped: int = 0
    errors: list[tuple[int, str, str]] = field(default_factory=list)
    by_dataset: dict[str, dict[str, int]] = field(default_factory=dict)
    by_kind: dict[str, list[int]] = field(default_factory=dict)
    examples: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)

    def count(self, clip: str, outcome: str) -> None:
        """One more clip named ``clip`` with ``outcome`` (``written``, ``skipped``, ``missing``) for its dataset."""
        per = self.by_dataset.setdefault(source_dataset_of(clip), {"written": 0, "skipped": 0, "missing": 0})
        per[outcome] += 1

    def fail(self, index: int, video: str, kind: str, reason: str) -> None:
        """One more clip that failed: ``index`` (its row's), ``video`` (its name), the ``kind`` and ``reason``."""
        self.failed += 1
        self.errors.append((index, video, reason))
        self.by_kind.setdefault(kind, []).append(index)
        shown = self.examples.setdefault(kind, [])
        if len(shown) < REASONS_SHOWN and all(reason != e[2] for e in shown):
            shown.append((index, video, reason))

    def lines(self) -> list[str]:
        """The printed summary: the counts, each dataset's, the failures by kind (``wording.kinds_line``) and the
        first reasons of each kind, one line each."""
        out = [f"clips written: {self.written}, already present: {self.skipped}, failed: {self.failed}, "
               f"rows without a clip (status not ok): {self.not_ok}"]
        for dataset, per in sorted(self.by_dataset.items()):
            out.append(f"  {dataset}: written {per['written']}, already present {per['skipped']}, "
                       f"missing their source video {per['missing']}")
        if self.clamped:
            out.append(f"  {self.clamped} window(s) ran past the video's end and were clamped")
        if self.by_kind:
            out.append("  failed by kind: " + kinds_line(self.by_kind))
            shown = [e for same in self.examples.values() for e in same]
            out += [f"  failed {index} {video}: {reason}" for index, video, reason in shown]
            if self.failed > len(shown):
                out.append(f"  ... and {self.failed - len(shown)} more, each with its reason in {LOG_NAME}")
        missing = sum(per["missing"] for per in self.by_dataset.values())
        if missing:
            out.append(f"  {missing} clip(s) miss their source video ('sova sovabench clips sources' lists the "
                       f"videos, 'sova sovabench clips fetch' downloads MEVA's; each is in {LOG_NAME})")
        return out


def _even_crop(region, codec: str, pix_fmt: str | None) -> tuple[int, int, int, int]:
    """``region`` (clamped to the frame) less its last column or row where a side is odd and the output is 4:2:0
    (``pix_fmt`` yuv420p, yuvj420p or nv12, or the ``mpeg4`` codec), which needs even sides; ``ValueError`` when
    no pixel is left."""
    x1, y1, x2, y2 = region
    w, h = x2 - x1, y2 - y1
    if pix_fmt in ("yuv420p", "yuvj420p", "nv12") or codec == "mpeg4":
        w, h = w - w % 2, h - h % 2
    if w <= 0 or h <= 0:
        raise ValueError(f"the crop {tuple(region)} leaves no pixels inside the frame")
    return x1, y1, x1 + w, y1 + h


class _Writer:
    """One clip being written (``storage.atomic_file``: no reader of ``<out>/*.mp4`` sees a partial clip)."""

    def __init__(self, row, path: Path, region, rate, codec, pix_fmt, crf):
        """``region``: the crop, evened already (``_even_crop``)."""
        import av

        self.row = row
        self.crop = region
        self.file = atomic_file(path)
        self.container = av.open(self.file.file, "w", format="mp4")
        try:
            self.stream = self.container.add_stream(codec, rate=rate)
            self.stream.width, self.stream.height = region[2] - region[0], region[3] - region[1]
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
    "failed", "reason", "kind", "frames", "window", "crop", "fps"}``; ``kind``
    is a failure's kind (``KINDS``; None for a clip written), ``window`` the
    window actually written (clamped to the video), ``crop`` the crop
    actually applied. A video whose frame is smaller than its rows' regions
    (``frame_size.size_mismatch``, read from its header) fails all of them before any
    frame is decoded. ``on_done(record)`` is called as each clip finishes.
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
        stream = container.streams.video[0]  # its header: nothing is decoded before the sizes agree
        mismatch = size_mismatch(stream.codec_context.width, stream.codec_context.height, rows_reach(pending))
        if mismatch:
            for row in pending:
                cut.finish(row, "failed", f"{video_path}: {mismatch}", kind="size mismatch")
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
                cut.finish(row, "failed", reason, kind="decode")
    finally:
        if container is not None:
            container.close()
    return cut.records


class _Cut:
    """One decoding pass of ``cut_clips``: the clips being written (``active``) and the records of those done."""

    def __init__(self, out_dir: Path, codec: str, pix_fmt: str | None, crf: int | None, on_done):
        self.out_dir, self.codec, self.pix_fmt, self.crf, self.on_done = out_dir, codec, pix_fmt, crf, on_done
        self.records: list[dict] = []
        self.active: list[_Writer] = []
        self.fps: float | None = None

    def finish(self, row, status, reason="", writer=None, kind=None):
        """Record ``row``'s clip as ``written`` or ``failed`` (with its ``reason`` and ``kind``, one of ``KINDS``)."""
        rec = {"index": row.index, "video": row.video, "status": status, "reason": reason, "kind": kind,
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
        for wr in self.active:  # the video ended before these windows did: clamped to its last frame
            self.close(wr, f"window clamped at the video's last frame {wr.row.start_frame + wr.frames - 1}")
        self.active = []
        for row in pending[nxt:]:
            self.finish(row, "failed", f"window starts at frame {row.start_frame}, but the video has "
                                       f"{decoded} frames", kind="video too short")

    def open(self, row, frame, rate) -> None:
        try:
            region = _even_crop(clamp(row.region, frame.width, frame.height), self.codec, self.pix_fmt)
        except ValueError as err:
            self.finish(row, "failed", f"{type(err).__name__}: {err}", kind="region empty")
            return
        try:
            self.active.append(_Writer(row, self.out_dir / f"{row.video}.mp4", region, rate, self.codec,
                                       self.pix_fmt, self.crf))
        except Exception as err:  # noqa: BLE001
            self.finish(row, "failed", f"{type(err).__name__}: {err}", kind="encode")

    def feed(self, i: int, rgb) -> None:
        """Frame ``i`` to every open writer; a writer whose window ends here is closed."""
        for wr in list(self.active):
            try:
                wr.add(rgb)
            except Exception as err:  # noqa: BLE001
                self.active.remove(wr)
                self.fail(wr, err, "encode")
                continue
            if i >= wr.row.end_frame:
                self.active.remove(wr)
                self.close(wr)

    def close(self, wr: _Writer, reason: str = "") -> None:
        """Finish ``wr``'s clip; a clip that cannot be written fails alone."""
        try:
            wr.close()
        except Exception as err:  # noqa: BLE001
            self.fail(wr, err, "write")
        else:
            self.finish(wr.row, "written", reason, writer=wr)

    def fail(self, wr: _Writer, err: Exception, kind: str) -> None:
        wr.abort()
        self.finish(wr.row, "failed", f"{type(err).__name__}: {err}", kind=kind)


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
        summary.fail(rec["index"], rec["video"], rec["kind"], rec["reason"])
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
                    on_done({"index": r.index, "video": r.video, "status": "failed", "kind": "video missing",
                             "frames": 0, "window": None, "crop": None, "fps": None,
                             "reason": f"source video {source} ({'/'.join(VIDEO_EXTENSIONS)}) not found under "
                                       f"{video_root}"})
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
