"""``bench/bench_ray.py`` runs in its quick mode and reports (``tests/test_bench.py``), in the unit of work of the
other tests that start a local Ray instance, so that two never compete for the cores."""
from tests.test_bench import RAY, run_quick


def test_the_ray_benchmark_runs_quick_and_reports(tmp_path):
    (script,) = RAY
    run_quick(script, tmp_path)
