"""``sova describe`` stops at once, with exit status 1 and one line naming the cause, on environment errors."""
import json
import shutil
import socket
import time
from pathlib import Path

import pytest

from sova_lib.cli import main
from sova_lib.video.frames import example_videos


@pytest.fixture
def videos(tmp_path):
    folder = tmp_path / "videos"
    folder.mkdir()
    for path in example_videos():
        shutil.copy(path, folder / path.name)
    return folder


def error_lines(cache):
    found = list((cache / "descriptions").glob("*/errors.jsonl"))
    return [json.loads(x) for f in found for x in f.read_text().splitlines()]


def test_a_wrong_model_id_stops_the_run_with_the_fix(videos, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp_path / "cache"
    start = time.monotonic()
    rc = main(["describe", "--backend", "transformers", "--model", "sova-tests/no-such-model", "--prompt", "general",
               "--cache-dir", str(cache), "--videos", str(videos), "--no-progress",
               "--backend-option", f"cache_dir={tmp_path / 'hf'}"])
    seconds = time.monotonic() - start
    err = capsys.readouterr().err
    assert rc == 1
    (line,) = [x for x in err.splitlines() if x.startswith("sova: error:")]
    assert line.startswith("sova: error: could not load the model of 'sova-tests/no-such-model' (hub-offline)")
    assert "Fix: HF_HUB_OFFLINE=1 is set" in line and "check the id's spelling" in line
    assert error_lines(cache) == []
    print(f"wrong model id: stopped after {seconds:.2f} s")


def test_a_server_that_is_down_stops_the_run_with_the_fix(videos, tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = tmp_path / "cache"
    start = time.monotonic()
    rc = main(["describe", "--backend", "openai", "--model", "Qwen/Qwen2.5-VL-7B-Instruct", "--prompt", "general",
               "--base-url", f"http://127.0.0.1:{port}/v1", "--cache-dir", str(cache), "--videos", str(videos),
               "--no-progress"])
    seconds = time.monotonic() - start
    err = capsys.readouterr().err
    assert rc == 1
    (line,) = [x for x in err.splitlines() if x.startswith("sova: error:")]
    assert line.startswith(f"sova: error: cannot reach http://127.0.0.1:{port}/v1/chat/completions for model "
                           f"'Qwen/Qwen2.5-VL-7B-Instruct': nothing accepts connections at 127.0.0.1:{port}. Fix: ")
    assert error_lines(cache) == []
    assert not cache.exists()  # stopped while asking the server what it runs: no cache folder, nothing failed
    print(f"server down: stopped after {seconds:.2f} s")


def test_device_map_is_passed_to_the_transformers_backend_only(tmp_path, videos, capsys):
    rc = main(["describe", "--backend", "openai", "--model", "m", "--prompt", "general", "--device-map", "auto",
               "--cache-dir", str(tmp_path / "c"), "--videos", str(videos)])
    assert rc == 2 and "--device-map does not apply to the openai backend" in capsys.readouterr().err
    assert Path(tmp_path / "c").exists() is False
