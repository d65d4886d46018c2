"""The OpenAI-compatible backend against servers that misbehave: every wait bounded, an answer that is no description
its item's failure, a server that fails every request stopping the run, keys never repeated (a loopback server, 127.0.0.1)."""
import json
import math

import pytest
from PIL import Image

from sova_lib.describe.backends.openai import OpenAIDescriber, OpenAIError
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest
from sova_lib.describe.item import Item
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items

KEY = "sk-test-5e4d3c2b1a-SECRET"
QUIET = RunOptions(show_progress=False, verbose=False)


def request(id=1):
    return DescribeRequest(id, [Image.new("RGB", (16, 12), (0, 128, 0))] * 2, "Describe this video.")


@pytest.mark.parametrize("entry, reason, kind", [
    (("content", None), "the server's answer holds no text: its content is null", "unreadable"),
    (("content", ["a car", "turns"]), 'the server\'s answer holds no text: its content is ["a car", "turns"]',
     "unreadable"),
    (("content", " \n"), "the server's answer is empty (finish_reason 'stop')", "empty"),
    (("raw", 200, b"{not json"), "the server's answer is not a chat completion: b'{not json'", "unreadable"),
    (("big", 5000), "the server's answer is longer than 4096 bytes; it was not read", "too long"),
])
def test_an_answer_without_text_fails_its_item_at_once(server_factory, entry, reason, kind):
    """The server answered: greedy decoding would answer the same, so the item fails without a retry (a later run's
    --retry-errors asks again), and the next item is asked."""
    for stream in (False, True):
        server = server_factory([entry])
        waits = []
        d = OpenAIDescriber(model="m", base_url=server.url, max_retries=3, max_response_bytes=4096, stop_after_failed_requests=1,
                            stream=stream, sleep=waits.append)
        with pytest.raises(OpenAIError) as err:
            d.describe([request()])
        # streamed, text that is null, a list of strings or blank is no text either
        expected = "the server's answer is empty (finish_reason 'stop')" if stream and entry[0] == "content" \
            else reason
        assert (str(err.value), err.value.kind) == (expected, "empty" if expected != reason else kind)
        assert len(server.requests) == 1 and waits == []
        assert d.describe([request(2)]) == ["images: 2"]  # not a dead server, though it failed once in a row


def test_an_endpoint_whose_model_list_never_comes_stops_before_any_request(server_factory):
    server = server_factory(models="hang")
    d = OpenAIDescriber(model="m", base_url=server.url, read_timeout=0.4)
    with pytest.raises(DescriberEnvironmentError) as err:
        d.load()
    assert str(err.value).startswith(f"{server.url}/models gave no answer (ReadTimeout: no answer within 0.4 s): the "
                                     f"server at {server.url} is not answering. Fix: check that it has finished "
                                     "starting")
    assert server.requests == []


@pytest.mark.parametrize("value", ["sk-proj-AbC123", "Bearer x", "", "1ABC", "MY KEY"])
def test_api_key_env_must_name_a_variable(value):
    with pytest.raises(ValueError) as err:
        OpenAIDescriber(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=value)
    assert str(err.value).startswith("--api-key-env takes the name of an environment variable")
    assert value not in str(err.value) or not value


@pytest.mark.parametrize("name, value", [("connect_timeout", 0), ("read_timeout", -1.0), ("read_timeout", math.inf),
                                         ("backoff_max", math.nan)])
def test_waits_must_be_finite_and_positive(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a finite number of seconds above 0"):
        OpenAIDescriber(model="m", base_url="http://127.0.0.1:9/v1", **{name: value})


@pytest.mark.parametrize("status", [400, 401, 500])
def test_a_server_that_echoes_the_key_never_gets_it_repeated(server_factory, monkeypatch, status):
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory(repeat=("status", status, "no", {}), echo=True)
    d = OpenAIDescriber(model="m", base_url=server.url, api_key_env="SOVA_TEST_KEY", sleep=lambda s: None, max_retries=1)
    with pytest.raises((OpenAIError, DescriberEnvironmentError)) as err:
        d.describe([request()])
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"  # the key was sent ...
    message = str(err.value)
    assert KEY not in message and "'Authorization': '[redacted]'" in message  # ... and is never repeated


def test_an_answer_that_quotes_the_key_has_it_redacted(server_factory, monkeypatch):
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory([("content", f"The header said Bearer {KEY}. A car turns left.")])
    d = OpenAIDescriber(model="m", base_url=server.url, api_key_env="SOVA_TEST_KEY")
    assert d.describe([request()]) == ["The header said Bearer [redacted]. A car turns left."]


def _run(d, tmp_path, n=6, run=QUIET):
    items = [Item(i, tmp_path / f"{i}.mp4") for i in range(n)]
    return describe_items(d, items, tmp_path / "cache", prompt="Describe.", run=run,
                          engine=LocalEngine(lambda item, fps: (request().frames, (0.0, 1.0), True), load_workers=1))


def test_an_empty_and_a_95_mb_answer_leave_the_run_going_and_no_answer_stops_it(server_factory, tmp_path):
    """Item by item, one at a time: an answer, an empty answer, 95 MB, then nothing at all. The two answers that are
    no description are their items' failures, recorded; only the server that stops answering stops the run."""
    server = server_factory([("slow", 0), ("content", ""), ("big", 95_000_000)], repeat=("hang",))
    # a bound a loaded machine's first answer keeps well within: one it missed would be asked again, and the
    # answers would shift to the wrong items
    d = OpenAIDescriber(model="m", base_url=server.url, concurrency=1, first_token_timeout=2, sleep=lambda s: None)
    with pytest.raises(DescriberEnvironmentError, match=r"gave no answer to any request for model 'm'"):
        _run(d, tmp_path)
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    errors = [json.loads(line) for line in (folder / "errors.jsonl").read_text().splitlines()]
    assert [(e["id"], e["error"]) for e in errors] == [
        (1, "OpenAIError: the server's answer is empty (finish_reason 'stop')"),
        (2, "OpenAIError: the server's answer is longer than 4194304 bytes; it was not read")]
    assert [json.loads(line)["id"] for line in (folder / "descriptions.jsonl").read_text().splitlines()] == [0]
    assert len(server.requests) == 3 + 2  # item 3 asked twice in vain: then the run stopped


def test_the_summary_counts_the_failures_by_kind(server_factory, tmp_path):
    server = server_factory([("slow", 0), ("content", ""), ("big", 5000), ("status", 400, "too many tokens", {}),
                             ("content", " "), ("raw", 200, b"<html>")])
    d = OpenAIDescriber(model="m", base_url=server.url, concurrency=1, max_response_bytes=4096)
    summary = _run(d, tmp_path, n=7)
    assert (summary.done, summary.failed) == (2, 5)
    assert summary.by_kind == {"empty": [1, 4], "too long": [2], "refused": [3], "unreadable": [5]}
    assert "  failed by kind: 2 empty (1, 4); 1 too long (2); 1 refused (3); 1 unreadable (5)" in str(summary).split("\n")
    manifest = json.loads((summary.folder / "manifest.json").read_text())
    assert manifest["last_run"]["failed_by_kind"] == {"empty": 2, "too long": 1, "refused": 1, "unreadable": 1}
