"""Benchmark: how long a user waits for a warm ``sova sovabench evaluate``, and for the test suite.

1. Warm ``sova sovabench evaluate``: scores the committed quickstart description cache
   under ``quickstart-direction`` once cold (into a throw-away cache, so
   every sentence is split and encoded), then times ``--rounds`` warm runs
   (every split and vector cached) as whole processes, each beside a bare
   ``python -c "import numpy"``, the least a Python process that touches a
   vector pays. Prints both (best round) and their ratio; target: at most 4x.
   The warm run's score must equal the cold run's.
2. The test suite: the wall time of the last whole-suite ``pytest`` run
   (``make test``), as the test suite's ``conftest.py`` records it in
   pytest's cache (``sova/last_run``); nothing is printed for a suite that
   has not run whole here.

    python bench/bench_feedback.py [--rounds 5]  (--quick: one warm round, to check that it runs)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))


def timed(argv: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--rounds", type=int, default=5, help="warm runs, each beside one bare numpy import")
    parser.add_argument("--quick", action="store_true", help="one warm round: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 1
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with tempfile.TemporaryDirectory(prefix="sova-bench-") as cache:
        evaluate = [sys.executable, "-m", "sova_lib", "sovabench", "evaluate", "--protocol", "quickstart-direction",
                    "--descriptions", str(QUICKSTART), "--cache-dir", cache, "--json"]
        cold_seconds, cold = timed(evaluate, env)
        warm, bare = [], []
        for _ in range(args.rounds):
            seconds, out = timed(evaluate, env)
            if out != cold:
                raise SystemExit(f"the warm run printed {out!r}, the cold run {cold!r}")
            warm.append(seconds)
            bare.append(timed([sys.executable, "-c", "import numpy"], env)[0])
    ratio = min(warm) / min(bare)
    print(f"warm sova sovabench evaluate (quickstart-direction, every split and vector cached): {min(warm):.2f} s; "
          f"python -c 'import numpy': {min(bare):.2f} s: {ratio:.1f}x (target <= 4x; best of {args.rounds}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); the cold run took {cold_seconds:.1f} s")
    last = ROOT / ".pytest_cache" / "v" / "sova" / "last_run"
    if last.exists():
        run = json.loads(last.read_text())
        print(f"test suite (last whole run, {run['finished']}): {run['wall_seconds']:.0f} s wall on "
              f"{run['workers'] or 1} worker(s) of {run['cpus']} cores, {run['test_seconds']:.0f} s of tests in all, "
              f"{run['tests']} tests, exit status {run['exitstatus']}")
    else:
        print("test suite: no whole run recorded here yet (run make test)")


if __name__ == "__main__":
    main()
