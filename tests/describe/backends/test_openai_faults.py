"""The OpenAI-compatible backend against servers that misbehave: every wait bounded, an answer that is no description
its item's failure, a server that fails every request stopping the run, keys never repeated (a loopback server, 127.0.0.1)."""
import json
import math
import threading
import time

import numpy as np
import pytest
from PIL import Image

from sova_lib.describe.backends.openai import OpenAIDescriber, OpenAIError
from sova_lib.describe.backends.transport import parse_retry_after
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest
from sova_lib.describe.item import Item
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import describe_items

KEY = "sk-test-5e4d3c2b1a-SECRET"
QUIET = RunOptions(show_progress=False, verbose=False)


def request(id=1):
    return DescribeRequest(id, [Image.new("RGB", (16, 12), (0, 128, 0))] * 2, "Describe this video.")


def test_retry_after_is_capped_by_the_longest_back_off_and_a_non_finite_one_is_ignored(server_factory):
    server = server_factory([("status", 429, "slow down", {"Retry-After": "100000"}),
                             ("status", 429, "slow down", {"Retry-After": "Fri, 01 Jan 2100 00:00:00 GMT"}),
                             ("status", 503, "busy", {"Retry-After": "inf"}),
                             ("status", 503, "busy", {"Retry-After": "nan"}),
                             ("status", 429, "slow down", {"Retry-After": "-3"})])
    waits = []
    d = OpenAIDescriber(model="m", base_url=server.url, backoff_base=0.01, backoff_max=7.0, stop_after_failed_requests=10,
                        rng=np.random.default_rng(3), sleep=waits.append)
    assert d.describe([request()]) == ["images: 2"] and len(server.requests) == 6
    rng = np.random.default_rng(3)  # only the two back-offs draw a jitter, in order
    assert waits == pytest.approx([7.0, 7.0, 0.01 * 4 * (0.5 + 0.5 * rng.random()),
                                   0.01 * 8 * (0.5 + 0.5 * rng.random()), 0.0], rel=1e-12)


def test_retry_after_in_seconds_and_as_a_date():
    now = 4102444800.0 - 30  # 30 s before 2100-01-01 00:00:00 UTC
    assert parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT", now=lambda: now) == 30.0
    assert parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", now=lambda: now) == 0.0
    assert parse_retry_after("2.5") == 2.5 and parse_retry_after("-5") == 0.0
    for value in ("inf", "-inf", "nan", "1e400", "Fri, 01 Jan 99999 00:00:00 GMT", "soon", "", None):
        assert parse_retry_after(value) is None, value


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


def test_a_server_that_fails_every_request_stops_the_run_after_four(server_factory, tmp_path):
    server = server_factory(repeat=("status", 500, "internal", {}))
    waits = []
    d = OpenAIDescriber(model="m", base_url=server.url, concurrency=1, sleep=waits.append)
    items = [Item(i, tmp_path / f"{i}.mp4") for i in range(6)]
    with pytest.raises(DescriberEnvironmentError) as err:
        describe_items(d, items, tmp_path / "cache", prompt="Describe.", run=QUIET,
                       loader=lambda item, fps: (request().frames, (0.0, 1.0), True))
    # one item at a time: it is the only one in progress, so four failed requests in a row (twice two) stop it
    assert len(server.requests) == 4 and len(waits) == 3
    assert str(err.value) == (f"the last 4 requests to {server.url} for model 'm' all failed, and none was answered "
                              "(the last: HTTP 500: internal): the server cannot serve this run. Fix: check the "
                              "server and its log; when it is overloaded, lower --concurrency; then run the same "
                              "command again")
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    assert (folder / "errors.jsonl").read_text() == ""  # not the items' fault: nothing recorded against them
    assert json.loads((folder / "manifest.json").read_text())["stopped"]["reason"] == str(err.value)


def test_one_answer_between_failures_starts_the_count_again(server_factory):
    server = server_factory([("status", 500, "internal", {})] * 3 + [("slow", 0)]
                            + [("status", 502, "bad gateway", {})] * 3)
    d = OpenAIDescriber(model="m", base_url=server.url, sleep=lambda s: None)
    assert d.describe([request(1)]) == ["images: 2"]  # three failures, then an answer
    assert d.describe([request(2)]) == ["images: 2"]  # three more: never four in a row
    assert len(server.requests) == 8


def test_a_server_that_never_answers_is_given_up_after_two_read_timeouts(server_factory):
    server = server_factory(repeat=("hang",))
    d = OpenAIDescriber(model="m", base_url=server.url, read_timeout=0.3, stream=False, sleep=lambda s: None)
    with pytest.raises(DescriberEnvironmentError, match=r"gave no answer to any request for model 'm' for \d+ s \(the "
                                                        r"last: ReadTimeout: no answer within 0\.3 s\)"):
        d.describe([request()])
    assert len(server.requests) == 2


def test_an_endpoint_whose_model_list_never_comes_stops_before_any_request(server_factory):
    server = server_factory(models="hang")
    d = OpenAIDescriber(model="m", base_url=server.url, read_timeout=0.4)
    with pytest.raises(DescriberEnvironmentError) as err:
        d.load()
    assert str(err.value).startswith(f"{server.url}/models gave no answer within 0.4 s (ReadTimeout): the server at "
                                     f"{server.url} is not answering. Fix: check that it has finished starting")
    assert server.requests == []


def test_stop_ends_the_wait_between_attempts_at_once(server_factory):
    server = server_factory(repeat=("status", 503, "busy", {"Retry-After": "50"}))
    d = OpenAIDescriber(model="m", base_url=server.url, stop_after_failed_requests=100)
    d.stop()  # as the runner does when a run ends early
    with pytest.raises(OpenAIError, match="not sent: the run has stopped"):
        d.describe([request()])
    assert server.requests == []
    d.load()  # a run starts: the describer works again
    threading.Timer(0.2, d.stop).start()
    start = time.monotonic()
    with pytest.raises(OpenAIError, match="not retried: the run has stopped"):
        d.describe([request()])  # the wait of Retry-After 50 s ends when stop() is called
    assert time.monotonic() - start < 25  # far below the 50 s it would have waited (a generous bound)
    assert len(server.requests) == 1


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
                          loader=lambda item, fps: (request().frames, (0.0, 1.0), True), load_workers=1)


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
