import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sova_lib import encoder as encoder_module
from sova_lib import sentences as splitter
from sova_lib.encoder import SentenceEncoder, SplitCache, resolve_encoder_path, split_many, splitter_version
from sova_lib.sentences import split
from tests.paths import ROOT


def test_offline_encoder_gives_unit_vectors(encoder):
    vectors = encoder.encode(["A car turns left.", "A person opens the trunk.", ""])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    same = encoder.encode(["A car turns left."])[0]
    np.testing.assert_array_equal(same, vectors[0])
    # related sentences are closer than unrelated ones
    a, b, c = encoder.encode(["A car turns left.", "The vehicle turns to the left.", "A man reads a book."])
    assert a @ b > a @ c + 0.2


def test_disk_cache_is_reused_without_loading_the_model(encoder, tmp_path):
    first = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    first.model = encoder.model  # share the already loaded weights
    texts = ["The truck reverses.", "Nobody moves."]
    vectors = first.encode(texts)
    shards = list(first.cache_path.glob("shard-*.npz"))
    assert len(shards) == 1
    second = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    np.testing.assert_array_equal(second.encode(texts), vectors)
    assert "model" not in vars(second)  # nothing was re-encoded: the model was never loaded
    first.encode(texts)  # known texts write no new shard
    assert len(list(first.cache_path.glob("shard-*.npz"))) == 1


def test_identity_is_the_content_of_the_model_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "weights.bin").write_bytes(b"\x00" * 10)
    one = SentenceEncoder(str(folder), cache_dir=tmp_path / "c")
    (folder / "weights.bin").write_bytes(b"\x01" * 10)
    two = SentenceEncoder(str(folder), cache_dir=tmp_path / "c")
    assert one.identity != two.identity
    assert one.cache_path != two.cache_path
    assert resolve_encoder_path(str(folder)) == str(folder.resolve())


def test_no_progress_bar_at_all_without_show_progress(tmp_path, capfd):
    """Neither transformers' weight-loading bar nor sentence-transformers' batch bar; the global switch restored."""
    from transformers.utils import logging as transformers_logging

    before = transformers_logging.is_progress_bar_enabled()
    encoder = SentenceEncoder(cache_dir=tmp_path, show_progress=False, batch_size=8)
    encoder.encode([f"Sentence number {k}." for k in range(40)])  # five batches
    out, err = capfd.readouterr()
    assert "Loading weights" not in err + out and "Batches" not in err + out and "it/s" not in err + out
    assert transformers_logging.is_progress_bar_enabled() == before


def test_one_progress_bar_over_all_sentences_and_the_vectors_of_one_encode_call(encoder, tmp_path, capfd,
                                                                                 monkeypatch):
    """Batch by batch under one bar (no per-call "Batches" bar); a shard per batch when SHARD_SECONDS is 0;
    every vector bit for bit what one ``SentenceTransformer.encode`` call over all the sentences gives."""
    texts = [f"Sentence number {k} {'is longer ' * (k % 7)}than the last." for k in range(40)]
    reference = encoder.model.encode(texts, batch_size=8, normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False).astype(np.float32)
    capfd.readouterr()
    monkeypatch.setattr(encoder_module, "SHARD_SECONDS", 0.0)
    fresh = SentenceEncoder(cache_dir=tmp_path, show_progress=True, batch_size=8)
    fresh.model = encoder.model
    vectors = fresh.encode(texts)
    out, err = capfd.readouterr()
    assert "Batches" not in err + out and err.count("encoding sentences: 100%") >= 1
    assert "40/40" in err and "sentence/s" in err
    assert np.array_equal(vectors.view(np.uint32), reference.view(np.uint32))
    assert len(list(fresh.cache_path.glob("shard-*.npz"))) == 5  # 40 sentences, 8 a batch
    again = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    assert np.array_equal(again.encode(texts), vectors) and "model" not in vars(again)


# -- the split cache (split_many, SplitCache) -------------------------------------------------------------------------------------------

def test_split_many_without_a_cache_is_split_of_each_text():
    assert split_many(["A. B.", ""]) == [["A.", "B."], [""]]


TEXTS = ["Dr. Smith opens the trunk. Then he closes it.\nThe car leaves!", "", "A car. It turns.", "A car. It turns."]


@pytest.fixture
def fresh_version():
    """``splitter_version`` computed anew inside the test and again after it (it is memoised)."""
    splitter_version.cache_clear()
    yield
    splitter_version.cache_clear()


def _counting_split(monkeypatch):
    calls = []
    real = splitter.split

    def counted(text, *, sentences=True):
        calls.append(text)
        return real(text, sentences=sentences)

    monkeypatch.setattr(splitter, "split", counted)
    return calls


def test_split_cache_gives_what_split_gives_and_splits_each_text_once(tmp_path, monkeypatch):
    calls = _counting_split(monkeypatch)
    expected = [split(t) for t in TEXTS]
    calls.clear()
    assert split_many(TEXTS, cache_dir=tmp_path) == expected
    assert calls == TEXTS[:3]  # the repeated text is split once
    path = SplitCache(tmp_path).path
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["sentences"] for r in lines] == expected[:3]
    calls.clear()
    assert split_many(TEXTS + ["One more. Two."], cache_dir=tmp_path) == expected + [["One more.", "Two."]]
    assert calls == ["One more. Two."]  # only the new text
    assert split_many(TEXTS, cache_dir=tmp_path, sentences=False) == [[t.strip()] for t in TEXTS]
    assert len(path.read_text().splitlines()) == 4  # whole-text mode neither reads nor writes splits


def test_a_changed_splitter_version_splits_again_into_a_new_folder(tmp_path, monkeypatch, fresh_version):
    split_many(TEXTS, cache_dir=tmp_path)
    old = SplitCache(tmp_path)
    calls = _counting_split(monkeypatch)
    monkeypatch.setattr(splitter, "SPLIT_RULES", splitter.SPLIT_RULES + 1)
    splitter_version.cache_clear()
    new = SplitCache(tmp_path)
    assert new.version != old.version and new.folder != old.folder
    assert split_many(TEXTS, cache_dir=tmp_path) == [split(t) for t in TEXTS[:1]] + [[""]] + [["A car.", "It turns."]] * 2
    assert calls[:3] == TEXTS[:3]  # every distinct text split again under the new version
    assert old.path.exists() and new.path.exists()


def test_the_version_covers_the_punkt_parameters(tmp_path, monkeypatch, fresh_version):
    before = splitter_version()
    copy = tmp_path / "english"
    shutil.copytree(splitter.PUNKT_ENGLISH, copy)
    monkeypatch.setattr(splitter, "PUNKT_ENGLISH", copy)
    splitter_version.cache_clear()
    assert splitter_version() == before  # same files, same version
    with open(copy / "abbrev_types.txt", "a") as f:
        f.write("zzq\n")
    splitter_version.cache_clear()
    assert splitter_version() != before


def test_a_torn_last_line_is_ignored_then_cut_off_by_the_next_writer(tmp_path):
    split_many(TEXTS[:2], cache_dir=tmp_path)
    cache = SplitCache(tmp_path)
    with open(cache.path, "ab") as f:
        f.write(b'{"sha256": "' + b"0" * 64 + b'", "sentences": ["half')  # a writer killed mid-line
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in TEXTS[:2]]  # the SHA-256 of each text
    assert cache.lookup(keys + ["0" * 64]) == {keys[0]: split(TEXTS[0]), keys[1]: [""]}
    split_many(TEXTS[2:3], cache_dir=tmp_path)
    records = [json.loads(line) for line in cache.path.read_text().splitlines()]  # every line whole again
    assert [r["sentences"] for r in records] == [split(TEXTS[0]), [""], ["A car.", "It turns."]]


WRITER = """
import sys
from sova_lib.encoder import SplitCache
cache = SplitCache(sys.argv[1])
k = 0
while True:  # long lines, so that a kill often lands inside a write
    cache.append({f"{k + j:064x}": [f"sentence {k + j} " * 200] * 20 for j in range(5)})
    k += 5
"""


def test_the_split_cache_survives_kill_9(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env)
    path = SplitCache(tmp_path).path
    try:
        deadline = time.monotonic() + 60
        while not (path.exists() and path.read_bytes().count(b"\n") >= 50):
            assert proc.poll() is None and time.monotonic() < deadline, "the writer did not write"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    written = path.read_bytes().count(b"\n")
    keys = [f"{k:064x}" for k in range(written + 5)]
    found = SplitCache(tmp_path).lookup(keys)
    assert sorted(found) == keys[:written]  # every whole line, nothing of a torn one
    assert all(found[f"{k:064x}"] == [f"sentence {k} " * 200] * 20 for k in range(written))
    # the lock died with the writer: a new writer gets it at once, and leaves only whole lines
    start = time.monotonic()
    assert split_many(["After the kill. It works."], cache_dir=tmp_path) == [["After the kill.", "It works."]]
    assert time.monotonic() - start < 10
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert len(lines) - 1 == written + 1
