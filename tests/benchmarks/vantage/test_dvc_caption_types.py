"""Dense captioning: an event whose caption is not text scores as the harness scores it.

The harness keeps any caption that is not empty (``vantage_dvc.py:236-238``), scores every kept event
(IoU ``:290``) and sends the caption unchanged in its remote BERTScore request (``:280-296``). With an
exact-match service the list ``["a person opens the door"]`` has the words of "a person opens the door",
so it scores 1 against that caption. Each expected value below is worked out by hand from the harness's
lines: ``_chased_dp_assignment`` (``:32-71``) on ``IoU x sim``, then ``:309-317`` and ``:328``.
"""
import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sova_lib.benchmarks.vantage.ground_truth import GroundTruth
from sova_lib.benchmarks.vantage.metrics_captions import caption_text, exact_match_similarity
from sova_lib.benchmarks.vantage.parsing import parse_dvc
from sova_lib.benchmarks.vantage.scoring import score_answers


def _score(truth, answer, mode="official"):
    gt = GroundTruth("clip_0__dvc_000000", "dvc", truth, "clip_0.mp4", "c")
    result = score_answers("dvc", [gt], {gt.id: answer}, mode=mode, similarity=exact_match_similarity)
    return [round(v / 100, 4) for v in (result.value, result.secondary["iou_f1"], result.secondary["caption_f1"],
                                        result.secondary["pair_miou"])]


def test_list_caption_matched_by_its_words():
    # GT g0 [29, 31] "a box falls from the conveyor", g1 [59, 62] "a forklift reverses". Answer, sorted:
    # a0 [29, 31] ["a box falls from the conveyor"], a1 [59, 62] "a person opens the door, while ...".
    # IoU rows g0 [1, 0], g1 [0, 1]; sim g0 [1, 0], g1 [0, 0] (a1's words match no GT); C = [[1, 0], [0, 0]].
    # DP: (0,0) diagonal 1; (0,1) left 1; (1,0) up 1; (1,1) up (first of three ties at 1). Back from (1,1):
    # row 1 has no diagonal cell, up; row 0's last diagonal cell is column 0 -> pairs [(0, 0)], S = 1.
    # M + N = 4: SODA_c = 2 * 1 / 4 = 0.5, IoU F1 = 2 * 1 / 4 = 0.5, caption F1 = 2 * 1 / 4 = 0.5, mIoU 1.
    truth = [(29.0, 31.0, "a box falls from the conveyor"), (59.0, 62.0, "a forklift reverses")]
    answer = ('[{"start": "00:29", "end": "00:31", "caption": ["a box falls from the conveyor"]}, '
              '{"start": "00:59", "end": "01:02", "caption": '
              '"a person opens the door, while a person opens the door in the background"}]')
    assert _score(truth, answer) == [0.5, 0.5, 0.5, 1.0]
    # strict leaves the list-captioned event out: a1 alone, sim 0 -> pair (0, 0) with IoU 0, nothing matched.
    # C = [[0], [0]]; DP (0,0) diagonal 0, (1,0) up; back: row 1 none, row 0 column 0 -> pairs [(0, 0)], IoU 0.
    assert _score(truth, answer, "strict") == [0.0, 0.0, 0.0, 0.0]


def test_list_caption_takes_part_in_the_matching():
    # GT g0 [20, 28] "two people talk near the shelf", g1 [28, 40] "a person opens the door",
    # g2 [38, 42] "a worker walks to the dock", g3 [50, 55] "a bus passes" (M = 4).
    # Answer, sorted: a0 [20, 28] text, a1 [28, 34] ["a person opens the door"], a2 [36, 41], a3 [37, 42] (N = 4).
    # IoU: g0-a0 1; g1-a1 6/12 = 0.5, g1-a2 4/13, g1-a3 3/14; g2-a2 3/6 = 0.5, g2-a3 4/5 = 0.8; the rest 0.
    # sim 1 at g0-a0, g1-a1 (the list's words), g2-a3; else 0. C = IoU x sim has 1, 0.5, 0.8 there, else 0.
    # DP: row 0 = [1, 1, 1, 1]; row 1 = [1, 1.5, 1.5, 1.5] (diagonal at column 1); row 2 = [1, 1.5, 1.5, 2.3]
    # (diagonal at column 3); row 3 = row 2 (no diagonal cell: up wins every tie). Back from (3,3): row 3 none;
    # row 2 column 3; row 1 at or left of column 2: column 1; row 0 at or left of column 0: column 0.
    # pairs [(0,0), (1,1), (2,3)], S = 1 + 0.5 + 0.8 = 2.3, IoU sum 2.3, sim sum 3, M + N = 8:
    # SODA_c = 4.6 / 8 = 0.575, IoU F1 = 0.575, caption F1 = 6 / 8 = 0.75, mIoU = 2.3 / 3 = 0.7667.
    truth = [(20.0, 28.0, "two people talk near the shelf"), (28.0, 40.0, "a person opens the door"),
             (38.0, 42.0, "a worker walks to the dock"), (50.0, 55.0, "a bus passes")]
    answer = json.dumps([{"start": "00:20", "end": "00:28", "caption": "two people talk near the shelf"},
                         {"start": "00:28", "end": "00:34", "caption": ["a person opens the door"]},
                         {"start": "00:36", "end": "00:41", "caption": "a car stops at the crossing"},
                         {"start": "00:37", "end": "00:42", "caption": "a worker walks to the dock"}])
    assert _score(truth, answer) == [0.575, 0.575, 0.75, 0.7667]
    # strict: a1 left out (N = 3); pairs g0-a0 (IoU 1) and g2-a3 (0.8): S = 1.8, 2 * 1.8 / 7, caption 2 * 2 / 7.
    assert _score(truth, answer, "strict") == [round(3.6 / 7, 4), round(3.6 / 7, 4), round(4 / 7, 4), 0.9]


def test_caption_text_is_the_json_text():
    assert caption_text("a man") == "a man"
    assert caption_text(["a box", 7]) == '["a box", 7]'
    assert caption_text({"what": "café"}) == '{"what": "café"}'
    assert caption_text(True) == "true" and caption_text(2.5) == "2.5" and caption_text(math.nan) == "NaN"
    assert exact_match_similarity(["a box falls"], [caption_text(["a box falls"])]).tolist() == [[1.0]]


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60), _json), min_size=1, max_size=4))
def test_official_never_raises_on_any_caption(events):
    answer = json.dumps([{"start": s, "end": e, "caption": c} for s, e, c in events])
    truth = [(0.0, 30.0, "a man walks"), (30.0, 60.0, "a car parks")]
    kept = sum(bool(c) for _, _, c in events)  # the harness keeps a caption that is not empty (:237)
    parsed = parse_dvc(answer)
    assert (parsed is None and kept == 0) or len(parsed[0]) == kept
    gt = GroundTruth("clip_0__dvc_000000", "dvc", truth, "clip_0.mp4", "c")
    result = score_answers("dvc", [gt], {gt.id: answer}, mode="official", similarity=exact_match_similarity)
    assert result.n_parsed == (kept > 0)
    assert 0.0 <= result.value <= 100.0 and np.isfinite(result.value)
