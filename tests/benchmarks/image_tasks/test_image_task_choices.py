"""Choice sentences of the image tasks: VSR negation, CountBench numbers, Visual7W-Count template."""
import pytest

from sova_lib.benchmarks.image_tasks.choices import negate_caption, number_choices, visual7w_count_sentence, vsr_choices
from sova_lib.benchmarks.image_tasks.datasets import load_vsr


def test_vsr_negation_of_is_and_are_relations():
    assert negate_caption("The car is behind the suitcase.", "behind") == "The car is not behind the suitcase."
    assert negate_caption("The cats are on top of the bed.", "on top of") == "The cats are not on top of the bed."
    # the relation word also inside a noun ("on" in "person") is not touched
    assert negate_caption("The person is on the bench.", "on") == "The person is not on the bench."


def test_vsr_negation_of_verbs():
    assert negate_caption("The car contains the cat.", "contains") == "The car does not contain the cat."
    assert negate_caption("The cake consists of the dog.", "consists of") == "The cake does not consist of the dog."
    assert negate_caption("The car has as a part the bed.", "has as a part") == \
        "The car does not have as a part the bed."


def test_vsr_negation_refuses_an_unknown_form():
    with pytest.raises(ValueError, match="no 'is/are left of'"):
        negate_caption("A cat left of a dog.", "left of")


def test_vsr_choices_answer_follows_label():
    assert vsr_choices("The cat is under the bed.", "under", 1) == (
        ("The cat is under the bed.", "The cat is not under the bed."), 0)
    assert vsr_choices("The cat is under the bed.", "under", 0)[1] == 1
    with pytest.raises(ValueError):
        vsr_choices("The cat is under the bed.", "under", 2)


@pytest.mark.parametrize("split", ["zeroshot", "random"])
def test_every_vendored_vsr_caption_has_one_not_more(split):
    items = load_vsr(split=split)
    for item in items:
        caption, negated = item.choices
        assert negated != caption
        assert negated.count(" not ") == 1 and caption.count(" not ") == 0


def test_number_choices_two_to_ten():
    choices, answer = number_choices("Three dogs and three cats on a sofa.", 3)
    assert len(choices) == 9 and answer == 1
    assert choices[0] == "Two dogs and two cats on a sofa."
    assert choices[8] == "Ten dogs and ten cats on a sofa."
    assert choices[answer] == "Three dogs and three cats on a sofa."


def test_number_choices_one_to_ten_and_errors():
    choices, answer = number_choices("a photo of ten apples", 10, range(1, 11))
    assert (len(choices), answer, choices[0]) == (10, 9, "a photo of one apples")
    with pytest.raises(ValueError, match="does not hold the number word 'four'"):
        number_choices("a photo of 4 apples", 4)
    with pytest.raises(ValueError, match="not among the candidates"):
        number_choices("one apple", 1)
    # "often" holds "ten" but not as a word
    with pytest.raises(ValueError):
        number_choices("often seen", 10)


def test_visual7w_template():
    assert visual7w_count_sentence("How many dogs are on the bed?", "Two.") == "Two dogs are on the bed."
    assert visual7w_count_sentence("how many people are there?", "3") == "3 people are there."
    with pytest.raises(ValueError, match="not a 'how many"):
        visual7w_count_sentence("What color is the car?", "Red.")
    with pytest.raises(ValueError, match="empty option"):
        visual7w_count_sentence("How many cars?", " . ")
