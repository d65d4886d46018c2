"""All eight tasks end to end: the harness's files in, ``sova vantage evaluate --scoring official`` out.

The answer keys and submissions are written by ``harness_fixture.write_harness_set`` in the harness's
layouts. Each expected value is worked out by hand below from the harness's rules (cited per task). The
same files scored by the harness's own evaluator (``evaluator.evaluate_submission``, commit abeb383, with
an exact-match stand-in for its BERTScore endpoint) gave the same eight values: VQA 1.0, event
verification Macro F1 0.6667, temporal mIoU 0.2, DVC SODA_c 0.95 (pair mIoU 0.9333), RefEx mIoU 0.5,
pointing 0.6667, object localization F1 0.8, tracking Success AUC 0.5238 (x100 below).
"""
import json

import pytest

from sova_lib.benchmarks import vantage
from sova_lib.cli import main
from sova_lib.records import collect_records

from .harness_fixture import HARNESS_KEYS, TASK_STRINGS, write_harness_set

#: task -> (primary value x100, secondary values x100), by hand.
EXPECTED = {
    # vantage_vqa.py:29-55: "Answer: C" -> C; "I pick b." -> B (any case); "The forklift is a machine" -> the
    # last standalone letter "a" -> A. 3 of 3 correct.
    "vqa": (100.0, {}),
    # vantage_event_verification.py:222-227: "I cannot tell" is unreadable and dropped; truth y, y, n against
    # yes, no, no: F1(yes) = 2*1/(2*1+0+1) = 2/3, F1(no) = 2*1/(2*1+1+0) = 2/3; Macro F1 = 2/3.
    "event_verification": (200 / 3, {}),
    # vantage_temporal.py:390-431,560: GT [10, 14] s in 30 s videos. {"start": "00:08", "end": "00:12"} ->
    # [8, 12], IoU 2/6 = 1/3; "I don't know" -> the whole video [0, 30], IoU 4/30; the plain text "00:10-00:14"
    # is no JSON (a "}" is appended, json.loads fails, no quoted "start"), so it is the whole video too, 4/30.
    # One item per video: mIoU = (1/3 + 4/30 + 4/30) / 3 = 1/5.
    "temporal": (20.0, {}),
    # vantage_dvc.py:168-329, exact-match caption similarity. Video 0: the third GT event has no caption and
    # is left out; the <hh:mm:ss><hh:mm:ss> lines give (0, 10) and (12, 20); IoU x sim = [[1, 0], [0, 0.8]],
    # S = 1.8, SODA_c = 2 * 1.8 / (2 + 2) = 0.9. Video 1: "0:00:30"-"0:00:40" is 30-40 s in full h:m:s, IoU 1,
    # SODA_c = 1. Mean 0.95; pair mIoU pooled over the three matched pairs = (1 + 0.8 + 1) / 3.
    "dvc": (95.0, {"pair_miou": 280 / 3, "caption_f1": 100.0}),
    # grounding_2d_dataset.py:311-449,779-872: {"x1": 100, ..., "y2": 500} on a 2000 x 1000 image is
    # [200, 100, 600, 500] px = the GT, IoU 1; [0, 0, 50, 100] vs [0, 0, 100, 100] IoU 0.5; no box 0.
    # mIoU = 1.5 / 3; Acc@0.5 = 2/3, Acc@0.75 = 1/3.
    "refex": (50.0, {"Acc@0.5": 200 / 3, "Acc@0.75": 100 / 3}),
    # image_mcq.py (VANTAGE_2DPointing): "(C)" -> C, "D" -> D, "B" against A; 2 of 3.
    "pointing": (200 / 3, {}),
    # astro_2d_dataset.py:420-600, 640 x 480 images, min_bbox_area 50 (the first record's). GT persons kept:
    # image 1 the Pedestrian [64, 48, 128, 96] only (the car is no person; the person [0, 0, 5, 5] has area
    # 25 < 50); image 2 [320, 240, 448, 336]. Answers, image 1: the plain list [100, 100, 200, 200] ->
    # int(v / 1000 * size) = [64, 48, 128, 96], a person, IoU 1 (TP); the car is left out; "people" ->
    # person [384, 288, 448, 336], no GT overlap (FP); [0, 0, 5, 5] -> [0, 0, 3, 2], area 6 < 50, left out.
    # Image 2: box_2d [500, 500, 700, 700] is y-first -> [320, 240, 448, 336] (TP). TP 2, FP 1, GT 2:
    # P = 2/3, R = 1, F1 = 0.8 at every threshold (the IoUs are 1). Without the person filter the car would
    # count as a GT box (F1 = 2/3).
    "astro": (80.0, {"F1_mean_0.50:0.95": 80.0}),
    # vantage_sot.py:420-513: frame 1 [100, 100, 200, 150] vs [100, 100, 200, 200], IoU 0.5; frame 2 absent in
    # GT and answered null: skipped. Success(t) = 1 for the 11 thresholds 0, 0.05, ..., 0.5 of 21: AUC 11/21.
    "sot": (1100 / 21, {}),
}


@pytest.fixture
def harness_set(tmp_path):
    return write_harness_set(tmp_path / "set")


def _score(capsys, task, gt_dir, sub_dir, *extra):
    key = HARNESS_KEYS[task]
    argv = ["vantage", "evaluate", "--task", TASK_STRINGS[task], "--ground-truth", str(gt_dir / f"{key}_gt.jsonl"),
            "--submission", str(sub_dir / f"{key}.jsonl"), "--scoring", "official", "--similarity", "exact",
            "--bootstrap", "0", *extra]
    assert main(argv) == 0
    return capsys.readouterr()


@pytest.mark.parametrize("task", list(EXPECTED))
def test_every_task_scores_as_the_harness(harness_set, capsys, task):
    gt_dir, sub_dir = harness_set
    out = json.loads(_score(capsys, task, gt_dir, sub_dir, "--json").out)
    value, secondary = EXPECTED[task]
    assert out["canonical_task"] == TASK_STRINGS[task] and out["harness_key"] == HARNESS_KEYS[task]
    assert out["value"] == pytest.approx(value, rel=1e-12, abs=1e-12)
    for key, want in secondary.items():
        assert out["secondary"][key] == pytest.approx(want, rel=1e-12), key
    assert out["parse_rate"] <= 1.0 and out["mode"] == "official"


def test_text_output_names_the_canonical_task_and_the_notes(harness_set, capsys):
    gt_dir, sub_dir = harness_set
    run = _score(capsys, "dvc", gt_dir, sub_dir)
    assert run.out.startswith("dense_video_captioning (dvc): SODA_c = 95.00")
    assert "1 dense-captioning events have no caption and are left out" in run.err


def test_results_dir_writes_one_record_per_task(harness_set, capsys, tmp_path):
    gt_dir, sub_dir = harness_set
    for task in EXPECTED:
        _score(capsys, task, gt_dir, sub_dir, "--out", str(tmp_path / "results"))
    table = collect_records(tmp_path / "results")
    assert len(table) == 8 and set(table["benchmark"]) == {"VANTAGE-Bench"}
    rows = dict(zip(table["protocol"], table["value"]))
    for task, (value, _) in EXPECTED.items():
        assert rows[f"{TASK_STRINGS[task]} (official)"] == round(value, 2)
    dvc = table[table["protocol"] == "dense_video_captioning (official)"].iloc[0]
    assert dvc["kind"] == "submission" and dvc["model"] == "hand-written" and dvc["encoder"] == "exact"
    assert dvc["note"].startswith("parsed 2/2 answers, 2 videos scored")


def test_score_folder_reads_the_archive_names(harness_set):
    gt_dir, sub_dir = harness_set
    results = vantage.score_folder(gt_dir, sub_dir)
    assert sorted(results) == sorted(t for t in EXPECTED if t != "dvc")  # dense captioning needs a similarity
    for task, result in results.items():
        assert result.value == pytest.approx(EXPECTED[task][0], rel=1e-12, abs=1e-12), task
    # the archive's names only: a file named after the library's key (refex) is no task's file
    (sub_dir / "grounding.jsonl").rename(sub_dir / "refex.jsonl")
    (gt_dir / "grounding_gt.jsonl").rename(gt_dir / "refex_gt.jsonl")
    assert "refex" not in vantage.score_folder(gt_dir, sub_dir)
