"""MUVR's released retrieval annotations as a ``Partition`` (MUVR paper, Sec. 3; spec muvr-spec.md Sec. 2).

One partition lives in ``<root>/annotations/retrieval/<partition>/``, five
JSON files that ``sova_lib.benchmarks.muvr.annotation_files`` reads and checks, resolving
every listed id to a video name as the official loader does (``vid_name``,
cuvr.py:88-96,114-140). Features are stored and results reported under
that name. This module makes a partition of them.

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
key) are those of ``annotation_files``: every file exists and parses; every
record has its fields with the right types; ``videos.json`` ids are unique;
every listed id of a kept entry is the id of a ``videos.json`` record (a
video name where an id belongs is named as such, in ``query_id`` too). The
official loader stops with a ``KeyError`` on an ``id_list`` id in no
``videos.json`` record; ``join_listed=True`` instead keeps each such id as
a gallery entry named ``#<id>`` that has no features (so, when listed as a
positive, it is a miss), recorded in ``Partition.notes``. Tag prompts are parsed as the
official ``parse_expression`` does (cuvr.py:277-291): a prompt that starts
with ``AND`` or ``OR`` is skipped (cuvr.py:383-385) and counted in
``Partition.skipped_prompts``; any other is a sum of signed conditions
`` +<tag>`` / `` -<tag>`` (``"+a -b"`` is two). Filter positives are the
prompt's ``id_list`` as listed (the official code does not require them to
be ``pos_all`` videos); those outside the gallery are not counted at scoring.
The ``Clip`` field is kept but not used by scoring (spec Sec. 8.7).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sova_lib.benchmarks.muvr.annotation_files import (
    MuvrDataError,
    read_lists,
    read_queries,
    read_query_tags,
    read_videos,
)
from sova_lib.wording import counted

__all__ = ["ALIASES", "BENCHMARK", "PARTITIONS", "MuvrQuery", "Partition", "TagPrompt", "canonical_partition",
           "load_partition", "parse_prompt", "partition_path", "partitions_present"]

#: The ``benchmark`` field of a MUVR record (``MuvrResult.to_record``, ``QAResult.to_record``).
BENCHMARK = "MUVR"
#: The five partitions, in the column order of the paper's Tables 7 and 8 (N, O, I, R, D).
PARTITIONS = ("news", "others", "instance", "region", "dance")
#: Folder names of the official code -> partition (M:evaluate_all_vlm_mul.py:258).
ALIASES = {"geng": "others", "animal": "instance"}
_CONDITION = re.compile(r"( [+-])(.+?)(?=\s* [+-]|$)")  # cuvr.py:289
_MARKS = re.compile(r"\[?<(?:region|mask)[^>]*>\]?")


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


def partition_path(base: str | Path, partition: str, expected: str, suffix: str = "") -> Path:
    """``<base>/<partition><suffix>`` (a folder or file) under the partition's own name or an alias (``ALIASES``),
    the first that exists; ``MuvrDataError`` saying what was ``expected`` where neither does."""
    name = canonical_partition(partition)
    for found in [name] + [a for a, p in ALIASES.items() if p == name]:
        if (Path(base) / f"{found}{suffix}").exists():
            return Path(base) / f"{found}{suffix}"
    raise MuvrDataError(Path(base) / f"{name}{suffix}", None, expected)


def partitions_present(root: str | Path, *, qa: bool = False) -> tuple:
    """The partitions of ``PARTITIONS`` (in that order) the MUVR ``root`` holds: a folder
    ``annotations/retrieval/<partition>`` (under its name or an alias), or with ``qa`` a file
    ``annotations/QA/annotations/<partition>.jsonl``. None at all: ``MuvrDataError`` naming the folder looked in."""
    base = Path(root) / "annotations" / ("QA/annotations" if qa else "retrieval")
    suffix = ".jsonl" if qa else ""
    found = tuple(name for name in PARTITIONS
                  if any((base / f"{a}{suffix}").exists() for a in [name, *(k for k, v in ALIASES.items() if v == name)]))
    if not found:
        raise MuvrDataError(base, None, f"holds no partition of {', '.join(PARTITIONS)}; expected the released layout")
    return found


@dataclass(frozen=True)
class MuvrQuery:
    """One Base query: its video id, English description, ``Clip`` and ``pos_all``.

    ``positives`` is None for a query without a ``pos_all`` list (not scored by mAP and R@k; in uAP as negatives).
    """

    id: str
    text: str
    clip: str | None
    positives: tuple


@dataclass(frozen=True)
class TagPrompt:
    """One Filter prompt and its positives.

    ``conditions`` holds every ``(sign, phrase)`` of the prompt whose tag
    score the Filter score adds (cuvr.py:322-336): ``"+a"`` is ``((1, "a"),)``,
    ``"+a -b"`` has two, a prompt without a sign none (``parse_prompt``).
    """

    query_id: str
    prompt: str
    positives: tuple
    conditions: tuple


@dataclass
class Partition:
    """A partition's gallery (video ids, in file order), Base queries, Filter prompts and tags."""

    name: str
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


#: The load's notes: each count, when not 0, gives its line: the count with the words that agree with it (one,
#: then several), then the rest (``{split}``, ``{examples}``, ``{skipped_rel}``, ``{skipped_tag}`` where it names them).
#: "unlisted" and "skipped" keep their "(s)": their lines are in the committed records of the synthetic set.
_LOAD_NOTES = (
    ("filtered", "query", "queries", "of queries_en.json left out by the split filter {split!r}"),
    ("not_marked", "query of queries_en.json has", "queries of queries_en.json have",
     "no videos.json record with is_query 1 (e.g. {examples}); not queries, as in the official loader"),
    ("skipped_lists", "entry of query_rel_lists.json and query_tag_lists.json names",
     "entries of query_rel_lists.json and query_tag_lists.json name",
     "no kept query ({skipped_rel} and {skipped_tag}); skipped, as in the official loader"),
    ("no_pos", "query has", "queries have", "no pos_all list; left out of mAP and R@k, their pairs ranked as "
     "negatives in uAP, as in the official evaluate"),
    ("no_sign", "tag prompt holds", "tag prompts hold", "no +/- tag; scored as the Base ranking, as in the official code"),
    ("unlisted", "video(s) of videos.json are", "video(s) of videos.json are", "listed by no query in "
     "query_rel_lists.json; left out of the gallery, which the official loader builds from the lists"),
    ("unknown", "listed id", "listed ids", "in no record of videos.json kept as gallery entries without features, "
     "named '#<id>' (--join-listed)"),
    ("skipped", "AND/OR tag prompt(s)", "AND/OR tag prompt(s)", "skipped, as in the official code"),
    ("clipped", "query names", "queries name", "a Clip segment; it is ignored, as the official evaluator does"),
)


def load_partition(root: str | Path, partition: str, *, join_listed: bool = False, split: str = "all") -> Partition:
    """Read and check one partition of the released annotations under ``root`` (see the module docstring).

    ``split`` keeps the ``queries_en.json`` records whose ``split`` field is
    that value (``"all"``, the official evaluator's choice, keeps every one;
    cuvr.py:68-73, evaluate_all_vlm_mul.py:280).
    """
    name = canonical_partition(partition)
    folder = partition_path(Path(root) / "annotations" / "retrieval", name, "no such folder; expected the released "
                            "layout annotations/retrieval/<partition>/ under the data root")
    names = read_videos(folder, join_listed)
    listed, filtered = read_queries(folder, split)
    # the queries: records of videos.json with is_query 1 whose video has a kept queries_en.json record (cuvr.py:100)
    by_id = {q: listed[q] for q in dict.fromkeys(names.marked) if q in listed}
    not_marked = [q for q in listed if q not in by_id]
    rel_lists, skipped_rel = read_lists(folder, names, by_id, "rel")
    # a later entry of the same query replaces its pos_all (cuvr.py:125), and its tag lists (cuvr.py:138)
    positives = {q: lists["pos_all"] for q, lists in rel_lists if "pos_all" in lists}
    in_lists = {v for _, lists in rel_lists for ids in lists.values() for v in ids}
    queries = tuple(MuvrQuery(q, text, clip, positives.get(q)) for q, (text, clip, _) in by_id.items())
    # the gallery: the videos the relation lists name, then their ids in no videos.json record (join_listed)
    gallery = [v for v in names.names if v in in_lists] + list(names.unknown.values())
    tag_lists, skipped_tag = read_lists(folder, names, by_id, "tag")
    listed_tags = dict(tag_lists)
    prompts, skipped, no_sign = [], 0, 0  # the queries' tag prompts, in query order; AND/OR ones skipped
    for qid in by_id:
        for prompt, ids in listed_tags.get(qid, {}).items():
            conditions = parse_prompt(prompt)
            if conditions is None:
                skipped += 1
                continue
            no_sign += not conditions
            prompts.append(TagPrompt(qid, prompt, ids, conditions))
    tags = read_query_tags(folder, by_id)
    counts = {"filtered": filtered, "not_marked": len(not_marked), "skipped_lists": skipped_rel + skipped_tag,
              "no_pos": sum(q.positives is None for q in queries), "no_sign": no_sign,
              "unlisted": len(set(names.names) - in_lists), "unknown": len(names.unknown), "skipped": skipped,
              "clipped": sum(q.clip not in (None, "", "00.00.00-00.00.00") for q in queries)}
    fields = {"split": split, "examples": not_marked[:3], "skipped_rel": skipped_rel, "skipped_tag": skipped_tag}
    notes = [f"{name}: {counted(counts[key], one, several)} {rest.format(**fields)}"
             for key, one, several, rest in _LOAD_NOTES if counts[key]]
    return Partition(name, tuple(gallery), queries, tuple(prompts), tags, skipped, notes)
