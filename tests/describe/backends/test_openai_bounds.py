"""What the OpenAI-compatible backend bounds of a server it does not control: the time to a whole response head,
the cost of reading server-sent events, and the API key in every text of the server's it shows or stores, at every
length where that text is cut (loopback servers on 127.0.0.1)."""
import time

import pytest
from PIL import Image

from sova_lib.cli import main
from sova_lib.describe.backends.openai import OpenAIDescriber, OpenAIError
from sova_lib.describe.backends.openai_wire import MAX_MESSAGE_CHARS, StreamedAnswer
from sova_lib.describe.contract import DescribeRequest
from tests.cli.test_describe_faults import describe_argv

KEY = "SECRETMARKER-Q7v9Zk2Lp4Wn8Rt6Yh3Jm5Bx"


def request():
    return DescribeRequest(1, [Image.new("RGB", (16, 12), (0, 128, 0))], "Describe this image.")


def pieces_of_key(text: str, shortest: int = 5) -> list[str]:
    """Every piece of KEY at least ``shortest`` characters long that ``text`` holds."""
    return [KEY[i:j] for i in range(len(KEY)) for j in range(i + shortest, len(KEY) + 1) if KEY[i:j] in text]


def test_a_describe_run_against_a_trickling_head_ends_within_its_bounds(server_factory, tmp_path, capsys):
    server = server_factory(models=["m"], repeat=("trickle", 0.2))
    started = time.monotonic()
    code = main(describe_argv(server, tmp_path / "cache", "--first-token-timeout", "1", "--read-timeout", "5"))
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1 and "the server is not answering" in err and "ReadTimeout: no answer within 1 s" in err, err
    assert took < 30, took  # two waits of 1 s and a back-off, on a busy machine (the run never ended before)


def _failure(server_factory, monkeypatch, entry) -> str:
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory([entry])
    d = OpenAIDescriber(model="m", base_url=server.url, api_key_env="SOVA_TEST_KEY", max_retries=0, sleep=lambda s: None)
    with pytest.raises(OpenAIError) as err:
        d.describe([request()])
    return str(err.value)


@pytest.mark.parametrize("before", range(60, 112, 3))
def test_the_key_in_a_chunk_that_is_not_json_is_redacted_before_the_cut(server_factory, monkeypatch, before):
    message = _failure(server_factory, monkeypatch, ("sse", b"data: " + b"x" * before + KEY.encode() + b"\n\n"))
    assert message.startswith("gave up after 1 attempts: a chunk of the stream is not JSON: b'xxx"), message
    assert pieces_of_key(message) == [], message


@pytest.mark.parametrize("before", range(250, 312, 4))
def test_the_key_in_an_answer_that_is_no_chat_completion_is_redacted_before_the_cut(server_factory, monkeypatch,
                                                                                   before):
    message = _failure(server_factory, monkeypatch, ("raw", 200, b"x" * before + KEY.encode()))
    assert "is not a chat completion: b'xxx" in message and pieces_of_key(message) == [], message


@pytest.mark.parametrize("before", range(MAX_MESSAGE_CHARS - 60, MAX_MESSAGE_CHARS + 4, 4))
def test_the_key_in_an_error_body_is_redacted_before_the_cut(server_factory, monkeypatch, before):
    message = _failure(server_factory, monkeypatch, ("text", 400, "x" * before + KEY))
    assert "HTTP 400" in message and pieces_of_key(message) == [], message


def test_no_piece_of_the_key_reaches_errors_jsonl_or_the_terminal(server_factory, tmp_path, capsys, monkeypatch):
    """The case as found: a chunk of 88 'x' and the key left its last 12 characters in errors.jsonl."""
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory(models=["m"], repeat=("sse", b"data: " + b"x" * 88 + KEY.encode() + b"\n\n"))
    argv = describe_argv(server, tmp_path / "cache", "--api-key-env", "SOVA_TEST_KEY", "--limit", "1")
    main(argv)
    shown = capsys.readouterr()
    stored = "".join(p.read_text(errors="replace") for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert "a chunk of the stream is not JSON" in stored
    assert pieces_of_key(stored + shown.out + shown.err) == []


def _flood(megabytes: float) -> float:
    """Seconds to read ``megabytes`` MiB of ':' comment lines, sent in 64 KiB pieces, then one answer."""
    flood = b":\n" * int(megabytes * (1 << 19))
    answer = StreamedAnswer()
    started = time.perf_counter()
    for i in range(0, len(flood), 1 << 16):
        answer.feed(flood[i:i + (1 << 16)])
    answer.feed(b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    took = time.perf_counter() - started
    assert (answer.text, answer.done, len(answer._buffer)) == ("ok", True, 0)
    return took


def test_a_flood_of_comment_lines_is_read_in_linear_time():
    # side by side, on the same machine, the fastest of three at each size (a busy machine slows single runs)
    small, large = min(_flood(0.9) for _ in range(3)), min(_flood(3.7) for _ in range(3))
    assert large < 3.0, large  # measured: 0.2 s for 3.7 MiB (the former reader: 1.2 s per MiB in 64 KiB pieces)
    assert large / small < 9.0, (small, large)  # linear: ~4x for 4x the bytes; quadratic: ~17x
