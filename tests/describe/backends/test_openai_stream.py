"""The OpenAI-compatible backend's streamed answers: the same text as a whole answer, a dead server told from a slow
one, a server that does not stream, and error bodies of every server's shape (a loopback server, 127.0.0.1)."""
import json

import httpx
import pytest
from PIL import Image

from sova_lib.describe.backends.openai import OpenAIDescriber, OpenAIError
from sova_lib.describe.backends.openai_wire import StreamedAnswer, StreamError, server_message
from sova_lib.describe.contract import DescribeRequest

KEY = "sk-test-0a1b2c3d4e5f-SECRET"


def request(id=1, frames=2):
    return DescribeRequest(id, [Image.new("RGB", (16, 12), (0, 128, 0))] * frames, "Describe this video.")


#: A stream as vLLM's OpenAI server sends it (lines end with CRLF, a keep-alive comment, a role chunk, pieces with
#: non-ASCII text and a line separator, the finish chunk, the usage chunk of stream_options, [DONE]).
RECORDED = (
    b": ping\r\n\r\n"
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\r\n\r\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"A white car"},"logprobs":null,"finish_reason":null}]}\r\n\r\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":" turns left \\u2014 caf\\u00e9\\u2028\\n"},"logprobs":null,"finish_reason":null}]}\r\n\r\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"then stops."},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}\r\n\r\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[],'
    b'"usage":{"prompt_tokens":120,"total_tokens":131,"completion_tokens":11}}\r\n\r\n'
    b"data: [DONE]\r\n\r\n")
RECORDED_TEXT = "A white car turns left \u2014 caf\u00e9\u2028\nthen stops."


@pytest.mark.parametrize("size", [1, 2, 7, len(RECORDED)])
def test_a_recorded_stream_read_in_pieces_of_any_size_gives_the_whole_answers_text(size):
    answer = StreamedAnswer()
    for start in range(0, len(RECORDED), size):
        answer.feed(RECORDED[start:start + size])
    assert answer.text == RECORDED_TEXT and answer.done and answer.finish_reason == "stop"
    assert answer.usage == {"prompt_tokens": 120, "total_tokens": 131, "completion_tokens": 11}


def test_a_recorded_stream_and_the_same_answer_whole_give_one_text():
    whole = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                            "content": RECORDED_TEXT}}]}

    def answer(req):
        if json.loads(req.content).get("stream"):
            return httpx.Response(200, content=RECORDED, headers={"Content-Type": "text/event-stream"})
        return httpx.Response(200, json=whole)

    texts = []
    for stream in (True, False):
        d = OpenAIDescriber(model="m", base_url="http://127.0.0.1:9/v1", stream=stream)
        d._transport._client = httpx.Client(transport=httpx.MockTransport(answer))
        texts += d.describe([request()])
        assert d._transport.stream is stream  # a streamed answer keeps streaming on
    assert texts == [RECORDED_TEXT, RECORDED_TEXT]


def test_streamed_and_whole_answers_of_the_fake_server_are_one_text(server_factory):
    pieces = ["Ein ", "weißes Auto ", "biegt ab.", "\u2028", " ", "🚗"]
    streamed = server_factory([("drip", pieces, 0.0), None, ("drip", pieces, 0.0)])
    whole = server_factory([("drip", pieces, 0.0)] * 2, streams=False)
    texts = [OpenAIDescriber(model="m", base_url=streamed.url).describe([request(1), request(2, 3)]),
             OpenAIDescriber(model="m", base_url=streamed.url, stream=False).describe([request(3)]),
             OpenAIDescriber(model="m", base_url=whole.url, stream=False).describe([request(4)])]
    assert texts == [["".join(pieces), "images: 3"], ["".join(pieces)], ["".join(pieces)]]
    assert [r["body"].get("stream") for r in streamed.requests] == [True, True, None]
    assert streamed.requests[0]["body"]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("streams, why", [
    ("refuse", "it refused a streamed request (HTTP 422 from http://127.0.0.1:PORT/v1/chat/completions: Unexpected "
               "fields in the request: {'stream', 'stream_options'})"),
    (False, "it answered a streamed request whole"),
])
def test_a_server_that_does_not_stream_gets_whole_requests_said_once(server_factory, capsys, streams, why):
    server = server_factory(streams=streams)
    d = OpenAIDescriber(model="m", base_url=server.url, read_timeout=7)
    assert d.describe([request(1), request(2, 1), request(3, 3)]) == ["images: 2", "images: 1", "images: 3"]
    asked = [bool(r["body"].get("stream")) for r in server.requests]
    assert asked == ([True, False, False, False] if streams == "refuse" else [True, False, False])
    port = server.url.split(":")[2].split("/")[0]
    assert capsys.readouterr().err == (f"sova: note: {server.url} does not stream answers: {why.replace('PORT', port)}"
                                       "; requests are sent whole from now on, each answer bounded by --read-timeout "
                                       "(7 s)\n")
    assert d.run_info()["stream"] is False


@pytest.mark.parametrize("body, message", [
    (b'{"error": {"message": "This model\'s maximum context length is 4096 tokens", "type": "BadRequestError"}}',
     "This model's maximum context length is 4096 tokens"),  # OpenAI, newer vLLM
    (b'{"object": "error", "message": "At most 1 image(s) may be provided in one request.", "type": '
     b'"BadRequestError", "param": null, "code": 400}', "At most 1 image(s) may be provided in one request."),  # vLLM
    (b'{"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096", "error_type": '
     b'"validation"}', "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096"),  # TGI
    (b'{"detail": "Unexpected fields in the request: {\'repetition_penalty\'}"}',
     "Unexpected fields in the request: {'repetition_penalty'}"),  # FastAPI, transformers serve
    (b'{"detail": [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required", "input": {}}, '
     b'{"type": "int_parsing", "loc": ["body", "max_tokens"], "msg": "Input should be a valid integer"}]}',
     "body.messages: Field required; body.max_tokens: Input should be a valid integer"),  # FastAPI validation
    (b"Internal Server Error", "Internal Server Error"),  # Starlette's plain text
    (b"\n  upstream connect error\nreset reason: overflow\n", "upstream connect error"),
    (b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>",
     "502 Bad Gateway"),
    (b"", "(no message)"),
    (b'{"unexpected": [1, 2]}', '{"unexpected": [1, 2]}'),
])
def test_server_message_of_every_shape(body, message):
    assert server_message(body) == message


@pytest.mark.parametrize("entry, line", [
    (("detail", 422, "Unexpected fields in the request: {'repetition_penalty'}"),
     "HTTP 422 from URL: Unexpected fields in the request: {'repetition_penalty'}"),
    (("text", 400, "bad request\nTraceback (most recent call last):\n  ..."), "HTTP 400 from URL: bad request"),
    (("raw", 400, b'{"object": "error", "message": "' + b"x" * 1000 + b'"}'), "HTTP 400 from URL: " + "x" * 497 + "..."),
])
def test_an_error_answer_is_one_bounded_line_with_the_servers_message(server_factory, entry, line):
    server = server_factory([entry])
    d = OpenAIDescriber(model="m", base_url=server.url, sleep=lambda s: pytest.fail("a 4xx is not retried"))
    with pytest.raises(OpenAIError) as err:
        d.describe([request()])
    assert str(err.value) == line.replace("URL", server.url + "/chat/completions")
    assert len(server.requests) == 1


def test_a_plain_text_500_and_a_key_in_a_fastapi_detail(server_factory, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = server_factory([("text", 500, "Internal Server Error"), ("detail", 400, f"bad header Bearer {KEY}")])
    d = OpenAIDescriber(model="m", base_url=server.url, max_retries=0, stop_after_failed_requests=10, sleep=lambda s: None)
    for expected in ("gave up after 1 attempts: HTTP 500: Internal Server Error",
                     f"HTTP 400 from {server.url}/chat/completions: bad header Bearer [redacted]"):
        with pytest.raises(OpenAIError) as err:
            d.describe([request()])
        assert str(err.value) == expected and KEY not in str(err.value)


def test_a_server_that_refuses_video_urls_is_told_to_use_frames(server_factory):
    server = server_factory([("text", 500, "Internal Server Error")] * 2 + [("status", 400, "bad video", {})])
    d = OpenAIDescriber(model="m", base_url=server.url, video_input="video", max_retries=1, stop_after_failed_requests=10,
                        sleep=lambda s: None)
    hint = "this server does not accept video_input=video; use frames"
    with pytest.raises(OpenAIError, match=r"HTTP 500: Internal Server Error; " + hint):
        d.describe([request(1)])
    with pytest.raises(OpenAIError, match=r"HTTP 400 from .*: bad video; " + hint):
        d.describe([request(2)])
    assert d.describe([request(3)]) == ["images: 0"]  # a video answered: later failures are the items' own
    server.script = [("status", 400, "bad video", {})]
    with pytest.raises(OpenAIError) as err:
        d.describe([request(4)])
    assert hint not in str(err.value)
    server.script = [("status", 400, "bad image", {})]
    with pytest.raises(OpenAIError) as err:  # images are not videos
        OpenAIDescriber(model="m", base_url=server.url, video_input="video").describe(
            [DescribeRequest(5, [Image.new("RGB", (8, 8))], "Describe the image.", is_video=False)])
    assert hint not in str(err.value)


def test_a_stream_chunk_that_is_not_json_is_a_stream_error():
    answer = StreamedAnswer()
    with pytest.raises(StreamError, match="a chunk of the stream is not JSON"):
        answer.feed(b"data: {oops\n\n")


def test_a_time_out_in_video_form_is_not_blamed_on_the_form(server_factory):
    server = server_factory([("hang",)])
    d = OpenAIDescriber(model="m", base_url=server.url, video_input="video", first_token_timeout=0.3, max_retries=0,
                        sleep=lambda s: None)
    with pytest.raises(OpenAIError) as err:
        d.describe([request()])
    assert str(err.value) == "gave up after 1 attempts: ReadTimeout: no answer within 0.3 s"

