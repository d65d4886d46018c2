"""Reading description files and turning descriptions or vectors into ``ItemVectors``.

Accepted description inputs (``read_descriptions``):

* JSON Lines, one ``{"id": <index>, "text": "..."}`` object per line (what
  ``sova describe`` writes);
* the SOVABench authors' output: one JSON object ``{"<index>": "text", ...}``;
* a description cache folder (one holding ``descriptions.jsonl``).

Accepted vector input (``read_embeddings``): an ``.npz`` with ``ids`` (one int
per item; strings for items named by file, such as the images of the image
tasks), ``owner`` (one int per vector: the position of its item in
``ids``) and ``vectors`` (one float row per vector). Rows are L2-normalised on
reading. This is also how contrastive baselines (one or many frame vectors per
clip) are scored.
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from sova_lib.encoder import split_many
from sova_lib.fingerprint import content_fingerprint
from sova_lib.similarity import ItemVectors, l2_normalize
from sova_lib.storage import JSON_ERRORS, json_problem, lines, write_bytes

__all__ = ["MAX_TEXT_CHARS", "cut_note", "embed_descriptions", "empty_note", "put_text", "read_descriptions",
           "read_embeddings", "vectors_identity", "write_embeddings"]


def _as_id(raw, where: str):
    """Benchmark ids are ints; digit strings are accepted; other strings stay strings."""
    if isinstance(raw, str):
        return int(raw) if raw.strip().lstrip("-").isdigit() else raw
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise ValueError(f"{where}: id {raw!r} is not an integer or string")


def put_text(out: dict, sources: dict, key, text, where: str) -> None:
    """Add ``key -> text`` to ``out`` (``sources``: key -> where it was first found), by the one duplicate rule.

    The rule of every reader of descriptions (``read_descriptions`` and the
    description cache): an id found again with the same text counts once; with
    another text it is a ``ValueError`` naming both places, since no reader can
    know which of the two answers is right.
    """
    if not isinstance(text, str):
        raise ValueError(f"{where}: text of id {key!r} is {type(text).__name__}, expected a string")
    if key in out and out[key] != text:
        raise ValueError(f"{where}: id {key!r} appears again with a different text (first at {sources[key]}); "
                         "keep one of the two, then run again")
    out.setdefault(key, text)
    sources.setdefault(key, where)


def read_descriptions(path: str | Path) -> dict:
    """Map id -> description text from a JSONL file, an authors' JSON file or a cache folder.

    Raises ``FileNotFoundError`` or ``ValueError`` naming the file and line of
    the problem. An id repeated with the same text is kept once; repeated
    with another text is an error.
    """
    path = Path(path)
    if path.is_dir():
        candidate = path / "descriptions.jsonl"
        if not candidate.exists():
            found = sorted(str(p.parent) for p in path.rglob("descriptions.jsonl"))[:5]
            hint = f"; description folders below it: {', '.join(found)}" if found else ""
            raise FileNotFoundError(f"{path} holds no descriptions.jsonl{hint}")
        path = candidate
    if not path.exists():
        raise FileNotFoundError(f"description file {path} does not exist")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise ValueError(f"{path}, line {line}: byte {raw[err.start]:#04x} is not UTF-8 text; "
                         "expected a UTF-8 JSON Lines or JSON file") from None
    out: dict = {}
    sources: dict = {}
    if text.lstrip().startswith("{"):
        try:
            whole = json.loads(text)
        except JSON_ERRORS:
            whole = None  # not one object: read it as JSON Lines below
        # One object keyed by ids is the authors' format; an object with "id"
        # or "text" keys is a one-line JSON Lines file.
        if isinstance(whole, dict) and not ({"id", "text"} & whole.keys()):
            for key, value in whole.items():
                put_text(out, sources, _as_id(key, f"{path}"), value, f"{path}, key {key!r}")
            return out
    for number, line in lines(text):
        where = f"{path}, line {number}"
        try:
            record = json.loads(line)
        except JSON_ERRORS as err:
            raise ValueError(f"{where}: not valid JSON ({json_problem(err)}); "
                             "expected {\"id\": ..., \"text\": ...}") from None
        if not isinstance(record, dict) or "id" not in record or "text" not in record:
            raise ValueError(f"{where}: expected an object with \"id\" and \"text\"")
        put_text(out, sources, _as_id(record["id"], where), record["text"], where)
    return out


#: The longest text embedded, in characters; a longer one is cut to it (``embed_descriptions``). The same limit
#: bounds an answer that ``sova describe`` keeps (``--max-answer-chars``): about five times what the default 1,024
#: new tokens give, while a text that never ends (a server that does not stop) costs no more than this.
MAX_TEXT_CHARS = 20_000


def _note(keys: list, texts: dict, kind: str, consequence: str) -> list[str]:
    """``["<n> of <N> descriptions are <kind> (ids ...): <consequence>"]`` naming up to five of ``keys``, or ``[]``."""
    if not keys:
        return []
    shown = ", ".join(repr(key) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")
    return [f"{len(keys)} of {len(texts)} descriptions are {kind} (ids {shown}): {consequence}"]


def empty_note(texts: dict) -> list[str]:
    """A note (a one-element list) when some descriptions are empty or whitespace only, else ``[]``.

    Such an item has no sentence to embed; ``sova describe`` never writes one (it records a failure), but the
    authors' JSON or a file made elsewhere may hold some.
    """
    return _note([key for key, text in texts.items() if not text.strip()], texts, "empty or whitespace only",
                 "the describer gave no text for them")


def cut_note(texts: dict, max_chars: int = MAX_TEXT_CHARS) -> list[str]:
    """A note (a one-element list) when some texts are longer than ``max_chars``, which ``embed_descriptions`` cuts."""
    return _note([key for key, text in texts.items() if len(text) > max_chars], texts,
                 f"longer than {max_chars} characters",
                 "only their first characters were embedded (--max-answer-chars)")


def read_embeddings(path: str | Path) -> ItemVectors:
    """``ItemVectors`` from an ``.npz`` with ``ids``, ``owner`` and ``vectors`` (rows normalised)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"embedding file {path} does not exist")
    expected = "expected an .npz archive (numpy.savez) with arrays ids, owner and vectors"
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not an .npz archive; {expected}")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in ("ids", "owner", "vectors") if k not in data.files]
            if missing:
                raise ValueError(f"{path}: missing array(s) {missing}; it holds {data.files}; {expected}")
            ids, owner, vectors = data["ids"], data["owner"], data["vectors"]
    except ValueError as err:
        if str(err).startswith(str(path)):
            raise
        raise ValueError(f"{path}: an array cannot be read without unpickling objects ({err}); "
                         f"{expected}, of numbers") from None
    except (OSError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: not a readable .npz archive ({err}); {expected}") from None
    named = ids.dtype.kind == "U"
    if not (named or np.issubdtype(ids.dtype, np.integer)) or not np.issubdtype(owner.dtype, np.integer):
        raise ValueError(f"{path}: ids must be an integer or string array and owner an integer array "
                         f"(got {ids.dtype}, {owner.dtype})")
    if ids.ndim != 1 or owner.ndim != 1:
        raise ValueError(f"{path}: ids and owner must be 1-D arrays (got shapes {ids.shape}, {owner.shape})")
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.number):
        raise ValueError(f"{path}: vectors must be a 2-D numeric array, one row per vector "
                         f"(got shape {vectors.shape}, dtype {vectors.dtype})")
    if len(np.unique(ids)) != len(ids):
        raise ValueError(f"{path}: ids are not unique")
    bad_rows = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
    if bad_rows.size:
        row = int(bad_rows[0])
        who = f"id {ids[owner[row]].item()}" if owner.shape == (vectors.shape[0],) and 0 <= owner[row] < ids.size \
            else "an unknown id"
        raise ValueError(f"{path}: {bad_rows.size} vector row(s) hold NaN or inf (first: row {row}, of {who}); "
                         "expected finite numbers")
    try:
        return ItemVectors(ids if named else ids.astype(np.int64), owner.astype(np.int64), l2_normalize(vectors))
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def vectors_identity(path: str | Path) -> dict:
    """The record fields that name the vectors at ``path`` (an ``.npz``, or a folder of feature files) by what they
    are: ``cache``, the last name of ``path`` made absolute (``.`` and a trailing slash name the folder itself;
    links are not followed), and ``fingerprint``, the digest of its content
    (``sova_lib.fingerprint.content_fingerprint``). A record's file name comes from both
    (``sova_lib.records.record_name``), so two different files never share a record, and one file spelled two
    ways (relative or absolute) is one record."""
    return {"cache": Path(os.path.abspath(path)).name, "fingerprint": content_fingerprint(path)}


def write_embeddings(path: str | Path, items: ItemVectors) -> Path:
    """Write ``items`` as an ``.npz`` that ``read_embeddings`` reads back."""
    buffer = io.BytesIO()
    np.savez(buffer, ids=np.asarray(items.ids), owner=np.asarray(items.owner), vectors=np.asarray(items.vectors))
    return write_bytes(path, buffer.getvalue())


def embed_descriptions(texts: dict, encoder, *, sentences: bool = True,
                       max_chars: int = MAX_TEXT_CHARS) -> ItemVectors:
    """Split each text into sentences (or keep it whole) and embed each sentence.

    ``texts`` maps id -> text; ``encoder`` has ``encode(list[str]) -> (n, D)``
    unit vectors (e.g. ``SentenceEncoder``). Each distinct sentence is
    encoded once. An encoder with a ``cache_dir`` (``SentenceEncoder`` with a
    disk cache) keeps the splits there too (``encoder.SplitCache``), so a
    text is split, and NLTK imported, only the first time it is met. A text
    longer than ``max_chars`` is cut to its first ``max_chars`` characters
    (``cut_note`` says which), so the memory and time of the split and the
    vectors are bounded by ``max_chars`` per item, whatever the input holds.
    """

    ids = list(texts)
    pieces = split_many([texts[i][:max_chars] for i in ids], sentences=sentences,
                        cache_dir=getattr(encoder, "cache_dir", None))
    owner = np.repeat(np.arange(len(ids)), [len(p) for p in pieces])
    flat = [s for p in pieces for s in p]
    unique = list(dict.fromkeys(flat))
    row = {s: k for k, s in enumerate(unique)}
    vectors = encoder.encode(unique) if unique else np.zeros((0, 1), np.float32)
    id_array = np.array(ids) if all(isinstance(i, int) for i in ids) else np.array(ids, dtype=object)
    return ItemVectors(id_array, owner, np.asarray(vectors, dtype=np.float32)[[row[s] for s in flat]])
