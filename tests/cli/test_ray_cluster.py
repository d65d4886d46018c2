"""The several-machines recipe of docs/scale-out.md, with two Ray nodes on one machine.

A head node (``ray get-auth-token --generate`` writes ``~/.ray/auth_token``, then ``RAY_AUTH_MODE=token ray
start --head``) and a second node with a home folder of its own, given a copy of the head's token and
``RAY_AUTH_MODE=token`` (``ray start --address``), both on the loopback address with one CPU each. ``sova
describe --engine ray --address``, run with the head's home folder and no ``RAY_AUTH_MODE`` (Ray finds the
token in ``~/.ray/auth_token`` and turns token authentication on), with two one-CPU actors then needs both
nodes; its texts and cache folder must be the local engine's. Every process the test starts is ended by its id (never ``ray stop``, which would end every Ray
process of the machine).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.paths import ROOT

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ours(marker: str) -> list[int]:
    """Ids of the processes whose command line names ``marker`` (this test's own temporary folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _end(marker: str) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _ours(marker):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(1.0)


def _texts(cache: Path) -> dict:
    (folder,) = list((cache / "descriptions").iterdir())
    return {r["id"]: r["text"] for r in map(json.loads, (folder / "descriptions.jsonl").read_text().splitlines())}


@pytest.mark.skipif(not RAY.exists(), reason="the ray command is not installed beside this Python")
def test_two_nodes_with_the_heads_token_write_the_local_engines_texts(tmp_path):
    short = Path(tempfile.mkdtemp(prefix="sr", dir="/tmp"))  # Ray's socket paths must stay short
    port = _free_port()
    head_home, node_home = tmp_path / "head", tmp_path / "node"
    head_home.mkdir()
    node_home.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    base.update(PYTHONPATH=os.pathsep.join([str(ROOT / "tests" / "ray_lean"), str(ROOT)]),
                RAY_USAGE_STATS_ENABLED="0", RAY_DEDUP_LOGS="0")
    head_env = {**base, "HOME": str(head_home)}
    node_env = {**base, "HOME": str(node_home), "RAY_AUTH_MODE": "token"}
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0", "--object-store-memory=100000000"]

    def run(argv, env, timeout=180):
        return subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)

    try:
        made = run([str(RAY), "get-auth-token", "--generate"], head_env)
        token = head_home / ".ray" / "auth_token"
        assert made.returncode == 0 and token.is_file() and token.read_text() == made.stdout
        head = run([str(RAY), "start", "--head", f"--port={port}", "--include-dashboard=false",
                    f"--temp-dir={short}", *common], {**head_env, "RAY_AUTH_MODE": "token"})
        assert head.returncode == 0, head.stderr[-2000:]
        (node_home / ".ray").mkdir()
        shutil.copy(token, node_home / ".ray" / "auth_token")  # the recipe's scp
        node = run([str(RAY), "start", f"--address=127.0.0.1:{port}", *common], node_env)
        assert node.returncode == 0, node.stderr[-2000:]
        for _ in range(10):  # ray status, with the token, lists both nodes once the autoscaler has seen them
            status = run([str(RAY), "status", f"--address=127.0.0.1:{port}"], node_env, timeout=60)
            assert status.returncode == 0, status.stderr[-2000:]
            if status.stdout.count(" node_") == 2:
                break
            time.sleep(3)
        assert status.stdout.count(" node_") == 2, status.stdout

        describe = [sys.executable, "-m", "sova_lib", "describe", "--backend", "motion", "--fps", "2",
                    "--protocol", "quickstart-direction", "--no-progress"]
        on_ray = run([*describe, "--cache-dir", str(tmp_path / "ray"), "--engine", "ray",
                      "--address", f"127.0.0.1:{port}", "--workers", "2", "--cpus-per-worker", "1",
                      "--ray-items-per-call", "2"], head_env, timeout=300)
        assert on_ray.returncode == 0, on_ray.stderr[-3000:]
        local = run([*describe, "--cache-dir", str(tmp_path / "local")], head_env)
        assert local.returncode == 0, local.stderr[-2000:]
        ray_texts, local_texts = _texts(tmp_path / "ray"), _texts(tmp_path / "local")
        assert len(local_texts) == 6 and ray_texts == local_texts
        assert [p.name for p in (tmp_path / "ray" / "descriptions").iterdir()] == \
            [p.name for p in (tmp_path / "local" / "descriptions").iterdir()]  # the same cache key
    finally:
        _end(str(short))
        shutil.rmtree(short, ignore_errors=True)
    assert _ours(str(short)) == []
