"""``sova describe --backend openai`` against a real OpenAI-compatible server that this project did not write:
``transformers serve`` (transformers' own server, its ``serving`` extra) with a tiny random Qwen2.5-VL on the CPU,
on 127.0.0.1. A recording proxy between the two keeps what the server received; the loopback fake server, sent
the same run, counts the images independently. Skipped, with the reason, where the server cannot start."""
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sova_lib.cli import main
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.fingerprint import folder_fingerprint
from tests.chat_server import ChatServer, RecordingProxy
from tests.tiny_vlm import build_tiny_qwen2_5_vl

pytestmark = pytest.mark.slow

#: Seconds the server gets to load the tiny model and answer its model list.
START_WITHIN = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serving(folder: Path, root: Path):
    """The base URL of ``transformers serve`` running ``folder`` until the block ends, its log in ``root``; the
    test is skipped, with the reason, where the server cannot start."""
    pytest.importorskip("fastapi", reason="transformers serve needs its 'serving' extra (fastapi, uvicorn)")
    pytest.importorskip("uvicorn", reason="transformers serve needs its 'serving' extra (fastapi, uvicorn)")
    import httpx

    command = Path(sys.executable).with_name("transformers")
    if not command.exists():
        pytest.skip(f"no transformers command beside {sys.executable}")
    port = _free_port()
    log = (root / "serve.log").open("w")
    process = subprocess.Popen([str(command), "serve", str(folder), "--host", "127.0.0.1", "--port", str(port),
                                "--device", "cpu", "--dtype", "float32"], cwd=root, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True,
                               env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_WITHIN
        while True:
            if process.poll() is not None:
                pytest.skip(f"transformers serve exited ({process.returncode}): "
                            f"{(root / 'serve.log').read_text()[-500:]}")
            try:
                listed = httpx.get(url + "/v1/models", timeout=5, trust_env=False)
                if listed.status_code == 200 and str(folder) in listed.text:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.skip(f"transformers serve did not answer within {START_WITHIN} s")
            time.sleep(1)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the server's process group, by its id
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
        log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(model folder, base URL)`` of ``transformers serve`` running the tiny model; the process ended after."""
    root = tmp_path_factory.mktemp("serve")
    folder = build_tiny_qwen2_5_vl(root / "tiny-qwen2.5-vl")
    with _serving(folder, root) as url:
        yield folder, url


def _describe(base_url, model, cache, *extra):
    return main(["describe", "--backend", "openai", "--model", str(model), "--base-url", base_url, "--prompt",
                 "task-aware", "--protocol", "quickstart-direction", "--cache-dir", str(cache), "--no-progress",
                 "--max-new-tokens", "8", "--fps", "1", *extra])


def _texts(cache: Path) -> dict:
    (path,) = cache.rglob("descriptions.jsonl")
    return {r["id"]: r["text"] for r in map(json.loads, path.read_text().splitlines())}


def test_the_packaged_clips_described_by_transformers_serve_in_frames_mode(served, tmp_path, capsys):
    folder, url = served
    proxy = RecordingProxy(url)
    fake = ChatServer(models=[str(folder)])
    try:
        assert _describe(proxy.url, folder, tmp_path / "served") == 0
        assert _describe(fake.url, folder, tmp_path / "fake") == 0
        assert _describe(proxy.url, folder, tmp_path / "whole", "--backend-option", "stream=false") == 0
    finally:
        proxy.close()
        fake.close()
    err = capsys.readouterr().err
    assert "sova: error" not in err and "does not stream" not in err, err
    posts = [r for r in proxy.requests if r["path"] == "/v1/chat/completions"]
    streamed, whole = posts[:6], posts[6:]
    assert len(streamed) == 6 and len(whole) == 6
    # what the server received is what the fake server received, request for request
    key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
    assert sorted(map(key, (r["body"] for r in streamed))) == sorted(key(r["body"]) for r in fake.requests)
    system = resolve_prompt("task-aware").system_prompt
    counts = sorted(int(text.removeprefix("images: ")) for text in _texts(tmp_path / "fake").values())
    assert sorted(sum(p["type"] == "image_url" for p in r["body"]["messages"][-1]["content"]) for r in streamed) \
        == counts and min(counts) >= 2
    for record in streamed:
        body = record["body"]
        assert body["messages"][0] == {"role": "system", "content": system}
        assert (body["max_tokens"], body["temperature"], body["stream"]) == (8, 0, True)
        assert record["status"] == 200 and record["content_type"].startswith("text/event-stream")  # it streamed
    assert all("stream" not in r["body"] and r["content_type"].startswith("application/json") for r in whole)
    served_texts, whole_texts = _texts(tmp_path / "served"), _texts(tmp_path / "whole")
    assert set(served_texts) == set(whole_texts) and len(served_texts) == 6
    assert all(text.strip() for text in served_texts.values())
    # the random byte-level model writes bytes that are no UTF-8; decoding the whole answer turns a trailing
    # incomplete character into U+FFFD, which the server's streamer holds back: the texts agree but for those
    assert {k: v.rstrip("\ufffd") for k, v in whole_texts.items()} == \
        {k: v.rstrip("\ufffd") for k, v in served_texts.items()}


def test_video_input_video_is_refused_by_transformers_serve_in_one_line_that_says_use_frames(served, tmp_path,
                                                                                            capsys):
    """transformers serve loads a video only from YouTube, http(s) or a path (its ``video_utils.py``), not from the
    comma-separated JPEG data URL of vLLM's form: the run stops in one line that says to send frames."""
    folder, url = served
    code = _describe(url + "/v1", folder, tmp_path / "cache", "--backend-option", "video_input=video")
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("sova:")]
    assert code == 1 and "this server does not accept video_input=video; use frames" in line, err
    assert line.startswith("sova: error: ") and "HTTP 500" in line


def test_a_field_transformers_serve_does_not_know_is_its_own_message_in_one_line(served, tmp_path, capsys):
    """FastAPI's 422 ``{"detail": "Unexpected fields in the request: {...}"}`` reaches the one line as the server
    wrote it (not as raw JSON), and is not taken for a refusal of streaming."""
    folder, url = served
    code = _describe(url + "/v1", folder, tmp_path / "cache", "--backend-option",
                     'extra_body={"repetition_penalty": 1.05}')
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("sova:")]
    assert code == 1 and line.startswith("sova: error: ") and "HTTP 422" in line, err
    assert "Unexpected fields in the request: {'repetition_penalty'}" in line and '{"detail"' not in line


def test_a_served_checkpoint_rewritten_in_place_gets_a_new_folder(tmp_path, capsys):
    """The tiny model served, described, saved over with other weights, served again: the same command describes
    every clip again into a new folder, keyed by the folder's content; no note that the cache cannot follow."""
    folder = build_tiny_qwen2_5_vl(tmp_path / "tiny-qwen2.5-vl", seed=0)
    cache = tmp_path / "cache"
    with _serving(folder, tmp_path) as url:
        assert _describe(url + "/v1", folder, cache) == 0
    build_tiny_qwen2_5_vl(folder, seed=1)  # the next checkpoint, saved over the last
    with _serving(folder, tmp_path) as url:
        assert _describe(url + "/v1", folder, cache) == 0
    out = capsys.readouterr().out
    assert out.count("described 6, skipped 0 (already cached)") == 2 and "cannot follow" not in out, out
    manifests = [json.loads(p.read_text()) for p in sorted(cache.rglob("manifest.json"))]
    assert len(manifests) == 2 and {m["fingerprint"]["folder"] for m in manifests} == {str(folder)}
    assert folder_fingerprint(folder) in {m["fingerprint"]["sha256"] for m in manifests}
    assert manifests[0]["fingerprint"]["sha256"] != manifests[1]["fingerprint"]["sha256"]
