import numpy as np
import pytest

from sova_lib.similarity import (
    PLAIN,
    ItemVectors,
    dense_similarity,
    l2_normalize,
    max_cosine,
    mean_cosine,
    median_cosine,
    set_similarity,
)


def _items(rng, n, dim=6, max_count=5):
    counts = rng.integers(1, max_count + 1, n)
    owner = np.repeat(np.arange(n), counts)
    shuffle = rng.permutation(owner.size)  # vectors of an item need not be contiguous
    vectors = l2_normalize(rng.normal(size=(owner.size, dim)))
    return ItemVectors(np.arange(n) + 100, owner[shuffle], vectors[shuffle])


def _plain(q, g, aggregate):
    """The plain form of the library (one pair of items at a time), the reference of the fast path."""
    return np.array([[PLAIN[aggregate](q.vectors_of(i), g.vectors_of(j)) for j in g.ids] for i in q.ids])


@pytest.mark.parametrize("aggregate", ["max", "mean", "median"])
@pytest.mark.parametrize("block", [1, 3, 7, 10_000])
def test_fast_path_equals_the_plain_form(aggregate, block):
    rng = np.random.default_rng(5)
    q, g = _items(rng, 9), _items(rng, 13)
    expected = _plain(q, g, aggregate)
    np.testing.assert_allclose(set_similarity(q, g, aggregate=aggregate, block_vectors=block), expected, atol=1e-6)
    exact = set_similarity(q, g, aggregate=aggregate, block_vectors=block, dtype=np.float64)
    np.testing.assert_allclose(exact, _plain(_as64(q), _as64(g), aggregate), rtol=0, atol=1e-12)


def _with_ties(rng, n, pool, dim=6, max_count=4):
    """``n`` items whose vectors are drawn from ``pool`` shared vectors, so items share sentences and whole sets."""
    shared = l2_normalize(rng.normal(size=(pool, dim)))
    counts = rng.integers(1, max_count + 1, n)
    owner = rng.permutation(np.repeat(np.arange(n), counts))
    return ItemVectors(np.arange(n), owner, shared[rng.integers(0, pool, owner.size)])


@pytest.mark.parametrize("aggregate", ["max", "mean", "median"])
@pytest.mark.parametrize("block", [1, 5, 11, 10_000])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_path_equals_the_dense_reference_on_random_sets_with_ties(aggregate, block, seed):
    """Random sets drawn from a few shared vectors (ties everywhere), blocks that do not divide the data."""
    rng = np.random.default_rng(seed)
    q, g = _with_ties(rng, 17, pool=5), _with_ties(rng, 23, pool=5)
    dense = dense_similarity(_as64(q), _as64(g), aggregate)
    fast = set_similarity(q, g, aggregate=aggregate, block_vectors=block, dtype=np.float64)
    np.testing.assert_allclose(fast, dense, rtol=0, atol=1e-12)
    np.testing.assert_allclose(set_similarity(q, g, aggregate=aggregate, block_vectors=block), dense, atol=1e-6)
    np.testing.assert_allclose(dense, _plain(_as64(q), _as64(g), aggregate), rtol=0, atol=1e-12)
    same = [(a, b) for a in range(23) for b in range(a)
            if sorted(g.vectors_of(a).tolist()) == sorted(g.vectors_of(b).tolist())]
    assert same  # gallery items made of the same vectors, which tie (exactly for max and median: no sums)
    for a, b in same:
        if aggregate == "mean":
            np.testing.assert_allclose(fast[:, a], fast[:, b], rtol=0, atol=1e-12)
        else:
            np.testing.assert_array_equal(fast[:, a], fast[:, b])


def test_dense_reference_by_hand():
    e = np.eye(3)
    q = ItemVectors(np.array(["q"]), np.array([0, 0]), e[[0, 1]])
    g = ItemVectors(np.array(["a", "b"]), np.array([1, 0, 1]), np.array([[0.6, 0.8, 0], e[2], e[0]]))
    # q's vectors against a = {e2} and b = {(0.6, 0.8, 0), e0}: cosines [[0], [0]] and [[0.6, 1], [0.8, 0]]
    np.testing.assert_allclose(dense_similarity(q, g, "max"), [[0.0, 1.0]])
    np.testing.assert_allclose(dense_similarity(q, g, "mean"), [[0.0, 0.6]])
    np.testing.assert_allclose(dense_similarity(q, g, "median"), [[0.0, 0.7]])


def _as64(items):
    return ItemVectors(items.ids, items.owner, np.asarray(items.vectors, dtype=np.float64))


@pytest.mark.parametrize("aggregate", ["max", "mean", "median"])
def test_fast_path_equals_the_plain_form_with_ties(aggregate):
    """Gallery items made of the same vectors (in another order, or one of them twice) tie in both forms."""
    rng = np.random.default_rng(11)
    base = l2_normalize(rng.normal(size=(4, 8)))
    vectors = np.concatenate([base, base[::-1], base[[0, 1, 2, 3, 3]], base[:2]])
    owner = np.repeat([0, 1, 2, 3], [4, 4, 5, 2])
    gallery = ItemVectors(np.array(["a", "b", "c", "d"]), owner, vectors)
    queries = ItemVectors(np.array(["q", "r"]), np.array([0, 0, 1]), l2_normalize(rng.normal(size=(3, 8))))
    plain = _plain(queries, gallery, aggregate)
    fast = set_similarity(queries, gallery, aggregate=aggregate)
    np.testing.assert_allclose(fast, plain, atol=1e-6)
    assert (fast[:, 0] == fast[:, 1]).all() and (plain[:, 0] == plain[:, 1]).all()  # same set, another order
    if aggregate == "max":  # a repeated vector or a subset holding the best pair changes no maximum
        assert (fast[:, 2] == fast[:, 0]).all() and (plain[:, 2] == plain[:, 0]).all()


def test_plain_form_by_hand():
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    b = np.array([[0.6, 0.8], [-1.0, 0.0], [0.0, -1.0]])
    # cosines: [[0.6, -1, 0], [0.8, 0, -1]]
    assert max_cosine(a, b) == 0.8
    assert mean_cosine(a, b) == pytest.approx(-0.6 / 6)
    assert median_cosine(a, b) == 0.0  # sorted: -1, -1, 0, 0, 0.6, 0.8


def test_vectors_of():
    items = ItemVectors(np.array(["x", "y"]), np.array([1, 0, 1]), np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(items.vectors_of("y"), np.eye(3)[[0, 2]])
    with pytest.raises(KeyError, match="'z' is not one of the 2 item ids"):
        items.vectors_of("z")


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


@pytest.mark.parametrize("aggregate", ["max", "mean", "median"])
def test_identical_gallery_vectors_tie_exactly(aggregate):
    """The same sentence in many gallery items must give bit-identical scores."""
    rng = np.random.default_rng(3)
    shared = l2_normalize(rng.normal(size=(1, 384)))
    n = 3000
    owner = np.arange(n)
    gallery = ItemVectors(np.arange(n), owner, np.repeat(shared, n, axis=0))
    queries = ItemVectors(np.arange(5), np.arange(5), l2_normalize(rng.normal(size=(5, 384))))
    for block in (1, 64, 4096):
        sims = set_similarity(queries, gallery, aggregate=aggregate, block_vectors=block)
        assert (sims == sims[:, :1]).all()
    mixed = ItemVectors(np.arange(n), owner, np.where(rng.random((n, 1)) < 0.5, shared,
                                                      l2_normalize(rng.normal(size=(n, 384)))))
    sims = set_similarity(queries, mixed, aggregate=aggregate)
    same = np.all(mixed.vectors == shared, axis=1)
    assert (sims[:, same] == sims[:, same][:, :1]).all()


def test_cosines_of_identical_sentences_are_exactly_one():
    rng = np.random.default_rng(8)
    vectors = l2_normalize(rng.normal(size=(50, 384)))
    items = ItemVectors(np.arange(50), np.arange(50), vectors)
    sims = set_similarity(items, items)
    assert (np.diag(sims) == 1).all()  # float32 rounding alone would scatter them around 1
    off = sims[~np.eye(50, dtype=bool)]
    assert (off < 0.5).all()


def test_consume_receives_every_row_once():
    rng = np.random.default_rng(6)
    q, g = _items(rng, 40), _items(rng, 23)
    whole = set_similarity(q, g, block_vectors=8)
    got = np.full(whole.shape, np.nan, dtype=np.float32)
    seen = []

    def consume(positions, rows):
        seen.extend(positions.tolist())
        got[positions] = rows

    assert set_similarity(q, g, block_vectors=8, consume=consume) is None
    assert sorted(seen) == list(range(40))
    np.testing.assert_array_equal(got, whole)


def test_unique_rows_finds_copies_far_apart():
    from sova_lib.similarity import _unique_rows

    rng = np.random.default_rng(2)
    rows = l2_normalize(rng.normal(size=(3000, 64)))
    doubled = np.concatenate([rows, rows[::-1][:500]])
    unique, column = _unique_rows(doubled)
    assert unique.shape == (3000, 64)
    np.testing.assert_array_equal(unique[column], doubled)
    assert _unique_rows(rows)[1] is None
