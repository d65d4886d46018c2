"""The tie study of notebook 05: the rules bound each other and random orders centre on the expected value."""
import math

from sova_lib.benchmarks.muvr.synthetic_runs import tie_study


def test_tie_study_rules_bound_and_random_orders_centre_on_expected(tmp_path):
    study = tie_study(tmp_path / "tied", seed=3, orders=60)
    assert tuple(study.rules) == ("expected", "optimistic", "pessimistic", "gallery-order")
    expected, best, worst = (study.rules[r]["mAP"] for r in ("expected", "optimistic", "pessimistic"))
    # the groups of four tied videos make the bounds differ: a study without ties would test nothing
    assert worst < expected < best
    assert worst <= study.rules["gallery-order"]["mAP"] <= best
    mean, se = study.random_orders["mean"]["mAP"], study.random_orders["standard error"]["mAP"]
    assert se > 0 and abs(mean - expected) < 4 * se
    assert study.random_orders["min"]["mAP"] >= worst - 1e-9 and study.random_orders["max"]["mAP"] <= best + 1e-9
    rows = study.rows()
    assert list(rows)[:4] == list(study.rules) and "60 random orders: mean" in rows


def test_tie_study_same_seed_same_numbers(tmp_path):
    one = tie_study(tmp_path / "a", seed=5, orders=5)
    two = tie_study(tmp_path / "b", seed=5, orders=5)
    assert one.rules == two.rules
    assert all(math.isclose(one.random_orders[s][m], two.random_orders[s][m], rel_tol=0, abs_tol=0)
               or (math.isnan(one.random_orders[s][m]) and math.isnan(two.random_orders[s][m]))
               for s in one.random_orders for m in one.random_orders[s])
