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

Which queries a partition has follows the official loader (cuvr.py:64-103):
a ``queries_en.json`` record is kept when it passes the ``split`` filter
(its ``split`` field equals ``split``; ``"all"`` keeps every record,
cuvr.py:68-73) and a ``videos.json`` record of the same video has
``is_query == 1`` (cuvr.py:100-101); the queries are in ``videos.json``
order. Entries of ``query_rel_lists.json`` and ``query_tag_lists.json``
whose ``query_id`` is not such a query (an id of another video, or an id in
no ``videos.json`` record, which the loader looks up with ``dict.get``) are
skipped unread (cuvr.py:113-116,132-135). Each drop is counted in
``Partition.notes``. A query without a ``pos_all`` list keeps
``positives=None``: the official ``evaluate`` leaves it out of mAP and R@k
(cuvr.py:546-547) but ranks its pairs, all negatives, in uAP
(cuvr.py:262-273).

The gallery of a partition is, as in the official loader for one topic
(``get_database(topic)``, cuvr.py:120-122,171-174, the call of
evaluate_all_vlm_mul.py:164,206-212), the videos listed in the
``query_rel_lists.json`` entries of its queries (every relation kind), in
``videos.json`` order; query videos listed there stay in it (they are ranked
for the other queries and can be their positives). A ``videos.json`` video
that no list names is left out, with a note. Partitions are ``PARTITIONS``;
the official code's folder names ``geng`` (others) and ``animal``
(instance) are accepted as aliases (``ALIASES``).

Checks on load (each failure raises ``MuvrDataError`` naming the file and the
key): every file exists and parses; every record has its fields with the
right types; ``videos.json`` ids are unique; every listed id of a kept entry
is the id of a ``videos.json`` record (a video name where an id belongs is
named as such, in ``query_id`` too). The official loader stops with a
``KeyError`` on an ``id_list`` id in no ``videos.json`` record;
``join_listed=True`` instead keeps each such id as a gallery entry named
``#<id>`` that has no features (so, when listed as a positive, it is a
miss), recorded in ``Partition.notes``. Tag prompts are parsed as the
official ``parse_expression`` does (cuvr.py:277-291): a prompt that starts
with ``AND`` or ``OR`` is skipped (cuvr.py:383-385) and counted in
``Partition.skipped_prompts``; any other is a sum of signed conditions
`` +<tag>`` / `` -<tag>`` (``"+a -b"`` is two). Filter positives are the
prompt's ``id_list`` as listed (the official code does not require them to
be ``pos_all`` videos); those outside the gallery are not counted at scoring.
The ``Clip`` field is kept but not used by scoring (spec Sec. 8.7).
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
    "BENCHMARK",
    "PARTITIONS",
    "MuvrDataError",
    "MuvrQuery",
    "Partition",
    "TagPrompt",
    "canonical_partition",
    "load_partition",
    "parse_prompt",
    "partition_dir",
    "read_json",
]

#: The ``benchmark`` field of a MUVR record (``MuvrResult.to_record``, ``QAResult.to_record``).
BENCHMARK = "MUVR"
#: The five partitions, in the column order of the paper's Tables 7 and 8 (N, O, I, R, D).
PARTITIONS = ("news", "others", "instance", "region", "dance")
#: Folder names of the official code -> partition (M:evaluate_all_vlm_mul.py:258).
ALIASES = {"geng": "others", "animal": "instance"}
ANNOTATION_FILES = ("videos.json", "queries_en.json", "query_rel_lists.json", "query_tag_lists.json",
                    "query_tags.json")
_CONDITION = re.compile(r"( [+-])(.+?)(?=\s* [+-]|$)")  # cuvr.py:289
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
    """One Base query: its video id, integer ``number``, English description, ``Clip`` and ``pos_all``.

    ``positives`` is None for a query without a ``pos_all`` list (not scored by mAP and R@k; in uAP as negatives).
    """

    id: str
    number: int | None
    text: str
    clip: str | None
    positives: tuple


@dataclass(frozen=True)
class TagPrompt:
    """One Filter prompt and its positives: ``+phrase`` (sign +1) or ``-phrase`` (sign -1).

    ``conditions`` holds every ``(sign, phrase)`` of the prompt (``"+a -b"``
    has two, a prompt without a sign none); None means the one condition
    ``(sign, phrase)``.
    """

    query_id: str
    prompt: str
    phrase: str
    sign: int
    positives: tuple
    conditions: tuple | None = None

    def terms(self) -> tuple:
        """The ``(sign, phrase)`` conditions whose tag scores the Filter score adds (cuvr.py:322-336)."""
        return ((self.sign, self.phrase),) if self.conditions is None else self.conditions


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


def _queries(folder: Path, split: str) -> tuple[dict, int]:
    """The ``queries_en.json`` records that pass the ``split`` filter (cuvr.py:68-73), and how many do not."""
    path = folder / "queries_en.json"
    records = _list_of_dicts(read_json(path), path, {"frames_path": str, "prompt_en": str})
    by_id, seen, filtered = {}, set(), 0
    for k, rec in enumerate(records):
        qid = _video_id(rec["frames_path"])
        if qid in seen:
            raise MuvrDataError(path, f"[{k}].frames_path", f"query id {qid!r} appears twice")
        seen.add(qid)
        if split != "all" and rec.get("split") != split:
            filtered += 1
            continue
        clip = rec.get("Clip")
        number = rec.get("id") if isinstance(rec.get("id"), int) and not isinstance(rec.get("id"), bool) else None
        by_id[qid] = (rec["prompt_en"], clip if isinstance(clip, str) else None, number,
                      str(rec["id"]) if "id" in rec else None)
    return by_id, filtered


def parse_prompt(prompt: str) -> tuple | None:
    """The ``(sign, phrase)`` conditions of a tag prompt; None for one that starts with ``AND`` / ``OR``.

    As the official ``parse_expression`` (cuvr.py:277-291): a prompt starting
    with ``AND`` or ``OR`` is a combination (skipped by the evaluator,
    cuvr.py:383-385); any other gets a space in front and each `` +`` or
    `` -`` starts a condition that runs to the next one (``"+a -b"`` -> (+1,
    "a"), (-1, "b"); ``"+a-b"`` -> (+1, "a-b")); a prompt without one has no
    condition (its Filter score is the Base score).
    """
    if prompt.startswith(("AND", "OR")):
        return None
    return tuple((1 if sign == " +" else -1, phrase.strip()) for sign, phrase in _CONDITION.findall(" " + prompt))


class _Listed:
    """The resolution of ``query_id`` and ``id_list`` entries of the list files to the kept queries and videos.

    ``unknown`` gathers, in order of first listing, the ids in no
    ``videos.json`` record kept as ``#<id>`` gallery entries (``join_listed``).
    """

    def __init__(self, names: _Names, kept: dict, join_listed: bool):
        self.names, self.kept, self.join_listed = names, kept, join_listed
        self.unknown = {}

    def ids(self, ids: list, path: Path, key: str) -> tuple:
        """The video names of the listed ``ids``, each once, in order of listing."""
        out = []
        for j, raw in enumerate(ids):
            vid = self.names.name(raw, path, f"{key}[{j}]", join_listed=self.join_listed)
            if vid is None:
                vid = self.unknown.setdefault(raw, f"#{raw}")
            out.append(vid)
        return tuple(dict.fromkeys(out))

    def query(self, raw, path: Path, key: str) -> str | None:
        """The query's video name, or None for an entry the official loader skips (``vid_name.get``, cuvr.py:113-116)."""
        names = self.names
        if isinstance(raw, str) and raw in names.known_names and raw not in names.by_id:
            names.name(raw, path, key)  # raises: a video name where the released files hold an id
        if not _hashable_id(raw):
            raise MuvrDataError(path, key, f"expected an id of videos.json, got {type(raw).__name__}")
        qid = names.by_id.get(raw)
        return qid if qid in self.kept else None


def _marked_queries(records: list, by_id: dict) -> tuple[dict, list]:
    """The kept ``queries_en.json`` records that are queries, in ``videos.json`` order, and those that are not.

    A query is a ``videos.json`` record with ``is_query == 1`` whose video
    has a kept ``queries_en.json`` record (cuvr.py:100).
    """
    marked = [_video_id(r["frames_path"]) for r in records if r.get("is_query", 0) == 1]
    query_order = [q for q in dict.fromkeys(marked) if q in by_id]
    not_marked = [q for q in by_id if q not in set(query_order)]
    return {q: by_id[q] for q in query_order}, not_marked


class _QueryEntries:
    """The entries of a per-query list file (``query_rel_lists.json``, ``query_tag_lists.json``) of a kept query.

    The file is read and its entries checked to be objects with ``fields``
    at once; iterating yields ``(k, query's video name, entry)`` in file
    order, ``k`` the entry's position, and counts in ``skipped`` the entries
    whose ``query_id`` names no kept query (``_Listed.query``).
    """

    def __init__(self, path: Path, listed: _Listed, fields: dict):
        self.path, self.listed, self.skipped = path, listed, 0
        self.entries = _list_of_dicts(read_json(path), path, fields)

    def __iter__(self):
        for k, entry in enumerate(self.entries):
            if "query_id" not in entry:
                raise MuvrDataError(self.path, f"[{k}].query_id", "missing")
            qid = self.listed.query(entry["query_id"], self.path, f"[{k}].query_id")
            if qid is None:
                self.skipped += 1
            else:
                yield k, qid, entry


def _rel_lists(folder: Path, listed: _Listed) -> tuple[dict, set, int]:
    """``query_rel_lists.json``: each kept query's ``pos_all`` names, every name listed, and the entries skipped."""
    entries = _QueryEntries(folder / "query_rel_lists.json", listed, {"rel_lists": dict})
    positives, names = {}, set()
    for k, qid, rec in entries:
        for kind, value in rec["rel_lists"].items():
            key = f"[{k}].rel_lists.{kind}"
            ids = listed.ids(_id_list(value, entries.path, key), entries.path, key)
            names.update(ids)
            if kind == "pos_all":
                positives[qid] = ids  # a later entry of the same query replaces it (cuvr.py:125)
    return positives, names, entries.skipped


def _tag_lists(folder: Path, listed: _Listed) -> tuple[dict, int, int, int]:
    """``query_tag_lists.json``: each kept query's Filter prompts, and the counts the notes report.

    The counts are: AND/OR prompts skipped, entries of no kept query
    skipped, prompts with no signed condition.
    """
    entries = _QueryEntries(folder / "query_tag_lists.json", listed, {"tag_lists": dict})
    by_query, skipped, no_sign = {}, 0, 0
    for k, qid, rec in entries:
        by_query[qid] = []  # a later entry of the same query replaces it (cuvr.py:138)
        for prompt, value in rec["tag_lists"].items():
            key = f"[{k}].tag_lists[{prompt!r}]"
            ids = listed.ids(_id_list(value, entries.path, key), entries.path, key)
            conditions = parse_prompt(prompt)
            if conditions is None:
                skipped += 1
                continue
            no_sign += not conditions
            first = conditions[0] if conditions else (0, "")
            by_query[qid].append(TagPrompt(qid, prompt, first[1], first[0], ids, conditions))
    return by_query, skipped, entries.skipped, no_sign


def _query_tags(folder: Path, by_id: dict) -> dict:
    """``query_tags.json``: each query's tag phrases, keyed by str of its ``queries_en.json`` id (cuvr.py:82-83)."""
    gpath = folder / "query_tags.json"
    tags = read_json(gpath)
    if not isinstance(tags, dict):
        raise MuvrDataError(gpath, None, f"expected an object {{id: [tag phrases]}}, got {type(tags).__name__}")
    for key, value in tags.items():
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise MuvrDataError(gpath, repr(key), "expected a list of tag phrases")
    return {q: tags.get(key, []) for q, (_, _, _, key) in by_id.items()}


def _load_notes(name: str, split: str, queries: tuple, *, filtered: int, not_marked: list, skipped_rel: int,
                skipped_tag: int, no_sign: int, unlisted: int, unknown: int, skipped: int) -> list[str]:
    """One line for each kind of record the load dropped, kept specially, or ignored, with its count."""
    notes = []
    if filtered:
        notes.append(f"{name}: {filtered} quer(ies) of queries_en.json left out by the split filter {split!r}")
    if not_marked:
        notes.append(f"{name}: {len(not_marked)} quer(ies) of queries_en.json have no videos.json record with "
                     f"is_query 1 (e.g. {not_marked[:3]}); not queries, as in the official loader")
    if skipped_rel or skipped_tag:
        notes.append(f"{name}: {skipped_rel} query_rel_lists.json and {skipped_tag} query_tag_lists.json entr(ies) "
                     "name no kept query; skipped, as in the official loader")
    no_pos = sum(q.positives is None for q in queries)
    if no_pos:
        notes.append(f"{name}: {no_pos} quer(ies) have no pos_all list; left out of mAP and R@k, their pairs "
                     "ranked as negatives in uAP, as in the official evaluate")
    if no_sign:
        notes.append(f"{name}: {no_sign} tag prompt(s) hold no +/- tag; scored as the Base ranking, as in the "
                     "official code")
    if unlisted:
        notes.append(f"{name}: {unlisted} video(s) of videos.json are listed by no query in query_rel_lists.json; "
                     "left out of the gallery, which the official loader builds from the lists")
    if unknown:
        notes.append(f"{name}: {unknown} listed id(s) in no record of videos.json kept as gallery entries "
                     f"without features, named '#<id>' (--join-listed)")
    if skipped:
        notes.append(f"{name}: {skipped} AND/OR tag prompt(s) skipped, as in the official code")
    clipped = sum(1 for q in queries if q.clip not in (None, "", "00.00.00-00.00.00"))
    if clipped:
        notes.append(f"{name}: {clipped} quer(ies) name a Clip segment; it is ignored, as the official evaluator does")
    return notes


def load_partition(root: str | Path, partition: str, *, join_listed: bool = False, split: str = "all") -> Partition:
    """Read and check one partition of the released annotations under ``root`` (see the module docstring).

    ``split`` keeps the ``queries_en.json`` records whose ``split`` field is
    that value (``"all"``, the official evaluator's choice, keeps every one;
    cuvr.py:68-73, evaluate_all_vlm_mul.py:280).
    """
    name = canonical_partition(partition)
    folder = partition_dir(root, name)
    vpath = folder / "videos.json"
    records = _list_of_dicts(read_json(vpath), vpath, {"frames_path": str})
    names = _Names(records, vpath)
    by_id, filtered = _queries(folder, split)
    by_id, not_marked = _marked_queries(records, by_id)
    listed = _Listed(names, by_id, join_listed)
    positives, in_lists, skipped_rel = _rel_lists(folder, listed)
    queries = tuple(MuvrQuery(q, number, text, clip, positives.get(q))
                    for q, (text, clip, number, _) in by_id.items())
    # the gallery: the videos the relation lists name, then their ids in no videos.json record (join_listed)
    gallery = [v for v in dict.fromkeys(names.names) if v in in_lists] + list(listed.unknown.values())
    by_query, skipped, skipped_tag, no_sign = _tag_lists(folder, listed)
    prompts = [p for q in by_id if q in by_query for p in by_query[q]]
    tags = _query_tags(folder, by_id)
    notes = _load_notes(name, split, queries, filtered=filtered, not_marked=not_marked, skipped_rel=skipped_rel,
                        skipped_tag=skipped_tag, no_sign=no_sign, unlisted=len(set(names.names) - in_lists),
                        unknown=len(listed.unknown), skipped=skipped)
    return Partition(name, folder, tuple(gallery), queries, tuple(prompts), tags, skipped, notes)
