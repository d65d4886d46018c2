"""Reading MUVR's released frame and text features (spec muvr-spec.md Sec. 2-3).

The released archives ``features/VLMs_1_15/<model>.tar`` unpack to::

    <model>/<partition>/<video id>.npy               (15, d) raw frame features of one video
    <model>/<partition>/<query id>_query_dict.pkl    {"query_prompt": (d,) or (1, d), "tags": {phrase: (d,)}}

``load_frames`` stacks the ``.npy`` files of the asked videos into
``ItemVectors`` (one item per video, one unit row per frame; rows are
L2-normalised here, as the official evaluator does, evaluate_all_vlm_mul.py:124-136).
``load_query_dicts`` reads the description and tag-phrase vectors of the
queries, each query's tag vectors kept apart (the Filter score of a query
uses the vector of its own file, as the official evaluator does). The pickles are read by a restricted
unpickler (``load_query_pickle``) that looks up only the four globals such a file needs and builds the arrays
itself, so a file cannot run code, and that refuses a file over ``MAX_QUERY_DICT_BYTES`` or nested more than
``MAX_NESTING`` levels deep, so a small file cannot take the memory or time of a large one.
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
from sova_lib.benchmarks.muvr.annotations import Partition, partition_path
from sova_lib.benchmarks.muvr.fusion import QueryVectors
from sova_lib.similarity import ItemVectors, l2_normalize
from sova_lib.storage import write_bytes

__all__ = ["MAX_NESTING", "MAX_QUERY_DICT_BYTES", "QUERY_DICT_SUFFIX", "load_frames", "load_query_dicts",
           "load_query_pickle", "npz_vectors", "read_query_dict", "released_vectors", "write_vectors_npz"]

QUERY_DICT_SUFFIX = "_query_dict.pkl"


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


#: The largest query dict read (bytes); a released one holds a few vectors of at most a few thousand floats.
MAX_QUERY_DICT_BYTES = 16 * 1024 * 1024
#: The deepest nesting read: {"tags": {phrase: [[number, ...]]}} is five levels.
MAX_NESTING = 6
#: The most values (containers, numbers, strings, arrays) read from one file, shared ones counted each time.
_MAX_VALUES = 1_000_000


class _NDArrayType:
    """Stands for ``numpy.ndarray`` in a pickle: only ``_reconstruct`` takes it, and it cannot be called."""


class _Dtype:
    """A dtype as a pickle gives it, ``numpy.dtype(spec, align, copy)`` then its state, checked before it is made.

    Only plain numbers (``f``, ``i``, ``u`` kinds) in a byte order: no fields, sub-arrays or objects.
    """

    def __init__(self, spec, align=False, copy=False):
        dtype = np.dtype(spec) if isinstance(spec, str) and len(spec) <= 8 else None  # a short text spec alone
        if dtype is None or dtype.kind not in "fiu" or dtype.fields is not None or dtype.subdtype is not None:
            raise pickle.UnpicklingError(f"dtype {spec!r} is not a plain number type")
        self.dtype = dtype

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) >= 5 and state[1] in ("<", ">", "|", "=")
                and state[2:5] == (None, None, None)):
            raise pickle.UnpicklingError("a dtype's state holds fields or sub-arrays")
        if state[1] in "<>":
            self.dtype = self.dtype.newbyteorder(state[1])


class _Array:
    """An array as a pickle gives it: ``_reconstruct`` makes this, its state (shape, dtype, bytes) the array."""

    array = None

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) == 5):
            raise pickle.UnpicklingError("an array's state is not (version, shape, dtype, order, bytes)")
        _, shape, dtype, fortran, raw = state
        self.array = _array(raw, dtype, shape, "F" if fortran else "C")


def _array(raw, dtype, shape, order) -> np.ndarray:
    """The array of ``shape`` values of ``dtype`` (a checked ``_Dtype``) in ``raw``, a copy of the pickle's bytes."""
    if (not isinstance(dtype, _Dtype) or not isinstance(shape, tuple) or len(shape) > 3
            or not all(isinstance(n, int) and n >= 0 for n in shape) or not isinstance(raw, (bytes, bytearray))
            or len(raw) != int(np.prod(shape, dtype=np.int64)) * dtype.dtype.itemsize or order not in ("C", "F")):
        raise pickle.UnpicklingError("an array's state does not hold its shape's values of a number type")
    return np.frombuffer(bytes(raw), dtype=dtype.dtype).reshape(shape, order=order)


def _reconstruct(cls, shape, typecode):
    """``numpy.core.multiarray._reconstruct`` as NumPy pickles an array: ``(ndarray, (0,), b'b')``, nothing else."""
    if cls is not _NDArrayType or shape != (0,):
        raise pickle.UnpicklingError("only an empty ndarray is reconstructed before its state")
    return _Array()


def _frombuffer(raw, dtype, shape, order):
    """``numpy.core.numeric._frombuffer``, as pickle protocol 5 (Python 3.14's default) stores an array."""
    made = _Array()
    made.array = _array(raw, dtype, shape, order)
    return made


#: The globals a released query dict holds: ``extract_all_features.py:159-167`` of the official code pickles
#: ``{"query_prompt": array, "tags": {phrase: array}}`` of NumPy arrays (``check``, lines 91-109: an ndarray)
#: with pickle's default protocol (4), which names NumPy's array reconstruction (``numpy.core.multiarray`` under
#: NumPy 1, ``numpy._core.multiarray`` under NumPy 2), the array type and the dtype; protocol 5 names
#: ``_frombuffer`` instead. Each maps to this module's checked stand-in: no module is imported, nothing is called.
_GLOBALS = {(f"numpy.{core}.{module}", name): function
            for core in ("core", "_core")
            for module, name, function in (("multiarray", "_reconstruct", _reconstruct),
                                           ("numeric", "_frombuffer", _frombuffer))}
_GLOBALS.update({("numpy", "ndarray"): _NDArrayType, ("numpy", "dtype"): _Dtype})


class _QueryDictUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        found = _GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a MUVR query dict (only NumPy arrays)")
        return found


def _plain(value, depth: int, budget: list):
    """``value`` with its arrays made; ``UnpicklingError`` past ``MAX_NESTING`` levels or ``_MAX_VALUES`` values."""
    budget[0] -= 1
    if budget[0] < 0:
        raise pickle.UnpicklingError(f"holds more than {_MAX_VALUES} values")
    if depth > MAX_NESTING:
        raise pickle.UnpicklingError(f"nested more than {MAX_NESTING} levels deep")
    if isinstance(value, _Array):
        if value.array is None:
            raise pickle.UnpicklingError("an array without its data")
        return value.array
    if isinstance(value, dict):
        return {_plain(k, depth + 1, budget): _plain(v, depth + 1, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1, budget) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise pickle.UnpicklingError(f"holds a {type(value).__name__}, not plain data")


def load_query_pickle(path: Path):
    """The content of a query dict pickle, read without running code (module docstring); ``MuvrDataError`` else."""
    size = path.stat().st_size
    if size > MAX_QUERY_DICT_BYTES:
        raise MuvrDataError(path, None, f"{size} bytes, more than a query dict holds ({MAX_QUERY_DICT_BYTES}); "
                                        "not read")
    try:
        return _plain(_QueryDictUnpickler(io.BytesIO(path.read_bytes())).load(), 0, [_MAX_VALUES])
    except Exception as err:  # noqa: BLE001 - any unreadable pickle is reported the same way
        raise MuvrDataError(path, None, f"not a readable query dict ({err})") from None


def _vector(value, path: Path, key: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    array = array.reshape(-1) if array.ndim == 2 and array.shape[0] == 1 else array
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all() or not np.any(array):
        raise MuvrDataError(path, key, f"expected one finite non-zero vector, got shape {np.shape(value)}")
    return array.astype(np.float32)


def read_query_dict(path: Path, phrases: list | None = None) -> tuple[np.ndarray, dict]:
    """``(description vector (d,), {tag phrase: vector})`` of one ``*_query_dict.pkl``."""
    if not path.is_file():
        raise MuvrDataError(path, None, "file not found")
    data = load_query_pickle(path)
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
    return ItemVectors(np.array(list(query_ids)), np.arange(len(rows)), l2_normalize(np.stack(rows))), tags


def released_vectors(features: str | Path, *, query: str = "text+video", version: str = "base"):
    """A ``vectors(partition) -> (gallery, QueryVectors)`` function over one model's unpacked features.

    ``features`` is the folder holding ``<partition>/`` sub-folders. Gallery
    videos without a ``.npy`` are left unscored (the evaluator counts their
    positives as misses); a query video or query dict that is needed and
    missing raises ``MuvrDataError``.
    """
    def vectors(partition: Partition):
        folder = partition_path(features, partition.name,
                                "no such folder; expected <features>/<partition>/<video id>.npy")
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
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return write_bytes(path, buffer.getvalue())


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
