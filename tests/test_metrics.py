import itertools

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from sova_lib import metrics
from sova_lib.metrics import (
    average_precision,
    average_precision_rows,
    average_precision_with_missing,
    random_ranking_ap,
)
from tests.helpers_ranking import expected_ap_by_groups


def test_hand_computed_ap():
    # relevant at ranks 1 and 3 of 4: (1/1 + 2/3) / 2
    assert average_precision([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx(5 / 6, abs=1e-15)
    # relevant at ranks 2 and 4: (1/2 + 2/4) / 2
    assert average_precision([0.9, 0.8, 0.7, 0.6], [0, 1, 0, 1]) == pytest.approx(0.5, abs=1e-15)
    assert average_precision([0.1, 0.2, 0.3], [0, 0, 1]) == 1.0
    assert average_precision([0.3, 0.2, 0.1], [0, 0, 1]) == pytest.approx(1 / 3)


def test_query_excluded_through_valid_mask():
    scores = np.array([[1.0, 0.9, 0.5, 0.2]])  # position 0 is the query itself
    relevant = np.array([[True, False, True, False]])
    valid = np.array([[False, True, True, True]])
    # remaining ranking: 0.9 (no), 0.5 (yes), 0.2 (no) -> AP = 1/2
    assert average_precision_rows(scores, relevant, valid)[0] == pytest.approx(0.5)
    # without exclusion the query would count as a relevant hit at rank 1
    assert average_precision_rows(scores, relevant)[0] == pytest.approx((1 + 2 / 3) / 2)


def test_matches_scikit_learn_without_ties():
    rng = np.random.default_rng(7)
    scores = rng.random((40, 57))
    relevant = rng.random((40, 57)) < 0.2
    relevant[:, 0] = True
    ours = average_precision_rows(scores, relevant)
    theirs = [average_precision_score(r, s) for s, r in zip(scores, relevant)]
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    for rule in metrics.TIE_RULES:  # no ties: every rule agrees
        np.testing.assert_allclose(average_precision_rows(scores, relevant, ties=rule), theirs, atol=1e-12)


def _brute_force(scores, relevant):
    """AP over every ordering of tied items (scores descending)."""
    n = len(scores)
    values = []
    for perm in itertools.permutations(range(n)):
        order = sorted(range(n), key=lambda i: (-scores[i], perm.index(i)))
        rel = np.asarray(relevant)[order]
        values.append((rel * np.cumsum(rel) / np.arange(1, n + 1)).sum() / rel.sum())
    return np.array(values)


def test_tie_rules_against_all_orderings():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(150):
        n = int(rng.integers(2, 7))
        scores = rng.integers(0, 3, n).astype(float)
        relevant = rng.random(n) < 0.5
        if not relevant.any():
            continue
        every = _brute_force(scores, relevant)
        assert average_precision(scores, relevant, ties="expected") == pytest.approx(every.mean(), abs=1e-12)
        assert average_precision(scores, relevant, ties="optimistic") == pytest.approx(every.max(), abs=1e-12)
        assert average_precision(scores, relevant, ties="pessimistic") == pytest.approx(every.min(), abs=1e-12)
        checked += 1
    assert checked > 100


def test_stable_rule_keeps_gallery_order():
    # all tied: stable keeps positions, so relevant at ranks 2 and 3
    assert average_precision([0.5, 0.5, 0.5], [0, 1, 1], ties="stable") == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert average_precision([0.5, 0.5, 0.5], [1, 1, 0], ties="stable") == 1.0


def test_default_rule_is_tie_aware():
    # all tied: whatever the gallery order, the default is the mean over orderings (random ranking, R=2, N=3)
    expected = metrics.random_ranking_ap(2, 3)[()]
    assert average_precision([0.5, 0.5, 0.5], [0, 1, 1]) == pytest.approx(expected, abs=1e-15)
    assert average_precision([0.5, 0.5, 0.5], [1, 1, 0]) == pytest.approx(expected, abs=1e-15)
    # (1/3) * [(1 + 0) / 1 + (1 + 1/2) / 2 + (1 + 1) / 3] = 0.7222...
    assert expected == pytest.approx((1 + 0.75 + 2 / 3) / 3, abs=1e-15)


def test_random_ranking_closed_form():
    # one relevant of N: mean of 1/k
    assert metrics.random_ranking_ap(1, 4)[()] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert metrics.random_ranking_ap(4, 4)[()] == pytest.approx(1.0)
    # equals the tie-aware AP of a constant scorer, and the mean over all orderings
    for r, n in [(1, 5), (2, 5), (3, 6), (5, 7)]:
        rel = np.arange(n) < r
        assert metrics.random_ranking_ap(r, n)[()] == pytest.approx(average_precision(np.zeros(n), rel, ties="expected"))
    assert metrics.random_ranking_ap(2, 5)[()] == pytest.approx(_brute_force(np.zeros(5), np.arange(5) < 2).mean())
    with pytest.raises(ValueError):
        metrics.random_ranking_ap(0, 5)


def test_prevalence_counts_the_query():
    q = np.array(["a", "b"])
    g = np.array(["a", "a", "b", "c"])
    np.testing.assert_allclose(metrics.prevalence(q, g), [0.5, 0.25])


def test_pair_map_weighs_pairs_equally():
    assert metrics.pair_map({"x": np.array([1.0, 1.0, 1.0, 0.0]), "y": np.array([0.5])}) == pytest.approx(0.625)
    with pytest.raises(ValueError):
        metrics.mean_ap(np.array([0.5, np.nan]))


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = np.random.default_rng(0).random(300)
    a = metrics.bootstrap_ci(values, np.random.default_rng(42))
    b = metrics.bootstrap_ci(values, np.random.default_rng(42))
    c = metrics.bootstrap_ci(values, np.random.default_rng(43))
    assert a == b and a != c
    assert a[0] < values.mean() < a[1]
    groups = np.repeat([0, 1, 2], 100)
    low, high = metrics.bootstrap_ci(values, np.random.default_rng(1), groups=groups)
    point = np.mean([values[groups == g].mean() for g in range(3)])
    assert low < point < high
    assert metrics.bootstrap_ci(np.full(10, 0.3), np.random.default_rng(0)) == pytest.approx((0.3, 0.3))


def test_bad_inputs():
    with pytest.raises(ValueError, match="tie rule"):
        average_precision_rows(np.zeros((1, 2)), np.ones((1, 2)), ties="random")
    with pytest.raises(ValueError, match="finite"):
        average_precision_rows(np.array([[np.nan, 1.0]]), np.ones((1, 2)))
    assert np.isnan(average_precision_rows(np.zeros((1, 3)), np.zeros((1, 3)))[0])


@pytest.mark.parametrize("levels", [3, 50, None])
@pytest.mark.parametrize("rule", metrics.TIE_RULES)
def test_float32_and_float64_scores_agree(levels, rule):
    """Ties between float32 scores are ties of their float64 images: both precisions give the same AP."""
    rng = np.random.default_rng(levels or 0)
    scores = rng.normal(size=(60, 80))
    if levels:  # many exact ties, as repeated MLLM answers give
        scores = np.round(scores * levels / 4) / levels
    scores = scores.astype(np.float32)
    relevant = rng.random(scores.shape) < 0.3
    valid = rng.random(scores.shape) < 0.9
    relevant[:, 0] = valid[:, 0] = True
    single = average_precision_rows(scores, relevant, valid, ties=rule)
    double = average_precision_rows(scores.astype(np.float64), relevant, valid, ties=rule)
    np.testing.assert_allclose(single, double, atol=1e-12)
    for row in range(8):  # and against plain Python, written out, on the valid entries
        keep = np.flatnonzero(valid[row])
        s, rel = scores[row, keep].astype(np.float64), relevant[row, keep]
        if rule == "expected":
            reference = expected_ap_by_groups(s, rel)
        else:
            if rule == "stable":
                order = np.argsort(-s, kind="stable")
            else:  # relevant first (optimistic) or last (pessimistic) within a tie
                order = np.lexsort((~rel if rule == "optimistic" else rel, -s))
            r = rel[order]
            reference = (r * np.cumsum(r) / np.arange(1, r.size + 1)).sum() / r.sum()
        assert single[row] == pytest.approx(reference, abs=1e-12)


def test_expected_ap_of_large_ties_against_group_formula():
    """Rows of 5,000 items in a handful of tie groups (what a describer with few distinct answers gives)."""
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 4, size=(6, 5000)).astype(np.float32)
    scores[0] = 1.0  # one row entirely tied: a random ranking
    relevant = rng.random(scores.shape) < 0.05
    relevant[:, 0] = True
    got = metrics.average_precision_rules(scores, relevant)
    for row in range(6):
        assert got["expected"][row] == pytest.approx(expected_ap_by_groups(scores[row], relevant[row]), abs=1e-12)
        assert got["optimistic"][row] >= got["expected"][row] >= got["pessimistic"][row]
    r0 = relevant[0].sum()
    assert got["expected"][0] == pytest.approx(metrics.random_ranking_ap(r0, 5000)[()], abs=1e-12)
    assert got["optimistic"][0] == 1.0
    assert got["pessimistic"][0] == pytest.approx(np.mean(np.arange(1, r0 + 1) / np.arange(5001 - r0, 5001)))


def test_every_rule_is_computed_the_same_alone_or_together():
    rng = np.random.default_rng(12)
    scores = (rng.integers(0, 20, size=(50, 30)) / 7).astype(np.float32)
    relevant = rng.random(scores.shape) < 0.3
    relevant[:, 0] = True
    together = metrics.average_precision_rules(scores, relevant)
    for rule, values in together.items():
        np.testing.assert_array_equal(average_precision_rows(scores, relevant, ties=rule), values)
    with pytest.raises(ValueError, match="tie rule"):
        metrics.average_precision_rules(scores, relevant, rules=("stable",))


def _brute_force_missing(scores, relevant, n_missing, n_relevant_missing, ties):
    """AP averaged (expected), maximised (optimistic) or minimised (pessimistic) over every order of the missing
    block, appended below every scored item; each order is ranked with its own distinct scores."""
    values = []
    block = [True] * n_relevant_missing + [False] * (n_missing - n_relevant_missing)
    for order in itertools.permutations(range(n_missing)):
        rel = np.concatenate([relevant, np.array([block[k] for k in order], dtype=bool)])
        below = np.min(scores, initial=0.0) - 1 - np.arange(n_missing)
        values.append(average_precision(np.concatenate([scores, below]), rel, ties="expected"))
    return {"expected": np.mean(values), "optimistic": max(values), "pessimistic": min(values)}[ties]


def test_missing_gallery_items_by_hand():
    # one relevant item first of two scored; two missing, one relevant: it is 3rd (2/3) or 4th (2/4)
    assert average_precision_with_missing([1.0], [2], [1], [2], [1])[0] == pytest.approx(19 / 24, abs=1e-15)
    assert average_precision_with_missing([1.0], [2], [1], [2], [1], ties="optimistic")[0] == pytest.approx(5 / 6)
    assert average_precision_with_missing([1.0], [2], [1], [2], [1], ties="pessimistic")[0] == pytest.approx(3 / 4)
    # nothing relevant scored, everything missing: a random ranking of the missing block
    assert average_precision_with_missing([np.nan], [0], [0], [4], [2])[0] == pytest.approx(
        float(random_ranking_ap(2, 4)))
    # nothing relevant missing: the scored AP unchanged; nothing relevant at all: undefined
    assert average_precision_with_missing([0.5], [3], [1], [5], [0])[0] == 0.5
    assert np.isnan(average_precision_with_missing([np.nan], [3], [0], [5], [0])[0])
    with pytest.raises(ValueError, match="n_relevant_missing"):
        average_precision_with_missing([1.0], [2], [1], [2], [3])


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic"])
def test_missing_gallery_items_against_every_order(ties):
    rng = np.random.default_rng(7)
    for _ in range(60):
        a, n = int(rng.integers(0, 6)), int(rng.integers(1, 5))
        b, r = int(rng.integers(0, a + 1)), int(rng.integers(0, n + 1))
        if b + r == 0:
            continue
        scores = rng.permutation(a).astype(float)  # distinct scores: the scored part has no tie
        relevant = np.zeros(a, bool)
        relevant[rng.choice(a, b, replace=False)] = True
        ap = average_precision(scores, relevant) if b else np.nan
        got = average_precision_with_missing([ap], [a], [b], [n], [r], ties=ties)[0]
        assert got == pytest.approx(_brute_force_missing(scores, relevant, n, r, ties), abs=1e-12), (a, b, n, r)
