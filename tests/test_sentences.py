import pytest

from sova_lib import sentences
from sova_lib.sentences import split


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


def test_a_text_that_is_not_str_is_a_type_error():
    with pytest.raises(TypeError, match="str"):
        split(None)


def test_split_reads_the_same_parameters_as_nltks_english_punkt_model():
    """The splitter loads the vendored files itself; NLTK's own ``PunktTokenizer("english")`` agrees."""
    from nltk.tokenize.punkt import PunktTokenizer

    split("warm up")  # puts the vendored folder on nltk.data.path
    reference = PunktTokenizer("english")
    text = ("Mr. Jones parks at 5 p.m. on Main St. and leaves. The U.S. truck, i.e. a van, turns. "
            "He said \"Stop.\" Then nothing... A car (blue) waits! Does it move? e.g. no.")
    assert sentences._tokenizer().tokenize(text) == reference.tokenize(text)
    assert len(reference.tokenize(text)) >= 5
