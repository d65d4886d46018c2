"""Loaders of the public inputs, the ground-truth JSONL and the submission JSONL; errors name file, line, field."""
import json

import pytest

from sova_lib.benchmarks.vantage.ground_truth import read_ground_truth
from sova_lib.benchmarks.vantage.inputs import VantageDataError, read_items, read_tsv
from sova_lib.benchmarks.vantage.run import render_prompt
from sova_lib.benchmarks.vantage.submissions import read_submission, write_submission


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_tsv_loaders(tmp_path):
    vqa = write(tmp_path / "vqa.tsv", 'index\tvideo\tquestion\toptions\n7\ta.mp4\tWhat?\t"A. x\nB. y"\n8\tb.mp4\tWho?\t'
                                      '["A. p", "B. q", "C. r"]\n')
    items = read_tsv(vqa, "vqa")
    assert [i.id for i in items] == ["7", "8"] and items[0].options == ("A. x", "B. y") and len(items[1].options) == 3
    pts = write(tmp_path / "p.tsv", "index\tquestion_id\timage_path\tquestion\tA\tB\tC\tD\n1\tq1\ti.png\tWhich?\t"
                                    "[1,2]\t[3,4]\t[5,6]\t[7,8]\n")
    item = read_items("pointing", pts)[0]
    assert item.options == ("A. [1,2]", "B. [3,4]", "C. [5,6]", "D. [7,8]") and item.extra["question_id"] == "q1"
    assert render_prompt(item).text == ("Which?\nA. [1,2]\nB. [3,4]\nC. [5,6]\nD. [7,8]\nAnswer with the letter of the "
                                        "correct point (A, B, C or D).")
    ev = write(tmp_path / "ev.tsv", "index\tvideo\tsystem_prompt\tquestion\n1\tv.mp4\tBe brief.\tDid it?\n")
    assert read_items("event_verification", ev)[0].system_prompt == "Be brief."


@pytest.mark.parametrize("text, line, field", [
    ("index\tvideo\tquestion\n1\ta.mp4\tq\n", 1, "options"),
    ("index\tvideo\tquestion\toptions\n1\t\tq\tA. x\n", 2, "video"),
    ("index\tvideo\tquestion\toptions\n1\ta\tq\tA. x\n1\tb\tq\tA. y\n", 3, "index"),
    ("index\tvideo\tquestion\toptions\n1\ta\tq\t[\"A. x\", 3]\n", 2, "options"),
])
def test_tsv_errors_name_file_line_field(tmp_path, text, line, field):
    path = write(tmp_path / "bad.tsv", text)
    with pytest.raises(VantageDataError) as err:
        read_tsv(path, "vqa")
    assert (err.value.line, err.value.field) == (line, field)
    assert str(err.value).startswith(f"{path}, line {line}, field '{field}': ")


def test_refex_and_sot_loaders(tmp_path):
    ann = write(tmp_path / "annotations.json", json.dumps([{"image": "a.jpg", "sentence": "the red car",
                                                            "width": 2000, "height": 1000}]))
    item = read_items("refex", ann)[0]
    assert item.id == "0" and item.extra == {"width": 2000.0, "height": 1000.0, "position": 0}
    assert item.question == "the red car"
    (tmp_path / "sot" / "seq1").mkdir(parents=True)
    write(tmp_path / "sot" / "seq1" / "gt.json", json.dumps({"frame_ids": [0, 15, 30], "init_bbox": [1, 2, 3, 4]}))
    item = read_items("sot", tmp_path / "sot")[0]
    assert item.media == ("seq1/frames/f00.png", "seq1/frames/f01.png", "seq1/frames/f02.png")
    write(tmp_path / "sot" / "seq1" / "gt.json", json.dumps({"frame_ids": [0, 15], "init_bbox": [1, 2]}))
    with pytest.raises(VantageDataError, match="field 'init_bbox'"):
        read_items("sot", tmp_path / "sot")


def gt_line(key, value, extra=None, task=None):
    rec = {"id": key, "media": "m", "category": "x", "conversations": [{"from": "gpt", "value": value}],
           "metadata": {"extra": extra or {}}, **({"task": task} if task else {})}
    return json.dumps(rec)


def test_ground_truth_per_task(tmp_path):
    cases = {
        "vqa": (gt_line(1, "C"), "C"),
        "event_verification": (gt_line(1, "Yes"), "yes"),
        "temporal": (gt_line(1, '{"start": "00:10", "end": "00:14.5"}', {"duration": 20}), (10.0, 14.5)),
        "dvc": (gt_line(1, [{"start": 0, "end": "0:05", "caption": "a"}]), [(0.0, 5.0, "a")]),
        "refex": (gt_line(1, [[1, 2, 3, 4]], {"image_width": 10, "image_height": 10}), [[1.0, 2.0, 3.0, 4.0]]),
        "astro": (gt_line(1, [{"label": "person", "bbox": [1, 2, 3, 4]}], {"image_width": 10, "image_height": 10}),
                  [{"label": "person", "bbox": [1.0, 2.0, 3.0, 4.0]}]),
        "sot": (gt_line(1, {"0": [0, 0, 5, 5], "15": None, "30": [1, 1, 4, 4]}, {"frame_ids": [0, 15, 30]}),
                {1: None, 2: [1.0, 1.0, 4.0, 4.0]}),
    }
    for task, (line, want) in cases.items():
        gt = read_ground_truth(write(tmp_path / f"{task}.jsonl", line + "\n"), task)["1"]
        assert gt.value == want and gt.task == task
    assert read_ground_truth(tmp_path / "temporal.jsonl", "temporal")["1"].extra["duration"] == 20.0
    # without a task given, each record's canonical task string says it (not a short key, not the category)
    assert read_ground_truth(write(tmp_path / "c.jsonl", gt_line(1, "B", task="spatial_pointing")))["1"].task == \
        "pointing"
    with pytest.raises(VantageDataError, match="line 1, field 'task': unknown task 'pointing'"):
        read_ground_truth(write(tmp_path / "d.jsonl", gt_line(1, "B", task="pointing")))


@pytest.mark.parametrize("line, field", [
    ('{"id": 1, "conversations": []}', "conversations"), ('{"conversations": []}', "id"),
    (gt_line(1, "E"), "value"), ("not json", None), (gt_line(1, [[1, 2, 3, 4]], {"image_width": "wide", "image_height": 9}), "metadata.extra.image_width"),
])
def test_ground_truth_errors(tmp_path, line, field):
    task = "refex" if "extra.image_width" in str(field) else "vqa"
    first = gt_line(0, [[1, 2, 3, 4]], {"image_width": 9, "image_height": 9}) if task == "refex" else gt_line(0, "A")
    path = write(tmp_path / "gt.jsonl", first + "\n\n" + line + "\n")
    with pytest.raises(VantageDataError) as err:
        read_ground_truth(path, task)
    assert err.value.line == 3 and err.value.field == field and str(err.value).startswith(f"{path}, line 3")


def test_submission_round_trip(tmp_path):
    answers = {"a__q_000001": "Answer: C", "a__q_000002": '{"start": "00:01", "end": "00:02"}',
               "b__q_000003": "ünïcode\nlines"}
    path = write_submission(tmp_path / "s.jsonl", "vqa", answers, model="m", box_coord_order="yxyx")
    got, info = read_submission(path)
    assert got == answers and info == {"task": "vqa", "model": "m", "box_coord_order": "yxyx", "fingerprint": None}
    rec = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    # The record exactly as the harness's emitter writes it (emit.py lines 227-240).
    assert rec == {"id": "a__q_000001", "task": "video_qa",
                   "conversations": [{"from": "assistant", "value": "Answer: C"}],
                   "metadata": {"model": "m", "box_coord_order": "yxyx", "extra": {}}}
    write(path, path.read_text(encoding="utf-8") + json.dumps({**rec, "task": "dense_video_captioning"}) + "\n")
    with pytest.raises(VantageDataError, match=r"line 4, field 'task'"):
        read_submission(path)
