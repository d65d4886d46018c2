"""The suite's own configuration under ``pytest -n``: a crashed or stuck worker ends the run at once, naming the test;
a suite started with SIGINT ignored still lets the commands its tests start hear Ctrl-C.

Throw-away test modules under ``tmp_path`` run in a subprocess with this project's ``pyproject.toml`` and
``tests/conftest.py`` (its module-per-worker scheduler), as ``make test`` runs the suite.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.paths import ROOT

CRASH = """
import os, signal
def test_before(): pass
def test_crash(): os.kill(os.getpid(), signal.SIGSEGV)
def test_after(): pass
"""
STUCK = """
import time
def test_stuck(): time.sleep(1000)
def test_after_stuck(): pass
"""
FINE = """
def test_fine(): pass
"""
HEARS = """
import signal, subprocess, sys
def test_a_started_command_hears_sigint():
    code = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout == "True\\n"
"""


def _run(folder, *options, preexec_fn=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")  # one width: the summary line is not cut
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "tests.conftest",
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(folder), "-p", "no:cacheprovider",
                           *options, str(folder)], capture_output=True, text=True, env=env, timeout=300,
                          preexec_fn=preexec_fn)


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a script's background job or nohup starts the suite


def test_a_worker_that_crashes_ends_the_run_naming_its_test(tmp_path):
    (tmp_path / "test_crash.py").write_text(CRASH)
    (tmp_path / "test_fine.py").write_text(FINE)
    done = _run(tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "crashed while running 'test_crash.py::test_crash'" in done.stdout
    # No replacement worker ran the crashed module again: test_after never ran, one worker went down.
    assert "1 failed, 2 passed" in done.stdout and done.stdout.count("node down") == 1
    assert "replacing crashed worker" not in done.stdout + done.stderr
    assert "Fatal Python error: Segmentation fault" in done.stderr


def test_a_stuck_test_is_stopped_and_ends_the_run_naming_it(tmp_path):
    (tmp_path / "test_stuck.py").write_text(STUCK)
    (tmp_path / "test_fine.py").write_text(FINE)
    done = _run(tmp_path, "-o", "faulthandler_timeout=2", "-o", "timeout=4")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "crashed while running 'test_stuck.py::test_stuck'" in done.stdout
    assert "Timeout (0:00:02)!" in done.stderr and 'test_stuck.py", line 3 in test_stuck' in done.stderr


def test_a_suite_started_with_sigint_ignored_starts_commands_that_hear_it(tmp_path):
    """The Ctrl-C tests send SIGINT to the commands they start; under a suite that inherited SIGINT as ignored, those
    commands would inherit it too and run on (tests/conftest.py gives the suite Python's own handler back)."""
    (tmp_path / "test_hears.py").write_text(HEARS)
    done = _run(tmp_path, preexec_fn=_ignore_sigint)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]
