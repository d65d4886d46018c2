"""Reading MUVR's released retrieval annotations (MUVR paper, Sec. 3; spec muvr-spec.md Sec. 2).

One partition lives in ``<root>/annotations/retrieval/<partition>/``::

    videos.json           [{"id": int, "frames_path": str, "is_query": ...}, ...]
    queries_en.json       [{"id", "frames_path", "prompt_en", "Clip", "is_query", ...}, ...]
    query_rel_lists.json  [{"query_id": ..., "rel_lists": {"pos_all": {"id_list": [...]}, ...}}, ...]
    query_tag_lists.json  [{"query_id": ..., "tag_lists": {"+<tag>": {"id_list": [...]}, ...}}, ...]
    query_tags.json       {"<query id>": ["<tag phrase>", ...], ...}

A video's id is the base name of its ``frames_path`` (``BV...`` or
``BV..._HH.MM.SS-HH.MM.SS`` for a piece of an upload); a ``query_id`` is
matched against the queries' ids and, failing that, their integer ``id``.

Partitions are ``PARTITIONS``; the official code's folder names ``geng``
(others) and ``animal`` (instance) are accepted as aliases (``ALIASES``).

Checks on load (each failure raises ``MuvrDataError`` naming the file and the
key): every file exists and parses; every record has its fields with the
right types; every query has a ``pos_all`` list; every listed id is a gallery
video (``videos.json``); every Filter ``id_list`` lies within its query's
``pos_all`` (spec Sec. 8.8). The official code instead lets listed ids that
are missing from ``videos.json`` join the gallery (cuvr.py:150-156); pass
``join_listed=True`` for that behaviour, recorded in ``Partition.notes``. The
check is the default because an id listed as relevant but absent from the
gallery file most often means mismatched or truncated files, which would
otherwise change every AP silently.
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


def _id_list(value, path: Path, key: str) -> tuple:
    ids = value.get("id_list") if isinstance(value, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise MuvrDataError(path, key, "expected an object {\"id_list\": [video id strings]}")
    return tuple(dict.fromkeys(ids))


def _queries(folder: Path) -> tuple[dict, dict]:
    path = folder / "queries_en.json"
    records = _list_of_dicts(read_json(path), path, {"frames_path": str, "prompt_en": str})
    by_id, by_number = {}, {}
    for k, rec in enumerate(records):
        qid = _video_id(rec["frames_path"])
        if qid in by_id:
            raise MuvrDataError(path, f"[{k}].frames_path", f"query id {qid!r} appears twice")
        clip = rec.get("Clip")
        by_id[qid] = (rec["prompt_en"], clip if isinstance(clip, str) else None)
        if isinstance(rec.get("id"), (int, str)):
            by_number[str(rec["id"])] = qid
    return by_id, by_number


def _resolve_query(raw, by_id: dict, by_number: dict, path: Path, key: str) -> str:
    if str(raw) in by_id:
        return str(raw)
    if str(raw) in by_number:
        return by_number[str(raw)]
    raise MuvrDataError(path, key, f"query {raw!r} is not in queries_en.json")


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
    videos = _list_of_dicts(read_json(vpath), vpath, {"frames_path": str})
    gallery = list(dict.fromkeys(_video_id(v["frames_path"]) for v in videos))
    in_gallery = set(gallery)
    by_id, by_number = _queries(folder)

    def check_listed(ids, path, key):
        missing = [i for i in ids if i not in in_gallery]
        if missing and not join_listed:
            raise MuvrDataError(path, key, f"{len(missing)} listed id(s) are not in videos.json "
                                f"(e.g. {missing[:3]}); pass join_listed=True to add them to the gallery")
        for i in missing:
            gallery.append(i)
            in_gallery.add(i)
        return len(missing)

    rpath = folder / "query_rel_lists.json"
    rel = _list_of_dicts(read_json(rpath), rpath, {"rel_lists": dict})
    positives, joined = {}, 0
    for k, rec in enumerate(rel):
        qid = _resolve_query(rec.get("query_id"), by_id, by_number, rpath, f"[{k}].query_id")
        if "pos_all" not in rec["rel_lists"]:
            raise MuvrDataError(rpath, f"[{k}].rel_lists.pos_all", "missing")
        for kind, value in rec["rel_lists"].items():
            ids = _id_list(value, rpath, f"[{k}].rel_lists.{kind}")
            joined += check_listed(ids, rpath, f"[{k}].rel_lists.{kind}")
            if kind == "pos_all":
                positives[qid] = ids
    missing_q = [q for q in by_id if q not in positives]
    if missing_q:
        raise MuvrDataError(rpath, None, f"{len(missing_q)} quer(ies) of queries_en.json have no pos_all "
                            f"list (e.g. {missing_q[:3]})")
    numbers = {q: int(n) for n, q in by_number.items() if n.lstrip("-").isdigit()}
    queries = tuple(MuvrQuery(q, numbers.get(q), text, clip, positives[q]) for q, (text, clip) in by_id.items())

    tpath = folder / "query_tag_lists.json"
    tag_lists = _list_of_dicts(read_json(tpath), tpath, {"tag_lists": dict})
    prompts, skipped = [], 0
    for k, rec in enumerate(tag_lists):
        qid = _resolve_query(rec.get("query_id"), by_id, by_number, tpath, f"[{k}].query_id")
        base = set(positives[qid])
        for prompt, value in rec["tag_lists"].items():
            key = f"[{k}].tag_lists[{prompt!r}]"
            ids = _id_list(value, tpath, key)
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
    notes = []
    if joined:
        notes.append(f"{name}: {joined} listed id(s) missing from videos.json joined the gallery (official behaviour)")
    if skipped:
        notes.append(f"{name}: {skipped} AND/OR tag prompt(s) skipped, as in the official code")
    clipped = sum(1 for q in queries if q.clip not in (None, "", "00.00.00-00.00.00"))
    if clipped:
        notes.append(f"{name}: {clipped} quer(ies) name a Clip segment; it is ignored, as the official evaluator does")
    return Partition(name, folder, tuple(gallery), queries, tuple(prompts), tags, skipped, notes)

