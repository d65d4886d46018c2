"""Reading MUVR's released retrieval annotations (MUVR paper, Sec. 3; spec muvr-spec.md Sec. 2).

One partition lives in ``<root>/annotations/retrieval/<partition>/``::

    videos.json           [{"id": 17, "frames_path": ".../BV1xx", "is_query": 0}, ...]
    queries_en.json       [{"id": 3, "frames_path": ".../BV1qq", "prompt_en": str, "Clip": str, ...}, ...]
    query_rel_lists.json  [{"query_id": 3, "rel_lists": {"pos_all": {"id_list": [17, 42, ...]}, ...}}, ...]
    query_tag_lists.json  [{"query_id": 3, "tag_lists": {"+<tag>": {"id_list": [17, ...]}, ...}}, ...]
    query_tags.json       {"3": ["<tag phrase>", ...], ...}      (keyed by str of the queries_en.json id)

A video's name is the base name of its ``frames_path`` (``BV...`` or
``BV..._HH.MM.SS-HH.MM.SS`` for a piece of an upload); features are stored
and results reported under that name. ``query_id`` and every ``id_list``
entry are the ``id`` of a ``videos.json`` record, resolved to its name as
the official loader does (``vid_name``, cuvr.py:88-96,114-140): by the
JSON value, so ``17`` resolves and ``"17"`` does not, and a video name is
accepted only where some record's ``id`` is that very string.

The gallery of a partition is, as in the official loader, the videos listed
in its ``query_rel_lists.json`` (every relation kind, cuvr.py:120-122,174), in
``videos.json`` order; a ``videos.json`` video that no list names is left
out, with a note. Partitions are ``PARTITIONS``; the official code's folder
names ``geng`` (others) and ``animal`` (instance) are accepted as aliases
(``ALIASES``).

Checks on load (each failure raises ``MuvrDataError`` naming the file and the
key): every file exists and parses; every record has its fields with the
right types; ``videos.json`` ids are unique; every query has a ``pos_all``
list; every listed id is the id of a ``videos.json`` record (a video name
where an id belongs is named as such); every ``query_id`` is a query of
``queries_en.json``; every Filter ``id_list`` lies within its query's
``pos_all`` (spec Sec. 8.8). The official loader stops with a ``KeyError`` on
an id in no ``videos.json`` record; ``join_listed=True`` instead keeps each
such id as a gallery entry named ``#<id>`` that has no features (so, when
listed as a positive, it is a miss), recorded in ``Partition.notes``.
Prompts that combine tags with ``AND``/``OR`` are skipped as in the official
code (cuvr.py:319,384) and counted in ``Partition.skipped_prompts``. The
``Clip`` field is kept but not used by scoring (spec Sec. 8.7).
"""
from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "ALIASES",
    "ANNOTATION_FILES",
    "PARTITIONS",
    "MuvrDataError",
    "MuvrQuery",
    "Partition",
    "TagPrompt",
    "canonical_partition",
    "load_partition",
    "partition_dir",
    "read_json",
]

#: The five partitions, in the column order of the paper's Tables 7 and 8 (N, O, I, R, D).
PARTITIONS = ("news", "others", "instance", "region", "dance")
#: Folder names of the official code -> partition (M:evaluate_all_vlm_mul.py:258).
ALIASES = {"geng": "others", "animal": "instance"}
ANNOTATION_FILES = ("videos.json", "queries_en.json", "query_rel_lists.json", "query_tag_lists.json",
                    "query_tags.json")
_COMPOUND = re.compile(r"\b(AND|OR)\b")
_MARKS = re.compile(r"\[?<(?:region|mask)[^>]*>\]?")


class MuvrDataError(ValueError):
    """A MUVR file that is missing or malformed; the message names the file and the key."""

    def __init__(self, path, key, problem: str):
        self.path, self.key, self.problem = Path(path), key, problem
        where = f"{path}" if key is None else f"{path}: {key}"
        super().__init__(f"{where}: {problem}")


def canonical_partition(name: str) -> str:
    """``name`` as one of ``PARTITIONS`` (aliases accepted); ``ValueError`` otherwise."""
    name = ALIASES.get(name, name)
    if name not in PARTITIONS:
        raise ValueError(f"unknown MUVR partition {name!r}; choose from {PARTITIONS} "
                         f"(aliases {sorted(ALIASES)})")
    return name


def clean_description(text: str) -> str:
    """The description without its ``[<region>]`` and ``<mask...>`` marks, spaces tidied.

    Text encoders of the released features saw ``[<region>]`` (spec Sec. 3);
    describers and sentence encoders get the cleaned text (spec Sec. 8.6).
    """
    return re.sub(r"\s+", " ", _MARKS.sub("", text)).strip()


def partition_dir(root: str | Path, partition: str) -> Path:
    """The annotation folder of ``partition`` under the data ``root``, under its own name or an alias."""
    partition = canonical_partition(partition)
    base = Path(root) / "annotations" / "retrieval"
    for name in [partition] + [a for a, p in ALIASES.items() if p == partition]:
        if (base / name).is_dir():
            return base / name
    raise MuvrDataError(base / partition, None, "no such folder; expected the released layout "
                        "annotations/retrieval/<partition>/ under the data root")


def read_json(path: Path):
    """The parsed content of a JSON file, or ``MuvrDataError`` naming the file."""
    if not path.is_file():
        raise MuvrDataError(path, None, "file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise MuvrDataError(path, f"line {err.lineno}", f"not valid JSON ({err.msg})") from None


@dataclass(frozen=True)
class MuvrQuery:
    """One Base query: its video id, integer ``number``, English description, ``Clip`` and ``pos_all``."""

    id: str
    number: int | None
    text: str
    clip: str | None
    positives: tuple


@dataclass(frozen=True)
class TagPrompt:
    """One single-literal Filter prompt: ``+phrase`` (sign +1) or ``-phrase`` (sign -1) and its positives."""

    query_id: str
    prompt: str
    phrase: str
    sign: int
    positives: tuple


@dataclass
class Partition:
    """A partition's gallery (video ids, in file order), Base queries, Filter prompts and tags."""

    name: str
    folder: Path
    gallery: tuple
    queries: tuple
    prompts: tuple
    tags: dict
    skipped_prompts: int = 0
    notes: list = field(default_factory=list)

    def query(self, query_id: str) -> MuvrQuery:
        for q in self.queries:
            if q.id == query_id:
                return q
        raise KeyError(query_id)


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


def _video_id(frames_path: str) -> str:
    return posixpath.basename(frames_path.replace("\\", "/").rstrip("/"))


def _hashable_id(value) -> bool:
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


class _Names:
    """``videos.json``: its ``id`` -> video name map, and the resolution of listed ids through it.

    The official loader keys ``vid_name`` by each record's ``id`` as JSON
    gives it and looks every ``query_id`` and ``id_list`` entry up in it
    (cuvr.py:88-96,114-140): the integer ``3`` names a video, the string
    ``"3"`` does not, and a video name (``"BV..."``) resolves only if some
    record's ``id`` is that string.
    """

    def __init__(self, records: list, path: Path):
        self.path, self.by_id, self.names = path, {}, []
        for k, rec in enumerate(records):
            if "id" not in rec:
                raise MuvrDataError(path, f"[{k}].id", "missing; listed ids are resolved through it")
            if not _hashable_id(rec["id"]):
                raise MuvrDataError(path, f"[{k}].id", f"expected an integer id, got {type(rec['id']).__name__}")
            if rec["id"] in self.by_id:
                raise MuvrDataError(path, f"[{k}].id", f"id {rec['id']!r} appears twice")
            name = _video_id(rec["frames_path"])
            self.by_id[rec["id"]] = name
            self.names.append(name)
        self.known_names = set(self.names)

    def name(self, raw, path: Path, key: str, *, join_listed: bool = False) -> str | None:
        """The video name of listed id ``raw``; None for an id in no record when ``join_listed``."""
        if _hashable_id(raw) and raw in self.by_id:
            return self.by_id[raw]
        if isinstance(raw, str) and raw in self.known_names:
            raise MuvrDataError(path, key, f"lists the video name {raw!r}; the released files list the integer "
                                f"ids of {self.path.name} (its 'id' field), which the official loader resolves")
        if not _hashable_id(raw):
            raise MuvrDataError(path, key, f"expected an id of {self.path.name}, got {type(raw).__name__}")
        if join_listed:
            return None
        raise MuvrDataError(path, key, f"id {raw!r} is in no record of {self.path.name}; pass join_listed=True "
                            "(--join-listed) to keep it as a gallery entry without features")


def _id_list(value, path: Path, key: str) -> list:
    ids = value.get("id_list") if isinstance(value, dict) else None
    if not isinstance(ids, list):
        raise MuvrDataError(path, key, "expected an object {\"id_list\": [ids of videos.json]}")
    return ids


def _queries(folder: Path) -> dict:
    path = folder / "queries_en.json"
    records = _list_of_dicts(read_json(path), path, {"frames_path": str, "prompt_en": str})
    by_id = {}
    for k, rec in enumerate(records):
        qid = _video_id(rec["frames_path"])
        if qid in by_id:
            raise MuvrDataError(path, f"[{k}].frames_path", f"query id {qid!r} appears twice")
        clip = rec.get("Clip")
        number = rec.get("id") if isinstance(rec.get("id"), int) and not isinstance(rec.get("id"), bool) else None
        by_id[qid] = (rec["prompt_en"], clip if isinstance(clip, str) else None, number,
                      str(rec["id"]) if "id" in rec else None)
    return by_id


def _parse_prompt(prompt: str, path: Path, key: str) -> tuple[int, str] | None:
    """``(sign, phrase)`` of ``+phrase`` / ``-phrase``; None for an AND/OR combination."""
    if _COMPOUND.search(prompt):
        return None
    text = prompt.strip()
    if len(text) < 2 or text[0] not in "+-" or not text[1:].strip():
        raise MuvrDataError(path, key, "expected a tag prompt '+<tag>' or '-<tag>'")
    return (1 if text[0] == "+" else -1), text[1:].strip()


def load_partition(root: str | Path, partition: str, *, join_listed: bool = False) -> Partition:
    """Read and check one partition of the released annotations under ``root`` (see the module docstring)."""
    name = canonical_partition(partition)
    folder = partition_dir(root, name)
    vpath = folder / "videos.json"
    names = _Names(_list_of_dicts(read_json(vpath), vpath, {"frames_path": str}), vpath)
    by_id = _queries(folder)
    listed, unknown = set(), {}

    def resolve(ids, path, key):
        out = []
        for j, raw in enumerate(ids):
            vid = names.name(raw, path, f"{key}[{j}]", join_listed=join_listed)
            if vid is None:
                vid = unknown.setdefault(raw, f"#{raw}")
            out.append(vid)
        return tuple(dict.fromkeys(out))

    def resolve_query(raw, path, key):
        if not _hashable_id(raw) or raw not in names.by_id:
            names.name(raw, path, key)  # raises the reason (a video name, or an id in no record)
            raise MuvrDataError(path, key, f"query {raw!r} is in no record of videos.json")
        qid = names.by_id[raw]
        if qid not in by_id:
            raise MuvrDataError(path, key, f"query {raw!r} (video {qid!r}) is not in queries_en.json")
        return qid

    rpath = folder / "query_rel_lists.json"
    rel = _list_of_dicts(read_json(rpath), rpath, {"rel_lists": dict})
    positives = {}
    for k, rec in enumerate(rel):
        qid = resolve_query(rec.get("query_id"), rpath, f"[{k}].query_id")
        if "pos_all" not in rec["rel_lists"]:
            raise MuvrDataError(rpath, f"[{k}].rel_lists.pos_all", "missing")
        for kind, value in rec["rel_lists"].items():
            ids = resolve(_id_list(value, rpath, f"[{k}].rel_lists.{kind}"), rpath, f"[{k}].rel_lists.{kind}")
            listed.update(ids)
            if kind == "pos_all":
                positives[qid] = ids
    missing_q = [q for q in by_id if q not in positives]
    if missing_q:
        raise MuvrDataError(rpath, None, f"{len(missing_q)} quer(ies) of queries_en.json have no pos_all "
                            f"list (e.g. {missing_q[:3]})")
    queries = tuple(MuvrQuery(q, number, text, clip, positives[q]) for q, (text, clip, number, _) in by_id.items())
    gallery = [v for v in dict.fromkeys(names.names) if v in listed] + list(unknown.values())

    tpath = folder / "query_tag_lists.json"
    tag_lists = _list_of_dicts(read_json(tpath), tpath, {"tag_lists": dict})
    prompts, skipped = [], 0
    for k, rec in enumerate(tag_lists):
        qid = resolve_query(rec.get("query_id"), tpath, f"[{k}].query_id")
        base = set(positives[qid])
        for prompt, value in rec["tag_lists"].items():
            key = f"[{k}].tag_lists[{prompt!r}]"
            ids = resolve(_id_list(value, tpath, key), tpath, key)
            parsed = _parse_prompt(prompt, tpath, key)
            if parsed is None:
                skipped += 1
                continue
            outside = [i for i in ids if i not in base]
            if outside:
                raise MuvrDataError(tpath, key, f"{len(outside)} id(s) are not Base positives (pos_all) of "
                                    f"query {qid!r} (e.g. {outside[:3]})")
            prompts.append(TagPrompt(qid, prompt, parsed[1], parsed[0], ids))

    gpath = folder / "query_tags.json"
    tags = read_json(gpath)
    if not isinstance(tags, dict):
        raise MuvrDataError(gpath, None, f"expected an object {{id: [tag phrases]}}, got {type(tags).__name__}")
    for key, value in tags.items():
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise MuvrDataError(gpath, repr(key), "expected a list of tag phrases")
    tags = {q: tags.get(key, []) for q, (_, _, _, key) in by_id.items()}  # str(queries_en id), cuvr.py:82-83
    notes = []
    unlisted = len(set(names.names) - listed)
    if unlisted:
        notes.append(f"{name}: {unlisted} video(s) of videos.json are listed by no query in query_rel_lists.json; "
                     "left out of the gallery, which the official loader builds from the lists")
    if unknown:
        notes.append(f"{name}: {len(unknown)} listed id(s) in no record of videos.json kept as gallery entries "
                     f"without features, named '#<id>' (--join-listed)")
    if skipped:
        notes.append(f"{name}: {skipped} AND/OR tag prompt(s) skipped, as in the official code")
    clipped = sum(1 for q in queries if q.clip not in (None, "", "00.00.00-00.00.00"))
    if clipped:
        notes.append(f"{name}: {clipped} quer(ies) name a Clip segment; it is ignored, as the official evaluator does")
    return Partition(name, folder, tuple(gallery), queries, tuple(prompts), tags, skipped, notes)
