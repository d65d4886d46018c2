import numpy as np
import pytest

from sova_lib.similarity import ItemVectors, l2_normalize, set_similarity


def _items(rng, n, dim=6, max_count=5):
    counts = rng.integers(1, max_count + 1, n)
    owner = np.repeat(np.arange(n), counts)
    shuffle = rng.permutation(owner.size)  # vectors of an item need not be contiguous
    vectors = l2_normalize(rng.normal(size=(owner.size, dim)))
    return ItemVectors(np.arange(n) + 100, owner[shuffle], vectors[shuffle])


def _naive(q, g, reduce):
    return np.array([[reduce(q.vectors[q.owner == i] @ g.vectors[g.owner == j].T)
                      for j in range(len(g.ids))] for i in range(len(q.ids))])


@pytest.mark.parametrize("aggregate,reduce", [("max", np.max), ("mean", np.mean), ("median", np.median)])
@pytest.mark.parametrize("block", [1, 3, 7, 10_000])
def test_matches_naive_loop(aggregate, reduce, block):
    rng = np.random.default_rng(5)
    q, g = _items(rng, 9), _items(rng, 13)
    expected = _naive(q, g, reduce)
    np.testing.assert_allclose(set_similarity(q, g, aggregate=aggregate, block_vectors=block), expected, atol=1e-6)


def test_hand_computed_max():
    e = np.eye(3, dtype=np.float32)
    q = ItemVectors(np.array([0]), np.array([0, 0]), e[[0, 1]])
    g = ItemVectors(np.array([5, 6]), np.array([0, 1]), e[[1, 2]])
    np.testing.assert_array_equal(set_similarity(q, g), [[1.0, 0.0]])
    np.testing.assert_array_equal(set_similarity(q, g, aggregate="mean"), [[0.5, 0.0]])


def test_select_keeps_each_items_vectors():
    rng = np.random.default_rng(1)
    items = _items(rng, 6)
    sub = items.select(np.array([4, 1]))
    assert sub.ids.tolist() == [104, 101]
    np.testing.assert_allclose(set_similarity(sub, items)[0], set_similarity(items, items)[4], atol=1e-6)


def test_validation():
    with pytest.raises(ValueError, match="own no vector"):
        ItemVectors(np.array([1, 2]), np.array([0, 0]), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="zero length"):
        l2_normalize(np.zeros((1, 3)))
    a = ItemVectors(np.array([1]), np.array([0]), np.ones((1, 3), np.float32))
    b = ItemVectors(np.array([1]), np.array([0]), np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        set_similarity(a, b)
    with pytest.raises(ValueError, match="aggregate"):
        set_similarity(a, a, aggregate="min")
