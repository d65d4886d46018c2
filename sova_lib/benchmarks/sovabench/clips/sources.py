"""The source videos a SOVABench protocol's clips come from: where each is published, and what is on disk.

SOVABench's clips are cut from 5-minute MEVA videos and VIRAT videos (``splits.Clip.source_video``).
:func:`list_sources` gives one :class:`Source` per source video of a list of clips, with its dataset, where it is
published, how many rows depend on it, and whether its KPF annotations and its video are on disk.

Where they are published:

* **MEVA** videos are objects of the public S3 bucket ``mevadata-public-01`` (AWS Open Data registry,
  ``awslabs/open-data-registry`` ``datasets/mevadata.yaml``; region us-east-1). The transcoded ground-camera
  videos, named ``<name>.r13.avi``, are under ``drops-123-r13/`` (Kitware's transcoding FAQ,
  ``Kitware/mevadata`` ``transcoding-faq.html``), in date, then hour folders (the MEVA README,
  ``Kitware/mevadata`` ``resources/README-meva-kf1-data.html``, and Kitware's update list
  ``resources/update-20200429.txt``, whose keys read ``drop-02/2018-03-05/10/<name>.avi``). So
  ``2018-03-05.13-15-00.13-20-00.bus.G506.r13`` is the key
  ``drops-123-r13/2018-03-05/13/2018-03-05.13-15-00.13-20-00.bus.G506.r13.avi`` (:func:`meva_key`), as
  Kitware's annotation repository (meva-data-repo) files the same video's annotations under
  ``annotation/DIVA-phase-2/MEVA/kitware-meva-training/2018-03-05/13/``. The HTTPS endpoint is the bucket's
  virtual-hosted address, ``https://mevadata-public-01.s3.amazonaws.com`` (``MEVA_BASE_URL``).
* **VIRAT** videos (``VIRAT_S_*.mp4``) come from the VIRAT Video Dataset, Ground Release 2.0
  (viratdata.org, under its usage agreement), and their annotations in KPF form from Kitware's
  ``viratannotations`` repository (gitlab.kitware.com/viratdata/viratannotations): neither is in the MEVA
  bucket, so neither is downloaded here (``VIRAT_WHERE``).

The frames a video must have are those its rows' annotated windows reach (the last annotated end frame + 1, from
the clip names), at the frame rate of its dataset (``plan.DEFAULT_FPS``, within ``FPS_TOLERANCE``). Where its
annotations are found too, its frame (read from its header) must hold their boxes (``frame_size.size_mismatch``
against ``kpf_index.VideoIndex.reach``): a stand-in or a resized copy would be cropped at the wrong places.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from sova_lib.benchmarks.sovabench.clips.checksums import read_checksums, verify
from sova_lib.benchmarks.sovabench.clips.frame_size import size_mismatch
from sova_lib.benchmarks.sovabench.clips.plan import ANNOTATION_SOURCES, DEFAULT_FPS, write_tsv
from sova_lib.storage import write_text

__all__ = ["DATASETS", "FPS_TOLERANCE", "MEVA_BASE_URL", "MEVA_BUCKET", "MEVA_DROP", "MEVA_KEY_TEMPLATE", "MEVA_NAME", "SOURCE_COLUMNS",
           "UNUSABLE_SHOWN", "VIRAT_WHERE", "Source", "check_key_template", "check_video", "list_sources", "meva_key", "summary_lines", "write_sources"]

#: The public S3 bucket of the MEVA videos (AWS Open Data registry, datasets/mevadata.yaml).
MEVA_BUCKET = "mevadata-public-01"
#: The bucket's HTTPS address (virtual-hosted style; region us-east-1).
MEVA_BASE_URL = f"https://{MEVA_BUCKET}.s3.amazonaws.com"
#: The bucket folder of the transcoded ground-camera videos (``<name>.r13.avi``).
MEVA_DROP = "drops-123-r13"
#: The key of a MEVA video in the bucket: the drop folder, then date and starting-hour folders (``meva_key``).
MEVA_KEY_TEMPLATE = MEVA_DROP + "/{date}/{hour}/{name}.avi"
#: The source datasets, in listing order.
DATASETS = ("MEVA", "VIRAT")
#: Where VIRAT's videos and KPF annotations come from (not the MEVA bucket).
VIRAT_WHERE = ("VIRAT Video Dataset Ground Release 2.0 (viratdata.org, usage agreement): <name>.mp4; "
               f"KPF annotations: {ANNOTATION_SOURCES['VIRAT']}")
#: Largest difference, in frames per second, between a video's rate and its dataset's (29.97 passes for 30).
FPS_TOLERANCE = 0.1

#: The columns of a sources TSV, in order.
SOURCE_COLUMNS = ("source_video", "dataset", "location", "rows", "frames_needed", "annotations", "video",
                  "video_status", "frames", "fps", "size")
#: How many unusable videos of each dataset a summary names, with what is wrong with each.
UNUSABLE_SHOWN = 3

#: The name of a MEVA video as SOVABench's clip names carry it, ``<date>.<start>.<end>.<site>.<camera>.r13``
#: (``2018-03-05.13-15-00.13-20-00.bus.G506.r13``; the MEVA README's naming, every name of the packaged splits).
MEVA_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})\.(\d{2})-\d{2}-\d{2}\.\d{2}-\d{2}-\d{2}\.[a-z]+\.G\d+\.r\d+")


def check_key_template(template: str) -> str:
    """``template`` when it is a key layout :func:`meva_key` can fill: a relative path (``/`` between folders, no
    ``.`` or ``..`` part, no ``\\``) of the fields ``{date}``, ``{hour}`` and ``{name}``, ``{name}`` among them;
    else ``ValueError`` saying what is wrong."""
    import string

    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as err:
        raise ValueError(f"key template {template!r}: {err}") from None
    if "name" not in fields or fields - {"date", "hour", "name"}:
        raise ValueError(f"key template {template!r} must hold {{name}} and no field but {{date}}, {{hour}}, {{name}}")
    key = template.format(date="D", hour="H", name="N")
    if key.startswith("/") or "\\" in key or any(part in ("", ".", "..") for part in key.split("/")):
        raise ValueError(f"key template {template!r} is not a relative path of named folders")
    return template


def meva_key(source_video: str, template: str = MEVA_KEY_TEMPLATE) -> str:
    """The object key of a MEVA source video in the public bucket, ``template`` filled (by default
    ``drops-123-r13/<date>/<hour>/<name>.avi``; :func:`check_key_template` says which templates are taken).

    ``source_video`` is the name as SOVABench's clip names carry it, release suffix included
    (``2018-03-05.13-15-00.13-20-00.bus.G506.r13``); the date and the starting hour are read from it.
    ``ValueError`` for a name that is not ``MEVA_NAME`` whole (so no key can hold a ``/`` or a ``..`` of its name).
    """
    found = MEVA_NAME.fullmatch(source_video)
    if found is None:
        raise ValueError(f"MEVA video name {source_video!r} is not 'YYYY-MM-DD.HH-MM-SS.HH-MM-SS.<site>.G<camera>.r13'")
    return check_key_template(template).format(date=found.group(1), hour=found.group(2), name=source_video)


@dataclass(frozen=True)
class Source:
    """One source video of a protocol.

    ``location``: the MEVA bucket key, or ``VIRAT_WHERE``; ``rows``: the protocol's rows cut from it;
    ``frames_needed``: the last annotated end frame of those rows + 1; ``annotations``: the path of its
    ``*.activities.yml`` ("" when not found or not looked for); ``video``: its path ("" likewise);
    ``video_status``: ``ok``, ``missing``, ``not looked for``, ``found`` (not opened: ``check=False``) or what is
    wrong with the file; ``frames``/``fps``/``size`` (``"<width>x<height>"``):
    what the file holds (None, "" for the size, when not opened).
    """

    source_video: str
    dataset: str
    location: str
    rows: int
    frames_needed: int
    annotations: str = ""
    video: str = ""
    video_status: str = "not looked for"
    frames: int | None = None
    fps: float | None = None
    size: str = ""

    @property
    def url_key(self) -> str | None:
        """The bucket key of a MEVA video, None for VIRAT."""
        return self.location if self.dataset == "MEVA" else None


def check_video(path, frames_needed: int, fps: float, reach: tuple[int, int] | None = None) -> tuple[str, object]:
    """``(status, info)`` of the video file ``path``, ``info`` its ``sova_lib.video.VideoInfo`` (None when it does not
    open): ``ok`` when it opens (PyAV, frames counted as ``sova_lib.video.decode`` counts them), its frame holds
    boxes that reach ``reach`` (``(x2, y2)``, when given: ``frame_size.size_mismatch``), it holds at least
    ``frames_needed`` frames (and one), runs within ``FPS_TOLERANCE`` of ``fps``, and its first, middle and last
    frames decode; otherwise a phrase saying what is wrong."""
    from sova_lib.video.decode import VideoError, open_video

    try:
        reader = open_video(str(path), "pyav")
    except (VideoError, OSError) as err:
        return f"does not open: {' '.join(str(err).split())}", None
    info = reader.info
    try:
        mismatch = size_mismatch(info.width, info.height, reach) if reach is not None else None
        if mismatch:
            return mismatch, info
        if info.num_frames < max(frames_needed, 1):
            return f"{info.num_frames} frames, the rows need {max(frames_needed, 1)}", info
        if abs(info.fps - fps) > FPS_TOLERANCE:
            return f"{info.fps:g} frames per second, not {fps:g}", info
        try:
            reader.read(sorted({0, info.num_frames // 2, info.num_frames - 1}))
        except VideoError as err:
            return f"frames that do not decode: {' '.join(str(err).split())}", info
    finally:
        reader.close()
    return "ok", info


def list_sources(clips: Sequence, annotations=None, video_root=None, *, check: bool = True,
                 index_dir=None) -> list[Source]:
    """One :class:`Source` per source video of ``clips`` (``splits.Clip``), MEVA then VIRAT, each by name.

    With ``annotations`` (a folder), whether each video's ``*.activities.yml`` and ``*.geom.yml`` are under it
    (any depth; ``kpf.find_annotation_files``); with ``video_root``, whether its video file is under it
    (``extract.find_source_videos``) and, with ``check``, whether it opens with the frames and frame rate its
    rows need, and a frame that holds its annotations' boxes where they were found (:func:`check_video`; the
    boxes from the video's annotation index, ``kpf_index.load_video_index``, cached in ``index_dir`` as ``clips
    plan`` caches it), and, where ``<video_root>/SHA256SUMS`` records it, holds the bytes recorded
    (``checksums.verify``).
    """
    rows: dict[str, list] = {}
    for clip in clips:
        rows.setdefault(clip.source_video, []).append(clip)
    ann: dict = {}
    if annotations is not None:
        from sova_lib.benchmarks.sovabench.clips import kpf
        from sova_lib.benchmarks.sovabench.clips.kpf_index import load_video_index

        found = kpf.find_annotation_files(annotations)
        for video in rows:
            files = next((found[n] for n in kpf.annotation_names(video) if n in found), None)
            if files is not None and files.activities is not None and files.geom is not None:
                ann[video] = files
    paths, recorded = {}, {}
    if video_root is not None:
        from sova_lib.benchmarks.sovabench.clips.extract import find_source_videos

        paths = find_source_videos(video_root, rows)
        recorded = read_checksums(video_root) if check else {}
    out = []
    for video, group in rows.items():
        dataset = group[0].source_dataset
        needed = max(c.end_frame for c in group) + 1
        status, info = ("not looked for", None) if video_root is None else ("missing", None)
        if video in paths:
            # the boxes' reach from the video's annotation index (kpf_index.VideoIndex.reach), where it was found
            reach = load_video_index(ann[video], index_dir).reach() if video in ann and check else None
            status, info = check_video(paths[video], needed, DEFAULT_FPS[dataset], reach) if check else ("found", None)
            if status == "ok" and recorded:
                status = verify(video_root, paths[video], recorded) or "ok"
        try:
            location = meva_key(video) if dataset == "MEVA" else VIRAT_WHERE
        except ValueError as err:
            raise ValueError(f"row index {group[0].index} ({group[0].name}): {err}") from None
        held = (info.num_frames, info.fps, f"{info.width}x{info.height}") if info else (None, None, "")
        out.append(Source(video, dataset, location, len(group), needed, str(ann[video].activities) if video in ann
                          else "", str(paths.get(video, "")), status, *held))
    return sorted(out, key=lambda s: (DATASETS.index(s.dataset), s.source_video))


def write_sources(sources: Sequence[Source], path) -> Path:
    """Write ``sources`` to ``path``: a JSON list of objects when it ends ``.json``, else a TSV with a
    ``SOURCE_COLUMNS`` header (empty cells where there is nothing)."""
    if str(path).lower().endswith(".json"):
        return write_text(path, json.dumps([asdict(s) for s in sources], indent=1) + "\n")
    return write_tsv(path, SOURCE_COLUMNS, ([getattr(s, c) for c in SOURCE_COLUMNS] for s in sources))


def summary_lines(sources: Sequence[Source], *, annotations: bool, videos: bool) -> list[str]:
    """A few lines per dataset: source videos and rows, how many have annotations and videos (when looked
    for), and where the missing ones come from."""
    lines = []
    for dataset in DATASETS:
        group = [s for s in sources if s.dataset == dataset]
        if not group:
            continue
        lines.append(f"{dataset}: {len(group)} source videos, {sum(s.rows for s in group)} rows")
        if annotations:
            have = sum(1 for s in group if s.annotations)
            lines.append(f"  annotations found: {have}, missing: {len(group) - have}")
        if videos:
            ok = sum(1 for s in group if s.video_status in ("ok", "found"))
            missing = sum(1 for s in group if s.video_status == "missing")
            bad = len(group) - ok - missing
            lines.append(f"  videos found and usable: {ok}, missing: {missing}" + (f", unusable: {bad}" if bad else ""))
            unusable = [s for s in group if s.video_status not in ("ok", "found", "missing")]
            lines += [f"    {s.video}: {s.video_status}" for s in unusable[:UNUSABLE_SHOWN]]
            if bad > UNUSABLE_SHOWN:
                lines.append(f"    ... and {bad - UNUSABLE_SHOWN} more, each with its video_status in the list")
        if dataset == "MEVA":
            lines.append(f"  from s3://{MEVA_BUCKET}/{MEVA_DROP}/<date>/<hour>/<name>.avi "
                         "('sova sovabench clips fetch' downloads them)")
        else:
            lines.append(f"  from {VIRAT_WHERE}")
    return lines
