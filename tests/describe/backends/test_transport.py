"""The transport every backend on an OpenAI-compatible server shares (``sova_lib.describe.backends.transport``),
tested once for each such backend (each registered backend whose options extend ``ServerOptions``): retries and
their waits, the fail-fast and liveness rules, and the bounds of a streamed answer (a loopback server, 127.0.0.1)."""
import email.utils
import json
import threading
import time

import numpy as np
import pytest
from PIL import Image

from sova_lib.describe.backends.transport import OpenAIError, ServerOptions, parse_retry_after
from sova_lib.describe.contract import (
    DESCRIBERS,
    DescriberEnvironmentError,
    DescribeRequest,
    describer_factory,
    make_describer,
)
from sova_lib.describe.item import Item
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items

KEY = "sk-test-7a6b5c4d3e2f-SECRET"
QUIET = RunOptions(show_progress=False, verbose=False)

#: The registered backends whose requests go through the transport.
TRANSPORT_BACKENDS = sorted(b for b in DESCRIBERS if issubclass(getattr(describer_factory(b), "Options", object),
                                                                ServerOptions))


@pytest.fixture(params=TRANSPORT_BACKENDS)
def backend(request):
    return request.param


def request(id=1, frames=2):
    return DescribeRequest(id, [Image.new("RGB", (16, 12), (0, 128, 0))] * frames, "Describe this video.")


def describer(backend, server, **options):
    """The ``backend`` describer of model ``m`` served by ``server``."""
    return make_describer(backend, model="m", base_url=server.url, **options)


def test_the_transport_serves_the_openai_backend():
    assert TRANSPORT_BACKENDS == ["openai"]


def test_retries_429_with_retry_after_500_and_a_time_out(backend, server_factory):
    server = server_factory([("status", 429, "slow down", {"Retry-After": "3"}),
                             ("status", 500, "overloaded", {}),
                             ("slow", 3.0)])
    waits = []
    # the time-out (1 s) is far from both the slow answer (3 s) and a normal one on a busy machine
    d = describer(backend, server, read_timeout=1.0, stream=False, backoff_base=0.01, rng=np.random.default_rng(7),
                  sleep=waits.append)
    assert d.describe([request()]) == ["images: 2"]
    assert len(server.requests) == 4
    rng = np.random.default_rng(7)  # the backoff draws its jitter from this generator, in order
    expected = [3.0, 0.01 * 2 * (0.5 + 0.5 * rng.random()), 0.01 * 4 * (0.5 + 0.5 * rng.random())]
    assert waits == pytest.approx(expected, rel=1e-12)


def test_gives_up_after_max_retries(backend, server_factory):
    server = server_factory([("status", 503, "down", {})] * 5)
    waits = []
    d = describer(backend, server, max_retries=2, backoff_base=0.001, sleep=waits.append)
    with pytest.raises(OpenAIError, match="gave up after 3 attempts: HTTP 503: down"):
        d.describe([request()])
    assert len(server.requests) == 3 and len(waits) == 2


def test_a_kept_alive_connection_the_server_closed_is_reopened_without_waiting(backend, server_factory):
    server = server_factory(hang_up=True)
    d = describer(backend, server, sleep=lambda s: pytest.fail("a stale connection costs no back-off"))
    out = [d.describe([request(i, 1)]) for i in range(3)]
    assert out == [["images: 1"]] * 3 and len(server.requests) == 3


def test_retry_after_forms():
    assert parse_retry_after("7") == 7.0 and parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    later = parse_retry_after(email.utils.formatdate(time.time() + 30, usegmt=True))
    assert 25 < later <= 30


def test_retry_after_is_capped_by_the_longest_back_off_and_a_non_finite_one_is_ignored(backend, server_factory):
    server = server_factory([("status", 429, "slow down", {"Retry-After": "100000"}),
                             ("status", 429, "slow down", {"Retry-After": "Fri, 01 Jan 2100 00:00:00 GMT"}),
                             ("status", 503, "busy", {"Retry-After": "inf"}),
                             ("status", 503, "busy", {"Retry-After": "nan"}),
                             ("status", 429, "slow down", {"Retry-After": "-3"})])
    waits = []
    d = describer(backend, server, backoff_base=0.01, backoff_max=7.0, stop_after_failed_requests=10,
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


def test_a_server_that_fails_every_request_stops_the_run_after_four(backend, server_factory, tmp_path):
    server = server_factory(repeat=("status", 500, "internal", {}))
    waits = []
    d = describer(backend, server, concurrency=1, sleep=waits.append)
    items = [Item(i, tmp_path / f"{i}.mp4") for i in range(6)]
    with pytest.raises(DescriberEnvironmentError) as err:
        describe_items(d, items, tmp_path / "cache", prompt="Describe.", run=QUIET,
                       engine=LocalEngine(lambda item, fps: (request().frames, (0.0, 1.0), True)))
    # one item at a time: it is the only one in progress, so four failed requests in a row (twice two) stop it
    assert len(server.requests) == 4 and len(waits) == 3
    assert str(err.value) == (f"the last 4 requests to {server.url} for model 'm' all failed, and none was answered "
                              "(the last: HTTP 500: internal): the server cannot serve this run. Fix: check the "
                              "server and its log; when it is overloaded, lower --concurrency; then run the same "
                              "command again")
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    assert (folder / "errors.jsonl").read_text() == ""  # not the items' fault: nothing recorded against them
    assert json.loads((folder / "manifest.json").read_text())["stopped"]["reason"] == str(err.value)


def test_one_answer_between_failures_starts_the_count_again(backend, server_factory):
    server = server_factory([("status", 500, "internal", {})] * 3 + [("slow", 0)]
                            + [("status", 502, "bad gateway", {})] * 3)
    d = describer(backend, server, sleep=lambda s: None)
    assert d.describe([request(1)]) == ["images: 2"]  # three failures, then an answer
    assert d.describe([request(2)]) == ["images: 2"]  # three more: never four in a row
    assert len(server.requests) == 8


def test_a_server_that_never_answers_is_given_up_after_two_read_timeouts(backend, server_factory):
    server = server_factory(repeat=("hang",))
    d = describer(backend, server, read_timeout=0.3, stream=False, sleep=lambda s: None)
    with pytest.raises(DescriberEnvironmentError, match=r"gave no answer to any request for model 'm' for \d+ s \(the "
                                                        r"last: ReadTimeout: no answer within 0\.3 s\)"):
        d.describe([request()])
    assert len(server.requests) == 2


def test_stop_ends_the_wait_between_attempts_at_once(backend, server_factory):
    server = server_factory(repeat=("status", 503, "busy", {"Retry-After": "50"}))
    d = describer(backend, server, stop_after_failed_requests=100)
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


def test_a_server_that_never_answers_a_stream_stops_the_run_after_two_first_token_waits(backend, server_factory):
    server = server_factory(repeat=("hang",))
    d = describer(backend, server, first_token_timeout=0.3, token_timeout=0.3, read_timeout=60,
                  sleep=lambda s: None)
    with pytest.raises(DescriberEnvironmentError, match=r"gave no answer to any request for model 'm' for \d+ s \(the "
                                                        r"last: ReadTimeout: no answer within 0\.3 s\): the server is "
                                                        r"not answering\. Fix: .*--first-token-timeout"):
        d.describe([request()])
    assert len(server.requests) == 2


def test_a_slow_stream_is_not_cut_while_its_pieces_keep_coming(backend, server_factory):
    # 12 pieces 0.1 s apart: 1.2 s in all, four times the first-token, silence and whole-answer (read) limits
    pieces = [f"{n} " for n in range(12)]
    server = server_factory([("drip", pieces, 0.1)])
    d = describer(backend, server, first_token_timeout=0.3, token_timeout=0.3, read_timeout=0.3,
                  sleep=lambda s: pytest.fail("a live stream is not retried"))
    assert d.describe([request()]) == ["".join(pieces)]


def test_a_stream_that_goes_silent_is_retried_then_the_item_fails(backend, server_factory):
    server = server_factory([("stall", ["A car"])] * 3)
    d = describer(backend, server, first_token_timeout=5, token_timeout=0.3, max_retries=2,
                  stop_after_failed_requests=10, sleep=lambda s: None)
    with pytest.raises(OpenAIError, match=r"gave up after 3 attempts: the stream went silent for 0\.3 s "
                                          r"\(token_timeout\)"):
        d.describe([request()])
    assert len(server.requests) == 3


def test_the_whole_stream_is_bounded_too(backend, server_factory):
    server = server_factory([("drip", ["a "] * 20, 0.05)] * 2)
    d = describer(backend, server, stream_timeout=0.3, max_retries=1, stop_after_failed_requests=10,
                  sleep=lambda s: None)
    with pytest.raises(OpenAIError, match=r"the streamed answer took longer than 0\.3 s \(stream_timeout\)"):
        d.describe([request()])


def test_a_stream_cut_short_is_retried(backend, server_factory):
    cut_short = (b'data: {"choices": [{"index": 0, "delta": {"content": "A car"}, "finish_reason": null}]}\n\n')
    server = server_factory([("sse", cut_short)])
    d = describer(backend, server, stop_after_failed_requests=10, sleep=lambda s: None)
    assert d.describe([request()]) == ["images: 2"]
    assert len(server.requests) == 2


def test_an_error_in_the_stream_is_retried_with_the_servers_message(backend, server_factory, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    error = b'data: {"error": {"message": "engine died; key ' + KEY.encode() + b'", "code": 500}}\n\n'
    server = server_factory([("sse", error)] * 2)
    d = describer(backend, server, max_retries=1, stop_after_failed_requests=10, sleep=lambda s: None)
    with pytest.raises(OpenAIError) as err:
        d.describe([request()])
    assert str(err.value) == "gave up after 2 attempts: the stream ended with an error: engine died; key [redacted]"


def test_a_describer_idle_for_long_still_waits_twice_before_calling_a_server_dead(backend, server_factory):
    server = server_factory(repeat=("hang",))
    d = describer(backend, server, first_token_timeout=0.3, sleep=lambda s: None)
    d._transport._alive_at -= 3600  # made an hour ago, never used: the first wait alone does not stop the run
    with pytest.raises(DescriberEnvironmentError, match="gave no answer to any request"):
        d.describe([request()])
    assert len(server.requests) == 2


def test_a_live_stream_keeps_the_server_alive_while_other_requests_wait_in_vain(backend, server_factory):
    """One request streams for 6 s while two others get nothing (a server that answers one at a time): the
    first-token waits of those two (2 s each, twice) do not stop the run. The waits are long enough that a busy
    machine still sees each of the stream's pieces in time (one every 0.3 s)."""
    server = server_factory([("drip", ["a "] * 20, 0.3), ("hang",), ("hang",), ("hang",), ("hang",)])
    d = describer(backend, server, first_token_timeout=2.0, max_retries=1, stop_after_failed_requests=10,
                  sleep=lambda s: None)
    outcomes = []

    def one(n):
        try:
            outcomes.append(d.describe([request(n)])[0])
        except OpenAIError as err:
            outcomes.append(str(err))

    first = threading.Thread(target=one, args=(1,))
    first.start()
    deadline = time.monotonic() + 20  # the stream's request is the server's first (its script is handed out in order)
    while not any(r["path"].endswith("/chat/completions") for r in list(server.requests)) and time.monotonic() < deadline:
        time.sleep(0.02)
    others = [threading.Thread(target=one, args=(n,)) for n in (2, 3)]
    for t in others:
        t.start()
    for t in [first, *others]:
        t.join(30)
    assert sorted(outcomes) == ["a " * 20] + ["gave up after 2 attempts: ReadTimeout: no answer within 2 s"] * 2


def test_a_response_head_that_trickles_in_ends_the_request_at_the_first_token_timeout(backend, server_factory):
    server = server_factory(repeat=("trickle", 0.2))  # a header byte every 0.2 s: every read is short
    d = describer(backend, server, first_token_timeout=1.0, max_retries=0, sleep=lambda s: None)
    started = time.monotonic()
    with pytest.raises(OpenAIError) as err:
        d.describe([request()])
    took = time.monotonic() - started
    assert str(err.value) == "gave up after 1 attempts: ReadTimeout: no answer within 1 s"
    assert 1.0 <= took < 5.0, took  # measured: 1.0 s; without the bound the request never ends
