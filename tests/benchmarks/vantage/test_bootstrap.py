"""Item-level bootstrap: the two-item case, seeding, and the weighted engine against a naive loop."""
import numpy as np
import pytest

from sova_lib.benchmarks.vantage.metrics import (
    Score,
    bootstrap_weighted,
    interval,
    macro_f1,
    resample_weights,
)


def _mean(values) -> Score:
    return Score(float(np.mean(values)), n_units=len(values), unit_values=np.asarray(values))


def test_two_items():
    assert interval(_mean([0.0, 1.0]), np.random.default_rng(0)) == (0.0, 1.0)
    assert bootstrap_weighted(lambda w: w[:, 1] / w.sum(axis=1), 2, np.random.default_rng(0)) == (0.0, 1.0)


def test_same_seed_same_interval():
    values = np.random.default_rng(5).random(30)
    a = interval(_mean(values), np.random.default_rng(7), 500)
    assert a == interval(_mean(values), np.random.default_rng(7), 500)
    assert a != interval(_mean(values), np.random.default_rng(8), 500)
    assert a[0] < values.mean() < a[1]


def test_weighted_engine_matches_a_naive_loop():
    values = np.random.default_rng(2).random(11)
    got = bootstrap_weighted(lambda w: (w @ values) / w.sum(axis=1), 11, np.random.default_rng(3), n_resamples=700,
                             chunk=300)
    rng = np.random.default_rng(3)
    stats = []
    for size in (300, 300, 100):
        idx = rng.integers(0, 11, size=(size, 11))
        stats += [values[row].mean() for row in idx]
    assert got == pytest.approx(tuple(np.quantile(stats, [0.025, 0.975])), abs=1e-12)


def test_resample_weights_count_draws():
    w = resample_weights(4, np.random.default_rng(0), 6)
    assert w.shape == (6, 4) and (w.sum(axis=1) == 4).all()


def test_macro_f1_interval_contains_point():
    rng = np.random.default_rng(4)
    truth = list(rng.choice(["yes", "no"], 60))
    answers = [t if rng.random() < 0.7 else ("no" if t == "yes" else "yes") for t in truth]
    score = macro_f1(truth, answers)
    low, high = interval(score, np.random.default_rng(0), 2000)
    assert low < score.value < high
    assert score.stat(np.ones((1, 60)))[0] == pytest.approx(score.value)
    assert interval(Score(0.0), np.random.default_rng(0)) is None


def test_one_bootstrap_with_the_core():
    # A mean over units goes through the core sova_lib.metrics.bootstrap_ci: the same numbers for the same seed.
    # The weighted engine draws the same units (rng.integers(0, n, (B, n)) in one chunk), so a mean written as
    # stat(weights) gives the core's interval too (equal up to the order of the float sums).
    from sova_lib.metrics import bootstrap_ci

    values = np.random.default_rng(11).random(25)
    core = bootstrap_ci(values, np.random.default_rng(1), n_resamples=800)
    assert interval(_mean(values), np.random.default_rng(1), 800) == core
    weighted = bootstrap_weighted(lambda w: (w @ values) / w.sum(axis=1), 25, np.random.default_rng(1),
                                  n_resamples=800, chunk=800)
    assert weighted == pytest.approx(core, abs=1e-12)
