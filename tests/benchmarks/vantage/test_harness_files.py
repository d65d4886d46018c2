"""The files of the VANTAGE-Bench harness: leaderboard ids, ground truth and submissions in its layout, the check.

Fixtures are written here as the harness writes them: submission records as
``vlmeval/dataset/utils/vantagebench/emit.py`` (lines 227-240, then
``io.write_jsonl``: ``json.dumps(ensure_ascii=False)`` one per line) and
ground-truth records with the fields its adapters read (``adapter_*.py``:
``id``, ``media``, ``category``, the ``gpt`` turn's value as JSON text,
``metadata.extra``).
"""
import json

import pytest
from PIL import Image

from sova_lib.benchmarks.vantage.api import evaluate_answers
from sova_lib.benchmarks.vantage.ground_truth import read_ground_truth
from sova_lib.benchmarks.vantage.inputs import VantageDataError, read_items
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.submissions import (
    InvalidSubmission,
    check_submission,
    read_submission,
    write_submission,
)
from sova_lib.benchmarks.vantage.tasks import (
    CANONICAL_TASKS,
    ID_PATTERNS,
    make_id,
    sot_id,
    submission_answers,
    submission_id,
    task_key,
)


def emitted(path, task_string, answers, model="m", box_coord_order="xyxy"):
    """A submission as the harness's emitter writes it (emit.py lines 227-240, io.py lines 26-35)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for rid, text in answers.items():
            rec = {"id": rid, "task": task_string, "conversations": [{"from": "assistant", "value": str(text)}],
                   "metadata": {"model": model, "box_coord_order": box_coord_order, "extra": {}}}
            f.write(json.dumps(rec, ensure_ascii=False))
            f.write("\n")
    return path


def gt_record(rid, task_string, value_text, extra, media="m", category="c"):
    """A ground-truth record with the fields the harness's adapters read."""
    return json.dumps({"id": rid, "task": task_string, "media": media, "category": category,
                       "conversations": [{"from": "human", "value": "<q>"}, {"from": "gpt", "value": value_text}],
                       "metadata": {"extra": extra}})


def test_leaderboard_ids_by_hand():
    # Each id written out by hand from id_rules.py's format strings.
    assert make_id("vqa", "vtest_lawn_0600-0659.mp4", 0) == "vtest_lawn_0600-0659__q_000000"
    assert make_id("event_verification", "C0065_clip01.mp4", "7") == "C0065_clip01__ev_000007"
    assert make_id("temporal", "C0065_clip01", 13) == "C0065_clip01__tg_000013"  # no .mp4: stem unchanged
    assert make_id("dvc", "a.mp4.mp4", 1) == "a.mp4__dvc_000001"  # one trailing .mp4 only
    assert make_id("dvc", "sub/a.mp4", 1) == "sub/a__dvc_000001"  # video tasks keep folders
    assert make_id("pointing", "images_annotated/000000_000000__largest_in_class_2.jpg", 99) == \
        "000000_000000__largest_in_class_2__sp_000099"  # base name, then stem
    assert make_id("refex", "frame_0042.JPEG", 3) == "frame_0042__rx_000003"  # extension in any case
    assert make_id("grounding", "frame_0042.gif", 3) == "frame_0042.gif__rx_000003"  # only jpg/jpeg/png drop
    assert make_id("object_localization", "imgs/IVA_frame_0001.png", 0) == "IVA_frame_0001__ol_000000"
    assert sot_id("Warehouse_000__Camera_0003__5648__obj37") == "Warehouse_000__Camera_0003_0005648__obj37"
    assert sot_id("Warehouse_000__Camera_0003_0005648__obj37") == "Warehouse_000__Camera_0003_0005648__obj37"
    with pytest.raises(ValueError, match="integer index"):
        make_id("vqa", "a.mp4", "x7")
    for task, rid in [("vqa", "a__q_000000"), ("sot", "W__C_0000001__obj2"), ("refex", "f__rx_000003")]:
        assert ID_PATTERNS[task].match(rid)
    assert not ID_PATTERNS["vqa"].match("a__q_00000") and not ID_PATTERNS["sot"].match("W__C__1__obj2")


def test_task_names():
    assert [task_key(n) for n in ("video_qa", "vqa", "grounding", "referring_expressions", "refex")] == \
        ["vqa", "vqa", "refex", "refex", "refex"]
    assert CANONICAL_TASKS["astro"] == "object_localization" and CANONICAL_TASKS["temporal"] == "temporal_grounding"
    with pytest.raises(ValueError, match="unknown VANTAGE-Bench task 'qa'"):
        task_key("qa")


def test_item_ids_from_the_public_files(tmp_path):
    tsv = tmp_path / "p.tsv"
    tsv.write_text("index\tquestion_id\timage_path\tquestion\tA\tB\tC\tD\n"
                   "99\tq1\timages_annotated/000000_000000__largest_in_class_2.jpg\tWhich?\ta\tb\tc\td\n")
    assert submission_id(read_items("pointing", tsv)[0]) == "000000_000000__largest_in_class_2__sp_000099"
    ann = tmp_path / "annotations.json"  # the id uses the list position even where an entry has its own id
    ann.write_text(json.dumps([{"image": "f.jpg", "sentence": "s", "width": 4, "height": 4, "id": "x"},
                               {"image": "f.jpg", "sentence": "t", "width": 4, "height": 4}]))
    assert [submission_id(it) for it in read_items("refex", ann)] == ["f__rx_000000", "f__rx_000001"]
    seq = tmp_path / "sot" / "Warehouse_000__Camera_0003__5648__obj37"
    seq.mkdir(parents=True)
    (seq / "gt.json").write_text(json.dumps({"frame_ids": [5648, 5663], "init_bbox": [1, 2, 3, 4]}))
    assert submission_id(read_items("sot", tmp_path / "sot")[0]) == "Warehouse_000__Camera_0003_0005648__obj37"
    items = read_items("refex", ann)
    assert submission_answers(items, {"x": "A", "1": "B"}) == {"f__rx_000000": "A", "f__rx_000001": "B"}


def test_ground_truth_in_the_harness_layout(tmp_path):
    img = tmp_path / "IVA_frame_0001.png"
    Image.new("RGB", (320, 200)).save(img)
    files = {
        "vqa": gt_record("v__q_000000", "video_qa", "C", {"task_type": "counting"}),
        "event_verification": gt_record("v__ev_000000", "event_verification", "Yes", {}),
        "temporal": gt_record("v__tg_000000", "temporal_grounding", '{"start": "00:10", "end": "00:14.5"}', {}),
        "dvc": gt_record("v__dvc_000000", "dense_video_captioning",
                         '[{"start": "00:00", "end": "00:05", "caption": "a"}]', {}),
        "refex": gt_record("f__rx_000000", "referring_expressions", "[10, 20, 30, 40]",
                           {"image_width": 2000, "image_height": 1000}),
        "pointing": gt_record("f__sp_000000", "spatial_pointing", "B", {"question_id": "q7"}),
        "astro": gt_record("IVA_frame_0001__ol_000000", "object_localization",
                           '[{"label": "Pedestrian", "bbox": [1, 2, 3, 4]}, {"label": "Car", "bbox": [5, 6, 7, 8]}]',
                           {"image_filename": "IVA_frame_0001.png", "image_path": str(img), "min_bbox_area": 400})
        + "\n" + gt_record("IVA_frame_0002__ol_000001", "object_localization", "[]",
                           {"image_filename": "x.png", "image_path": str(tmp_path / "absent.png"),
                            "min_bbox_area": 0}),
        "sot": gt_record("W__C_0005648__obj37", "single_object_tracking", '{"5663": [1, 2, 3, 4], "5678": null}',
                         {"frame_ids": [5648, 5663, 5678], "occluded": {}, "init_bbox": [0, 0, 9, 9],
                          "object_type": "Person"}),
    }
    got = {}
    for task, text in files.items():
        path = tmp_path / f"{task}.jsonl"
        path.write_text(text + "\n", encoding="utf-8")
        got[task] = read_ground_truth(path)  # the task comes from each record's canonical string
    one = {task: next(iter(gts.values())) for task, gts in got.items()}
    assert [g.task for g in one.values()] == list(files)
    assert one["vqa"].value == "C" and one["vqa"].extra["task_type"] == "counting"
    assert one["temporal"].value == (10.0, 14.5) and one["temporal"].extra["duration"] == 30.0  # harness default
    assert one["dvc"].value == [(0.0, 5.0, "a")]
    assert one["refex"].value == [[10.0, 20.0, 30.0, 40.0]]  # one flat box is one box
    assert (one["refex"].extra["width"], one["refex"].extra["height"]) == (2000.0, 1000.0)
    assert one["pointing"].extra["question_id"] == "q7"
    astro = list(got["astro"].values())
    # labels lower-cased, as the harness reads its KITTI lines back
    assert astro[0].value == [{"label": "pedestrian", "bbox": [1.0, 2.0, 3.0, 4.0]},
                              {"label": "car", "bbox": [5.0, 6.0, 7.0, 8.0]}]
    assert (astro[0].extra["width"], astro[0].extra["height"]) == (320.0, 200.0)  # opened from image_path
    assert (astro[1].extra["width"], astro[1].extra["height"]) == (640.0, 480.0)  # the harness's fallback
    assert astro[1].extra["min_bbox_area"] == 400  # the first record's, for the whole file
    assert got["astro"].notes == [f"{tmp_path / 'astro.jsonl'}: 1 records give no image size; 640 x 480 assumed, "
                                  "as the harness does"]
    assert one["sot"].value == {1: [1.0, 2.0, 3.0, 4.0], 2: None} and one["sot"].extra["n_frames"] == 3
    assert all(not gts.notes for task, gts in got.items() if task != "astro")


def test_only_image_width_and_height_give_the_image_size(tmp_path):
    # extra.width/height is no field of the harness's records: the size is the harness's fallback, 1000 x 1000
    path = tmp_path / "grounding_gt.jsonl"
    path.write_text(json.dumps({"id": "0", "media": "f.jpg", "task": "referring_expressions",
                                "conversations": [{"from": "gpt", "value": [[200, 100, 400, 300]]}],
                                "metadata": {"extra": {"width": 2000, "height": 1000}}}) + "\n")
    gts = read_ground_truth(path)
    assert gts["0"].task == "refex" and (gts["0"].extra["width"], gts["0"].extra["height"]) == (1000.0, 1000.0)
    assert gts.notes == [f"{path}: 1 records give no image size; 1000 x 1000 assumed, as the harness does"]


def test_written_submission_is_the_emitters_byte_for_byte(tmp_path):
    answers = {"v__q_000000": "Answer: C", "v__q_000001": "ünïcode\nlines"}
    ours = write_submission(tmp_path / "ours.jsonl", "vqa", answers, model="M", expected_ids=list(answers))
    theirs = emitted(tmp_path / "theirs.jsonl", "video_qa", answers, model="M")
    assert ours.read_bytes() == theirs.read_bytes()
    got, info = read_submission(theirs)
    assert got == answers and info == {"task": "vqa", "model": "M", "box_coord_order": "xyxy", "fingerprint": None}
    with pytest.raises(InvalidSubmission) as err:  # an expected id without an answer: refused, loudly
        write_submission(tmp_path / "part.jsonl", "vqa", answers, model="M", expected_ids=[*answers, "v__q_000002"])
    assert err.value.problems == [f"{tmp_path / 'part.jsonl'}, id v__q_000002: no record for this ground-truth id"]
    with pytest.raises(InvalidSubmission, match="id does not have the video_qa shape"):
        write_submission(tmp_path / "bad.jsonl", "vqa", {"7": "A"}, model="M")


def test_check_lists_every_problem_with_file_line_and_id(tmp_path):
    path = tmp_path / "sub.jsonl"
    good = {"id": "a__rx_000000", "task": "referring_expressions",
            "conversations": [{"from": "assistant", "value": "[[1, 2, 3, 4]]"}],
            "metadata": {"model": "m", "box_coord_order": "yxyx", "extra": {}}}
    lines = [
        good,
        {**good, "id": "a__rx_000001", "task": "refex"},
        {**good, "id": "7"},
        {**good, "id": "a__rx_000002", "conversations": [{"role": "assistant", "content": "[[1, 2, 3, 4]]"}]},
        good,
        {**good, "id": "a__rx_000003", "metadata": {"model": "m", "box_coord_order": "xyxy"}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{oops\n", encoding="utf-8")
    problems = check_submission(path, "grounding", ["a__rx_000000", "a__rx_000001", "a__rx_000009"])
    p = str(path)
    assert problems == [
        f"{p}, line 2, id a__rx_000001: task 'refex'; the leaderboard needs 'referring_expressions'",
        f"{p}, line 3, id 7: id does not have the referring_expressions shape ^.+__rx_\\d{{6}}$",
        f'{p}, line 4, id a__rx_000002: no {{"from": "assistant", "value"}} turn',
        f"{p}, line 5, id a__rx_000000: id appears again (first on line 1)",
        f"{p}, line 6, id a__rx_000003: metadata.box_coord_order 'xyxy' differs from line 1's 'yxyx' (the scorer "
        "reads the first record's for the whole file)",
        f"{p}, line 7: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        f"{p}, id a__rx_000009: no record for this ground-truth id",
        f"{p}, line 3, id 7: not an id of the ground truth",
        f"{p}, line 4, id a__rx_000002: not an id of the ground truth",
        f"{p}, line 6, id a__rx_000003: not an id of the ground truth",
    ]
    path.write_text(json.dumps(good) + "\n")
    assert check_submission(path, "referring_expressions", ["a__rx_000000"]) == []


def test_harness_form_scores_and_a_short_task_key_is_refused(tmp_path):
    # RefEx, W=2000, H=1000, GT [200,100,400,300]: [[100,100,200,300]] on the 0-1000 grid is [200,100,400,300] in
    # pixels (IoU 1); written yxyx as [[100,100,300,200]] it is the same box once swapped. Both: mIoU 100.
    ann = tmp_path / "annotations.json"
    ann.write_text(json.dumps([{"image": "f.jpg", "sentence": "s", "width": 2000, "height": 1000},
                               {"image": "g.jpg", "sentence": "t", "width": 2000, "height": 1000}]))
    items = read_items("refex", ann)
    gt_new = tmp_path / "refex_gt.jsonl"
    gt_new.write_text("\n".join(gt_record(submission_id(it), "referring_expressions", "[[200, 100, 400, 300]]",
                                          {"image_width": 2000, "image_height": 1000}) for it in items) + "\n")
    gts = read_ground_truth(gt_new, "grounding")
    sub = emitted(tmp_path / "grounding.jsonl", "referring_expressions",
                  {"f__rx_000000": "[[100,100,300,200]]", "g__rx_000001": "[[100,100,300,200]]"},
                  box_coord_order="yxyx")
    answers, info = read_submission(sub)
    result = score_answers("refex", gts, answers, box_coord_order=info["box_coord_order"])
    assert result.value == 100.0 and result.n_parsed == 2 and not result.notes
    # a record must carry the canonical task string, as the leaderboard's validators require
    short = tmp_path / "short.jsonl"
    short.write_text(json.dumps({"id": "f__rx_000000", "task": "refex",
                                 "conversations": [{"from": "assistant", "value": "[[100,100,200,300]]"}],
                                 "metadata": {"model": "m", "box_coord_order": "xyxy"}}) + "\n")
    with pytest.raises(VantageDataError, match=r"line 1, field 'task': 'refex' is not a canonical task string"):
        read_submission(short)
    # answers that name none of the answer key's ids (the TSV's index) stop the scoring, naming an id of each side
    with pytest.raises(ValueError, match="none of the 2 answer ids is a ground-truth id .answer id '0', "
                                         "ground-truth id 'f__rx_000000'"):
        evaluate_answers("refex", gt_new, answers={"0": "[[1, 2, 3, 4]]", "1": "[[1, 2, 3, 4]]"})


def test_bad_ground_truth_task_names_the_line(tmp_path):
    path = tmp_path / "gt.jsonl"
    path.write_text(gt_record("a__q_000000", "video_qa", "A", {}) + "\n" + gt_record("b", "qa", "A", {}) + "\n")
    with pytest.raises(VantageDataError, match=r"line 2, field 'task'"):
        read_ground_truth(path)


def test_object_localization_boxes_without_labels_are_left_out(tmp_path):
    path = tmp_path / "astro_gt.jsonl"
    path.write_text(json.dumps({"id": "0", "conversations": [{"from": "gpt", "value": [[1, 2, 3, 4],
                                                                                       {"bbox_2d": [5, 6, 7, 8]}]}],
                                "metadata": {"extra": {"image_width": 10, "image_height": 10}}}) + "\n")
    gts = read_ground_truth(path, "astro")  # the harness writes no KITTI line for either (adapter_astro.py:62-95)
    assert gts["0"].value == []
    assert gts.notes == [f'{path}: 2 object-localization objects have no label or no [x1, y1, x2, y2] "bbox" and are '
                         'left out, as the harness leaves them out']
