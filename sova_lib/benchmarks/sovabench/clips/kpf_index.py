"""A small per-video index of KPF annotations for clip planning, cached on disk.

:func:`build_video_index` reduces one video's KPF files (``sova_lib.benchmarks.sovabench.clips.kpf``) to
what SOVABench planning needs: for every activity, the union of its actors'
counted boxes (SOVABench spec section 6, steps 2-3). It streams the geometry
file and keeps only the actors' boxes, so memory does not grow with the file.
:func:`load_video_index` caches the index (a few KB of JSON per video) keyed
by the files' names, sizes and modification times, so a second run does not
re-read the geometry.
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.sovabench.clips.kpf import KINDS, AnnotationFiles, iter_geom, read_activities, read_types
from sova_lib.crop import union_box
from sova_lib.storage import write_text

__all__ = ["INDEX_VERSION", "IndexedActivity", "VideoIndex", "build_video_index", "default_index_dir",
           "load_video_index"]

#: Bumped whenever the cached index's content or meaning changes.
INDEX_VERSION = 1


@dataclass(frozen=True)
class IndexedActivity:
    """One activity reduced to what clip planning needs.

    ``region`` is the union ``(x1, y1, x2, y2)`` of the actors' counted boxes
    over frames ``start <= f < end`` of the activity's timespan (spec section
    6, steps 2-3; ``sova_lib.crop.union_box``), None when no box counts or the
    activity has several timespans or no actors; ``n_boxes`` how many boxes
    went into it.
    """

    id2: int
    name: str
    source_name: str
    timespans: tuple[tuple[int, int], ...]
    actor_ids: tuple[int, ...]
    region: tuple[int, int, int, int] | None
    n_boxes: int
    line: int


@dataclass
class VideoIndex:
    """One video's activities with their regions, and its object types."""

    name: str
    activities: list[IndexedActivity]
    types: dict[int, str] = field(default_factory=dict)
    key: dict = field(default_factory=dict)

    def find(self, name: str, start: int, end: int) -> list[IndexedActivity]:
        """Activities called ``name`` whose timespan is ``(start, end)``, in file order.

        An activity with several timespans matches when any of them, or their
        overall extent, is ``(start, end)``.
        """
        return [a for a in self.activities if a.name == name and (start, end) in (
            *a.timespans, (min(s for s, _ in a.timespans), max(e for _, e in a.timespans)))]

    def reach(self) -> tuple[int, int] | None:
        """How far right and down the activities' regions reach, their largest ``x2`` and ``y2``: about the size of
        the frame the annotations were drawn on, or less (boxes pass the frame's edge by a few pixels, and no box
        need touch it); None when no activity has a region. ``clips.frame_size.size_mismatch`` compares a video
        with it."""
        regions = [a.region for a in self.activities if a.region is not None]
        return (max(r[2] for r in regions), max(r[3] for r in regions)) if regions else None

    def to_json(self) -> dict:
        return {"name": self.name, "key": self.key, "types": {str(k): v for k, v in self.types.items()},
                "activities": [asdict(a) for a in self.activities]}

    @classmethod
    def from_json(cls, d: dict) -> "VideoIndex":
        acts = [IndexedActivity(**{**a, "timespans": tuple(tuple(s) for s in a["timespans"]),
                                   "actor_ids": tuple(a["actor_ids"]), "region": a["region"] and tuple(a["region"])})
                for a in d["activities"]]
        return cls(d["name"], acts, {int(k): v for k, v in d["types"].items()}, d["key"])


def _file_key(files: AnnotationFiles) -> dict:
    key: dict = {"version": INDEX_VERSION}
    for kind in KINDS:
        p = getattr(files, kind)
        if p is not None:
            st = os.stat(p)
            key[kind] = [p.name, st.st_size, st.st_mtime_ns]
    return key


def _actor_spans(acts) -> tuple[dict, dict]:
    """``counted``: object -> every timespan an activity gives it as an actor; ``by_object``: object ->
    ``(activity index, start, end)`` of the activities whose region is computed (one timespan, some actor)."""
    counted: dict[int, list[tuple[int, int]]] = {}
    by_object: dict[int, list[tuple[int, int, int]]] = {}
    for k, a in enumerate(acts):
        for actor in a.actors:
            counted.setdefault(actor.id1, []).extend(actor.timespans)
        if len(a.timespans) == 1:  # an activity without actors has no object here
            for o in {actor.id1 for actor in a.actors}:
                by_object.setdefault(o, []).append((k, *a.timespans[0]))
    return counted, by_object


def _add_block(block, needed, counted, by_object, parts, n_boxes) -> None:
    """Add one geometry block's counted boxes to each activity: the union of those of each block (``parts``, a list
    per activity) and their number (``n_boxes``), in place."""
    keep = np.isin(block.ids, needed)
    if not keep.any():
        return
    ids, frames, boxes = block.ids[keep], block.frames[keep], block.boxes[keep]
    order = np.argsort(ids, kind="stable")
    ids, frames, boxes = ids[order], frames[order], boxes[order]
    cuts = np.flatnonzero(np.diff(ids)) + 1
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(ids)]):
        o = int(ids[a])
        f = frames[a:b]
        ok = np.zeros(len(f), dtype=bool)
        for s, e in counted[o]:
            ok |= (f >= s) & (f <= e)
        for k, s, e in by_object[o]:
            m = ok & (f >= s) & (f < e)
            if m.any():
                parts[k].append(union_box(boxes[a:b][m]))
                n_boxes[k] += int(m.sum())


def build_video_index(files: AnnotationFiles) -> VideoIndex:
    """Read one video's KPF files and compute every activity's region.

    A box of object ``o`` on frame ``f`` counts when ``f`` lies inside (both
    ends included) a timespan that some activity of the video gives ``o`` as
    an actor. An activity's region is the union of its actors' counted boxes
    over ``start <= f < end`` of its (single) timespan. Only the actors'
    boxes are kept while streaming, so memory does not grow with the
    geometry file. ``files.activities`` and ``files.geom`` must exist.
    """
    if files.activities is None or files.geom is None:
        raise FileNotFoundError(f"{files.name}: needs both an activities and a geom file")
    acts = read_activities(files.activities)
    types = read_types(files.types) if files.types is not None else {}

    counted, by_object = _actor_spans(acts)
    parts: list[list] = [[] for _ in acts]
    n_boxes = np.zeros(len(acts), dtype=np.int64)
    needed = np.array(sorted(by_object), dtype=np.int64)
    for block in iter_geom(files.geom):
        _add_block(block, needed, counted, by_object, parts, n_boxes)

    indexed = [IndexedActivity(a.id2, a.name, a.source_name, a.timespans, tuple(actor.id1 for actor in a.actors),
                               union_box(parts[k]) if parts[k] else None,  # the union of the blocks' unions
                               int(n_boxes[k]), a.line) for k, a in enumerate(acts)]
    return VideoIndex(files.name, indexed, types, _file_key(files))


def default_index_dir() -> Path:
    """Where :func:`load_video_index` caches indexes: ``$SOVA_KPF_INDEX_DIR``,
    else ``$XDG_CACHE_HOME/sova_lib/kpf-index`` (``~/.cache/...``)."""
    if os.environ.get("SOVA_KPF_INDEX_DIR"):  # the home folder is not looked up: a container may have none
        return Path(os.environ["SOVA_KPF_INDEX_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sova_lib" / "kpf-index"


def load_video_index(files: AnnotationFiles, cache_dir: str | Path | None = None) -> VideoIndex:
    """The index of one video, from the on-disk cache when it is still valid.

    The cache file (``<cache_dir>/<video>.<path hash>.json``, a few KB) is
    reused when the files' names, sizes and modification times and
    ``INDEX_VERSION`` all match what it recorded; otherwise the index is
    rebuilt and the file replaced atomically. ``cache_dir=None`` uses
    :func:`default_index_dir`; ``cache_dir=False`` disables caching.
    """
    if cache_dir is False:
        return build_video_index(files)
    cache_dir = Path(cache_dir) if cache_dir is not None else default_index_dir()
    tag = hashlib.sha256(str(Path(files.activities).resolve()).encode()).hexdigest()[:10]
    cache_path = cache_dir / f"{files.name}.{tag}.json"
    key = _file_key(files)
    with suppress(OSError, ValueError, KeyError, TypeError):
        cached = json.loads(cache_path.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            return VideoIndex.from_json(cached)
    index = build_video_index(files)
    write_text(cache_path, json.dumps(index.to_json()))
    return index
