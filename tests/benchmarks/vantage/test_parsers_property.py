"""No answer parser raises on any string: arbitrary text and JSON-shaped text, in both modes (hypothesis).

The JSON-shaped answers are what models write: a JSON value built from the
keys the parsers look for, with huge integers, NaN and Infinity, written
plainly or pretty-printed with CRLF, wrapped in prose or a code fence, or
cut short. Every draw is also scored end to end (``score_answers``), which
must not raise either. Examples are drawn from a fixed seed (``derandomize``).
"""
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sova_lib.benchmarks.muvr.metrics import parse_official, parse_strict
from sova_lib.benchmarks.vantage.ground_truth import GroundTruth
from sova_lib.benchmarks.vantage.metrics_captions import exact_match_similarity
from sova_lib.benchmarks.vantage.parsing import (
    MODES,
    dvc_time,
    parse_choice,
    parse_dvc,
    parse_pointing,
    parse_temporal,
    parse_time,
    parse_yes_no,
)
from sova_lib.benchmarks.vantage.parsing_boxes import parse_localization, parse_refex, parse_sot
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.spreadsheet import read_back

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

KEYS = ["start", "end", "caption", "description", "start_time", "end_time", "bbox", "bbox_2d", "box_2d", "box",
        "bounding_box", "coordinates", "bboxes", "x1", "y1", "x2", "y2", "xmin", "ymin", "xmax", "ymax", "label",
        "score", "confidence", "pred_bbox", "frame_1", "frame_2", "frame1", "2", "query"]
NUMBERS = (st.integers(min_value=-1200, max_value=1200) | st.floats(allow_nan=True, allow_infinity=True)
           | st.integers(min_value=10 ** 308, max_value=10 ** 400) | st.integers(min_value=-10 ** 400, max_value=10 ** 400))
BOXES = st.lists(NUMBERS | st.sampled_from(["12", "nan", "1e999", None, True]), min_size=3, max_size=5)
SCALARS = (st.none() | st.booleans() | NUMBERS
           | st.sampled_from(["00:05", "0:00:33", "nan", "inf", "A", "Yes", "person", "10s", "", "1e999"])
           | st.text(max_size=8))
VALUES = st.recursive(SCALARS | BOXES, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner, max_size=5),
                      max_leaves=20)


@st.composite
def json_answers(draw):
    """A JSON value as a model might write it around its answer."""
    text = json.dumps(draw(VALUES), indent=draw(st.sampled_from([None, 2])))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    wrap = draw(st.sampled_from(["{}", "```json\n{}\n```", "Sure! {} Hope it helps.", "{}{}", "[{}]"]))
    text = wrap.replace("{}", text)
    cut = draw(st.integers(min_value=0, max_value=len(text)))
    return text[:cut] if draw(st.booleans()) else text


ANSWERS = st.text() | json_answers()


def _parse_all(text, mode):
    parse_choice(text, mode)
    parse_pointing(text, mode)
    parse_yes_no(text, mode)
    parse_temporal(text, mode, 30.0)
    parse_time(text, mode)
    dvc_time(text, mode)
    parse_dvc(text, mode)
    parse_refex(text, mode)
    parse_localization(text, mode)
    parse_sot(text, 4, mode)


@SETTINGS
@given(ANSWERS)
def test_parsers_never_raise(text):
    for mode in MODES:
        _parse_all(text, mode)
        back = read_back(text)
        if isinstance(back, str):
            _parse_all(back, mode)
    parse_official(text)
    parse_strict(text)


TRUTH = {
    "vqa": "A", "event_verification": "yes", "pointing": "B", "temporal": (5.0, 10.0),
    "dvc": [(0.0, 10.0, "a man walks")], "refex": [[100, 100, 300, 300]], "astro": [[100, 100, 300, 300]],
    "sot": {1: (100, 100, 200, 300), 2: None, 3: (100, 100, 200, 300)},
}


@SETTINGS
@given(st.sampled_from(sorted(TRUTH)), st.lists(ANSWERS, min_size=1, max_size=3))
def test_scoring_never_raises(task, texts):
    truth = [GroundTruth(str(k), task, TRUTH[task], media=f"v{k}",
                         extra={"duration": 30.0, "width": 1000, "height": 1000, "n_frames": 4})
             for k in range(len(texts))]
    answers = {str(k): text for k, text in enumerate(texts)}
    for mode in MODES:
        result = score_answers(task, truth, answers, mode=mode, similarity=exact_match_similarity)
        assert 0 <= result.n_parsed <= len(texts)
