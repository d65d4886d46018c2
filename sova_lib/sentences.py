"""Sentence splitting exactly as the MLLM-to-Embedding framework does it, and a cache of the splits.

``split(text)`` first splits the text into lines, then each line into
sentences with NLTK's English Punkt model, strips each piece and drops the
empty ones (SOVABench paper, Section 4). An answer with no sentence at all
becomes one empty sentence, so every item keeps at least one embedding.

The English ``punkt_tab`` parameters ship with the package
(``sova_lib/data/nltk_data``) and are the ones the splitter reads, so
splitting works offline and gives the same sentences on every machine; the
vendored folder is appended to ``nltk.data.path`` and never replaces a
user's own data for other NLTK uses.

Importing NLTK takes seconds (its ``__init__`` loads SciPy and scikit-learn),
so ``split_many(texts, cache_dir=...)`` keeps each text's split on disk
(``SplitCache``) and imports NLTK only for a text it has not split before.
The cache is keyed by the SHA-256 of each text and by ``splitter_version()``,
a digest of everything that decides a split: the splitting rules of this
module (``SPLIT_RULES``), NLTK's version and the source of its Punkt module,
and the Punkt parameter files. A changed splitter writes a new folder and
never reuses an old split.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

from sova_lib.storage import JSON_ERRORS, file_errors, write_json

__all__ = ["NLTK_DATA", "SPLIT_RULES", "SplitCache", "split", "split_many", "splitter_version"]

NLTK_DATA = str(resources.files("sova_lib") / "data" / "nltk_data")
_PUNKT_ENGLISH = Path(NLTK_DATA) / "tokenizers" / "punkt_tab" / "english"

#: Version of the rules in ``split`` (lines first, strip, drop empty pieces, ``[""]`` for none):
#: raise it whenever they change, so that cached splits are made again.
SPLIT_RULES = 1


@lru_cache(maxsize=1)
def _tokenizer():
    import nltk
    from nltk.data import FileSystemPathPointer
    from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

    if NLTK_DATA not in nltk.data.path:
        nltk.data.path.append(NLTK_DATA)
    return PunktSentenceTokenizer(load_punkt_params(FileSystemPathPointer(str(_PUNKT_ENGLISH))))


@lru_cache(maxsize=1)
def splitter_version() -> str:
    """A 64-hex digest of everything that decides a split, computed without importing NLTK.

    It covers ``SPLIT_RULES``, NLTK's ``VERSION`` file and the source of
    ``nltk/tokenize/punkt.py`` (found with ``importlib.util.find_spec``, not
    imported), and the English Punkt parameter files.
    """
    h = hashlib.sha256(f"sova_lib.sentences rules {SPLIT_RULES}\n".encode())
    spec = find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("NLTK is not installed; sentence splitting needs it (pip install nltk)")
    nltk_dir = Path(list(spec.submodule_search_locations)[0])
    files = [nltk_dir / "VERSION", nltk_dir / "tokenize" / "punkt.py", *sorted(_PUNKT_ENGLISH.iterdir())]
    for path in files:
        h.update(f"{path.name}\n".encode())
        h.update(path.read_bytes() if path.is_file() else b"(absent)")
    return h.hexdigest()


def split(text: str, *, sentences: bool = True) -> list[str]:
    """Split one answer into its sentences.

    ``sentences=False`` is the whole-text mode of the ablations: the answer is
    kept as one piece (stripped). The result is never empty: an answer without
    any sentence gives ``[""]``.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected the answer as str, got {type(text).__name__}")
    if not sentences:
        return [text.strip()]
    tokenizer = _tokenizer()
    pieces = [
        s.strip()
        for line in text.splitlines()
        for s in tokenizer.tokenize(line)
    ]
    pieces = [p for p in pieces if p]
    return pieces or [""]


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_PREFIX = b'{"sha256": "'  # how json.dumps starts each line of splits.jsonl


class SplitCache:
    """The sentence splits of texts, on disk under ``<cache_dir>/sentences/punkt-english__<version>/``.

    ``splits.jsonl`` holds one ``{"sha256": <hex digest of the UTF-8 text>,
    "sentences": [...]}`` line per text, appended and flushed by one writer at
    a time (``.lock``, a ``filelock`` lock held only while appending);
    ``splitter.json`` names the splitter. A line torn by a killed writer is
    ignored on reading and cut off by the next writer before it appends.
    ``<version>`` is the first 12 hex digits of ``splitter_version()``.
    """

    def __init__(self, cache_dir: str | Path):
        self.version = splitter_version()
        self.folder = Path(cache_dir) / "sentences" / f"punkt-english__{self.version[:12]}"
        self.path = self.folder / "splits.jsonl"

    def lookup(self, keys) -> dict:
        """sha256 -> sentences for those of ``keys`` that are cached (complete lines only)."""
        wanted = set(keys)
        found: dict = {}
        if not wanted or not self.path.exists():
            return found
        with file_errors(self.path, "read"), open(self.path, "rb") as f:
            data = f.read()
        for line in data.split(b"\n")[:-1]:  # the piece after the last newline is empty or torn
            key = line[len(_PREFIX):len(_PREFIX) + 64].decode("ascii", "replace") if line.startswith(_PREFIX) else None
            if key is None or key in wanted and key not in found:
                try:
                    record = json.loads(line)
                except JSON_ERRORS:
                    continue  # not a line this cache wrote
                if isinstance(record, dict) and record.get("sha256") in wanted:
                    found.setdefault(record["sha256"], record["sentences"])
        return found

    def append(self, splits: dict) -> None:
        """Append ``sha256 -> sentences`` lines (one writer at a time; a torn last line is cut off first)."""
        if not splits:
            return
        from filelock import FileLock

        with file_errors(self.folder, "create the folder"):
            self.folder.mkdir(parents=True, exist_ok=True)
        info = self.folder / "splitter.json"
        if not info.exists():
            write_json(info, {"splitter": "nltk punkt, english parameters of sova_lib/data/nltk_data",
                              "rules": SPLIT_RULES, "version": self.version}, indent=1)
        lines = b"".join(json.dumps({"sha256": k, "sentences": v}).encode() + b"\n" for k, v in splits.items())
        with file_errors(self.path, "write"), FileLock(str(self.folder / ".lock")):
            with open(self.path, "a+b") as f:
                size = f.seek(0, os.SEEK_END)
                if size:
                    f.seek(max(0, size - (1 << 16)))
                    tail = f.read()
                    if not tail.endswith(b"\n"):  # a writer was killed mid-line: cut its piece off
                        cut = tail.rfind(b"\n")
                        f.truncate(size - len(tail) + cut + 1 if cut >= 0 else self._last_line_end(f))
                f.seek(0, os.SEEK_END)
                f.write(lines)
                f.flush()
                os.fsync(f.fileno())

    @staticmethod
    def _last_line_end(f) -> int:
        """Offset just after the last newline of the open file ``f`` (0 if none)."""
        f.seek(0)
        data = f.read()
        return data.rfind(b"\n") + 1


def split_many(texts, *, sentences: bool = True, cache_dir: str | Path | None = None) -> list[list[str]]:
    """``split`` applied to each text of an iterable, through the ``SplitCache`` of ``cache_dir`` if given.

    With a cache, only texts not split before are split (and NLTK imported
    only then), and their splits are appended to the cache. The result is the
    same as without it. ``sentences=False`` needs no splitter and no cache.
    """
    texts = list(texts)
    if not sentences or cache_dir is None:
        return [split(t, sentences=sentences) for t in texts]
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"expected the answer as str, got {type(t).__name__}")
    cache = SplitCache(cache_dir)
    keys = [_text_key(t) for t in texts]
    known = cache.lookup(keys)
    new = {}
    for key, text in zip(keys, texts):
        if key not in known and key not in new:
            new[key] = split(text)
    cache.append(new)
    known.update(new)
    return [list(known[k]) for k in keys]
