import json

import numpy as np
import pytest

from sova_lib.item_vectors import embed_descriptions, read_descriptions, read_embeddings, write_embeddings
from sova_lib.similarity import ItemVectors


def test_json_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": 3, "text": "A car."}\n\n{"id": "7", "text": "B."}\n{"id": 3, "text": "A car."}\n')
    assert read_descriptions(path) == {3: "A car.", 7: "B."}


def test_authors_json_and_cache_folder(tmp_path):
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"0": "One.", "12": "Two."}))
    assert read_descriptions(path) == {0: "One.", 12: "Two."}
    run = tmp_path / "descriptions" / "m__abc"
    run.mkdir(parents=True)
    (run / "descriptions.jsonl").write_text('{"id": 1, "text": "x"}\n')
    assert read_descriptions(run) == {1: "x"}
    with pytest.raises(FileNotFoundError, match="m__abc"):
        read_descriptions(tmp_path)  # names the folders it found below


def test_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": 1, "text": "ok"}\n{"id": 2, "text": "broken\n')
    with pytest.raises(ValueError, match=r"bad.jsonl, line 2: not valid JSON"):
        read_descriptions(path)
    path.write_text('{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n')
    with pytest.raises(ValueError, match=r"line 2: id 1 appears again with a different text \(first at .*line 1\)"):
        read_descriptions(path)
    path.write_text('{"id": 1, "txt": "a"}\n')
    with pytest.raises(ValueError, match='line 1: expected an object with "id" and "text"'):
        read_descriptions(path)
    path.write_text('{"id": 1, "text": 5}\n')
    with pytest.raises(ValueError, match="line 1: text of id 1 is int"):
        read_descriptions(path)
    with pytest.raises(FileNotFoundError, match="nothing.jsonl"):
        read_descriptions(tmp_path / "nothing.jsonl")


def test_embeddings_roundtrip_and_errors(tmp_path):
    items = ItemVectors(np.array([5, 9]), np.array([0, 1, 1]), np.array([[3.0, 4.0], [1, 0], [0, 2]], np.float32))
    path = write_embeddings(tmp_path / "e.npz", items)
    back = read_embeddings(path)
    np.testing.assert_array_equal(back.ids, [5, 9])
    np.testing.assert_allclose(back.vectors, [[0.6, 0.8], [1, 0], [0, 1]])
    np.savez(tmp_path / "bad.npz", ids=np.array([1]), vectors=np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"bad.npz: missing array\(s\) \['owner'\]"):
        read_embeddings(tmp_path / "bad.npz")
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="junk.npz: not an .npz archive"):
        read_embeddings(tmp_path / "junk.npz")


class _CountingEncoder:
    """Deterministic stand-in encoder: one-hot on the first letter."""

    def __init__(self):
        self.seen = []

    def encode(self, texts):
        self.seen.extend(texts)
        out = np.zeros((len(texts), 27), np.float32)
        for row, t in enumerate(texts):
            out[row, (ord(t[0].lower()) - 96) % 27 if t else 0] = 1
        return out


def test_embed_descriptions_encodes_each_sentence_once():
    enc = _CountingEncoder()
    items = embed_descriptions({1: "A car. Big car.", 2: "A car.", 3: ""}, enc)
    assert sorted(enc.seen) == ["", "A car.", "Big car."]
    assert items.ids.tolist() == [1, 2, 3]
    assert items.owner.tolist() == [0, 0, 1, 2]
    whole = embed_descriptions({1: "A car. Big car."}, _CountingEncoder(), sentences=False)
    assert whole.owner.tolist() == [0]


def test_a_text_over_the_limit_is_cut_before_it_is_split(tmp_path):
    encoder = _CountingEncoder()
    texts = {1: "A car turns left. " * 3, 2: "A bus stops. " * 2 + "A van"}  # 54 and 31 characters
    items = embed_descriptions(texts, encoder, max_chars=30)
    # by hand: the first 30 characters are "A car turns left. A car turns " and "A bus stops. A bus stops. A va"
    assert encoder.seen == ["A car turns left.", "A car turns", "A bus stops.", "A va"]
    assert items.owner.tolist() == [0, 0, 1, 1, 1]
    from sova_lib.item_vectors import cut_note

    assert cut_note(texts, 30) == ["2 of 2 descriptions are longer than 30 characters (ids 1, 2): only their first "
                                   "characters were embedded (--max-answer-chars)"]
    assert cut_note(texts, 54) == []


_EMBED_PEAK = """
import resource, sys
import numpy as np
from sova_lib.item_vectors import embed_descriptions

class Encoder:
    cache_dir = None
    def encode(self, texts):
        return np.full((len(texts), 384), 1 / np.sqrt(384), np.float32)

embed_descriptions({0: "The splitter is loaded first."}, Encoder())
texts = {k: "A car turns left. " * 12 for k in range(6)}
texts[0] = "The car turns left. " * 5_000_000  # 100 MB, five million sentences
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
items = embed_descriptions(texts, Encoder())
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, items.vectors.shape[0])
"""


def test_a_100_mb_description_costs_no_more_than_its_first_characters():
    """Embedding a 100 MB answer adds under 50 MB to the process's peak memory (13.6 GB before the limit)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _EMBED_PEAK], capture_output=True, text=True, timeout=300)
    added_kb, vectors = map(int, done.stdout.split())
    assert vectors == 1000 + 5 * 12  # 20,000 characters of 20-character sentences, then 12 sentences of each other
    assert added_kb < 50_000
