"""A small SYNTHETIC dataset written in MUVR's exact released layout, for tests, the notebook and benchmarks.

``write_synthetic(root, rng)`` writes, under ``root``::

    SYNTHETIC.md                                   says what this is
    annotations/retrieval/<partition>/{videos,queries_en,query_rel_lists,query_tag_lists,query_tags}.json
    annotations/QA/annotations/<partition>.jsonl
    features/VLMs_1_15/<model>/<partition>/<video id>.npy        (frames, dims) float32
    features/VLMs_1_15/<model>/<partition>/<query id>_query_dict.pkl

Nothing here comes from MUVR: every vector is random. Each topic has a
direction; its positive videos hold a short run of frames near it (the
"relevant segment") and, for each of the topic's tags, maybe a frame near the
tag's direction; each query's video and description lie near the direction
too. Filter prompts ``+tag`` / ``-tag`` keep the positives with / without the
tag, and one ``AND +a +b`` prompt per query is there to be skipped. The numbers it
gives measure the code, never a model.

The annotation files are written by ``write_annotations`` in the released form:
integer ``videos.json`` ids in every ``query_id`` and ``id_list``. Videos that
no query lists (the distractors and the never-positive topic videos) are in
``videos.json`` but, as the official loader builds the gallery from the lists,
not in the gallery; they exercise that rule.

``synthetic`` is one named module in each benchmark that ships synthetic data
(``sova_lib.benchmarks.muvr.synthetic``, ``sova_lib.benchmarks.vantage.synthetic``): made-up data written in
the benchmark's released layout, so that its loaders, metrics and notebook run end to end without the real
data; no number it gives is a result.
"""
from __future__ import annotations

import io
import pickle
from functools import partial
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.muvr.annotation_files import read_videos
from sova_lib.benchmarks.muvr.annotations import PARTITIONS
from sova_lib.storage import json_line, write_bytes, write_json, write_text

__all__ = ["DRY_RUN", "FIRST_ID", "SYNTHETIC_MODEL", "dry_run_summary", "write_annotations", "write_dry_run",
           "write_synthetic"]

#: ``videos.json`` ids start here, so that an id is never a list position by accident.
FIRST_ID = 100

SYNTHETIC_MODEL = "synthetic-clip"
_NOTE = """# SYNTHETIC MUVR-layout data

Written by `sova_lib.benchmarks.muvr.write_synthetic`. Every id, text and vector is made up
(random directions plus noise); only the folder layout and the file formats follow the released
MUVR data. Scores computed on it measure the code, never a model.
"""


def _unit(rng, *shape):
    v = rng.standard_normal(shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _near(rng, direction, noise):
    v = direction + noise * rng.standard_normal(direction.shape) / np.sqrt(direction.size)
    return v / np.linalg.norm(v)


#: Writes one annotation file: JSON with a one-space indent, non-ASCII kept, a final newline.
_dump = partial(write_json, indent=1)


def write_annotations(folder: str | Path, videos, queries, positives: dict, prompts: dict | None = None,
                      tags: dict | None = None, *, splits: dict | None = None) -> dict:
    """Write one partition's five annotation files in the released form; returns ``{video name: id}``.

    ``videos``: ``(name, is_query)`` pairs in gallery order, each written as
    ``{"id", "frames_path": "frames/<name>", "is_query"}`` with integer ids
    ``FIRST_ID, FIRST_ID + 1, ...``; ``queries``: ``(name, prompt_en)``
    pairs (the query's ``queries_en.json`` id is its video's id);
    ``positives``: query name -> ``pos_all`` names; ``prompts``: query
    name -> {tag prompt: names}; ``tags``: query name -> tag phrases. Every
    ``query_id`` and ``id_list`` entry is written as the integer id, and
    ``query_tags.json`` is keyed by the id as a string, as the released files
    are (cuvr.py:82-83,88-96,114-140). An integer key of ``positives`` or
    ``prompts`` is written as that raw ``query_id``; other names outside
    ``videos`` raise ``KeyError``. ``splits``: query name -> the ``split``
    field of its ``queries_en.json`` record (default ``"test"``).
    """
    folder = Path(folder)
    ids = {name: FIRST_ID + k for k, name in enumerate(dict.fromkeys(name for name, _ in videos))}

    def ref(name):
        return name if isinstance(name, int) else ids[name]

    _dump(folder / "videos.json", [{"id": ids[n], "frames_path": f"frames/{n}", "is_query": int(q)} for n, q in videos])
    _dump(folder / "queries_en.json", [{"id": ids[n], "frames_path": f"frames/{n}", "prompt_en": text,
                                        "Clip": "00.00.00-00.00.00", "is_query": 1,
                                        "split": (splits or {}).get(n, "test")} for n, text in queries])
    _dump(folder / "query_rel_lists.json", [{"query_id": ref(q), "rel_lists": {"pos_all": {"id_list": [
        ids[v] for v in names]}}} for q, names in positives.items()])
    _dump(folder / "query_tag_lists.json", [{"query_id": ref(q), "tag_lists": {
        prompt: {"id_list": [ids[v] for v in names]} for prompt, names in by_prompt.items()}}
        for q, by_prompt in (prompts or {}).items()])
    _dump(folder / "query_tags.json", {str(ids[q]): list(phrases) for q, phrases in (tags or {}).items()})
    return ids


def _topic_videos(video, rng, prefix: str, direction, tag_dirs, videos_per_topic: int,
                  frames: int) -> tuple[list, dict]:
    """Write one topic's videos with ``video(name, frames)``; returns its positives and, for each, which of the two
    tags it holds.

    Videos 0 and 1 are always positive, the last two never, the others with
    probability 0.75; a positive holds a 3-frame run near ``direction`` and,
    for each tag it has (probability 0.5), a frame near the tag's direction.
    """
    members, has_tag = [], {}
    for v in range(videos_per_topic):
        vid = f"{prefix}v{v:02d}"
        array = _unit(rng, frames, direction.size)
        positive = v < 2 or (v < videos_per_topic - 2 and rng.random() < 0.75)
        if positive:
            start = int(rng.integers(0, frames - 3))
            array[start:start + 3] = [_near(rng, direction, 1.2) for _ in range(3)]
            has_tag[vid] = [bool(rng.random() < 0.5) for _ in range(2)]
            for k in range(2):
                if has_tag[vid][k]:
                    array[(start + 3 + k) % frames] = _near(rng, 0.5 * direction + tag_dirs[k], 1.5)
            members.append(vid)
        video(vid, array)
    return members, has_tag


def _write_partition(root: Path, rng, p: int, partition: str, *, topics: int, queries_per_topic: int,
                     videos_per_topic: int, distractors: int, frames: int, dims: int, model: str) -> None:
    """One partition's features, annotation files and QA pairs.

    Per topic: its direction and two tags, its videos (``_topic_videos``),
    then each query: its video (frames 4-7 near the direction), its query
    dict (description and tag vectors), its ``pos_all`` list (each topic
    positive kept with probability 0.85, then the topic's other queries), its
    tag prompts (``+tag`` / ``-tag`` keep its videos with / without the tag;
    one ``AND`` prompt is there to be skipped) and tags; the topic's first
    query also gets a QA pair. Then the distractors.
    """
    feats = root / "features" / "VLMs_1_15" / model / partition
    videos, queries, rel_lists, tag_lists, query_tags, qa = [], [], {}, {}, {}, []

    def video(vid: str, array: np.ndarray, is_query: int = 0) -> None:
        buffer = io.BytesIO()
        np.save(buffer, array.astype(np.float32))
        write_bytes(feats / f"{vid}.npy", buffer.getvalue())
        videos.append((vid, is_query))

    for t in range(topics):
        direction = _unit(rng, dims)
        tag_dirs = _unit(rng, 2, dims)
        phrases = [f"synthetic tag {partition} {t} {k}" for k in range(2)]
        members, has_tag = _topic_videos(video, rng, f"BVsyn{p}t{t}", direction, tag_dirs, videos_per_topic, frames)
        qids = [f"BVsyn{p}t{t}q{i}" for i in range(queries_per_topic)]
        for i, qid in enumerate(qids):
            text = f"A synthetic {partition} video of topic {t}, query {i}, showing [<region>]."
            array = _unit(rng, frames, dims)
            array[4:8] = [_near(rng, direction, 1.0) for _ in range(4)]
            video(qid, array, is_query=1)
            tag_vectors = {ph: _near(rng, tag_dirs[k], 0.3).astype(np.float32) for k, ph in enumerate(phrases)}
            write_bytes(feats / f"{qid}_query_dict.pkl", pickle.dumps(
                {"query_prompt": _near(rng, direction, 1.5).astype(np.float32)[None], "tags": tag_vectors}))
            queries.append((qid, text))
            kept = rel_lists[qid] = [m for m in members if rng.random() < 0.85] + [o for o in qids if o != qid]
            prompts = tag_lists[qid] = {}
            for k, phrase in enumerate(phrases):
                prompts[f"+{phrase}"] = [m for m in kept if has_tag.get(m, [False] * 2)[k]]
                prompts[f"-{phrase}"] = [m for m in kept if not has_tag.get(m, [False] * 2)[k]]
            prompts[f"AND +{phrases[0]} +{phrases[1]}"] = []  # the form the official parser skips (cuvr.py:279-281)
            query_tags[qid] = phrases
            negatives = [m for m in (f"BVsyn{p}t{t}v{v:02d}" for v in range(videos_per_topic)) if m not in kept]
            if i == 0 and negatives:
                tag = "" if t % 2 == 0 else f"+{phrases[0]}"
                for target, label in ((kept[0], 1), (negatives[0], 0)):
                    qa.append({"Query": qid, "Target": target, "Tag": tag, "Label": label, "prompt_en": text})
    for d in range(distractors):
        video(f"BVsyn{p}d{d:02d}", _unit(rng, frames, dims))
    write_annotations(root / "annotations" / "retrieval" / partition, videos, queries, rel_lists, tag_lists,
                      query_tags)
    write_text(root / "annotations" / "QA" / "annotations" / f"{partition}.jsonl", "".join(json_line(r) for r in qa))


def write_synthetic(root: str | Path, rng: np.random.Generator, *, partitions=PARTITIONS, topics: int = 3,
                    queries_per_topic: int = 3, videos_per_topic: int = 10, distractors: int = 6,
                    frames: int = 15, dims: int = 32, model: str = SYNTHETIC_MODEL) -> Path:
    """Write a synthetic dataset (see the module docstring) under ``root``; returns ``root``.

    Per partition: ``topics * queries_per_topic`` queries, ``topics *
    videos_per_topic`` topic videos (the last two of each topic never positive), ``distractors``
    videos of no topic (the last two kinds in ``videos.json`` only), two tags per topic. Same generator state, same files.
    """
    root = Path(root)
    write_text(root / "SYNTHETIC.md", _NOTE)
    for p, partition in enumerate(partitions):
        _write_partition(root, rng, p, partition, topics=topics, queries_per_topic=queries_per_topic,
                         videos_per_topic=videos_per_topic, distractors=distractors, frames=frames, dims=dims,
                         model=model)
    return root


#: The sizes of ``write_dry_run``'s dataset: per partition 4 queries, 10 topic videos and 2 distractors (16 videos).
DRY_RUN = {"topics": 2, "queries_per_topic": 2, "videos_per_topic": 5, "distractors": 2}


def write_dry_run(root: str | Path, *, partitions=PARTITIONS, seed: int = 0) -> dict:
    """A small synthetic dataset (``write_synthetic`` with ``DRY_RUN``'s sizes, generator seeded with ``seed``)
    under ``root``, and beside it ``root/videos/<video name>.mp4`` for every video of ``videos.json``: a symbolic
    link to one of the package's street excerpts (``example_videos``, in turn), so that ``sova muvr describe
    --video-root root/videos`` runs. Returns ``{"data": root, "videos": the videos folder, "partitions": count,
    "video_files": count}``. An existing link is replaced; same seed, same files."""
    from sova_lib.video.frames import example_videos  # the video code for a dry run alone, not for scoring

    root = write_synthetic(root, np.random.default_rng(seed), partitions=partitions, **DRY_RUN)
    folder = root / "videos"
    folder.mkdir(parents=True, exist_ok=True)
    sources = example_videos()
    names = [name for p in partitions for name in read_videos(root / "annotations" / "retrieval" / p).names]
    for k, name in enumerate(names):
        link = folder / f"{name}.mp4"
        link.unlink(missing_ok=True)
        link.symlink_to(sources[k % len(sources)])
    return {"data": root, "videos": folder, "partitions": len(partitions), "video_files": len(names)}


def dry_run_summary(written: dict) -> str:
    """What ``sova muvr synthetic`` prints of ``write_dry_run``'s answer ``written``: the data root and its number of
    partitions, the folder of stand-in videos and its number of links, then the describe command to run next."""
    n = written["partitions"]
    return "\n".join([
        f"synthetic MUVR data: {written['data']} ({n} partition{'' if n == 1 else 's'}; made up, no result)",
        f"stand-in videos: {written['videos']} ({written['video_files']} links to the package's street excerpts)",
        f"next: sova muvr describe --data {written['data']} --video-root {written['videos']} --backend motion "
        "--cache-dir CACHE"])
