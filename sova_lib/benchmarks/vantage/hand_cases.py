"""The spec's hand-computed cases as data, scored through the library, for teaching (notebook 06).

``hand_case_rows()`` scores each case of the spec's section 5 from raw
answer texts (parser, metric) in both modes and returns one row per case
with the value expected by hand; the tests assert the same values.

``hand_cases`` is one named module in each benchmark that has hand-worked
cases in its spec (``sova_lib.benchmarks.muvr.hand_cases``,
``sova_lib.benchmarks.vantage.hand_cases``): the spec's cases computed
through the library, one row per checked quantity beside the value worked
out by hand, for the benchmark's notebook and its tests.
"""
from __future__ import annotations

from sova_lib.benchmarks.vantage.ground_truth import GroundTruth
from sova_lib.benchmarks.vantage.metrics_captions import exact_match_similarity
from sova_lib.benchmarks.vantage.scoring import score_answers

__all__ = ["HAND_CASES", "hand_case_rows"]


def _gt(task, values, **extra):
    return [GroundTruth(str(k), task, v, media=f"video{k}", extra=dict(extra)) for k, v in enumerate(values)]


_TEMPORAL = _gt("temporal", [(10, 14)], duration=30)
_REFEX = _gt("refex", [[[200, 100, 400, 300]]], width=2000, height=1000)
_SOT = [GroundTruth("0", "sot", {1: [100, 100, 200, 200], 2: None, 3: [300, 300, 400, 400]}, extra={"n_frames": 4})]
_SHIFTED = {k: [10 * k, 0, 100 + 10 * k, 100] for k in range(1, 5)}
_OL = ('[{"bbox_2d": [0, 0, 100, 100], "label": "person"}, {"bbox_2d": [200, 200, 288, 300], "label": "person"}, '
       '{"bbox_2d": [500, 500, 600, 600], "label": "person"}]')

#: (task, case, ground truth, raw answers, by hand: official, strict)
HAND_CASES = [
    ("event_verification", "truth y,y,n,n; 'Yes.', 'No', 'no', 'I cannot tell'",
     _gt("event_verification", ["yes", "yes", "no", "no"]),
     ["Yes.", "No", "no", "I cannot tell"], 2 / 3, 7 / 12),
    ("vqa", "'Answer: C', 'I pick b.', 'The forklift is a machine' vs C, B, A",
     _gt("vqa", ["C", "B", "A"]), ["Answer: C", "I pick b.", "The forklift is a machine"], 1.0, 1 / 3),
    ("pointing", "'The answer is (C).', 'No idea', 'none' vs C, D, A",
     _gt("pointing", ["C", "D", "A"]), ["The answer is (C).", "No idea", "none"], 2 / 3, 1 / 3),
    # Temporal, GT [10, 14] s, d = 30. The harness reads a temporal answer as JSON only (vantage_temporal.py:390-431):
    # plain text gets a "}" appended, fails json.loads and has no quoted "start"/"end", so it is the whole video
    # [0, 30], IoU 4/30, in official mode; strict reads its m:s times ([8, 12]: I = 2, U = 6, IoU 1/3). JSON strings are
    # read by both: {"start": "00:08", "end": "00:12"} scores 1/3 in both modes.
    ("temporal", "GT 00:10-00:14, d=30; answer 00:08-00:12 (text)", _TEMPORAL, ["00:08-00:12"], 4 / 30, 1 / 3),
    ("temporal", "same GT; 'I don't know'", _TEMPORAL, ["I don't know"], 4 / 30, 0.0),
    ("temporal", 'same GT; {"start":8,"end":12}', _TEMPORAL, ['{"start":8,"end":12}'], 4 / 30, 1 / 3),
    # Read back as "<14.0> <10.0>", the pair is sorted (:433-439): [10, 14], IoU 1; [25, 40] is clamped to
    # [25, 30], no overlap. The same times as text are the whole video in official mode.
    ("temporal", 'same GT; {"start": "00:14", "end": "00:10"} (sorted)', _TEMPORAL,
     ['{"start": "00:14", "end": "00:10"}'], 1.0, 1.0),
    ("temporal", 'same GT; {"start": "00:25", "end": "00:40"} (clamped)', _TEMPORAL,
     ['{"start": "00:25", "end": "00:40"}'], 0.0, 0.0),
    ("dvc", "identity, 2 events (similarity: exact match)",
     _gt("dvc", [[(0, 10, "a"), (10, 20, "b")]]),
     ['[{"start": 0, "end": 10, "caption": "a"}, {"start": 10, "end": 20, "caption": "b"}]'], 1.0, 1.0),
    ("dvc", "GT [0,10] x, [10,20] y; answers [0,20] y, [0,20] x",
     _gt("dvc", [[(0, 10, "x"), (10, 20, "y")]]),
     ['[{"start": 0, "end": 20, "caption": "y"}, {"start": 0, "end": 20, "caption": "x"}]'], 0.25, 0.25),
    ("dvc", "two videos: identity and unreadable", _gt("dvc", [[(0, 10, "a")], [(0, 10, "a")]]),
     ['[{"start": 0, "end": 10, "caption": "a"}]', "no events"], 1.0, 0.5),
    ("refex", "W=2000, H=1000, GT [200,100,400,300]; [[100,100,200,300]]", _REFEX, ["[[100,100,200,300]]"], 1.0, 1.0),
    ("refex", "same GT; [[100,100,150,300],[600,600,700,700]]", _REFEX, ["[[100,100,150,300],[600,600,700,700]]"],
     0.5, 0.5),
    ("astro", "two images; 2 hits (IoU 1, 0.88), 1 false box, 1 missed person (F1@0.5)",
     _gt("astro", [[[0, 0, 100, 100], [200, 200, 300, 300]], [[0, 0, 50, 50]]], width=1000, height=1000),
     [_OL, "no answer"], 2 / 3, 2 / 3),
    ("sot", "GT {1: box, 2: absent, 3: box}; IoU .5, box on absent, null on present", _SOT,
     ['{"frame_1": [100,100,200,150], "frame_2": [10,10,20,20], "frame_3": null}'], 13 / 63, 13 / 63),
    ("sot", "initial box repeated, GT shifted 10..40 px",
     [GroundTruth("0", "sot", _SHIFTED, extra={"n_frames": 5})],
     ['{"frame_1": [0,0,100,100], "frame_2": [0,0,100,100], "frame_3": [0,0,100,100], "frame_4": [0,0,100,100]}'],
     51 / 84, 51 / 84),
    ("sot", "no answer (every present frame IoU 0)", _SOT, ["I lost the target"], 1 / 21, 1 / 21),
]


def hand_case_rows() -> list[dict]:
    """One row per hand case: task, case, metric, official and strict values (x100) computed and by hand."""
    rows = []
    for task, case, gts, texts, official, strict in HAND_CASES:
        answers = {g.id: t for g, t in zip(gts, texts)}
        got = {mode: score_answers(task, gts, answers, mode=mode, similarity=exact_match_similarity)
               for mode in ("official", "strict")}
        rows.append({"task": task, "case": case, "metric": got["official"].metric,
                     "official": round(got["official"].value, 4), "official by hand": round(100 * official, 4),
                     "strict": round(got["strict"].value, 4), "strict by hand": round(100 * strict, 4),
                     "parse rate": got["official"].parse_rate})
    return rows

