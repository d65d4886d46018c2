"""The whole chain per task: raw answers -> parse -> metric -> interval, with parse rates and both modes."""
import numpy as np
import pytest

from sova_lib.benchmarks.vantage.ground_truth import GroundTruth
from sova_lib.benchmarks.vantage.metrics_captions import exact_match_similarity
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.tasks import TASKS


def gts(task, values, **extra):
    return [GroundTruth(str(k), task, v, media=f"v{k}", extra=dict(extra)) for k, v in enumerate(values)]


def test_registry_has_the_eight_tasks():
    assert sorted(TASKS) == ["astro", "dvc", "event_verification", "pointing", "refex", "sot", "temporal", "vqa"]
    assert {t.unit for t in TASKS.values()} == {"item", "video", "image", "tracklet"}
    with pytest.raises(ValueError, match="unknown VANTAGE-Bench task"):
        score_answers("ocr", gts("vqa", ["A"]), {"0": "A"})


@pytest.mark.parametrize("mode, value, n_scored", [("official", 200 / 3, 3), ("strict", 175 / 3, 4)])
def test_event_verification_chain(mode, value, n_scored):
    truth = gts("event_verification", ["yes", "yes", "no", "no"])
    answers = {"0": "Yes.", "1": "No", "2": "no", "3": "I cannot tell"}
    result = score_answers("event_verification", truth, answers, mode=mode, rng=np.random.default_rng(0),
                           n_resamples=200)
    assert result.value == pytest.approx(value) and result.mode == mode and result.n_scored == n_scored
    assert result.n_parsed == 3 and result.parse_rate == 0.75 and result.ci_unit == "item"
    assert result.to_json()["mode"] == mode and result.to_json()["parse_rate"] == 0.75


def test_missing_and_malformed_answers_are_counted_not_raised():
    truth = gts("temporal", [(10, 14), (10, 14)], duration=30)
    result = score_answers("temporal", truth, {"0": "\x00{[", "x": "00:10-00:14"}, mode="official")
    assert result.value == pytest.approx(4 / 30 * 100) and result.n_parsed == 0
    assert "1 of 2 GT ids have no answer" in result.notes[0] and "1 answers have no GT id" in result.notes[-1]
    # "\x00{[" comes back from the harness's spreadsheet as "_x0000_{[" (spreadsheet.read_back, rule 5)
    assert "1 answers changed by the harness's spreadsheet round trip" in result.notes[1]
    strict = score_answers("temporal", truth, {"0": "\x00{[", "1": "00:10-00:14"}, mode="strict")
    assert strict.value == 50.0 and strict.parse_rate == 0.5


def test_box_tasks_and_yxyx_swap():
    truth = [GroundTruth("0", "refex", [[200, 100, 400, 300]], extra={"width": 2000, "height": 1000})]
    assert score_answers("refex", truth, {"0": "[[100,100,200,300]]"}).value == 100.0
    assert score_answers("refex", truth, {"0": "[[100,100,300,200]]"}, box_coord_order="yxyx").value == 100.0
    sot = [GroundTruth("s", "sot", {1: [100, 100, 200, 200], 2: None, 3: [300, 300, 400, 400]}, extra={"n_frames": 4})]
    answer = '{"frame_1": [100, 100, 200, 150], "frame_2": [10, 10, 20, 20], "frame_3": null}'
    result = score_answers("sot", sot, {"s": answer})
    assert result.value == pytest.approx(1300 / 63) and result.ci_unit == "tracklet"
    assert result.secondary["null_rate"] == pytest.approx(100 / 3)


def test_dvc_chain_needs_a_similarity():
    truth = gts("dvc", [[(0, 10, "a"), (10, 20, "b")], [(0, 5, "c")]])
    answers = {"0": '[{"start": 0, "end": 10, "caption": "a"}, {"start": 10, "end": 20, "caption": "b"}]', "1": "?"}
    assert score_answers("dvc", truth, answers, similarity=exact_match_similarity).value == 100.0
    assert score_answers("dvc", truth, answers, similarity=exact_match_similarity, mode="strict").value == 50.0
    bad = {**answers, "1": '[{"start": "soon", "end": 5, "caption": "c"}, {"start": 0, "end": 5, "caption": "c"}]'}
    result = score_answers("dvc", truth, bad, similarity=exact_match_similarity)
    assert result.value == 100.0 and "1 parts of readable answers left out" in result.notes[-1]
    with pytest.raises(ValueError, match="caption similarity"):
        score_answers("dvc", truth, answers)
