"""The Ray engine against the local engine, on one local Ray instance (2 CPUs) shared by the module."""
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from sova_lib.cli import main
from sova_lib.describe.contract import DescriberEnvironmentError, make_describer
from sova_lib.describe.item import Item
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.describe.ray_engine import RunWorker, describe_items_ray
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import OpenRun, Outcome, RunOptions
from sova_lib.describe.runner import describe_items
from sova_lib.video.frames import example_videos
from tests.chat_server import ChatServer
from tests.paths import ROOT

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow
QUIET = RunOptions(show_progress=False, verbose=False)


def lines(folder, name="descriptions.jsonl"):
    return [json.loads(line) for line in (Path(folder) / name).read_text().splitlines()]


def texts(folder):
    return {r["id"]: r["text"] for r in lines(folder)}


def test_an_actor_reads_each_item_of_its_rows_whole(tmp_path):
    items = [Item(17, tmp_path / "v.avi", window=(3, 40), crop=(1, 2, 30, 40), reverse=True, is_video=True),
             Item("a", tmp_path / "b.png")]
    seen = []

    def work(state, batch, *, load_workers):
        seen.extend(batch)
        yield Outcome("a", error="unreadable", loaded=False)  # in any order: each goes back to its row
        yield Outcome(17, state)

    worker = RunWorker(lambda: "ok", work, load_workers=1)
    out = worker({"row": np.array([4, 9]), "item": np.array([pickle.dumps(i) for i in items], dtype=object)})
    assert seen == items
    assert out == {"row": [4, 9], "outcome": [pickle.dumps(Outcome(17, "ok")),
                                              pickle.dumps(Outcome("a", None, "unreadable", False))],
                   "fatal": [b"", b""]}
    assert [pickle.loads(o) for o in out["outcome"]] == [Outcome(17, "ok", None, True), Outcome("a", None, "unreadable", False)]


def test_the_local_and_the_ray_engine_feed_the_same_outcomes_to_the_one_loop(ray_address, tmp_path, monkeypatch):
    """The engines differ only in where the describer runs: the runner's one loop (``OpenRun.write``) gets the
    same outcomes from each, an item known bad before loading, one that cannot be loaded and described ones."""
    written = {}
    write = OpenRun.write

    def spy(self, outcome):  # keyed by the run's cache_dir: "local" or "ray"
        written.setdefault(self.cache.folder.parent.parent.name, []).append(outcome)
        write(self, outcome)

    monkeypatch.setattr(OpenRun, "write", spy)
    items = [Item(p.stem, p) for p in example_videos()] + [
        Item("gone", tmp_path / "gone.mp4"), Item("planned", tmp_path / "p.mp4", error="no region for this clip")]
    local = describe_items(make_describer("motion"), items, tmp_path / "local", prompt="Describe.", fps=2.0,
                           run=QUIET)
    remote = describe_items_ray("motion", {}, items, tmp_path / "ray", prompt="Describe.", fps=2.0,
                                ray=RayOptions(workers=1, items_per_call=2), run=QUIET)
    assert sorted(written) == ["local", "ray"] and local.folder.name == remote.folder.name
    assert written["ray"][0] == Outcome("planned", None, "no region for this clip", False)  # sent to no actor
    by_engine = {engine: {o.id: o for o in outcomes} for engine, outcomes in written.items()}
    assert len(written["local"]) == len(written["ray"]) == 5 and by_engine["local"] == by_engine["ray"]
    outcomes = by_engine["local"]
    assert outcomes["gone"] == Outcome("gone", None, f"FileNotFoundError: no such file: {tmp_path / 'gone.mp4'}",
                                       False)
    described = {id: o.value for id, o in outcomes.items() if o.error is None}
    assert sorted(described) == sorted(p.stem for p in example_videos())
    assert all(o.loaded for o in outcomes.values() if o.error is None)
    assert described == texts(local.folder) == texts(remote.folder)  # what the loop got is what it wrote


def test_cli_ray_engine_writes_the_local_engines_texts_and_errors(ray_address, media, tmp_path, capsys):
    args = ["describe", "--backend", "motion", "--prompt", "general", "--fps", "2", "--videos", str(media),
            "--no-progress"]
    assert main(args + ["--cache-dir", str(tmp_path / "local")]) == 0
    assert main(args + ["--cache-dir", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2",
                        "--ray-items-per-call", "2"]) == 0
    out = capsys.readouterr().out
    (local,) = (tmp_path / "local" / "descriptions").iterdir()
    (remote,) = (tmp_path / "ray" / "descriptions").iterdir()
    assert local.name == remote.name  # the same cache key
    assert len(texts(remote)) == 6 and texts(remote) == texts(local)
    assert sorted(r["id"] for r in lines(remote)) == sorted(texts(local))  # each item once
    errors = {r["id"]: r["error"] for r in lines(remote, "errors.jsonl")}
    assert errors == {r["id"]: r["error"] for r in lines(local, "errors.jsonl")} and list(errors) == ["broken"]
    m_local, m_ray = (json.loads((f / "manifest.json").read_text()) for f in (local, remote))
    assert m_ray["config_hash"] == m_local["config_hash"] and m_ray["counts"] == {"done": 6, "failed": 1}
    assert m_ray["run"]["engine"] == {"name": "ray", "workers": 2, "gpus_per_worker": 0.0, "cpus_per_worker": 1.0,
                                      "items_per_call": 2}
    assert "described 6, skipped 0 (already cached), failed 1" in out
    # the same command again sends nothing
    assert main(args + ["--cache-dir", str(tmp_path / "ray"), "--engine", "ray"]) == 0
    assert "described 0, skipped 6 (already cached)" in capsys.readouterr().out


def test_ray_options_need_the_ray_engine(tmp_path, capsys):
    code = main(["describe", "--backend", "motion", "--prompt", "general", "--videos", str(example_videos()[0]),
                 "--cache-dir", str(tmp_path), "--engine", "local", "--workers", "2"])
    assert code == 2 and "sova: error: --workers applies to --engine ray" in capsys.readouterr().err


_DRIVER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from sova_lib.describe.ray_engine import describe_items_ray
    from sova_lib.describe.ray_options import RayOptions
    from sova_lib.describe.runner import RunOptions
    from sova_lib.describe.item import Item
    from sova_lib.video.frames import example_videos
    items = [Item(f"{p.stem}-{k}", p) for k in range(int(sys.argv[3])) for p in example_videos()]
    describe_items_ray("motion", {}, items, sys.argv[2], prompt="Describe.", fps=2.0,
                       ray=RayOptions(workers=1, items_per_call=1, address=sys.argv[1]),
                       run=RunOptions(show_progress=False, sync_every=0.0))
""")


def test_kill_9_of_the_driver_then_a_rerun_loses_and_repeats_nothing(ray_address, tmp_path):
    repeats = 12  # 36 items
    items = [Item(f"{p.stem}-{k}", p) for k in range(repeats) for p in example_videos()]
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "ray_lean"), str(ROOT)])}
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, ray_address, str(cache), str(repeats)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        found = []
        while time.monotonic() < deadline and proc.poll() is None:
            found = list(cache.glob("descriptions/*/descriptions.jsonl"))
            if found and found[0].read_text().count("\n") >= 3:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert found, "the driver wrote nothing before it was killed"
    before = found[0].read_bytes()
    assert 3 <= before.count(b"\n") < len(items), "the kill did not land mid-run"
    s = describe_items_ray("motion", {}, items, cache, prompt="Describe.", fps=2.0, ray=RayOptions(workers=2, items_per_call=3),
                           run=QUIET)
    after = (s.folder / "descriptions.jsonl").read_bytes()
    complete = before[:before.rfind(b"\n") + 1]
    assert after.startswith(complete)  # every complete line written before the kill is kept
    ids = [r["id"] for r in lines(s.folder)]
    assert sorted(ids) == sorted(i.id for i in items)  # every item once: none lost, none twice
    assert s.done == len(items) - complete.count(b"\n") and s.skipped_cached == complete.count(b"\n")
    local = describe_items(make_describer("motion"), items[:3], tmp_path / "local", prompt="Describe.", fps=2.0,
                           run=QUIET)
    assert {k: v for k, v in texts(s.folder).items() if k in texts(local.folder)} == texts(local.folder)


def test_two_openai_servers_share_the_requests_from_ray_actors(ray_address, tmp_path):
    servers = [ChatServer(models=["org/vlm"], latency=0.05), ChatServer(models=["org/vlm"], latency=0.05)]
    try:
        items = [Item(f"{p.stem}-{k}", p) for k in range(3) for p in example_videos()]
        options = {"model": "org/vlm", "base_url": [s.url for s in servers], "concurrency": 2}
        s = describe_items_ray("openai", options, items, tmp_path / "ray", prompt=resolve_prompt("general"),
                               ray=RayOptions(workers=1, items_per_call=9), run=QUIET)
        assert (s.done, s.failed) == (9, 0)
        counts = [len(server.requests) for server in servers]
        assert sum(counts) == 9 and min(counts) >= 1 and max(server.peak for server in servers) <= 2
        local = describe_items(make_describer("openai", **options), items, tmp_path / "local",
                               prompt=resolve_prompt("general"), run=QUIET)
        assert local.folder.name == s.folder.name and texts(local.folder) == texts(s.folder)
        assert sorted(set(texts(s.folder).values())) == ["images: 6", "images: 7"]
    finally:
        for server in servers:
            server.close()


def test_a_wrong_model_id_stops_the_run_with_the_local_engines_message(ray_address, tmp_path):
    server = ChatServer(models=["org/vlm"])
    try:
        items = [Item(p.stem, p) for p in example_videos()]
        options = {"model": "org/other", "base_url": server.url}
        with pytest.raises(DescriberEnvironmentError) as local:
            describe_items(make_describer("openai", **options), items, tmp_path / "local", prompt="Describe.",
                           run=QUIET)
        with pytest.raises(DescriberEnvironmentError) as remote:
            describe_items_ray("openai", options, items, tmp_path / "ray", prompt="Describe.", ray=RayOptions(workers=1),
                               run=QUIET)
        assert str(remote.value) == str(local.value) == (
            f"{server.url} does not serve the model 'org/other'; it serves 'org/vlm'. "
            "Fix: pass one of those names as --model, or start the server with this model")
        assert not [r for r in server.requests if r["path"].endswith("/chat/completions")]
        assert not (tmp_path / "ray").exists()  # stopped on the driver while naming the cache, as the local engine
    finally:
        server.close()
