"""sova_lib.storage: atomic writes, the lock; committed cache keys unchanged."""
import json
import os
import re
from pathlib import Path

import pytest

from sova_lib import storage
from sova_lib.describe.cache import cache_folder, cache_key
from sova_lib.describe.contrastive.store import EmbeddingCache
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.describe.provenance import config_hash

REPO = Path(__file__).resolve().parents[1]


def test_committed_quickstart_cache_key_recomputes_equal():
    folders = sorted((REPO / "cache" / "descriptions").glob("quickstart-motion-*__*"))
    assert folders, "the quickstart's description cache is committed under cache/descriptions"
    for folder in folders:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        key = {k: manifest[k] for k in manifest["hash_fields"]}
        assert config_hash(key) == manifest["config_hash"] == folder.name.rsplit("__", 1)[1]
        # the same key built the way the quickstart builds it names the same folder
        rebuilt = cache_key(manifest["backend"], manifest["describer"], resolve_prompt(manifest["prompt"]["name"]),
                            manifest["fps"], manifest["sampler_version"], manifest["crop_source"],
                            input_name=manifest["input"])
        assert rebuilt == key and cache_folder(REPO / "cache", rebuilt) == folder


def test_atomic_file_replaces_whole_or_leaves_the_old_file(tmp_path):
    path = tmp_path / "a.json"
    storage.write_json(path, {"x": "é"})
    assert path.read_bytes() == '{\n  "x": "é"\n}\n'.encode()
    with pytest.raises(RuntimeError, match="boom"):
        with storage.atomic_file(path) as f:
            f.write(b"half")
            raise RuntimeError("boom")
    assert json.loads(path.read_text(encoding="utf-8")) == {"x": "é"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]  # no temporary file left behind


def test_now_is_utc_to_the_second():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", storage.now())


def test_one_lock_error_for_both_caches(tmp_path):
    from sova_lib.describe.cache import CacheLockedError, DescriptionCache

    assert CacheLockedError is storage.CacheLockedError
    with DescriptionCache(tmp_path / "d").open():
        with pytest.raises(storage.CacheLockedError, match="another run is writing to"):
            DescriptionCache(tmp_path / "d").open()
    first = EmbeddingCache(tmp_path / "e").open()
    try:
        with pytest.raises(storage.CacheLockedError, match="another run is writing to"):
            EmbeddingCache(tmp_path / "e").open()
    finally:
        first.close()
    again = EmbeddingCache(tmp_path / "e").open()  # released: a later writer gets it
    again.close()
    assert (tmp_path / "e" / ".lock").exists() and os.listdir(tmp_path / "e") == [".lock"]


def test_write_json_writes_numpy_numbers_plainly_and_nan_as_null(tmp_path):
    import numpy as np

    data = {"a": np.float64("nan"), "b": [np.int64(3), 1.5, True], "c": {"d": np.float32(2.0)}, 4: "é"}
    path = storage.write_json(tmp_path / "x.json", data, indent=1)
    assert path.read_text(encoding="utf-8") == (
        '{\n "a": null,\n "b": [\n  3,\n  1.5,\n  true\n ],\n "c": {\n  "d": 2.0\n },\n "4": "é"\n}\n')
    rounded = storage.write_json(tmp_path / "y.json", [1 / 3, np.float32(1 / 3), 2], indent=None, digits=4)
    assert rounded.read_text() == "[0.3333, 0.3333, 2]\n"


def test_the_cache_root_is_the_parameter_else_sova_cache_else_the_default(tmp_path, monkeypatch):
    from sova_lib.storage import cache_root

    monkeypatch.setenv("SOVA_CACHE", str(tmp_path / "mine"))
    assert cache_root(tmp_path / "given", "../cache") == tmp_path / "given"
    assert cache_root(None, "../cache") == cache_root("", "../cache") == tmp_path / "mine"
    monkeypatch.setenv("SOVA_CACHE", "")
    assert cache_root(None, "../cache") == Path("../cache") and cache_root() == Path("cache")
    monkeypatch.delenv("SOVA_CACHE")
    assert cache_root() == Path("cache")
