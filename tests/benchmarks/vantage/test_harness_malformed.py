"""Malformed answers scored as the harness's adapters score them (VANTAGE-Bench @abeb383).

Each expected value is worked out by hand from the harness's code, file and
lines named beside it (``vlmeval/dataset/`` unless said otherwise). The
adapters write the answers to an ``.xlsx`` and read them back before parsing
(``utils/vantagebench/adapter_*.py`` ``dump(pred_df, ...)``;
``vlmeval/smp/file.py:154,252``), so ``\\r`` arrives as the text ``_x000D_``,
``N/A`` as a missing value, ``=...`` as the number 0 (``spreadsheet.py``).
"""
import math

import pytest

from sova_lib.benchmarks.vantage.ground_truth import GroundTruth
from sova_lib.benchmarks.vantage.metrics_boxes import sot_tracklet
from sova_lib.benchmarks.vantage.metrics_captions import exact_match_similarity
from sova_lib.benchmarks.vantage.parsing import parse_dvc
from sova_lib.benchmarks.vantage.parsing_boxes import parse_refex, parse_sot
from sova_lib.benchmarks.vantage.scoring import score_answers


def items(task, pairs, **extra):
    """``(ground truth, answer)`` pairs -> GT items and answers keyed by id."""
    truth = [GroundTruth(str(k), task, gt, media=f"v{k}", extra=dict(extra)) for k, (gt, _) in enumerate(pairs)]
    return truth, {str(k): answer for k, (_, answer) in enumerate(pairs)}


def official(task, pairs, **extra):
    truth, answers = items(task, pairs, **extra)
    return score_answers(task, truth, answers, mode="official", similarity=exact_match_similarity)


def strict(task, pairs, **extra):
    truth, answers = items(task, pairs, **extra)
    return score_answers(task, truth, answers, mode="strict", similarity=exact_match_similarity)


# --- 1. the spreadsheet round trip, every task ---

def test_vqa_round_trip():
    # "B\r\n" -> "B_x000D_\n": after B comes "_", a word character, so no pattern of extract_answer matches
    # (vantage_vqa.py:31-53); "N/A" reads back as NaN -> pd.isna -> None (:31); "=B" as 0 -> str -> "0", no
    # letter; "\x0bB" -> "_x000B_B", whose B follows "_": no letter. 0 of 4 (strict reads the text: 4 of 4).
    pairs = [("B", "B\r\n"), ("A", "N/A"), ("B", "=B"), ("B", "\x0bB")]
    result = official("vqa", pairs)
    assert result.value == 0.0 and result.n_parsed == 0
    assert any(note.startswith("4 answers changed by the harness's spreadsheet") for note in result.notes)
    assert strict("vqa", pairs).value == 100.0


def test_event_verification_round_trip():
    # "Yes\r\n" -> "Yes_x000D_\n" and "\x00Yes" -> "_x0000_Yes": "Yes" touches "_", so r'\b(yes|no)\b' finds
    # nothing; "=No" -> 0 -> "0" (vantage_event_verification.py:300-304). All three are dropped (:222-227); the
    # one readable answer is right: Macro F1 over ["yes"] vs ["yes"] = 1. Read as written they would give
    # yes, yes, no, yes against no, no, yes, yes: F1(yes) = 2/(2+2+1) = 0.4, F1(no) = 0, Macro F1 0.2.
    pairs = [("no", "Yes\r\n"), ("no", "\x00Yes"), ("yes", "=No"), ("yes", "Yes")]
    assert official("event_verification", pairs).value == 100.0
    assert strict("event_verification", pairs).value == pytest.approx(20.0)


def test_pointing_round_trip():
    # "NA" and "<NA>" read back as NaN -> None (image_mcq.py:3021); "The answer is B\r\n" -> "... B_x000D_\n":
    # no standalone A-D and no "(X)", so the fallback takes the first A-D character of the upper-cased text,
    # the A of "ANSWER" (:3022-3030). 0 of 3.
    pairs = [("A", "NA"), ("A", "<NA>"), ("B", "The answer is B\r\n")]
    assert official("pointing", pairs).value == 0.0


def test_temporal_round_trip():
    # '{"start": "00:05", "end": "00:10\r\n' -> '..."00:10_x000D_\n'; stripped, the "end" value has no closing
    # quote, so one and a "}" are appended (vantage_temporal.py:391-408), json.loads reads "00:10_x000D_",
    # float("10_x000D_") fails, the tag parser finds no <t> tags: the whole video [0, 30] (:431-439,482-485).
    # IoU with [5, 10] = 5/30.
    pairs = [((5.0, 10.0), '{"start": "00:05", "end": "00:10\r\n')]
    assert official("temporal", pairs, duration=30.0).value == pytest.approx(100 / 6)


def test_dvc_round_trip_keeps_the_escape_in_the_caption():
    # The <hh:mm:ss> form reads the caption to the line's end, "a forklift lifts a pallet_x000D_"
    # (vantage_dvc.py:204-206); with exact-match similarity it differs from the GT caption: IoU 1, similarity 0,
    # SODA_c 0. Read as written, "\r" is stripped with the caption: SODA_c 1.
    gt = [(5.0, 10.0, "a forklift lifts a pallet")]
    pairs = [(gt, "<00:00:05><00:00:10> a forklift lifts a pallet\r\n")]
    result = official("dvc", pairs)
    assert result.value == 0.0 and result.secondary["iou_f1"] == 100.0
    assert strict("dvc", pairs).value == 100.0


def test_refex_round_trip():
    # "[100,\r\n100, 300, 300]" -> "[100,_x000D_\n100, ...]": the bracket pattern needs only spaces between
    # numbers and commas (grounding_2d_dataset.py:336-351), and json.loads fails (:386): no box, IoU 0.
    # "=[100,100,300,300]" -> 0 -> str -> "0" (:781-782): no box. mIoU 0 (read as written: IoU 1 twice).
    pairs = [([[100, 100, 300, 300]], "[100,\r\n100, 300, 300]"), ([[100, 100, 300, 300]], "=[100,100,300,300]")]
    assert official("refex", pairs, width=1000, height=1000).value == 0.0
    assert strict("refex", pairs, width=1000, height=1000).value == 100.0


def test_localization_round_trip():
    # Pretty-printed JSON with CRLF line ends: every "\r" becomes "_x000D_", which is no JSON whitespace, so
    # json.loads fails and parse_bbox_2d_from_text returns [] (vantage2d/utils.py:124-163): no box, F1 0.
    pairs = [([[100, 100, 200, 200]], '[\r\n  {"bbox_2d": [100, 100, 200, 200], "label": "person"}\r\n]')]
    assert official("astro", pairs, width=1000, height=1000).value == 0.0
    assert strict("astro", pairs, width=1000, height=1000).value == 100.0


def test_sot_round_trip():
    # '{"frame_1": [110,\r\n100, 210, 300]}' -> '..."[110,_x000D_\n100, ...]': json.loads fails twice and the
    # quoted-frame pattern allows only spaces (vantage_sot.py:239-243,287-300): frame 1 has no box. One scored
    # frame of IoU 0: Success(t) = 1 only at t = 0, AUC 1/21 (:503).
    pairs = [({1: [110, 100, 210, 300]}, '{"frame_1": [110,\r\n100, 210, 300]}')]
    assert official("sot", pairs, n_frames=2).value == pytest.approx(100 / 21)
    assert strict("sot", pairs, n_frames=2).value == 100.0


# --- 2. dense captioning: a caption that is not text, a time that is not finite ---

TWO_EVENTS = [(0.0, 10.0, "a man walks"), (20.0, 30.0, "a car parks")]


@pytest.mark.parametrize("second", [
    '{"start": "00:40", "end": "00:45", "caption": 7}',
    '{"start": "nan", "end": "00:25", "caption": "a car parks"}',
    '{"start": "-inf", "end": "inf", "caption": "a car parks"}'])
def test_dvc_keeps_non_text_captions_and_non_finite_times(second):
    # `if caption:` keeps any caption that is not empty (vantage_dvc.py:236-237) and float() reads "nan",
    # "inf", "-inf" (:169-183). The kept event has IoU 0 with both GT events (nan and inf give 0 in _iou,
    # :26-29) and a non-text caption similarity 0, so S = 1 (the correct event) over M = 2 GT and N = 2
    # answer events: SODA_c = 2 (1/2)(1/2) / (1/2 + 1/2) = 0.5. Without that event N = 1: 2/3.
    pairs = [(TWO_EVENTS, f'[{{"start": "00:00", "end": "00:10", "caption": "a man walks"}}, {second}]')]
    assert official("dvc", pairs).value == pytest.approx(50.0)
    assert strict("dvc", pairs).value == pytest.approx(200 / 3)


def test_dvc_event_order_with_a_nan_start():
    # sorted(..., key=start) (vantage_dvc.py:238) on the starts 5, nan, -inf: every comparison with nan is
    # false, so Python's sort leaves the three as they are (-inf never moves before nan), here as there.
    events, bad = parse_dvc('[{"start": "00:05", "end": "1", "caption": "b"}, {"start": "nan", "end": "2", '
                            '"caption": "a"}, {"start": "-inf", "end": "3", "caption": [1]}]')
    assert bad == 0 and [e[2] for e in events] == ["b", "a", [1]] and math.isnan(events[1][0])
    assert parse_dvc('[{"start": "nan", "end": "2", "caption": "a"}]', "strict") is None


# --- 3. referring expressions: NaN and Infinity boxes, clipped ---

def test_refex_nan_and_infinite_boxes_are_clipped():
    # json.loads reads NaN, Infinity and 1e999 as floats, which pass isinstance(x, (int, float))
    # (grounding_2d_dataset.py:319). Clipping max(0.0, min(v, W)) (:838-841) turns NaN into 0 and inf into W:
    # [0, 100, 300, 300] vs GT [100, 100, 300, 300]: IoU 200*200 / 300*200 = 2/3; [100, 100, 1000, 300]:
    # 200*200 / 900*200 = 2/9 (twice). mIoU (2/3 + 2/9 + 2/9) / 3 = 10/27; strict drops such boxes: 0.
    gt = [[100, 100, 300, 300]]
    pairs = [(gt, '{"bbox_2d": [NaN, 100, 300, 300]}'), (gt, '{"bbox": [100, 100, Infinity, 300]}'),
             (gt, '{"bbox": [100, 100, 1e999, 300]}')]
    result = official("refex", pairs, width=1000, height=1000)
    assert result.value == pytest.approx(1000 / 27) and result.secondary["Acc@0.5"] == pytest.approx(100 / 3)
    assert strict("refex", pairs, width=1000, height=1000).value == 0.0


# --- 4. object localization: scores written as text ---

def test_localization_sorts_by_the_scores_as_written():
    # sorted(key=score, reverse=True) compares "0.9" > "0.3" (astro_2d_dataset.py:389,536): the box at
    # [200, 100, 400, 300] goes first and takes the GT box equal to it (IoU 1), then [160, 100, 360, 300]
    # takes [100, 100, 300, 300] with IoU 140*200 / (2*200*200 - 140*200) = 7/13 >= 0.5: F1@0.5 = 1.
    # In answer order the first box takes [200, 100, 400, 300] (IoU 2/3 > 7/13) and the second has only
    # IoU 1/3 left: TP 1, FP 1, F1 0.5. Above 7/13 the second box is a false positive either way:
    # F1 = 2 (1/2)(1/2) / 1 = 0.5 at the thresholds 0.55 .. 0.95, so the mean is (1 + 9 * 0.5) / 10 = 0.55.
    gt = [[100, 100, 300, 300], [200, 100, 400, 300]]
    answer = ('[{"bbox_2d":[160,100,360,300],"label":"person","score":"0.3"},'
              '{"bbox_2d":[200,100,400,300],"label":"person","score":"0.9"}]')
    result = official("astro", [(gt, answer)], width=1000, height=1000)
    assert result.value == 100.0 and result.secondary["F1_mean_0.50:0.95"] == pytest.approx(55.0)
    assert strict("astro", [(gt, answer)], width=1000, height=1000).value == 50.0


# --- 5. tracking: the freeze rate follows the last box given ---

@pytest.mark.parametrize("answer", ['{"frame_1": [110,100,210,300], "frame_3": [110,100,210,300]}',
                                    '{"frame_1": [110,100,210,300], "frame_2": null, "frame_3": [110,100,210,300]}'])
@pytest.mark.parametrize("mode", ["official", "strict"])
def test_freeze_rate_compares_with_the_last_box_given(answer, mode):
    # prev_pred changes only on a frame with a box (vantage_sot.py:466-472): frame 3 repeats frame 1's box,
    # IoU 1 >= 0.95, a freeze; boxes on scored frames 2, so freeze_rate = 1 / max(1, 2 - 1) = 1 (:489-490,509).
    truth = {1: (100, 100, 200, 300), 2: (100, 100, 200, 300), 3: (100, 100, 200, 300)}
    row = sot_tracklet(truth, parse_sot(answer, 4, mode), 4)
    assert row["freeze_rate"] == 1.0 and row["null_rate"] == pytest.approx(1 / 3)


# --- 8. numbers too large for a float ---

def test_huge_integers_do_not_raise():
    # The harness stops on these (float() of a 400-digit int raises OverflowError, vantage_sot.py:325; the
    # product p * W / 1000 raises, grounding_2d_dataset.py:829); here the number reads as inf, so the RefEx
    # box keeps it (official) and is clipped to the image, and the SOT box [1000, 1, 2, 3] is degenerate.
    huge = "1" + "0" * 400
    assert parse_refex(f'{{"bbox": [{huge}, 1, 2, 3]}}') == [(math.inf, 1.0, 2.0, 3.0)]
    assert parse_refex(f'{{"bbox": [{huge}, 1, 2, 3]}}', "strict") is None
    assert parse_sot(f'{{"frame_1": [{huge}, 1, 2, 3], "frame_2": [1, 1, 2, -{huge}]}}', 3) == {1: None, 2: None}
