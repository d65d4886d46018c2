"""Reading MUVR's released frame and text features (spec muvr-spec.md Sec. 2-3).

The released archives ``features/VLMs_1_15/<model>.tar`` unpack to::

    <model>/<partition>/<video id>.npy               (15, d) raw frame features of one video
    <model>/<partition>/<query id>_query_dict.pkl    {"query_prompt": (d,) or (1, d), "tags": {phrase: (d,)}}

``load_frames`` stacks the ``.npy`` files of the asked videos into
``ItemVectors`` (one item per video, one unit row per frame; rows are
L2-normalised here, as the official evaluator does, evaluate_all_vlm_mul.py:124-136).
``load_query_dicts`` reads the description and tag-phrase vectors of the
queries, each query's tag vectors kept apart (the Filter score of a query
uses the vector of its own file, as the official evaluator does). The pickles are read by a restricted unpickler that admits only
dicts, lists, strings, numbers and NumPy arrays, so a file cannot run code.
A ``tags`` value given as a list (not a dict) is matched with the query's
phrases in ``query_tags.json``, in order.

``write_vectors_npz`` / ``npz_vectors`` keep the same vectors in one ``.npz``:
``ids`` (video ids, strings), ``owner``, ``vectors`` (frames or sentences of
every video, queries included); optionally ``text_ids``, ``text_owner``,
``text_vectors`` (query descriptions) and ``tag_phrases``, ``tag_vectors``
(one vector per phrase, shared by every query).
"""
from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.muvr.annotation_files import MuvrDataError
from sova_lib.benchmarks.muvr.annotations import ALIASES, Partition, canonical_partition
from sova_lib.benchmarks.muvr.fusion import QueryVectors
from sova_lib.similarity import ItemVectors, l2_normalize

__all__ = [
    "QUERY_DICT_SUFFIX",
    "feature_dir",
    "load_frames",
    "load_query_dicts",
    "npz_vectors",
    "read_query_dict",
    "released_vectors",
    "write_vectors_npz",
]

QUERY_DICT_SUFFIX = "_query_dict.pkl"


def feature_dir(features: str | Path, partition: str) -> Path:
    """``<features>/<partition>`` (or an alias folder) of one model's unpacked features."""
    partition = canonical_partition(partition)
    for name in [partition] + [a for a, p in ALIASES.items() if p == partition]:
        if (Path(features) / name).is_dir():
            return Path(features) / name
    raise MuvrDataError(Path(features) / partition, None,
                        "no such folder; expected <features>/<partition>/<video id>.npy")


def _frames_of(path: Path) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported the same way
        raise MuvrDataError(path, None, f"not a readable .npy array ({err})") from None
    if array.ndim == 1:
        array = array[None]
    if array.ndim != 2 or array.shape[0] < 1 or not np.issubdtype(array.dtype, np.number):
        raise MuvrDataError(path, "shape", f"expected (frames, d) numbers, got {array.shape} {array.dtype}")
    if not np.isfinite(array).all() or (np.linalg.norm(array, axis=1) == 0).any():
        raise MuvrDataError(path, "values", "holds a non-finite value or an all-zero frame")
    return array


def load_frames(folder: str | Path, ids) -> tuple[ItemVectors | None, list]:
    """Frame vectors of the videos ``ids`` found in ``folder``, and the ids without a file.

    Returns ``(items, missing)``: ``items`` holds the found videos in the order
    of ``ids`` (None when none is found); every video's frames must have one
    width ``d``.
    """
    folder = Path(folder)
    found, blocks, missing, width = [], [], [], None
    for vid in ids:
        path = folder / f"{vid}.npy"
        if not path.is_file():
            missing.append(vid)
            continue
        array = _frames_of(path)
        if width is None:
            width = array.shape[1]
        elif array.shape[1] != width:
            raise MuvrDataError(path, "shape", f"frames have {array.shape[1]} dimensions, others {width}")
        found.append(vid)
        blocks.append(array.astype(np.float32))
    if not found:
        return None, missing
    owner = np.repeat(np.arange(len(found)), [b.shape[0] for b in blocks])
    return ItemVectors(np.array(found), owner, l2_normalize(np.concatenate(blocks))), missing


class _ArrayUnpickler(pickle.Unpickler):
    """Admits NumPy array reconstruction and plain containers only."""

    _ALLOWED = frozenset({"_reconstruct", "ndarray", "dtype", "scalar", "_frombuffer"})

    def find_class(self, module, name):
        if module.split(".")[0] == "numpy" and name in self._ALLOWED:
            return super().find_class(module, name)
        if module == "builtins" and name in {"dict", "list", "tuple", "set", "frozenset", "bytes", "bytearray"}:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a MUVR query dict")


def _vector(value, path: Path, key: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64) if not isinstance(value, np.ndarray) else value.astype(np.float64)
    array = array.reshape(-1) if array.ndim == 2 and array.shape[0] == 1 else array
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all() or not np.any(array):
        raise MuvrDataError(path, key, f"expected one finite non-zero vector, got shape {np.shape(value)}")
    return array.astype(np.float32)


def read_query_dict(path: Path, phrases: list | None = None) -> tuple[np.ndarray, dict]:
    """``(description vector (d,), {tag phrase: vector})`` of one ``*_query_dict.pkl``."""
    if not path.is_file():
        raise MuvrDataError(path, None, "file not found")
    try:
        data = _ArrayUnpickler(io.BytesIO(path.read_bytes())).load()
    except Exception as err:  # noqa: BLE001 - any unreadable pickle is reported the same way
        raise MuvrDataError(path, None, f"not a readable query dict ({err})") from None
    if not isinstance(data, dict) or "query_prompt" not in data:
        raise MuvrDataError(path, "query_prompt", "missing; expected {'query_prompt': vector, 'tags': ...}")
    text = _vector(data["query_prompt"], path, "query_prompt")
    raw = data.get("tags", {}) or {}
    if not isinstance(raw, dict):
        if phrases is None or len(phrases) != len(raw):
            raise MuvrDataError(path, "tags", "a list of tag vectors needs as many phrases in query_tags.json")
        raw = dict(zip(phrases, raw))
    tags = {str(k): _vector(v, path, f"tags[{k!r}]") for k, v in raw.items()}
    return text, tags


def load_query_dicts(folder: str | Path, query_ids, tag_phrases: dict | None = None) -> tuple[ItemVectors, dict]:
    """Description vectors of the queries (one unit row each, in the order of ``query_ids``) and tag vectors.

    Returns ``(items, {query id: {tag phrase: unit vector}})``: each query
    keeps the tag vectors of its own file, as the official evaluator reads
    them (evaluate_all_vlm_mul.py:139-147). A missing file raises ``MuvrDataError``.
    """
    folder, tag_phrases = Path(folder), tag_phrases or {}
    rows, tags = [], {}
    for qid in query_ids:
        text, phrase_vectors = read_query_dict(folder / f"{qid}{QUERY_DICT_SUFFIX}", tag_phrases.get(qid))
        rows.append(text)
        tags[qid] = {phrase: l2_normalize(vector[None])[0] for phrase, vector in phrase_vectors.items()}
    widths = {r.size for r in rows} | {v.size for own in tags.values() for v in own.values()}
    if len(widths) > 1:
        raise MuvrDataError(folder, "query_prompt", f"vectors of several widths {sorted(widths)}")
    items = ItemVectors(np.array(list(query_ids)), np.arange(len(rows)), l2_normalize(np.stack(rows)))
    return items, tags


def released_vectors(features: str | Path, *, query: str = "text+video", version: str = "base"):
    """A ``vectors(partition) -> (gallery, QueryVectors)`` function over one model's unpacked features.

    ``features`` is the folder holding ``<partition>/`` sub-folders. Gallery
    videos without a ``.npy`` are left unscored (the evaluator counts their
    positives as misses); a query video or query dict that is needed and
    missing raises ``MuvrDataError``.
    """
    def vectors(partition: Partition):
        folder = feature_dir(features, partition.name)
        gallery, _ = load_frames(folder, partition.gallery)
        if gallery is None:
            raise MuvrDataError(folder, None, f"no feature file of any of the {len(partition.gallery)} gallery videos")
        qids = list(dict.fromkeys(q.id for q in partition.queries) if version == "base"
                    else dict.fromkeys(p.query_id for p in partition.prompts))
        frames = text = None
        query_tags: dict = {}
        if query != "text":
            frames, missing = load_frames(folder, qids)
            if missing:
                raise MuvrDataError(folder / f"{missing[0]}.npy", None,
                                    f"file not found; {len(missing)} query video(s) have no frame features")
        if query != "video" or version == "filter":
            text, query_tags = load_query_dicts(folder, qids, partition.tags)
        return gallery, QueryVectors(frames, text, query_tags=query_tags)

    return vectors


def write_vectors_npz(path: str | Path, videos: ItemVectors, texts: ItemVectors | None = None,
                      tags: dict | None = None) -> Path:
    """Write videos' (and optionally query texts' and tag phrases') vectors to one ``.npz``."""
    arrays = {"ids": np.asarray(videos.ids).astype(str), "owner": np.asarray(videos.owner),
              "vectors": np.asarray(videos.vectors, dtype=np.float32)}
    if texts is not None:
        arrays.update(text_ids=np.asarray(texts.ids).astype(str), text_owner=np.asarray(texts.owner),
                      text_vectors=np.asarray(texts.vectors, dtype=np.float32))
    if tags:
        arrays.update(tag_phrases=np.array(list(tags), dtype=str),
                      tag_vectors=np.stack([np.asarray(v, dtype=np.float32) for v in tags.values()]))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return path


def npz_vectors(path: str | Path):
    """A ``vectors(partition) -> (gallery, QueryVectors)`` function over a ``write_vectors_npz`` file."""
    path = Path(path)
    if not path.is_file():
        raise MuvrDataError(path, None, "file not found")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported the same way
        raise MuvrDataError(path, None, f"not a readable .npz ({err})") from None
    for key in ("ids", "owner", "vectors"):
        if key not in arrays:
            raise MuvrDataError(path, key, f"missing; the file holds {sorted(arrays)}")
    try:
        videos = ItemVectors(arrays["ids"].astype(str), arrays["owner"], l2_normalize(arrays["vectors"]))
        texts = (ItemVectors(arrays["text_ids"].astype(str), arrays["text_owner"], l2_normalize(arrays["text_vectors"]))
                 if "text_ids" in arrays else None)
        tags = (dict(zip(arrays["tag_phrases"].astype(str).tolist(), l2_normalize(arrays["tag_vectors"])))
                if "tag_phrases" in arrays else {})
    except ValueError as err:
        raise MuvrDataError(path, "vectors", str(err)) from None
    where = {v: i for i, v in enumerate(videos.ids.tolist())}

    def vectors(partition: Partition):
        found = [where[v] for v in partition.gallery if v in where]
        if not found:
            raise MuvrDataError(path, "ids", f"no video of partition {partition.name!r}")
        qids = [q.id for q in partition.queries if q.id in where]
        frames = videos.select(np.array([where[q] for q in qids])) if qids else None
        return videos.select(np.array(found)), QueryVectors(frames, texts, tags)

    return vectors
