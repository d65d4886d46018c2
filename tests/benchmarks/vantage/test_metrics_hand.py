"""The spec's hand-computed cases (section 5) as exact assertions, in official and strict mode."""
import numpy as np
import pytest
from sklearn.metrics import f1_score

from sova_lib.benchmarks.vantage.metrics import accuracy, iou_matrix, macro_f1, macro_f1_counts, temporal_iou
from sova_lib.benchmarks.vantage.metrics_boxes import (
    box_iou,
    localization_f1,
    match_at_threshold,
    refex_iou,
    sot_success,
    sot_tracklet,
    success_curve,
)
from sova_lib.benchmarks.vantage.parsing import parse_choice, parse_pointing, parse_temporal, parse_yes_no
from sova_lib.benchmarks.vantage.parsing_boxes import parse_localization, parse_refex
from sova_lib.benchmarks.vantage.run import uniform_frame_plan

EV_ANSWERS = ["Yes.", "No", "no", "I cannot tell"]


@pytest.mark.parametrize("mode, want", [("official", 2 / 3), ("strict", 7 / 12)])
def test_event_verification_macro_f1(mode, want):
    score = macro_f1(["yes", "yes", "no", "no"], [parse_yes_no(a, mode) for a in EV_ANSWERS], mode)
    assert score.value == pytest.approx(want, abs=1e-12)
    assert round(score.value, 4) == {"official": 0.6667, "strict": 0.5833}[mode]


def test_macro_f1_all_yes_both_ways_is_one_and_counts_match_sklearn():
    assert macro_f1(["yes"] * 3, ["yes"] * 3).value == 1.0
    rng = np.random.default_rng(1)
    t, p = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
    w = rng.integers(0, 3, (5, 40)).astype(float)
    got = macro_f1_counts(t, p, 3, w, labels=[0, 1])
    want = [f1_score(t, p, labels=[0, 1], average="macro", sample_weight=row, zero_division=0) for row in w]
    np.testing.assert_allclose(got, want, atol=1e-12)
    got = macro_f1_counts(t, p, 3, w)
    want = [f1_score(t, p, labels=sorted(set(t[row > 0]) | set(p[row > 0])), average="macro", sample_weight=row,
                     zero_division=0) for row in w]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_macro_f1_equals_sklearn_on_random_answers():
    # The harness's scoring by scikit-learn: official drops unreadable answers and averages over the labels present,
    # strict reads them as "invalid" and averages over no and yes.
    rng = np.random.default_rng(2)
    for n in range(1, 30):
        truth = list(rng.choice(["yes", "no"], n))
        answers = [None if r < 0.3 else ("yes" if r < 0.65 else "no") for r in rng.random(n)]
        t, p = zip(*[(x, a) for x, a in zip(truth, answers) if a is not None]) if any(answers) else ((), ())
        official = f1_score(t, p, labels=sorted(set(t) | set(p)), average="macro", zero_division=0) if t else 0.0
        strict = f1_score(truth, [a or "invalid" for a in answers], labels=["no", "yes"], average="macro",
                          zero_division=0)
        assert (macro_f1(truth, answers).value, macro_f1(truth, answers, "strict").value) == (official, strict)


def test_all_yes_baseline_is_p_over_one_plus_p():
    truth = ["yes"] * 3 + ["no"] * 5
    assert macro_f1(truth, ["yes"] * 8).value == pytest.approx(3 / 8 / (11 / 8))  # p / (1 + p), p = 3/8 yes


def test_vqa_and_pointing_accuracy():
    vqa = [parse_choice(a) for a in ["Answer: C", "I pick b.", "The forklift is a machine"]]
    assert vqa == ["C", "B", "A"]
    assert accuracy(["C", "B", "B"], vqa).value == pytest.approx(2 / 3)
    # strict reads upper-case letters only (spec 8.6): "I pick b." and the "a" of "a machine" are unread.
    assert accuracy(["C", "B", "A"], [parse_choice(a, "strict") for a in
                                      ["Answer: C", "I pick b.", "The forklift is a machine"]]).value == pytest.approx(1 / 3)
    pts = [parse_pointing(a) for a in ["The answer is (C).", "No idea", "none"]]
    assert pts == ["C", "D", None]
    assert accuracy(["C", "D", "A"], pts).value == pytest.approx(2 / 3)


TEMPORAL = ["00:08-00:12", "I don't know", '{"start":8,"end":12}', "00:14-00:10", "00:25-00:40",
            '{"start": "00:08", "end": "00:12"}', '{"start": "00:14", "end": "00:10"}', '{"start": "00:25", "end": "00:40"}']


# GT [10, 14] s, d = 30. Official mode reads JSON only (harness vantage_temporal.py:390-431): the three plain-text answers
# and the numeric JSON are the whole video [0, 30], IoU 4/30; the JSON strings give [8, 12] (IoU 2/6), [14, 10]
# (sorted when read back, :540-542: IoU 1) and [25, 40] (clamped to [25, 30]: IoU 0). Strict reads the text too.
@pytest.mark.parametrize("mode, want", [("official", [4 / 30, 4 / 30, 4 / 30, 4 / 30, 4 / 30, 1 / 3, 1, 0]),
                                        ("strict", [1 / 3, 0, 1 / 3, 1, 0, 1 / 3, 1, 0])])
def test_temporal_iou_cases(mode, want):
    for text, value in zip(TEMPORAL, want):
        score = temporal_iou([(10, 14)], [parse_temporal(text, mode)], [30], ["v"], mode)
        assert score.value == pytest.approx(value, abs=1e-12), text


def test_temporal_video_macro_and_whole_video_baseline():
    assert iou_matrix([(0, 6)], [(0, 3.6)])[0, 0] == pytest.approx(0.6)  # IoUs 1, 0, 0 on video a; 0.6 on video b
    score = temporal_iou([(10, 14), (20, 21), (5, 6), (0, 6)], [(10, 14), (0, 1), (0, 1), (0, 3.6)], [30] * 4,
                         ["a", "a", "a", "b"])
    assert score.value == pytest.approx((1 / 3 + 0.6) / 2) and round(score.value, 4) == 0.4667
    assert score.secondary["mIoU_item_mean"] == pytest.approx(1.6 / 4)
    gts, d = [(10, 14), (0, 6), (3, 30)], [30, 20, 30]
    whole = temporal_iou(gts, [None] * 3, d, ["a", "b", "c"], "official")
    assert whole.value == pytest.approx(np.mean([4 / 30, 6 / 20, 27 / 30]))
    assert temporal_iou(gts, [None] * 3, d, ["a", "b", "c"], "strict").value == 0.0


@pytest.mark.parametrize("text, want", [("[[100,100,200,300]]", 1.0), ("[[100,100,150,300],[600,600,700,700]]", 0.5),
                                        ("none", 0.0)])
@pytest.mark.parametrize("mode", ["official", "strict"])
def test_refex_cases(text, want, mode):
    score = refex_iou([[[200, 100, 400, 300]]], [parse_refex(text, mode)], [(2000, 1000)])
    assert score.value == pytest.approx(want, abs=1e-12)
    assert score.secondary["Acc@0.5"] == float(want >= 0.5)


OL_ANSWER = ('```json\n[{"bbox_2d": [0, 0, 100, 100], "label": "person"}, {"bbox_2d": [200, 200, 288, 300]}, '
             '{"bbox_2d": [500, 500, 600, 600], "label": "pedestrian"}, {"bbox_2d": [0, 0, 50, 50], "label": "car"}]```')


@pytest.mark.parametrize("mode", ["official", "strict"])
def test_object_localization_case(mode):
    gts = [[[0, 0, 100, 100], [200, 200, 300, 300]], [[0, 0, 50, 50]]]
    answers = [parse_localization(OL_ANSWER, mode), parse_localization("no answer", mode)]
    score = localization_f1(gts, answers, [(1000, 1000), (1000, 1000)], mode)
    assert score.value == pytest.approx(2 / 3)
    assert score.secondary["F1@0.95"] == pytest.approx(1 / 3)
    assert score.secondary["F1_mean_0.50:0.95"] == pytest.approx(0.6)


def test_matching_takes_largest_unmatched_iou_at_each_threshold():
    # First answer box: IoU 0.5 with GT 0, 1.0 with GT 1 -> takes GT 1; the second then has GT 0 at IoU 0.5.
    assert match_at_threshold([[0, 0, 10, 10], [0, 0, 10, 10]], [[0, 0, 10, 5], [0, 0, 10, 10]], 0.5) == 2
    assert match_at_threshold([[0, 0, 10, 10], [0, 0, 10, 10]], [[0, 0, 10, 5], [0, 0, 10, 10]], 0.55) == 1
    assert match_at_threshold([[50, 50, 60, 60]], [[0, 0, 10, 10]], 0.0) == 0  # IoU 0 never matches
    # A box below the threshold takes nothing (harness astro_2d_dataset.py:400-408): IoU 30/100 = 0.3 for the first,
    # 60/100 = 0.6 for the second; at 0.5 the second is the true positive, at 0.25 the first takes the GT box.
    weak_then_good = [[0, 0, 3, 10], [0, 0, 6, 10]]
    assert [match_at_threshold(weak_then_good, [[0, 0, 10, 10]], t) for t in (0.25, 0.5, 0.65)] == [1, 1, 0]


SOT_GT = {1: [100, 100, 200, 200], 2: None, 3: [300, 300, 400, 400]}


def test_sot_first_case():
    out = sot_tracklet(SOT_GT, {1: [100, 100, 200, 150], 2: [10, 10, 20, 20], 3: None}, 4)
    assert out["auc"] == pytest.approx(13 / 63) and out["null_rate"] == pytest.approx(1 / 3)
    assert out["freeze_rate"] == 0.0


def test_sot_static_box_freezes():
    gt = {k: [10 * k, 0, 100 + 10 * k, 100] for k in range(1, 5)}
    out = sot_tracklet(gt, {k: [0, 0, 100, 100] for k in range(1, 5)}, 5)
    assert out["auc"] == pytest.approx(51 / 84) and out["freeze_rate"] == 1.0


def test_sot_thresholds_inclusive_and_otb():
    gt = {1: [0, 0, 10, 10], 2: [0, 0, 10, 10], 3: [0, 0, 10, 10]}
    answer = {1: [0, 0, 10, 10], 2: [0, 0, 10, 5], 3: [20, 20, 30, 30]}
    assert [box_iou(answer[k], gt[k]) for k in (1, 2, 3)] == [1.0, 0.5, 0.0]
    assert sot_tracklet(gt, answer, 4)["auc"] == pytest.approx(33 / 63)
    assert success_curve([1.0, 0.5, 0.0], inclusive=False).mean() == pytest.approx(30 / 63)  # the OTB rule


def test_sot_empty_answer_and_skipped_tracklet():
    score = sot_success([SOT_GT, {1: None, 2: None}], [None, None], [4, 3])
    assert score.value == pytest.approx(1 / 21) and score.n_units == 1
    assert "1 tracklets without a scored frame" in score.notes[0]


def test_frame_plans():
    assert uniform_frame_plan(90, 8) == [10, 20, 30, 40, 50, 60, 70, 80]


def test_every_hand_case_of_the_notebook_scores_its_hand_value():
    # examples.HAND_CASES carries the values worked out by hand (the cases above, in both modes); the library's
    # scoring of the raw texts must give each one.
    from sova_lib.benchmarks.vantage.hand_cases import hand_case_rows

    rows = hand_case_rows()
    assert len(rows) == 17
    for row in rows:
        assert row["official"] == pytest.approx(row["official by hand"], abs=1e-4), row["case"]
        assert row["strict"] == pytest.approx(row["strict by hand"], abs=1e-4), row["case"]
