"""Every parser on the spec's example answers (section 5), in both modes, and on malformed input."""
import pytest

from sova_lib.benchmarks.vantage.metrics import accuracy
from sova_lib.benchmarks.vantage.parsing import (
    MODES,
    check_mode,
    parse_choice,
    parse_dvc,
    parse_pointing,
    parse_temporal,
    parse_time,
    parse_yes_no,
)
from sova_lib.benchmarks.vantage.parsing_boxes import Detection, parse_localization, parse_refex, parse_sot


@pytest.mark.parametrize("text, official, strict", [
    ("Answer: C", "C", "C"), ("I pick b.", "B", None), ("The forklift is a machine", "A", None),
    ("(D) the red truck", "D", "D"), ("B. a pallet", "B", "B"), ("The answer is (c).", "C", None), ("", None, None),
])
def test_vqa_choice(text, official, strict):
    assert parse_choice(text, "official") == official
    assert parse_choice(text, "strict") == strict


@pytest.mark.parametrize("text, official, strict", [
    ("The answer is (C).", "C", "C"), ("No idea", "D", None), ("none", None, None), ("a or (b)", "B", None),
])
def test_pointing(text, official, strict):
    assert parse_pointing(text, "official") == official
    assert parse_pointing(text, "strict") == strict


@pytest.mark.parametrize("text, want", [
    ("Yes.", "yes"), ("No", "no"), ("no", "no"), ("I cannot tell", None), ("Nobody", None), ("YES, and no", "yes"),
])
def test_yes_no(text, want):
    for mode in MODES:
        assert parse_yes_no(text, mode) == want


def test_time_formats():
    assert parse_time("01:05.5") == 65.5
    assert parse_time("12") == 12.0
    assert parse_time(7) == 7.0
    assert parse_time("01:02:03", "official") == 1.0  # the harness keeps the first field
    assert parse_time("01:02:03", "strict") == 3723.0
    assert parse_time("abc") is None and parse_time(None) is None and parse_time(True) is None
    assert parse_time(float("nan")) is None


def test_temporal_parser():
    # official mode reads JSON only (harness vantage_temporal.py:390-431): plain text is the whole video there
    assert parse_temporal("00:08-00:12") is None
    assert parse_temporal("00:08-00:12", "strict") == (8.0, 12.0)
    assert parse_temporal('{"start": "00:08.50", "end": "00:12"}') == (8.5, 12.0)
    assert parse_temporal('{"start": 8, "end": 12}', "official") is None  # harness: whole video
    assert parse_temporal('{"start": 8, "end": 12}', "strict") == (8.0, 12.0)
    assert parse_temporal("I don't know") is None and parse_temporal("I don't know", "strict") is None
    assert parse_temporal("from 00:14 to 00:10, then 00:20-00:25", "strict") == (14.0, 10.0)  # first interval only
    assert parse_temporal("00:05 only", "strict") is None


def test_dvc_parser_json_object_and_lines():
    events, bad = parse_dvc('Here: [{"start": 5, "end": "00:10", "caption": "b"}, {"start": 0, "end": 4, '
                            '"caption": "a"}, {"start": 1, "end": 2}]')
    assert events == [(0.0, 4.0, "a"), (5.0, 10.0, "b")] and bad == 1
    assert parse_dvc('{"events": [{"start": 1, "end": 2, "caption": "x"}]}') == ([(1.0, 2.0, "x")], 0)
    assert parse_dvc('{"start": 1, "end": 2, "caption": "x"}') == ([(1.0, 2.0, "x")], 0)
    # Free-text "<time> - <time>: caption" lines are not read by the harness (vantage_dvc.py:186-207); its last
    # resort is "<hh:mm:ss><hh:mm:ss> caption".
    assert parse_dvc("00:01 - 00:04: a man walks\n0:05 to 0:09 a car parks\nnothing") is None
    assert parse_dvc("<00:00:01><00:00:04> a man walks\n<00:01:05><00:01:09> a car parks") == (
        [(1.0, 4.0, "a man walks"), (65.0, 69.0, "a car parks")], 0)
    assert parse_dvc('[{"start": "soon", "end": 3, "caption": "x"}]') is None
    assert parse_dvc("no events") is None


def test_refex_parser():
    assert parse_refex("[[100,100,200,300]]") == [(100.0, 100.0, 200.0, 300.0)]
    assert parse_refex("[[100,100,150,300],[600,600,700,700]]") == [(100, 100, 150, 300), (600, 600, 700, 700)]
    assert parse_refex('{"bbox_2d": [1, 2, 3, 4.5]}') == [(1.0, 2.0, 3.0, 4.5)]
    assert parse_refex('{"box": {"coords": [[1, 2, 3, 4]]}} trailing') == [(1, 2, 3, 4)]
    assert parse_refex("none") is None


def test_localization_parser():
    text = '```json\n[{"bbox_2d": [0, 0, 100, 100], "label": "Person"}, {"bbox_2d": [1, 2]}, {"bbox_2d": [5, 5, 9, 9]}]\n```'
    # [1, 2] is no box (entry dropped); no label reads as "person" (astro_2d_dataset.py:531).
    assert parse_localization(text) == [Detection((0, 0, 100, 100), "person"), Detection((5, 5, 9, 9), "person")]
    assert parse_localization('I see [{"bbox_2d": [1, 1, 2, 2], "label": "car"}] here') == [
        Detection((1, 1, 2, 2), "car")]
    assert parse_localization("[not json]") is None and parse_localization("nothing") is None


def test_sot_parser():
    assert parse_sot('```json\n{"frame_1": [-10, 0, 1200, 50], "frame_2": null, "frame_3": [5, 5, 5, 9]}\n```', 5) == {
        1: (0.0, 0.0, 1000.0, 50.0), 2: None, 3: None, 4: None}
    # no JSON object loads (the list is cut off): the harness's fallback reads each quoted "frame_k": [a, b, c, d]
    # (vantage_sot.py:239-263); null is not read there, and unquoted keys are not read at all
    assert parse_sot('[{"frame_1": [1, 2, 3, 4], "frame_2": null, "frame_3": [10, 10, 20, 20]', 4) == {
        1: (1.0, 2.0, 3.0, 4.0), 2: None, 3: (10.0, 10.0, 20.0, 20.0)}
    assert parse_sot("frame_1: [1, 2, 3, 4]\nframe_2: null\n frame_3: [10, 10, 20, 20]", 4) is None
    assert parse_sot("lost it", 4) is None


MALFORMED = ["", " ", "{", "[", "[[1,2,3]]", '{"start": [1], "end": {}}', "```json", "```", "\x00\ud800", "9" * 400,
             '[{"start": null, "end": null, "caption": 0}]', '{"frame_x": 1}', "[" * 50 + "]" * 50, "NaN", None, 5,
             ["A"], {"a": 1}, '{"frame_1": [1e400, 0, 1, 1]}', "Answer:", "00:00:00:00-99"]


@pytest.mark.parametrize("text", MALFORMED)
@pytest.mark.parametrize("mode", MODES)
def test_malformed_answers_never_raise(text, mode):
    # None of these holds a readable answer: every parser returns None (localization: None or no box), and
    # the scorer counts the item as unread (accuracy 0 on a one-item set whose truth is "A").
    for parse in (parse_yes_no, parse_temporal, parse_dvc, parse_refex):
        assert parse(text, mode) is None, (parse.__name__, text)
    assert parse_localization(text, mode) in (None, [])
    assert parse_sot(text, 4, mode) in (None, {1: None, 2: None, 3: None})
    letter = parse_choice(text, mode)
    assert letter is None, text
    assert accuracy(["A"], [letter]).value == 0.0


def test_malformed_letters_official_fallback():
    # Pointing's official-mode fallback takes the first A-D character of the upper-cased text (image_mcq.py:3025-3029):
    # each of these strings has an "a" before any b/c/d ("NaN", "Answer:", "stArt", "frAme", twice), so official
    # mode gives "A" and strict nothing; the other strings hold no A-D at all, and non-strings are never read.
    with_a = {"NaN", "Answer:", '{"start": [1], "end": {}}', '[{"start": null, "end": null, "caption": 0}]',
              '{"frame_x": 1}', '{"frame_1": [1e400, 0, 1, 1]}'}
    for text in MALFORMED:
        want = "A" if isinstance(text, str) and text in with_a else None
        assert parse_pointing(text, "official") == want, text
        assert parse_pointing(text, "strict") is None, text


@pytest.mark.parametrize("mode", ["lenient", "parity"])
def test_unknown_mode(mode):
    with pytest.raises(ValueError, match="unknown mode"):
        check_mode(mode)


