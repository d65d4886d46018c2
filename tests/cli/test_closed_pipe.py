"""Commands whose reader has gone before their first write (`sova ... | head -1` once head has left): exit status 0,
nothing on stderr, whatever the command prints its output with."""
import json
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT


def into_a_closed_pipe(argv, cwd):
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the command starts: its first write meets a broken pipe
    try:
        return subprocess.run([sys.executable, "-m", "sova_lib", *argv], cwd=cwd, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", [
    ["--version"],
    ["describe", "--backend", "motion", "--fps", "1", "--protocol", "quickstart-direction", "--no-progress"],
    ["import", "--authors-json", "AUTHORS", "--backend", "transformers", "--model", "m", "--prompt", "general",
     "--fps", "1"],
    ["sovabench", "evaluate", "--protocol", "quickstart-direction", "--baseline", "random-ranking", "--json"],
])
def test_a_command_whose_reader_has_gone_exits_quietly(tmp_path, argv):
    authors = tmp_path / "authors.json"
    authors.write_text(json.dumps({"0": "A car turns left.", "1": "A car stops."}))
    argv = [str(authors) if a == "AUTHORS" else a for a in argv]
    if argv[0] in ("describe", "import"):
        argv += ["--cache-dir", str(tmp_path / "cache")]
    done = into_a_closed_pipe(argv, tmp_path)
    assert done.returncode in (0, 141) and done.stderr == "", done.stderr


@pytest.mark.parametrize("argv", [["--help"], ["sovabench", "evaluate", "--help"], ["vantage", "--help"],
                                  ["--version"]])
def test_a_reader_that_goes_before_reading_ends_buffered_output_quietly(tmp_path, argv):
    """``sova --help | (exec head -1 </dev/null)``: head never reads, so the pipe is gone when the buffered output is
    flushed; with PYTHONUNBUFFERED unset (the usual case) the command still exits 0 with nothing on stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    command = " ".join([sys.executable, "-m", "sova_lib", *argv])
    for _ in range(3):
        done = subprocess.run(["bash", "-c", f"{command} 2>err.txt | (exec head -1 </dev/null); "
                                             "echo \"${PIPESTATUS[0]}\""],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        err = (tmp_path / "err.txt").read_text()
        assert done.stdout == "0\n" and err == "", (done.stdout, err)
