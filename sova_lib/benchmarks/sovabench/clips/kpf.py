"""Reading KPF YAML annotations of MEVA and VIRAT, and a small per-video index.

KPF ("Kitware Packet Format") stores one record per line, in YAML flow style:

* ``<video>.activities.yml``: ``- { act: { act2: {<name>: 1.0}, id2: <activity id>,
  timespan: [{tsr0: [<start>, <end>]}], actors: [{id1: <object id>,
  timespan: [{tsr0: [<start>, <end>]}]}, ...] } }``
* ``<video>.geom.yml``: one box per object per frame, ``- { geom: { id1: <object id>,
  ts0: <frame>, g0: "<x1> <y1> <x2> <y2>", ... } }``
* ``<video>.types.yml``: ``- { types: { id1: <object id>, cset3: {<type>: 1.0} } }``

Frames (``ts0``, ``tsr0``) are 0-based frame numbers; timespans include both
ends; boxes are pixels, ``x2``/``y2`` the right/bottom edge. Keys may be quoted
or not, and fields may come in any order. ``meta`` records are skipped.

Geometry files reach hundreds of MB, so :func:`iter_geom` streams them in
blocks of whole lines, pulls the three fields out of a block with compiled
patterns (no YAML parser), and re-reads a block line by line only when it does
not check out, to report the offending line. ``sova_lib.benchmarks.sovabench.clips.kpf_index`` reduces
one video's files to the small index that clip planning needs.
"""
from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

__all__ = ["KINDS", "VIRAT_TO_MEVA", "Activity", "Actor", "AnnotationFiles", "GeomBlock", "KpfError", "annotation_names",
           "find_annotation_files", "iter_geom", "read_activities", "read_types"]

#: VIRAT activity name -> the MEVA name SOVABench uses (spec section 6).
#: Names absent from this map are used as they are.
VIRAT_TO_MEVA: dict[str, str] = {
    "vehicle_starting": "vehicle_starts",
    "vehicle_stopping": "vehicle_stops",
    "vehicle_turning_left": "vehicle_turns_left",
    "vehicle_turning_right": "vehicle_turns_right",
    "Entering": "person_enters_vehicle",
    "Exiting": "person_exits_vehicle",
    "Loading": "person_loads_vehicle",
    "Unloading": "person_unloads_vehicle",
    "Open_Trunk": "person_opens_trunk",
    "Closing_Trunk": "person_closes_trunk",
    "Opening": "person_opens_vehicle_door",
    "Closing": "person_closes_vehicle_door",
}

#: The kinds of KPF file of one video, as their names end (``<video>.<kind>.yml``).
KINDS = ("activities", "geom", "types")


class KpfError(ValueError):
    """A KPF file that cannot be read; the message names the file and line."""


# --------------------------------------------------------------------------- activities, types


@dataclass(frozen=True)
class Actor:
    """One actor of an activity: object ``id1`` and its timespans (frames, both ends included)."""

    id1: int
    timespans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Activity:
    """One activity record.

    ``name`` is the MEVA activity name (VIRAT names mapped by ``VIRAT_TO_MEVA``),
    ``source_name`` the name as written in the file; ``timespans`` are
    ``(start, end)`` frames, both ends included; ``line`` is the 1-based line of
    the record in its file.
    """

    id2: int
    name: str
    source_name: str
    timespans: tuple[tuple[int, int], ...]
    actors: tuple[Actor, ...]
    line: int


def _yaml_records(path: Path, kind: str) -> Iterator[tuple[int, object]]:
    """Yield ``(line number, value)`` of each record ``- { <kind>: <value> }`` of a KPF file; records of another kind
    (``meta``, ...) are skipped, a line that is no record is a ``KpfError``."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                value = yaml.load(text, Loader=loader)
            except yaml.YAMLError as err:
                reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                raise KpfError(f"{path}, line {lineno}: not valid YAML ({reason})") from None
            if not (isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict)
                    and len(value[0]) == 1):
                raise KpfError(f"{path}, line {lineno}: expected one record '- {{ kind: {{...}} }}', "
                               f"found {text[:80]!r}")
            if kind in value[0]:
                yield lineno, value[0][kind]


def _timespans(value, where: str) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list) or not value:
        raise KpfError(f"{where}: 'timespan' must be a non-empty list of {{tsr0: [start, end]}}")
    spans = []
    for item in value:
        tsr = item.get("tsr0") if isinstance(item, dict) else None
        if not (isinstance(tsr, list) and len(tsr) == 2 and all(isinstance(t, (int, float)) for t in tsr)):
            raise KpfError(f"{where}: timespan entry {item!r} has no 'tsr0: [start, end]'")
        spans.append((int(tsr[0]), int(tsr[1])))
    return tuple(spans)


def read_activities(path: str | Path) -> list[Activity]:
    """The activity records of a ``*.activities.yml`` file, in file order.

    An activity may have no actors (``actors == ()``); callers decide what to
    do with it. Raises :class:`KpfError` naming the file and line of a
    malformed record.
    """
    path = Path(path)
    out = []
    for lineno, act in _yaml_records(path, "act"):
        where = f"{path}, line {lineno}"
        if not isinstance(act, dict):
            raise KpfError(f"{where}: 'act' must be a mapping")
        names = act.get("act2")
        if not isinstance(names, dict) or not names:
            raise KpfError(f"{where}: activity has no 'act2: {{name: score}}'")
        source_name = str(max(names, key=lambda k: names[k] if isinstance(names[k], (int, float)) else 0))
        if not isinstance(act.get("id2"), int):
            raise KpfError(f"{where}: activity has no integer 'id2'")
        actors = []
        for a in act.get("actors") or ():
            if not isinstance(a, dict) or not isinstance(a.get("id1"), int):
                raise KpfError(f"{where}: actor {a!r} has no integer 'id1'")
            actors.append(Actor(a["id1"], _timespans(a.get("timespan"), f"{where}, actor {a['id1']}")))
        out.append(Activity(
            id2=act["id2"],
            name=VIRAT_TO_MEVA.get(source_name, source_name),
            source_name=source_name,
            timespans=_timespans(act.get("timespan"), where),
            actors=tuple(actors),
            line=lineno,
        ))
    return out


def read_types(path: str | Path) -> dict[int, str]:
    """Object id -> type (``person``, ``vehicle``, ...) from a ``*.types.yml`` file.

    Where a record lists several types, the highest-scored one is kept.
    """
    path = Path(path)
    out: dict[int, str] = {}
    for lineno, t in _yaml_records(path, "types"):
        cset = t.get("cset3") if isinstance(t, dict) else None
        if not isinstance(t, dict) or not isinstance(t.get("id1"), int) or not isinstance(cset, dict) or not cset:
            raise KpfError(f"{path}, line {lineno}: types record needs 'id1' and 'cset3: {{type: score}}'")
        out[t["id1"]] = str(max(cset, key=lambda k: cset[k]))
    return out


# --------------------------------------------------------------------------- geometry

_Q = r"['\"]?"  # optional quote around a key
_NUM = r"-?\d+(?:\.\d+)?"
_ID1 = re.compile(r"id1" + _Q + r"[ \t]*:[ \t]*(\d+)")
_TS0 = re.compile(r"ts0" + _Q + r"[ \t]*:[ \t]*(\d+)(?![\d.])")
_G0 = re.compile(r"g0" + _Q + r"[ \t]*:[ \t]*" + _Q + r"[ \t]*("
                 + _NUM + r"[ \t]+" + _NUM + r"[ \t]+" + _NUM + r"[ \t]+" + _NUM + r")[ \t]*['\"]?[ \t]*[,}]")
_GEOM_RECORD = re.compile(r"[ \t]*-[ \t]*\{[ \t]*" + _Q + r"geom" + _Q + r"[ \t]*:")
# the empty group makes findall return empty strings, not copies of the lines
_ANY_RECORD = re.compile(r"^[ \t]*-[ \t]*\{[^\n]*\}[ \t]*\r?$()", re.M)
_SKIP_LINE = re.compile(r"^[ \t]*(?:#[^\n]*)?\r?$", re.M)


@dataclass(frozen=True)
class GeomBlock:
    """The boxes of one block of consecutive geometry lines.

    ``ids`` (n,) int64 object ids, ``frames`` (n,) int64 frame numbers,
    ``boxes`` (n, 4) float64 ``x1 y1 x2 y2`` pixels; ``first_line`` is the
    1-based line number where the block starts.
    """

    ids: np.ndarray
    frames: np.ndarray
    boxes: np.ndarray
    first_line: int


def _block_fast(text: str, first_line: int) -> GeomBlock | None:
    """Parse a block with whole-block pattern scans, or None if it does not check out.

    The block starts at line ``first_line`` of its file. It checks out when
    every line is a ``- {...}`` record holding exactly one
    ``id1``, ``ts0`` and ``g0`` and the block's braces balance; a block with blank lines, comments, ``meta``
    records or a bad line goes to :func:`_block_by_line` instead.
    """
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if len(_ANY_RECORD.findall(text)) != n_lines or text.count("{") != text.count("}"):
        return None
    ids, frames, boxes = _ID1.findall(text), _TS0.findall(text), _G0.findall(text)
    if not (len(ids) == len(frames) == len(boxes) == n_lines):
        return None
    joined = " ".join(boxes)  # every token is a number (checked by _G0)
    b = np.fromstring(joined, dtype=np.float64 if "." in joined else np.int64, sep=" ")
    if b.size != 4 * n_lines:
        return None
    ids_a = np.fromstring(" ".join(ids), dtype=np.int64, sep=" ")
    frames_a = np.fromstring(" ".join(frames), dtype=np.int64, sep=" ")
    return GeomBlock(ids_a, frames_a, b.reshape(n_lines, 4).astype(np.float64, copy=False), first_line)


def _block_by_line(text: str, path: Path, first_line: int) -> GeomBlock:
    """Parse a block one line at a time; raise KpfError at the first bad line."""
    ids, frames, boxes = [], [], []
    for lineno, line in enumerate(text.splitlines(), start=first_line):
        if _SKIP_LINE.fullmatch(line):
            continue
        if not _ANY_RECORD.fullmatch(line):
            raise KpfError(f"{path}, line {lineno}: expected a record '- {{ geom: {{...}} }}', found {line[:80]!r}")
        if not _GEOM_RECORD.match(line):
            continue  # meta and other record kinds
        i, t, g = _ID1.findall(line), _TS0.findall(line), _G0.findall(line)
        if line.count("{") != line.count("}"):
            raise KpfError(f"{path}, line {lineno}: unbalanced braces in a geom record {line[:120]!r}")
        if not (len(i) == len(t) == len(g) == 1):
            raise KpfError(
                f"{path}, line {lineno}: a geom record needs exactly one each of 'id1: <int>', "
                f"'ts0: <frame>' and 'g0: <x1 y1 x2 y2>'; found {line[:120]!r}")
        ids.append(int(i[0]))
        frames.append(int(t[0]))
        boxes.append([float(v) for v in g[0].split()])
    return GeomBlock(np.array(ids, dtype=np.int64), np.array(frames, dtype=np.int64),
                     np.array(boxes, dtype=np.float64).reshape(-1, 4), first_line)


def iter_geom(path: str | Path, *, block_chars: int = 4_000_000) -> Iterator[GeomBlock]:
    """Stream the boxes of a ``*.geom.yml`` file as :class:`GeomBlock` s of whole lines.

    Memory stays bounded by ``block_chars`` (about 4 MB of text and its boxes)
    whatever the file's size. Raises :class:`KpfError` naming the file and
    line of a line that is not a record, or of a geom record without exactly
    one ``id1``, ``ts0`` and four-number ``g0``.
    """
    path = Path(path)
    line = 1
    with open(path, encoding="utf-8") as f:
        while True:
            text = f.read(block_chars)
            if not text:
                return
            if not text.endswith("\n"):
                text += f.readline()
            yield _block_fast(text, line) or _block_by_line(text, path, line)
            line += text.count("\n")


# --------------------------------------------------------------------------- locating files


@dataclass(frozen=True)
class AnnotationFiles:
    """The KPF files of one video (``types`` and ``geom`` may be missing: None)."""

    name: str
    activities: Path | None
    geom: Path | None
    types: Path | None


def find_annotation_files(root: str | Path) -> dict[str, AnnotationFiles]:
    """All KPF annotation files anywhere under ``root``, by video name.

    The video name is the file name without ``.activities.yml`` /
    ``.geom.yml`` / ``.types.yml``. Where the same file name appears in
    several folders, the first path in sorted order is used and a warning
    names the video.
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"annotation root {root} is not a directory")
    found: dict[str, dict[str, list[Path]]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for fn in filenames:
            for kind in KINDS:
                suffix = f".{kind}.yml"
                if fn.endswith(suffix):
                    found.setdefault(fn[: -len(suffix)], {}).setdefault(kind, []).append(Path(dirpath) / fn)
    dupes = sorted(name for name, kinds in found.items() if any(len(paths) > 1 for paths in kinds.values()))
    if dupes:
        warnings.warn(f"{len(dupes)} video(s) have annotation files in several folders under {root}; "
                      f"using the first path in sorted order (e.g. {dupes[0]})", stacklevel=2)
    return {name: AnnotationFiles(name, *(min(kinds[k]) if k in kinds else None for k in KINDS))
            for name, kinds in found.items()}


_RELEASE_SUFFIX = re.compile(r"\.r\d+$")


def annotation_names(source_video: str) -> tuple[str, ...]:
    """Annotation file names to try for a source video, best first.

    MEVA videos carry a release suffix (``....bus.G506.r13``) that their
    annotation files do not (``....bus.G506.activities.yml``).
    """
    stripped = _RELEASE_SUFFIX.sub("", source_video)
    return (source_video,) if stripped == source_video else (source_video, stripped)
