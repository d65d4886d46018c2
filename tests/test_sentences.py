import pytest

from sova_lib.sentences import split, split_many


def test_lines_then_punkt():
    text = "Dr. Smith opens the trunk. Then he closes it.\n\nThe car leaves! Is it parked?"
    assert split(text) == ["Dr. Smith opens the trunk.", "Then he closes it.", "The car leaves!", "Is it parked?"]


def test_line_breaks_split_even_without_punctuation():
    assert split("- a car turns left\n- a person walks") == ["- a car turns left", "- a person walks"]


def test_abbreviations_and_numbers_do_not_split():
    assert split("The U.S. car moves at 3.5 m/s. It stops.") == ["The U.S. car moves at 3.5 m/s.", "It stops."]


def test_empty_answers_give_one_empty_sentence():
    assert split("") == [""]
    assert split("  \n\n \t") == [""]


def test_whole_text_mode():
    assert split("  A car. It turns.\nLeft. ", sentences=False) == ["A car. It turns.\nLeft."]


def test_split_many_and_type_error():
    assert split_many(["A. B.", ""]) == [["A.", "B."], [""]]
    with pytest.raises(TypeError, match="str"):
        split(None)
