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
