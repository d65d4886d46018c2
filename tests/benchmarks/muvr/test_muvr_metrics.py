"""MUVR metrics: the spec's hand cases (Sec. 6), a brute-force cross-check with ties, the random baseline, QA."""
import itertools
import math

import numpy as np
import pytest

from sova_lib.benchmarks.muvr import metrics as m


def test_case1_unscored_positive_is_a_miss():
    scores = np.array([[.9, .8, .7, .6, 0.0]])
    relevant = np.array([[1, 0, 1, 0, 1]], bool)  # a, b, c, d, e
    valid = np.array([[1, 1, 1, 1, 0]], bool)  # e has no score
    assert m.average_precision_misses(scores, relevant, valid, [3])[0] == pytest.approx(5 / 9)
    np.testing.assert_allclose(m.recall_at_k(scores, relevant, valid, [3], ks=(1, 2, 3)), [[1 / 3, 1 / 3, 2 / 3]])
    scored_e = np.array([[.9, .8, .7, .6, .5]])  # e at .5: (1 + 2/3 + 3/5) / 3
    assert m.average_precision_misses(scored_e, relevant, None, [3])[0] == pytest.approx(0.75555555)


def test_case2_map_and_uap():
    scores = np.array([[.9, .7, .8, .1], [.6, .5, .4, .3]])  # columns a, b, c, d
    relevant = np.array([[1, 1, 0, 0], [0, 0, 0, 1]], bool)
    ap = m.average_precision_misses(scores, relevant)
    np.testing.assert_allclose(ap, [5 / 6, 1 / 4])
    assert ap.mean() == pytest.approx(13 / 24)
    assert m.unified_ap(scores, relevant) == pytest.approx(44 / 63)
    for rule in m.TIES:  # no tie: every rule gives the same ranking
        assert m.unified_ap(scores, relevant, ties=rule) == pytest.approx(44 / 63)


def test_case6_random_ranking_closed_form():
    ap, recall = m.random_baseline([2], [4], ks=(1, 4, 10))
    assert ap[0] == pytest.approx(49 / 72)
    np.testing.assert_allclose(recall, [[1 / 4, 1, 1]])
    ap0, recall0 = m.random_baseline([0], [4], ks=(1,))
    assert ap0[0] == 0 and recall0[0, 0] == 0


def test_case7_every_tie_rule():
    # a .9 rel, b .5, c .5 rel. Orders: (a, b, c) gives (1 + 2/3) / 2 = 5/6, (a, c, b) gives 1;
    # expected = (5/6 + 1) / 2 = 11/12. Gallery order keeps b before c: 5/6.
    scores, relevant = np.array([[.9, .5, .5]]), np.array([[1, 0, 1]], bool)
    hand = {"expected": 11 / 12, "optimistic": 1.0, "pessimistic": 5 / 6, "gallery-order": 5 / 6}
    # R@2: the top two hold a and one of the tie {b, c}: expected 1/2 + 1/2 * 1/2 = 3/4
    hand_r2 = {"expected": 0.75, "optimistic": 1.0, "pessimistic": 0.5, "gallery-order": 0.5}
    for rule in m.TIES:
        assert m.average_precision_misses(scores, relevant, ties=rule)[0] == pytest.approx(hand[rule])
        assert m.unified_ap(scores, relevant, ties=rule) == pytest.approx(hand[rule])
        np.testing.assert_allclose(m.recall_at_k(scores, relevant, ks=(2,), ties=rule), [[hand_r2[rule]]])
    # reversed gallery (c before b): gallery order now ranks c second
    assert m.average_precision_misses(scores[:, [0, 2, 1]], relevant[:, [0, 2, 1]], ties="gallery-order")[0] == 1.0


def _orders(row, valid):
    """Every order of the valid entries consistent with descending scores (ties permuted)."""
    idx = [j for j in range(row.size) if valid[j]]
    groups = [list(g) for _, g in itertools.groupby(sorted(idx, key=lambda j: -row[j]), key=lambda j: row[j])]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [j for p in perms for j in p]


def _naive(order, relevant, n_pos, k):
    hits, ap = 0, 0.0
    for rank, j in enumerate(order, 1):
        if relevant[j]:
            hits += 1
            ap += hits / rank
    found = sum(relevant[j] for j in order[:k])
    return (ap / n_pos if n_pos else 0.0), (found / n_pos if n_pos else 0.0)


def test_against_brute_force_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(25):
        q, n = 3, 7
        scores = rng.integers(0, 4, (q, n)) / 4.0  # many ties
        relevant = rng.random((q, n)) < 0.4
        valid = rng.random((q, n)) < 0.85
        n_pos = (relevant & valid).sum(1) + rng.integers(0, 2, q)  # some unscored positives
        ap = m.average_precision_misses(scores, relevant, valid, n_pos)
        rk = m.recall_at_k(scores, relevant, valid, n_pos, ks=(1, 3))
        by_rule = {rule: (m.average_precision_misses(scores, relevant, valid, n_pos, ties=rule),
                          m.recall_at_k(scores, relevant, valid, n_pos, ks=(1, 3), ties=rule))
                   for rule in ("optimistic", "pessimistic", "gallery-order")}
        for i in range(q):
            outcomes = [[_naive(o, relevant[i], n_pos[i], k) for k in (1, 3)] for o in _orders(scores[i], valid[i])]
            assert ap[i] == pytest.approx(np.mean([o[0][0] for o in outcomes]))
            np.testing.assert_allclose(rk[i], np.mean([[o[0][1], o[1][1]] for o in outcomes], axis=0))
            aps = [o[0][0] for o in outcomes]
            recalls = np.array([[o[0][1], o[1][1]] for o in outcomes])
            assert by_rule["optimistic"][0][i] == pytest.approx(max(aps))
            assert by_rule["pessimistic"][0][i] == pytest.approx(min(aps))
            np.testing.assert_allclose(by_rule["optimistic"][1][i], recalls.max(axis=0))
            np.testing.assert_allclose(by_rule["pessimistic"][1][i], recalls.min(axis=0))
            in_gallery_order = sorted((j for j in range(n) if valid[i, j]), key=lambda j: -scores[i, j])  # stable
            assert by_rule["gallery-order"][0][i] == pytest.approx(_naive(in_gallery_order, relevant[i], n_pos[i], 1)[0])
            np.testing.assert_allclose(by_rule["gallery-order"][1][i],
                                       [_naive(in_gallery_order, relevant[i], n_pos[i], k)[1] for k in (1, 3)])


def test_uap_against_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(15):
        scores = rng.integers(0, 3, (2, 4)) / 2.0
        relevant = rng.random((2, 4)) < 0.5
        valid = rng.random((2, 4)) < 0.9
        n_pos = (relevant & valid).sum(1) + rng.integers(0, 2, 2)
        flat, rel = scores[valid], relevant[valid]
        total = n_pos.sum()
        outcomes = [_naive(o, rel, total, 1)[0] for o in _orders(flat, np.ones(flat.size, bool))]
        assert m.unified_ap(scores, relevant, valid, n_pos) == pytest.approx(np.mean(outcomes) if total else 0.0)
        in_order = sorted(range(flat.size), key=lambda j: -flat[j])  # row by row, then gallery position
        assert m.unified_ap(scores, relevant, valid, n_pos, ties="gallery-order") == pytest.approx(
            _naive(in_order, rel, total, 1)[0] if total else 0.0)
        for rule, pick in (("optimistic", max), ("pessimistic", min)):
            assert m.unified_ap(scores, relevant, valid, n_pos, ties=rule) == pytest.approx(
                pick(outcomes) if total else 0.0)


def test_expected_value_is_the_mean_over_random_tie_orders():
    """The official scripts break ties by a hash-dependent gallery order and an unstable sort: a random order.

    Simulated here independently: shuffle the gallery, sort by descending
    score (stable, so the shuffle decides ties), AP by the plain loop
    ``_naive``; the mean over 2,000 draws lies within 3 standard errors of
    the expected value, and the draws do spread (the ties matter).
    """
    rng = np.random.default_rng(11)
    scores = rng.integers(0, 3, (1, 40)) / 2.0  # three score levels: big tie groups
    relevant = rng.random((1, 40)) < 0.3
    n_pos = int(relevant.sum())
    draws = []
    for _ in range(2000):
        shuffled = rng.permutation(40)
        order = sorted(shuffled, key=lambda j: -scores[0, j])
        draws.append(_naive(order, relevant[0], n_pos, 1)[0])
    draws = np.array(draws)
    expected = m.average_precision_misses(scores, relevant)[0]
    assert abs(draws.mean() - expected) < 3 * draws.std(ddof=1) / math.sqrt(draws.size)
    assert draws.max() - draws.min() > 0.05
    assert m.average_precision_misses(scores, relevant, ties="pessimistic")[0] <= draws.min() <= draws.max() <= \
        m.average_precision_misses(scores, relevant, ties="optimistic")[0]


def test_uap_closed_form_on_large_tie_groups():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 5, (40, 300)) / 4.0
    relevant = rng.random((40, 300)) < 0.1
    from sova_lib.metrics import average_precision_rows

    expected = average_precision_rows(scores.reshape(1, -1), relevant.reshape(1, -1), ties="expected")[0]
    assert m.unified_ap(scores, relevant) == pytest.approx(expected, rel=1e-9)


def test_random_ranking_matches_a_seeded_simulation():
    rng = np.random.default_rng(7)
    n, r, runs = 30, 4, 20000
    relevant = np.zeros((runs, n), bool)
    relevant[:, :r] = True
    simulated = m.average_precision_misses(rng.random((runs, n)), relevant)
    exact = m.random_baseline([r], [n])[0][0]
    assert abs(simulated.mean() - exact) < 3 * simulated.std() / math.sqrt(runs)
    h = sum(1 / k for k in range(1, n + 1))
    assert exact == pytest.approx((h + (r - 1) * (n - h) / (n - 1)) / n)


def test_case5_qa_reranking_score_and_accuracy():
    pairs = [("Yes", "No"), ("Yes", "Yes"), ("No", "No"), ("No", "Yes"), ("Yes", "No")]
    pos = [m.parse_official(p) for p, _ in pairs]
    neg = [m.parse_official(n) for _, n in pairs]
    assert m.reranking_score(pos, neg) == pytest.approx(-0.2)
    preds = [x for pair in zip(pos, neg) for x in pair]
    assert m.qa_accuracy(preds, [1, 0] * 5) == pytest.approx(60.0)
    assert m.parse_official("yes") == 0


@pytest.mark.parametrize("answer, official, strict", [
    ("Yes", 1, 1), ("yes.", 0, 1), ("No", 0, 0), ("**No**, not relevant", 0, 0), ("No. Yes it is", 1, 0),
    ("The answer is Yes", 1, None), ("", 0, None), ("Maybe", 0, None), ("NO", 0, 0),
])
def test_qa_parses(answer, official, strict):
    assert m.parse_official(answer) == official
    assert m.parse_strict(answer) == strict


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="tie rule"):
        m.average_precision_misses(np.zeros((1, 2)), np.ones((1, 2), bool), ties="official")
    with pytest.raises(ValueError, match="n_positive"):
        m.average_precision_misses(np.zeros((1, 2)), np.ones((1, 2), bool), None, [1])
    with pytest.raises(ValueError, match="0 or 1"):
        m.reranking_score([2], [0])


def test_hand_case_table_matches_the_hand_values():
    from fractions import Fraction

    from sova_lib.benchmarks.muvr import hand_cases

    rows = hand_cases.hand_cases()
    assert len(rows) == 29
    for r in rows:
        assert r["computed"] == pytest.approx(float(Fraction(str(r["by hand"]))), abs=1e-4), r
