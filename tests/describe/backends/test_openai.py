"""The OpenAI-compatible backend against a real local HTTP server (127.0.0.1) speaking chat completions."""
import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from sova_lib.describe.backends.openai import OpenAIDescriber, OpenAIError
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest
from sova_lib.describe.item import Item
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items
from sova_lib.video.frames import example_videos

KEY = "sk-test-9f8e7d6c5b4a-SECRET"
QUIET = RunOptions(show_progress=False, verbose=False)


def frames():
    return [Image.new("RGB", (32, 24), (255, 0, 0)), Image.new("RGB", (32, 24), (0, 0, 255))]


def test_wire_format_and_bearer_key(server_factory, monkeypatch):
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory()
    d = OpenAIDescriber(model="test/vlm-7b", base_url=server.url, api_key_env="SOVA_TEST_KEY", max_new_tokens=77)
    prompt = resolve_prompt("task-aware")
    out = d.describe([DescribeRequest(5, frames(), prompt.video, prompt.system_prompt)])
    assert out == ["images: 2"]
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    body = req["body"]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("test/vlm-7b", 0, 77)
    system, user = body["messages"]
    assert system == {"role": "system", "content": prompt.system_prompt}
    assert user["role"] == "user" and user["content"][-1] == {"type": "text", "text": prompt.video}
    colours = []
    for part in user["content"][:-1]:
        url = part["image_url"]["url"]
        assert part["type"] == "image_url" and url.startswith("data:image/jpeg;base64,")
        img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert (img.format, img.size) == ("JPEG", (32, 24))
        colours.append(np.asarray(img.convert("RGB"))[12, 16])
    assert np.abs(colours[0].astype(int) - [255, 0, 0]).max() < 8
    assert np.abs(colours[1].astype(int) - [0, 0, 255]).max() < 8


def test_no_system_message_without_a_system_prompt_and_no_key_without_the_variable(server_factory, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = server_factory()
    OpenAIDescriber(model="m", base_url=server.url).describe([DescribeRequest(1, frames()[:1], "Describe the image.",
                                                               is_video=False)])
    (req,) = server.requests
    assert [m["role"] for m in req["body"]["messages"]] == ["user"]
    assert "Authorization" not in req["headers"]


def test_a_400_fails_at_once_with_the_servers_message(server_factory):
    server = server_factory([("status", 400, "image too large for context", {})])
    d = OpenAIDescriber(model="m", base_url=server.url, sleep=lambda s: pytest.fail("a 400 must not be retried"))
    with pytest.raises(OpenAIError, match=r"HTTP 400 from http://127\.0\.0\.1:\d+/v1/chat/completions: "
                                          r"image too large for context"):
        d.describe([DescribeRequest(1, frames(), "Describe this video.")])
    assert len(server.requests) == 1


def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # a port that nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_stops_at_once_naming_the_url():
    port = _closed_port()
    d = OpenAIDescriber(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=3,
                        sleep=lambda s: pytest.fail("a refused connection is not retried"))
    with pytest.raises(DescriberEnvironmentError) as error:
        d.describe([DescribeRequest(1, frames(), "x y")])
    message = str(error.value)
    assert message.startswith(f"cannot reach http://127.0.0.1:{port}/v1/chat/completions for model 'm': "
                              f"nothing accepts connections at 127.0.0.1:{port}. Fix: start the server")
    assert f"vllm serve m --port {port}" in message


def test_a_host_that_does_not_resolve_stops_at_once():
    d = OpenAIDescriber(model="m", base_url="http://no-such-host.invalid/v1", sleep=lambda s: pytest.fail("not retried"))
    with pytest.raises(DescriberEnvironmentError, match=r"host name 'no-such-host\.invalid' does not resolve"):
        d.describe([DescribeRequest(1, frames(), "x y")])


@pytest.mark.parametrize("status, fix", [(401, "put a valid API key in the environment variable OPENAI_API_KEY"),
                                         (403, "refused the credentials"),
                                         (404, "does not serve a model named 'm'")])
def test_401_403_404_are_about_the_server_not_the_item(server_factory, status, fix):
    server = server_factory([("status", status, "The model `m` does not exist.", {})])
    d = OpenAIDescriber(model="m", base_url=server.url, sleep=lambda s: pytest.fail("not retried"))
    with pytest.raises(DescriberEnvironmentError) as error:
        d.describe([DescribeRequest(1, frames(), "x y")])
    assert str(error.value).startswith(f"HTTP {status} from {server.url}/chat/completions for model 'm': "
                                       "The model `m` does not exist. Fix: ")
    assert fix in str(error.value) and len(server.requests) == 1


def test_config_and_run_info_hold_no_secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    d = OpenAIDescriber(model="m", base_url="http://127.0.0.1:9/v1/", concurrency=3)
    assert KEY not in json.dumps([d.config(), d.run_info(), vars(d)], default=str)
    assert d.run_info()["base_url"] == "http://127.0.0.1:9/v1"
    for url in ("http://user:pw123@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?token=abc"):
        with pytest.raises(ValueError, match="put the API key in the environment variable OPENAI_API_KEY"):
            OpenAIDescriber(model="m", base_url=url)
    assert (d.max_batch_size, d.max_concurrency) == (1, 3)
    assert d.config() == {"model": "m", "max_new_tokens": 1024, "temperature": 0.0, "image_format": "jpeg",
                          "jpeg_quality": 90}


def test_through_the_runner_on_real_videos_key_never_written(server_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory(reject_images=6)  # the 50-frame excerpt is sampled to 6 frames and refused
    d = OpenAIDescriber(model="test/vlm", base_url=server.url, api_key_env="SOVA_TEST_KEY", concurrency=4,
                        rng=np.random.default_rng(0), sleep=lambda s: None)
    items = [Item(p.stem, p) for p in example_videos()] + [Item("gone", tmp_path / "gone.mp4")]
    s = describe_items(d, items, tmp_path / "cache", prompt=resolve_prompt("general"), run=QUIET)
    assert (s.done, s.failed) == (2, 2)
    texts = [json.loads(line)["text"] for line in (s.folder / "descriptions.jsonl").read_text().splitlines()]
    assert texts == ["images: 7", "images: 7"]
    assert "HTTP 400" in s.failures["vtest_square_0000-0049_half"] and "too many images: 6" in \
        s.failures["vtest_square_0000-0049_half"]
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in server.requests)
    manifest = json.loads((s.folder / "manifest.json").read_text())
    assert manifest["run"]["api_key_env"] == "SOVA_TEST_KEY" and manifest["model"] == "test/vlm"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"descriptions.jsonl", "errors.jsonl", "manifest.json"}
    assert not [p for p in written if KEY.encode() in p.read_bytes()]


def test_several_endpoints_share_the_requests_with_bounded_concurrency_each(server_factory, tmp_path):
    servers = [server_factory(latency=0.1), server_factory(latency=0.1)]
    d = OpenAIDescriber(model="m", base_url=[s.url for s in servers], concurrency=2)
    assert (d.max_concurrency, d.run_info()["base_url"]) == (4, [s.url for s in servers])
    items = [Item(i, tmp_path / f"{i}.mp4") for i in range(12)]
    s = describe_items(d, items, tmp_path / "cache", prompt="Describe.",
                       engine=LocalEngine(lambda item, fps: (frames(), (0, 1), True)), run=QUIET)
    assert (s.done, s.failed) == (12, 0)
    counts = [len(server.requests) for server in servers]
    assert sum(counts) == 12 and min(counts) >= 4  # least-in-flight: neither replica idles
    assert max(server.peak for server in servers) == 2  # never more than concurrency=2 at one endpoint
    one = OpenAIDescriber(model="m", base_url=servers[0].url, concurrency=2)
    assert one.config() == d.config()  # the endpoints do not change the cache key
    with pytest.raises(ValueError, match="names the same endpoint twice"):
        OpenAIDescriber(model="m", base_url=[servers[0].url, servers[0].url + "/"])


def test_load_checks_every_endpoint_for_the_model(server_factory):
    listed, bare = server_factory(models=["org/vlm-7b"]), server_factory()
    assert OpenAIDescriber(model="org/vlm-7b", base_url=[listed.url, bare.url]).load() is not None
    with pytest.raises(DescriberEnvironmentError) as err:
        OpenAIDescriber(model="org/vlm-8b", base_url=[bare.url, listed.url]).load()
    assert str(err.value) == (f"{listed.url} does not serve the model 'org/vlm-8b'; it serves 'org/vlm-7b'. "
                              "Fix: pass one of those names as --model, or start the server with this model")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DescriberEnvironmentError, match=rf"cannot reach http://127\.0\.0\.1:{port}/v1/chat/completions "
                                                        rf"for model 'org/vlm-7b': nothing accepts connections"):
        OpenAIDescriber(model="org/vlm-7b", base_url=[listed.url, f"http://127.0.0.1:{port}/v1"]).load()


def test_a_wrong_model_id_stops_the_run_before_any_item(server_factory, tmp_path):
    server = server_factory(models=["org/vlm-7b"])
    items = [Item(p.stem, p) for p in example_videos()]
    with pytest.raises(DescriberEnvironmentError) as err:
        describe_items(OpenAIDescriber(model="org/vlm-8b", base_url=server.url), items, tmp_path / "cache", prompt="Describe.",
                       run=QUIET)
    assert str(err.value).startswith(f"{server.url} does not serve the model 'org/vlm-8b'; it serves 'org/vlm-7b'.")
    assert server.requests == []  # no chat request was sent
    assert not (tmp_path / "cache").exists()  # stopped while naming the cache: no folder was made


def test_a_video_as_one_video_url_of_jpeg_frames_and_extra_body(server_factory):
    server = server_factory()
    d = OpenAIDescriber(model="m", base_url=server.url, video_input="video",
                        extra_body={"repetition_penalty": 1.0, "mm_processor_kwargs": {"do_sample_frames": False}})
    assert d.config()["video_input"] == "video" and d.config()["extra_body"]["repetition_penalty"] == 1.0
    assert OpenAIDescriber(model="m", base_url=server.url).config() == {"model": "m", "max_new_tokens": 1024, "temperature": 0.0,
                                                         "image_format": "jpeg", "jpeg_quality": 90}
    d.describe([DescribeRequest(1, frames(), "Describe this video."),
                DescribeRequest(2, frames()[:1], "Describe the image.", is_video=False)])
    video, image = (r["body"] for r in server.requests)
    (part, text) = video["messages"][-1]["content"]
    assert part["type"] == "video_url" and text == {"type": "text", "text": "Describe this video."}
    url = part["video_url"]["url"]
    assert url.startswith("data:video/jpeg;base64,")
    decoded = [Image.open(io.BytesIO(base64.b64decode(x))) for x in url.removeprefix("data:video/jpeg;base64,")
               .split(",")]
    assert [im.size for im in decoded] == [(32, 24), (32, 24)]
    assert np.asarray(decoded[0])[12, 16, 0] > 200 and np.asarray(decoded[1])[12, 16, 2] > 200  # red, then blue
    assert video["repetition_penalty"] == 1.0 and video["mm_processor_kwargs"] == {"do_sample_frames": False}
    assert video["temperature"] == 0 and video["model"] == "m"
    assert [p["type"] for p in image["messages"][-1]["content"]] == ["image_url", "text"]
    with pytest.raises(ValueError, match="extra_body cannot set"):
        OpenAIDescriber(model="m", base_url=server.url, extra_body={"temperature": 0.7})


def test_the_posted_bytes_are_the_json_of_the_request_body_in_its_key_order():
    """The body on the wire, byte for byte: json.dumps of model, messages, temperature, max_tokens (in that order),
    then the stream fields."""
    import httpx

    from sova_lib.describe.backends.openai import encode_jpeg

    seen = []

    def answer(request):
        seen.append(request.content)
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    d = OpenAIDescriber(model="m", base_url="http://127.0.0.1:9/v1", max_new_tokens=5, extra_body={"seed": 1})
    d._transport._client = httpx.Client(transport=httpx.MockTransport(answer))
    image = frames()[0]
    assert d.describe([DescribeRequest(1, [image], "Describe the image.", "Be brief.", is_video=False)]) == ["ok"]
    expected = ('{"seed": 1, "model": "m", "messages": [{"role": "system", "content": "Be brief."}, '
                '{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "' + encode_jpeg(image)
                + '"}}, {"type": "text", "text": "Describe the image."}]}], "temperature": 0, "max_tokens": 5, '
                '"stream": true, "stream_options": {"include_usage": true}}')
    assert seen == [expected.encode("utf-8")]
