"""Parity cases where the harness's evaluators read or score an answer in a way easy to get wrong.

Every expected value is worked out by hand from the harness's code (file and
lines named in each test; VANTAGE-Bench @abeb383, paths under vlmeval/dataset/).
"""
import pytest

from sova_lib.benchmarks.vantage.metrics import macro_f1, temporal_iou
from sova_lib.benchmarks.vantage.metrics_boxes import gt_person_boxes, localization_f1, refex_iou, scale_box
from sova_lib.benchmarks.vantage.metrics_captions import exact_match_similarity, soda_c
from sova_lib.benchmarks.vantage.parsing import dvc_time, parse_choice, parse_dvc, parse_temporal, parse_yes_no
from sova_lib.benchmarks.vantage.parsing_boxes import Detection, parse_localization, parse_refex, parse_sot

# --- referring expressions (vantage2d/grounding_2d_dataset.py:311-449, 779-872) ---

def test_refex_reads_corner_dicts():
    # No [a, b, c, d] in the text, so the JSON object is read; its x1..y2 keys give one box (:329-330).
    assert parse_refex('{"x1": 100, "y1": 100, "x2": 200, "y2": 300}') == [(100.0, 100.0, 200.0, 300.0)]
    corners = '[{"x1": 1, "y1": 2, "x2": 3, "y2": 4}, {"xmin": 5, "ymin": 6, "xmax": 7, "ymax": 8}]'
    # In a ```json block the list is read whole (:368-374) ...
    assert parse_refex(f"```json\n{corners}\n```") == [(1.0, 2.0, 3.0, 4.0), (5.0, 6.0, 7.0, 8.0)]
    # ... bare, the JSON text runs from the first "{" to the last "}", which is no JSON: no box (:376-384).
    assert parse_refex(corners) is None
    # box_2d is y-first, but its [a, b, c, d] is caught by the bracket pattern first, as written (:363-365).
    assert parse_refex('{"box_2d": [10, 20, 30, 40]}') == [(10.0, 20.0, 30.0, 40.0)]


def test_refex_corner_dict_scores_like_the_list():
    # W = 2000, H = 1000, GT [200, 100, 400, 300]: the answer box (100, 100, 200, 300) is x*2 -> [200, 100, 400, 300],
    # IoU 1 (spec section 5); written as a corner dict it must score the same.
    for text in ("[[100,100,200,300]]", '{"x1": 100, "y1": 100, "x2": 200, "y2": 300}'):
        assert refex_iou([[[200, 100, 400, 300]]], [parse_refex(text)], [(2000, 1000)]).value == 1.0


def test_refex_loose_numbers():
    # The bracket pattern takes runs of [-\d.]; "1." is 1.0 and "5.5.5" is no number, so its box is skipped (:336-351).
    assert parse_refex("[1., 2, 3, 4] and [5.5.5, 1, 2, 3]") == [(1.0, 2.0, 3.0, 4.0)]


# --- object localization (vantage2d/astro_2d_dataset.py:39-135, 369-600; vantage2d/utils.py:56-163) ---

def test_localization_box_forms():
    text = ('[{"bbox_2d": [0, 0, 100, 100]}, [10, 10, 20, 20], {"box_2d": [5, 1, 6, 2], "label": "People"},'
            ' {"bbox": {"x1": 1, "y1": 2, "x2": "3", "y2": 4}}, {"x1": 1, "y1": 2, "x2": 3, "y2": 4},'
            ' {"bbox_2d": [1, 2, 3, 4], "label": "car", "score": 0.2}]')
    assert parse_localization(text) == [
        Detection((0.0, 0.0, 100.0, 100.0), "person"), Detection((10.0, 10.0, 20.0, 20.0), "person"),
        Detection((5.0, 1.0, 6.0, 2.0), "person", 1.0, True),  # swapped when scored
        Detection((1.0, 2.0, 3.0, 4.0), "person"),  # numeric strings are read by float()
        # the bare x1..y2 object has no bbox_2d / box_2d / bbox key: left out (:505-512)
        Detection((1.0, 2.0, 3.0, 4.0), "car", 0.2)]
    assert parse_localization('```JSON\n[{"bbox_2d": [1, 1, 2, 2]}]\n```') == [Detection((1.0, 1.0, 2.0, 2.0), "person")]
    assert parse_localization("[1, 2, 3, 4]") == []  # a flat list holds numbers, not boxes


def test_scale_box_truncates_and_clips_one_side():
    # int(v / 1000 * size): -50 -> int(-32.0) = -32 -> raised to 0; 1200 -> 768 -> lowered to 640;
    # 100/1000*480 = 48; 288/1000*480 = 138.24 -> 138.
    assert scale_box((-50, 100, 1200, 288), 640, 480) == (0.0, 48.0, 640.0, 138.0)
    assert scale_box((500, 0, 400, 10), 1000, 1000) == (500.0, 0.0, 400.0, 10.0)  # inverted: kept


def test_gt_person_filter():
    objects = [{"label": "Pedestrian", "bbox": [0, 0, 10, 10]}, {"label": "car", "bbox": [0, 0, 5, 5]},
               {"label": "person", "bbox": [0, 0, 3, 3]}, [1, 1, 2, 2], {"label": None, "bbox": [0, 0, 8, 8]}]
    # a plain box is a person; a null label is "none", no person
    assert gt_person_boxes(objects) == [(0.0, 0.0, 10.0, 10.0), (0.0, 0.0, 3.0, 3.0), (1.0, 1.0, 2.0, 2.0)]
    assert gt_person_boxes(objects, min_area=10) == [(0.0, 0.0, 10.0, 10.0)]  # areas 9 and 1 < 10


def test_localization_counts_degenerate_boxes_and_ignores_non_person_gt():
    # W = H = 1000. GT: person [0,0,100,100] and car [200,200,300,300] -> only the person is a GT box (GT = 1).
    # Answer: [0,0,100,100] (TP), [200,200,300,300] (person: FP, the car GT is gone), [500,500,500,600]
    # (zero width: kept, FP). P = 1/3, R = 1, F1 = 2 * (1/3) / (4/3) = 0.5 at every threshold.
    gt = [[{"label": "person", "bbox": [0, 0, 100, 100]}, {"label": "car", "bbox": [200, 200, 300, 300]}]]
    answer = parse_localization('[{"bbox_2d": [0,0,100,100]}, [200,200,300,300], {"bbox": [500,500,500,600]}]')
    score = localization_f1(gt, [answer], [(1000, 1000)])
    assert score.value == pytest.approx(0.5, abs=1e-15)
    assert score.secondary["F1_mean_0.50:0.95"] == pytest.approx(0.5, abs=1e-15)


def test_localization_sorts_by_score_and_swaps_box_2d():
    # One GT [0,0,100,100]. Boxes: A [0,0,100,60] (IoU 0.6, score 0.1), B given as box_2d [0,0,90,100]
    # = x-first [0,0,100,90] (IoU 0.9, score 0.9). Sorted by score B goes first and takes the GT at every
    # threshold <= 0.9; A is a FP. F1@0.5 = 2 * (1/2 * 1) / (3/2) = 2/3; at 0.95 both are FP: F1 = 0.
    # Thresholds 0.5 .. 0.9 (9 of 10) give 2/3, so the mean is 0.6.
    text = '[{"bbox_2d": [0,0,100,60], "score": 0.1}, {"box_2d": [0,0,90,100], "score": 0.9}]'
    score = localization_f1([[[0, 0, 100, 100]]], [parse_localization(text)], [(1000, 1000)])
    assert score.value == pytest.approx(2 / 3, abs=1e-15)
    assert score.secondary["F1@0.95"] == 0.0
    assert score.secondary["F1_mean_0.50:0.95"] == pytest.approx(0.6, abs=1e-15)


# --- temporal localization (vantage_temporal.py:390-439, 482-489, 507-508, 540-542) ---

# GT [10, 14] s, d = 30; the value is the IoU of the harness's reading (the same answers through the harness's
# adapter_temporal.evaluate_temporal_submission gave these values).
@pytest.mark.parametrize("text, iou", [
    # not JSON: "}" is appended (:407-408), json.loads fails, no quoted "start"/"end": the whole video [0, 30]
    ("00:08-00:12", 4 / 30), ("<8> <12>", 4 / 30), ('{"start": 00:08, "end": 00:12}', 4 / 30),
    # JSON followed by text: json.loads fails, the quoted values are searched instead (:416-420): [8, 12]
    ('{"start": "00:08", "end": "00:12"} and then more', 1 / 3),
    # two objects: "start" occurs twice, so nothing is mended; the first quoted pair is read: [8, 12]
    ('[{"start": "00:08", "end": "00:12"}, {"start": "00:20", "end": "00:25"}]', 1 / 3),
    # an unclosed end value gets its quote and brace (:399-408): [8, 12]
    ('{"start": "00:08", "end": "00:12', 1 / 3),
    # float() reads "1e1" and "1_2": [10, 12], IoU 2/4
    ('{"start": "1e1", "end": "1_2"}', 0.5),
    # "-00:05" is -0.0 * 60 + 5 = 5 s: [5, 12], I = 2, U = 7 + 4 - 2 = 9
    ('{"start": "-00:05", "end": "00:12"}', 2 / 9),
    # -5 is written "<-5.0>" and 1e-05 "<1e-05>", which the tag rule (:433) does not read back: whole video
    ('{"start": "-5", "end": "00:12"}', 4 / 30), ('{"start": "00:00.00001", "end": "00:12"}', 4 / 30),
    # h:m:s keeps its first field: [0, 0], IoU 0
    ('{"start": "0:00:08", "end": "0:00:12"}', 0.0),
    # float("x") fails, so the tags of the raw answer are read (:484-485): <5> <40> -> [5, 30] clamped, IoU 4/25
    ('{"start": "x", "end": "y", "n": "<5> <40>"}', 4 / 25),
    # JSON without the lower-case keys: KeyError, no tags: whole video
    ('{"Start": "00:08", "End": "00:12"}', 4 / 30),
    # the quoted values after the text: [9, 11], I = 1, U = 2 + 4 - 1 = 5
    ('start 00:08 end 00:12 "start": "00:09", "end": "00:11"', 0.2),
])
def test_temporal_reads_answers_as_the_harness(text, iou):
    assert temporal_iou([(10, 14)], [parse_temporal(text)], [30], ["v"]).value == pytest.approx(iou, abs=1e-15)


def test_temporal_ground_truth_is_clamped_too():
    # The GT is read back through the tag rule as well (:508, :542): [28, 32] in a 30 s video is [28, 30], so the
    # answer [28, 30] scores 1 (0.5 against the unclamped GT).
    answer = parse_temporal('{"start": "00:28", "end": "00:30"}')
    assert temporal_iou([(28, 32)], [answer], [30], ["v"]).value == 1.0


# --- event verification (vantage_event_verification.py:222-231, 259-263) and tracking (vantage_sot.py:239-346) ---

def test_event_verification_without_a_readable_answer_is_zero():
    # every answer dropped: the harness returns Macro F1 0.0 (:229-231), not an undefined value
    assert macro_f1(["yes", "no"], [None, None]).value == 0.0
    assert macro_f1(["yes", "no"], [parse_yes_no("Yesterday"), parse_yes_no("noyes")]).value == 0.0


@pytest.mark.parametrize("text, want", [
    # each key's first digits name the frame; a list of >= 4 float()-readable values is a box (its first four)
    ('{"1": [1,2,3,4], "frame2": [5,5,9,9,0.9], "f_3": ["1","2","3","4"]}',
     {1: (1.0, 2.0, 3.0, 4.0), 2: (5.0, 5.0, 9.0, 9.0), 3: (1.0, 2.0, 3.0, 4.0)}),
    ('{"frame_1": [1,2,3,4], "frame_1 again": [5,5,9,9]}', {1: (5.0, 5.0, 9.0, 9.0), 2: None, 3: None}),  # later wins
    ('{"frame_1": [true, 0, 5, 5]}', {1: (1.0, 0.0, 5.0, 5.0), 2: None, 3: None}),  # float(True) = 1
    # max(0, min(v, 1000)): NaN becomes 0, Infinity 1000
    ('{"frame_1": [NaN, 0, 5, 5], "frame_2": [0, 0, Infinity, 5]}',
     {1: (0.0, 0.0, 5.0, 5.0), 2: (0.0, 0.0, 1000.0, 5.0), 3: None}),
    ('{"frame_0": [1,2,3,4], "frame_9": [1,2,3,4]}', None),  # only frames 1 .. N-1 count: nothing read
    # two objects do not load as one: the quoted-frame pattern reads both
    ('{"frame_1": [1,2,3,4]} {"frame_2": [1,2,3,4]}', {1: (1.0, 2.0, 3.0, 4.0), 2: (1.0, 2.0, 3.0, 4.0), 3: None}),
    # the pattern is case-sensitive and needs quoted keys; its first valid box per frame wins
    ('"FRAME_1": [1,2,3,4]', None), ("frame_1: [1, 2, 3, 4]", None),
    ('"frame_1": [1200, 0, 1300, 100], "frame_1": [1, 1, 5, 5]', {1: (1.0, 1.0, 5.0, 5.0), 2: None, 3: None}),
])
def test_tracking_reads_answers_as_the_harness(text, want):
    assert parse_sot(text, 4) == want


# --- dense captioning (vantage_dvc.py:26-71, 168-207, 221-329) ---

def test_dvc_times_are_full_hms_unlike_temporal():
    assert dvc_time("0:00:33") == 33.0 and dvc_time("01:02:03") == 3723.0 and dvc_time("01:05.5") == 65.5
    assert dvc_time(None) == 0.0 and dvc_time("") == 0.0 and dvc_time(None, "strict") is None
    assert dvc_time("33s") is None and dvc_time("1:2:3:4") is None
    assert parse_temporal('{"start": "0:00:33", "end": "0:00:40"}') == (0.0, 0.0)  # temporal keeps the first field


def test_dvc_fallbacks():
    # Objects one after another: the [..] and {..} tries fail to load; the quoted-field pattern reads both.
    two = '{"start": "0:00:33", "end": "0:00:40", "caption": "a"}\n{"start": "00:41", "end": "00:50", "caption": "b"}'
    assert parse_dvc(two) == ([(33.0, 40.0, "a"), (41.0, 50.0, "b")], 0)
    assert parse_dvc("<00:00:05><00:00:10> a man walks") == ([(5.0, 10.0, "a man walks")], 0)
    assert parse_dvc("[]") is None  # a JSON list that loads ends the search, even empty
    # A missing start is 0 in official mode ("0" default, :234), unreadable in strict.
    assert parse_dvc('[{"end": 4, "caption": "x"}]') == ([(0.0, 4.0, "x")], 0)
    assert parse_dvc('[{"end": 4, "caption": "x"}]', "strict") is None


def test_dvc_pair_miou_is_pooled_over_pairs():
    # Video 1: GT [0,10] "a"; answer [0,5] "a": IoU 0.5, sim 1 -> one pair, SODA_c = 2 * 0.5 / 2 = 0.5.
    # Video 2: GT [0,10] "a", [10,20] "b"; answer [0,10] "a", [10,20] "b": two pairs of IoU 1, SODA_c 1.
    # Pooled pair mIoU = (0.5 + 1 + 1) / 3 = 5/6 (a per-video average would give 0.75).
    truth = [[(0, 10, "a")], [(0, 10, "a"), (10, 20, "b")]]
    answers = [[(0.0, 5.0, "a")], [(0.0, 10.0, "a"), (10.0, 20.0, "b")]]
    score = soda_c(truth, answers, exact_match_similarity)
    assert score.value == pytest.approx(0.75, abs=1e-15)
    assert score.secondary["pair_miou"] == pytest.approx(5 / 6, abs=1e-15) and score.secondary["n_pairs"] == 3


# --- VQA (vantage_vqa.py:29-55) and strict mode (spec section 8.6) ---

@pytest.mark.parametrize("text, official, strict", [
    ("Answer: (B) not A", "A", "A"),  # "Answer:" takes no parenthesis: falls to the last standalone letter
    ("A cat is B", "A", "A"),  # leading letter followed by a space
    ("Think.\nB. yes\nnot D", "D", "D"),  # the leading rule applies to the start of the text only
    ("I choose Bob", "B", "B"),  # no word boundary after the letter in the sentence rule
    ("I pick b.", "B", None), ("option c", "C", None), ("b", "B", None),
])
def test_vqa_harness_rules(text, official, strict):
    assert parse_choice(text, "official") == official
    assert parse_choice(text, "strict") == strict
