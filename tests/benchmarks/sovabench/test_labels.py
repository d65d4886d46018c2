import pytest

from sova_lib.benchmarks.sovabench import labels


def test_vocabulary_sizes():
    assert len(labels.ACTIONS) == 14
    assert len(set(labels.ACTIONS)) == 14
    assert len(labels.PAIRS) == 7
    assert len(labels.INTER_PAIRS) == 6
    assert "forward/reverse" not in labels.INTER_PAIRS


def test_pairs_and_opposites():
    assert labels.pair_of("opening trunk") == labels.pair_of("closing trunk") == "trunk"
    assert labels.opposite_of("turning left") == "turning right"
    assert labels.opposite_of("turning right") == "turning left"
    for action in labels.ACTIONS:
        assert labels.opposite_of(labels.opposite_of(action)) == action
        assert labels.pair_of(labels.opposite_of(action)) == labels.pair_of(action)


def test_two_class_grouping():
    assert labels.dim_of("starting") == "vehicle"
    assert labels.dim_of("loading vehicle") == "human_vehicle"
    assert labels.dim_of(labels.DISTRACTOR) == labels.DISTRACTOR
    assert {labels.dim_of(a) for a in labels.ACTIONS} == set(labels.DIMS)


def test_unknown_label_is_named():
    with pytest.raises(ValueError, match="'flying'"):
        labels.pair_of("flying")
    with pytest.raises(ValueError, match="no opposite"):
        labels.opposite_of(labels.DISTRACTOR)
