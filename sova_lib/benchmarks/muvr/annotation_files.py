"""MUVR's released retrieval annotation files, each read and checked (spec muvr-spec.md Sec. 2).

One partition lives in ``<root>/annotations/retrieval/<partition>/``::

    videos.json           [{"id": 17, "frames_path": ".../BV1xx", "is_query": 0}, ...]
    queries_en.json       [{"id": 3, "frames_path": ".../BV1qq", "prompt_en": str, "Clip": str, ...}, ...]
    query_rel_lists.json  [{"query_id": 3, "rel_lists": {"pos_all": {"id_list": [17, 42, ...]}, ...}}, ...]
    query_tag_lists.json  [{"query_id": 3, "tag_lists": {"+<tag>": {"id_list": [17, ...]}, ...}}, ...]
    query_tags.json       {"3": ["<tag phrase>", ...], ...}      (keyed by str of the queries_en.json id)

A video's name is the base name of its ``frames_path`` (``video_name``).
``query_id`` and every ``id_list`` entry are the ``id`` of a ``videos.json``
record, resolved to its name as the official loader does (``vid_name``,
cuvr.py:88-96,114-140): by the JSON value, so ``17`` resolves and ``"17"``
does not, and a video name is accepted only where some record's ``id`` is
that very string (``VideoIds``).

Each reader checks its file as it reads it (a failure raises
``MuvrDataError`` naming the file and the key): the file exists and parses;
every record has its fields with the right types; ``videos.json`` ids are
unique; every listed id of a kept entry is the id of a ``videos.json``
record (a video name where an id belongs is named as such, in ``query_id``
too), or, with ``join_listed``, is kept as ``#<id>`` (``VideoIds.unknown``).
Entries of the list files whose ``query_id`` names no kept query are skipped
unread and counted (cuvr.py:113-116,132-135). What the files make of a
partition (its queries, gallery, Filter prompts, notes) is
``sova_lib.benchmarks.muvr.annotations``'.
"""
from __future__ import annotations

import json
import posixpath
from pathlib import Path

from sova_lib.storage import json_problem

__all__ = ["MuvrDataError", "VideoIds", "read_json", "read_lists", "read_queries", "read_query_tags", "read_videos",
           "video_name"]


class MuvrDataError(ValueError):
    """A MUVR file that is missing or malformed; the message names the file and the key."""

    def __init__(self, path, key, problem: str):
        super().__init__(f"{path}: {problem}" if key is None else f"{path}: {key}: {problem}")


def read_json(path: Path):
    """The parsed content of a JSON file, or ``MuvrDataError`` naming the file."""
    if not path.is_file():
        raise MuvrDataError(path, None, "file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise MuvrDataError(path, f"line {err.lineno}", f"not valid JSON ({err.msg})") from None
    except RecursionError as err:
        raise MuvrDataError(path, None, f"not valid JSON ({json_problem(err)})") from None


def _list_of_dicts(data, path: Path, fields: dict) -> list:
    if not isinstance(data, list):
        raise MuvrDataError(path, None, f"expected a JSON list of objects, got {type(data).__name__}")
    for k, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise MuvrDataError(path, f"[{k}]", f"expected an object, got {type(rec).__name__}")
        for name, kind in fields.items():
            if name not in rec:
                raise MuvrDataError(path, f"[{k}].{name}", "missing")
            if not isinstance(rec[name], kind) or isinstance(rec[name], bool):
                raise MuvrDataError(path, f"[{k}].{name}", f"expected {getattr(kind, '__name__', kind)}, "
                                    f"got {type(rec[name]).__name__}")
    return data


def video_name(frames_path: str) -> str:
    """A video's name: the base name of its ``frames_path`` (``BV...`` or ``BV..._HH.MM.SS-HH.MM.SS``)."""
    return posixpath.basename(frames_path.replace("\\", "/").rstrip("/"))


def _hashable_id(value) -> bool:
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


class VideoIds:
    """``videos.json``: its ``id`` -> video name map, and the resolution of listed ids through it.

    ``names`` are the records' video names in file order, each once (a dict, for lookups), ``marked`` those
    of the records with ``is_query == 1``. The official loader keys
    ``vid_name`` by each record's ``id`` as JSON gives it and looks every
    ``query_id`` and ``id_list`` entry up in it (cuvr.py:88-96,114-140): the
    integer ``3`` names a video, the string ``"3"`` does not, and a video
    name (``"BV..."``) resolves only if some record's ``id`` is that string.
    With ``join_listed``, an id in no record is kept as ``#<id>``; ``unknown``
    gathers those, in order of first listing.
    """

    def __init__(self, records: list, path: Path, join_listed: bool = False):
        self.path, self.by_id = path, {}
        self.join_listed, self.unknown = join_listed, {}
        for k, rec in enumerate(records):
            if "id" not in rec:
                raise MuvrDataError(path, f"[{k}].id", "missing; listed ids are resolved through it")
            if not _hashable_id(rec["id"]):
                raise MuvrDataError(path, f"[{k}].id", f"expected an integer id, got {type(rec['id']).__name__}")
            if rec["id"] in self.by_id:
                raise MuvrDataError(path, f"[{k}].id", f"id {rec['id']!r} appears twice")
            self.by_id[rec["id"]] = video_name(rec["frames_path"])
        self.names = dict.fromkeys(self.by_id.values())
        self.marked = [video_name(r["frames_path"]) for r in records if r.get("is_query", 0) == 1]

    def name(self, raw, path: Path, key: str) -> str:
        """The video name of listed id ``raw`` (``#<id>`` for an id in no record, with ``join_listed``)."""
        if _hashable_id(raw) and raw in self.by_id:
            return self.by_id[raw]
        if isinstance(raw, str) and raw in self.names:
            raise MuvrDataError(path, key, f"lists the video name {raw!r}; the released files list the integer "
                                f"ids of {self.path.name} (its 'id' field), which the official loader resolves")
        if not _hashable_id(raw):
            raise MuvrDataError(path, key, f"expected an id of {self.path.name}, got {type(raw).__name__}")
        if self.join_listed:
            return self.unknown.setdefault(raw, f"#{raw}")
        raise MuvrDataError(path, key, f"id {raw!r} is in no record of {self.path.name}; pass join_listed=True "
                            "(--join-listed) to keep it as a gallery entry without features")

    def ids(self, value, path: Path, key: str) -> tuple:
        """The video names of the ids ``value`` lists (an object ``{"id_list": [ids]}``), each once, in order of
        listing."""
        ids = value.get("id_list") if isinstance(value, dict) else None
        if not isinstance(ids, list):
            raise MuvrDataError(path, key, "expected an object {\"id_list\": [ids of videos.json]}")
        return tuple(dict.fromkeys(self.name(raw, path, f"{key}[{j}]") for j, raw in enumerate(ids)))

    def query(self, raw, kept, path: Path, key: str) -> str | None:
        """The query's video name, or None for an entry the official loader skips, one whose video is not among
        the ``kept`` queries (``vid_name.get``, cuvr.py:113-116)."""
        if not _hashable_id(raw) or raw in self.names and raw not in self.by_id:
            self.name(raw, path, key)  # raises: not an id, or a video name where the released files hold an id
        qid = self.by_id.get(raw)
        return qid if qid in kept else None


def read_videos(folder: Path, join_listed: bool = False) -> VideoIds:
    """``folder/videos.json`` read and checked: its records' names and ids (``VideoIds``)."""
    path = folder / "videos.json"
    return VideoIds(_list_of_dicts(read_json(path), path, {"frames_path": str}), path, join_listed)


def read_queries(folder: Path, split: str) -> tuple[dict, int]:
    """The ``queries_en.json`` records that pass the ``split`` filter (cuvr.py:68-73), and how many do not.

    Each kept record is ``video name -> (prompt_en, Clip or None, str of its
    id or None)``, in file order; a video named by two records is an error.
    """
    path = folder / "queries_en.json"
    records = _list_of_dicts(read_json(path), path, {"frames_path": str, "prompt_en": str})
    by_id, seen, filtered = {}, set(), 0
    for k, rec in enumerate(records):
        qid = video_name(rec["frames_path"])
        if qid in seen:
            raise MuvrDataError(path, f"[{k}].frames_path", f"query id {qid!r} appears twice")
        seen.add(qid)
        if split != "all" and rec.get("split") != split:
            filtered += 1
            continue
        clip = rec.get("Clip")
        by_id[qid] = (rec["prompt_en"], clip if isinstance(clip, str) else None,
                      str(rec["id"]) if "id" in rec else None)
    return by_id, filtered


def read_lists(folder: Path, videos: VideoIds, kept, kind: str) -> tuple[list, int]:
    """``query_<kind>_lists.json`` (``kind`` ``rel`` or ``tag``): ``(query's video name, {list name: listed video
    names})`` of each entry of a ``kept`` query, in file order, and the entries skipped.

    The file is read and its entries checked to be objects with a ``query_id`` and a ``<kind>_lists`` object at
    once. An entry whose ``query_id`` names no ``kept`` query (``VideoIds.query``) is skipped unread, as the official
    loader skips it (cuvr.py:113-116,132-135).
    """
    path, field = folder / f"query_{kind}_lists.json", f"{kind}_lists"
    entries, skipped = [], 0
    for k, entry in enumerate(_list_of_dicts(read_json(path), path, {field: dict})):
        if "query_id" not in entry:
            raise MuvrDataError(path, f"[{k}].query_id", "missing")
        qid = videos.query(entry["query_id"], kept, path, f"[{k}].query_id")
        if qid is None:
            skipped += 1
            continue
        where = f"[{k}].rel_lists.{{}}" if kind == "rel" else f"[{k}].tag_lists[{{!r}}]"
        entries.append((qid, {name: videos.ids(value, path, where.format(name))
                              for name, value in entry[field].items()}))
    return entries, skipped


def read_query_tags(folder: Path, by_id: dict) -> dict:
    """``query_tags.json``: each query's tag phrases, keyed by str of its ``queries_en.json`` id (cuvr.py:82-83).

    ``by_id`` is ``read_queries``' map (its third field is the key); a
    query the file does not name has no tags.
    """
    gpath = folder / "query_tags.json"
    tags = read_json(gpath)
    if not isinstance(tags, dict):
        raise MuvrDataError(gpath, None, f"expected an object {{id: [tag phrases]}}, got {type(tags).__name__}")
    for key, value in tags.items():
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise MuvrDataError(gpath, repr(key), "expected a list of tag phrases")
    return {q: tags.get(key, []) for q, (_, _, key) in by_id.items()}
