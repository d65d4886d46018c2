import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from sova_lib import sentences
from sova_lib.sentences import SplitCache, split, split_many, splitter_version
from tests.paths import ROOT


def test_lines_then_punkt():
    text = "Dr. Smith opens the trunk. Then he closes it.\n\nThe car leaves! Is it parked?"
    assert split(text) == ["Dr. Smith opens the trunk.", "Then he closes it.", "The car leaves!", "Is it parked?"]


def test_line_breaks_split_even_without_punctuation():
    assert split("- a car turns left\n- a person walks") == ["- a car turns left", "- a person walks"]


def test_abbreviations_and_numbers_do_not_split():
    assert split("The U.S. car moves at 3.5 m/s. It stops.") == ["The U.S. car moves at 3.5 m/s.", "It stops."]


def test_empty_answers_give_one_empty_sentence():
    assert split("") == [""]
    assert split("  \n\n \t") == [""]


def test_whole_text_mode():
    assert split("  A car. It turns.\nLeft. ", sentences=False) == ["A car. It turns.\nLeft."]


def test_split_many_and_type_error():
    assert split_many(["A. B.", ""]) == [["A.", "B."], [""]]
    with pytest.raises(TypeError, match="str"):
        split(None)


# -- the split cache -------------------------------------------------------------------------------------------

TEXTS = ["Dr. Smith opens the trunk. Then he closes it.\nThe car leaves!", "", "A car. It turns.", "A car. It turns."]


@pytest.fixture
def fresh_version():
    """``splitter_version`` computed anew inside the test and again after it (it is memoised)."""
    splitter_version.cache_clear()
    yield
    splitter_version.cache_clear()


def _counting_split(monkeypatch):
    calls = []
    real = sentences.split

    def counted(text, *, sentences=True):
        calls.append(text)
        return real(text, sentences=sentences)

    monkeypatch.setattr(sentences, "split", counted)
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
    monkeypatch.setattr(sentences, "SPLIT_RULES", sentences.SPLIT_RULES + 1)
    splitter_version.cache_clear()
    new = SplitCache(tmp_path)
    assert new.version != old.version and new.folder != old.folder
    assert split_many(TEXTS, cache_dir=tmp_path) == [split(t) for t in TEXTS[:1]] + [[""]] + [["A car.", "It turns."]] * 2
    assert calls[:3] == TEXTS[:3]  # every distinct text split again under the new version
    assert old.path.exists() and new.path.exists()


def test_the_version_covers_the_punkt_parameters(tmp_path, monkeypatch, fresh_version):
    before = splitter_version()
    copy = tmp_path / "english"
    shutil.copytree(sentences._PUNKT_ENGLISH, copy)
    monkeypatch.setattr(sentences, "_PUNKT_ENGLISH", copy)
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
    keys = [sentences._text_key(t) for t in TEXTS[:2]]
    assert cache.lookup(keys + ["0" * 64]) == {keys[0]: split(TEXTS[0]), keys[1]: [""]}
    split_many(TEXTS[2:3], cache_dir=tmp_path)
    records = [json.loads(line) for line in cache.path.read_text().splitlines()]  # every line whole again
    assert [r["sentences"] for r in records] == [split(TEXTS[0]), [""], ["A car.", "It turns."]]


WRITER = """
import sys
from sova_lib.sentences import SplitCache
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


def test_split_reads_the_same_parameters_as_nltks_english_punkt_model():
    """The splitter loads the vendored files itself; NLTK's own ``PunktTokenizer("english")`` agrees."""
    from nltk.tokenize.punkt import PunktTokenizer

    split("warm up")  # puts the vendored folder on nltk.data.path
    reference = PunktTokenizer("english")
    text = ("Mr. Jones parks at 5 p.m. on Main St. and leaves. The U.S. truck, i.e. a van, turns. "
            "He said \"Stop.\" Then nothing... A car (blue) waits! Does it move? e.g. no.")
    assert sentences._tokenizer().tokenize(text) == reference.tokenize(text)
    assert len(reference.tokenize(text)) >= 5
