"""Every JSON Lines file the library writes reads back: line separators and a lone surrogate in every value.

``str.splitlines`` splits at each of ``SEPARATORS`` (and ``io``'s text lines
at ``"\\r"``); ``json.dumps(..., ensure_ascii=False)`` keeps U+0085, U+2028
and U+2029 raw, so a reader that splits there cuts the record in two. A lone
surrogate (what a JSON answer's ``"\\ud800"`` escape decodes to) cannot be
encoded as UTF-8 unless it is written as its escape.
"""
import json

import pytest

from sova_lib.benchmarks.muvr.qa import load_qa
from sova_lib.benchmarks.vantage.submissions import check_submission, read_submission, write_submission
from sova_lib.describe.cache import DescriptionCache
from sova_lib.describe.contrastive.store import EmbeddingCache
from sova_lib.encoder import SplitCache
from sova_lib.item_vectors import read_descriptions
from sova_lib.storage import JsonlError, json_line, lines, read_jsonl

#: Every character ``str.splitlines`` ends a line at, but "\n".
SEPARATORS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
TEXT = "Yes." + "".join(f"{c}part {k}" for k, c in enumerate(SEPARATORS)) + " lone \ud800 end"


def test_separators_are_all_of_splitlines():
    splitting = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert splitting == set(SEPARATORS) | {"\n"}
    assert len(TEXT.splitlines()) == len(SEPARATORS) + 1


def test_json_line_and_read_jsonl(tmp_path):
    line = json_line({"text": TEXT})
    assert line.endswith("\n") and line.count("\n") == 1 and "\\ud800" in line and "\u2028" in line
    path = tmp_path / "x.jsonl"
    path.write_bytes((line + "\n  \n" + '{"a":\r 1}\r\n').encode("utf-8"))
    assert list(read_jsonl(path)) == [(1, {"text": TEXT}), (4, {"a": 1})]  # blank lines skipped, numbered as in the file
    assert list(lines("a\u2028b\n\nc")) == [(1, "a\u2028b"), (3, "c")]
    path.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(JsonlError, match=r"x\.jsonl, line 2: not valid JSON"):
        list(read_jsonl(path))


def test_description_cache(tmp_path):
    with DescriptionCache(tmp_path / "c").open() as cache:
        cache.add("q/1", TEXT)
        cache.add_error("q/2", TEXT)
    again = DescriptionCache(tmp_path / "c").open()
    try:
        assert again.done == {"q/1": TEXT} and again.failures == {"q/2": TEXT}
    finally:
        again.close()
    # the answers as `sova muvr evaluate --version qa --answers` and `sova sovabench evaluate --descriptions` read them
    assert read_descriptions(tmp_path / "c") == {"q/1": TEXT}


def test_embedding_cache_errors(tmp_path):
    cache = EmbeddingCache(tmp_path / "e").open()
    cache.add_error(7, TEXT)
    cache.close()
    again = EmbeddingCache(tmp_path / "e").open()
    try:
        assert again.failures == {7: TEXT}
    finally:
        again.close()


def test_vantage_submission(tmp_path):
    path = write_submission(tmp_path / "vqa.jsonl", "vqa", {"clip__q_000000": TEXT, "clip__q_000001": "B"},
                            model="m")
    answers, info = read_submission(path)
    assert answers == {"clip__q_000000": TEXT, "clip__q_000001": "B"} and info["task"] == "vqa"
    assert check_submission(path, "vqa", ["clip__q_000000", "clip__q_000001"]) == []


def test_sentence_split_cache(tmp_path):
    cache = SplitCache(tmp_path)
    cache.append({"0" * 64: [TEXT, "b"]})
    assert cache.lookup(["0" * 64]) == {"0" * 64: [TEXT, "b"]}


def test_muvr_qa_annotations(tmp_path):
    folder = tmp_path / "annotations" / "QA" / "annotations"
    folder.mkdir(parents=True)
    rows = [{"Query": "q", "Target": t, "Tag": "", "Label": label, "prompt_en": TEXT} for t, label in (("a", 1), ("b", 0))]
    (folder / "news.jsonl").write_text("".join(json_line(r) for r in rows), encoding="utf-8")
    questions = load_qa(tmp_path, ["news"])
    assert [q.id for q in questions] == ["news/0", "news/1"] and questions[0].text == TEXT
    assert json.loads(json_line(rows[0]))["prompt_en"] == TEXT
