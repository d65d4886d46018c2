"""Loaders of the image tasks on the vendored VSR files and on small files in each public format."""
import json

import pytest

from sova_lib.benchmarks import image_tasks as it
from sova_lib.benchmarks.image_tasks import datasets


def test_vendored_vsr_zeroshot_counts():
    items = it.load("vsr-zeroshot")
    rows = [json.loads(line) for line in datasets.vendored_vsr("zeroshot").read_text().splitlines()]
    assert len(items) == len(rows) == 1222
    assert [i.id for i in items] == list(range(1222))
    assert sum(r["label"] for r in rows) == 629
    assert sum(i.answer == 0 for i in items) == 629 and sum(i.answer == 1 for i in items) == 593
    assert len({i.image for i in items}) == 715
    assert len({i.meta["relation"] for i in items}) == 53
    assert items[0].image == "000000017697.jpg" and items[0].image_key == 17697
    assert items[1].choices == ("The cat is under the backpack.", "The cat is not under the backpack.")
    assert items[1].answer == 1  # label 0: the negation is true


def test_vendored_vsr_random_counts():
    items = it.load("vsr-random")
    assert len(items) == 2195
    assert sum(i.answer == 0 for i in items) == 1181


def test_vendored_licence_ships_beside_the_data():
    folder = datasets.vendored_vsr().parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    assert "cambridgeltl/visual-spatial-reasoning" in (folder / "README.md").read_text()


def test_whatsup_format(tmp_path):
    records = [{"image_path": "data/controlled_images/beer-bottle_on_armchair.jpeg",
                "caption_options": ["A beer bottle on a armchair", "A beer bottle under a armchair",
                                    "A beer bottle to the left of a armchair", "A beer bottle to the right of a armchair"]},
               {"image_path": "data/controlled_images/cup_under_table.jpeg",
                "caption_options": ["A cup under a table", "A cup on a table", "A cup left of a table",
                                    "A cup right of a table"]}]
    (tmp_path / "controlled_images_dataset.json").write_text(json.dumps(records))
    items = it.load("whatsup-a", tmp_path)  # a folder holding the file under its public name
    assert [i.id for i in items] == [0, 1] and all(i.answer == 0 for i in items)
    assert items[1].choices[0] == "A cup under a table" and items[0].image_key == "beer-bottle_on_armchair"
    assert it.chance(items) == 25.0


def test_whatsup_subset_b_reads_its_own_file(tmp_path, monkeypatch):
    (tmp_path / "controlled_clevr_dataset.json").write_text(json.dumps(
        [{"image_path": "x/cube_behind_sphere.jpeg", "caption_options": ["a", "b", "c", "d"]}]))
    monkeypatch.setenv("SOVA_IMAGE_TASKS", str(tmp_path))
    assert len(it.load("whatsup-b")) == 1
    with pytest.raises(FileNotFoundError, match="controlled_images_dataset.json"):
        it.load("whatsup-a")


def test_countbench_format(tmp_path):
    records = [{"image_url": "http://example.org/a.jpg", "text": "Two cats sleeping", "number": 2},
               {"image_url": "http://example.org/b.jpg", "text": "a box of ten pens, ten colours", "number": 10}]
    path = tmp_path / "counts.json"
    path.write_text(json.dumps(records))
    items = datasets.load_countbench(path)
    assert [(i.id, i.answer, len(i.choices)) for i in items] == [(0, 0, 9), (1, 8, 9)]
    assert items[1].choices[1] == "a box of three pens, three colours"
    assert items[1].image == "1.jpg" and items[1].meta["url"] == "http://example.org/b.jpg"
    assert it.chance(items) == pytest.approx(100 / 9)
    assert it.chance(datasets.load_countbench(path, numbers=range(1, 11))) == pytest.approx(10.0)


def test_countbench_bad_record_names_file_and_record(tmp_path):
    path = tmp_path / "CountBench.json"
    path.write_text(json.dumps([{"text": "two cats", "number": 2}, {"text": "two cats", "number": "2"}]))
    with pytest.raises(ValueError, match=r"CountBench.json, record 1: field 'number' is str"):
        datasets.load_countbench(path)


def test_visual7w_count_format(tmp_path):
    data = {"images": [
        {"filename": "v7w_1.jpg", "image_id": 1, "split": "test", "qa_pairs": [
            {"qa_id": 10, "question": "What color is the car?", "answer": "Red.",
             "multiple_choices": ["Blue.", "Green.", "Black."], "type": "what"},
            {"qa_id": 11, "question": "How many dogs are on the bed?", "answer": "Two.",
             "multiple_choices": ["One.", "Three.", "Four."], "type": "how"}]},
        {"filename": "v7w_2.jpg", "image_id": 2, "split": "train", "qa_pairs": [
            {"qa_id": 12, "question": "How many cars?", "answer": "One.",
             "multiple_choices": ["Two.", "Three.", "Five."], "type": "how"}]},
        {"filename": "v7w_3.jpg", "image_id": 3, "split": "test", "qa_pairs": [
            {"qa_id": 13, "question": "How many birds are flying?", "answer": "3",
             "multiple_choices": ["1", "2", "4"], "type": "how"}]}]}
    path = tmp_path / "dataset_v7w_telling.json"
    path.write_text(json.dumps(data))
    items = datasets.load_visual7w_count(path)
    assert [i.id for i in items] == [1, 3]  # index of the QA pair among all pairs of the file
    assert items[0].choices == ("Two dogs are on the bed.", "One dogs are on the bed.",
                                "Three dogs are on the bed.", "Four dogs are on the bed.")
    assert items[0].answer == 0 and items[0].meta["qa_id"] == 11 and items[1].image_key == "v7w_3"
    assert [i.id for i in datasets.load_visual7w_count(path, split=None)] == [1, 2, 3]
    assert it.chance(items) == 25.0


def test_missing_annotation_file_names_file_and_source(tmp_path, monkeypatch):
    monkeypatch.delenv("SOVA_IMAGE_TASKS", raising=False)
    with pytest.raises(FileNotFoundError) as err:
        it.load("countbench")
    assert "CountBench.json" in str(err.value) and "teaching-clip-to-count" in str(err.value)
    with pytest.raises(FileNotFoundError, match=r"dataset_v7w_telling.json not found .*does not exist.*stanford"):
        it.load("visual7w-count", tmp_path)
    with pytest.raises(FileNotFoundError, match="VSR annotation file"):
        datasets.load_vsr(tmp_path / "nope.jsonl")
    with pytest.raises(ValueError, match="unknown image task"):
        it.load("spatialbench")


def test_broken_json_names_the_line(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text('{"image": "a.jpg", "caption": "The cat is on the mat.", "label": 1, "relation": "on"}\n{oops\n')
    with pytest.raises(ValueError, match=r"test.jsonl, line 2: not valid JSON"):
        datasets.load_vsr(path)
