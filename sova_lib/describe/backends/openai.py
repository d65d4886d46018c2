"""A describer for any OpenAI-compatible chat-completions server.

Works with ``vllm serve``, SGLang, and hosted APIs that speak
``POST {base_url}/chat/completions``. One request per item
(``max_batch_size = 1``). ``base_url`` may name several endpoints (replicas
of one model, e.g. one ``vllm serve`` per GPU): each request goes to the
endpoint with the fewest requests in flight, with at most ``concurrency``
in flight per endpoint, so the runner keeps ``concurrency`` x endpoints
requests in flight. A retried request may go to another endpoint. The
endpoints are not part of the cache key (the same model gives the same
text wherever it is served). Each request is::

    {"model": MODEL, "temperature": 0, "max_tokens": MAX_NEW_TOKENS,
     "messages": [{"role": "system", "content": SYSTEM_PROMPT},        # when there is one
                  {"role": "user", "content": [
                      {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,..."}},
                      ...                                              # one part per frame, in time order
                      {"type": "text", "text": INSTRUCTION}]}]}

A request with text ``parts`` (a prompts file, ``sova_lib.describe.prompt_file``) sends one text part per
entry, in order, with the frames before part ``media_at``.
Frames are sent at their own size as JPEG (quality ``jpeg_quality``).
Decoding is greedy (``temperature=0``).

``video_input="video"`` sends a video's frames as one video instead of one
image per frame: a single ``{"type": "video_url", "video_url": {"url":
"data:video/jpeg;base64,<frame 1>,<frame 2>,..."}}`` part, the form vLLM's
OpenAI server reads as a list of JPEG frames (``VideoMediaIO.load_base64`` in
``vllm/multimodal/media/video.py`` splits the data on commas; newer releases
keep at most ``num_frames`` of them, 32 unless the server was started with
``--media-io-kwargs '{"video": {"num_frames": -1}}'``). Images always go as
``image_url``. With the default ``"frames"``, a multi-frame request needs a
server that accepts that many images per prompt (vLLM:
``--limit-mm-per-prompt '{"image": 64}'``). ``extra_body`` is merged into
every request body (vLLM reads sampling options such as
``repetition_penalty`` and ``mm_processor_kwargs`` there). Both are part of
``config()``, so the cache key records them.

Failures about the server, not the item, stop the run at once
(``DescriberEnvironmentError``, nothing recorded for the item): a refused
connection (no server listening at ``base_url``), a host name that does not
resolve, HTTP 401 / 403 (the API key), and HTTP 404 (a model the server does
not serve, or a ``base_url`` without ``/v1``). HTTP 408, 429 and 5xx, other
connection errors (reset, closed), time-outs and answers that hold no text
(content null or empty, a body that is not a chat completion, a body over
``max_response_bytes``) are retried up to ``max_retries`` times, waiting
``min(backoff_max, backoff_base * 2**attempt)`` seconds times a jitter
factor in [0.5, 1) drawn from ``rng``, or the server's ``Retry-After`` (in
seconds or as an HTTP date; never longer than ``backoff_max``, and ignored
when it is not a finite time); then the item fails. Any other 4xx (e.g. 400:
a request too long for the model) fails the item at once with the server's
message. A server that fails every request stops the run: once
``stop_after_failed_requests`` requests in a row have failed with none
answered (default: twice the items being described at that moment, at least
4, so each has failed twice), the run stops with
``DescriberEnvironmentError`` naming the last failure: a second or two after
the first failures when the server answers at once with errors, two
``read_timeout`` after the first request when it never answers.

Every wait is bounded: ``connect_timeout`` (default 10 s) for a connection,
``read_timeout`` (default 120 s: a long answer of ``max_new_tokens`` from a
busy server) for the whole answer to one request, ``backoff_max`` between
attempts. ``stop()`` (the runner calls it when a run ends early, e.g. on
Ctrl-C) ends the waits between attempts at once.

``load()`` (run once before the first item) asks each endpoint for
``GET {base_url}/models``: an endpoint that refuses the connection, that
accepts it but does not answer within ``connect_timeout`` +
``min(read_timeout, 30)`` seconds, or that lists its models without
``model``, raises ``DescriberEnvironmentError`` and the run stops before any
request; an endpoint without that route is taken as it is (its answers will
tell).

HTTP goes through ``httpx`` (one thread-safe ``Client``: its pool keeps
connections alive and reopens those the server closed; answers are read as a
stream, at most ``max_response_bytes`` of them) and the retries through
``tenacity``. These two rather than the official ``openai`` client: that
client serialises the request body itself and retries on its own schedule,
while the body must stay byte for byte what it is (its bytes are what the
cache key stands for) and the retries must keep this module's rules
(``Retry-After``, the jitter drawn from ``rng``, an ``OpenAIError`` after
``max_retries``, and fail-fast errors never retried). ``httpx`` is pinned
already; the routing and the per-endpoint limit are this module's. A
connection that breaks before any answer (a kept-alive connection the server
had closed) is used again once at once, without a back-off.

The API key is read from the environment variable ``api_key_env``
(``OPENAI_API_KEY`` by default, as the OpenAI client does) when each request
is sent, and goes only into the ``Authorization: Bearer`` header: it is never
stored on the describer, in its config, in the cache or in any message.
``api_key_env`` must be a variable's name (letters, digits, ``_``), so a key
typed in its place is refused before anything is sent or written. With the
variable unset no ``Authorization`` header is sent (a local server without a
key). Whatever the server says (an error message that echoes the request's
headers, an answer) reaches a message, an error line or the cache only with
the key's value and every ``Authorization`` / ``Bearer`` value redacted
(``sova_lib.storage.redact``).
"""
from __future__ import annotations

import base64
import contextlib
import email.utils
import io
import json
import math
import os
import re
import socket
import threading
import time
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

import httpx
import tenacity

from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest
from sova_lib.storage import JSON_ERRORS, REDACTED, redact
from sova_lib.video.frames import to_rgb_image

__all__ = ["OpenAIDescriber", "OpenAIError", "encode_jpeg"]

#: The largest answer body read (bytes); a chat completion of 1,024 tokens is some 10 KB.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OpenAIError(RuntimeError):
    """A request that failed for good (a 4xx answer, or retries used up)."""


def encode_jpeg(image: Any, quality: int = 90) -> str:
    """A ``data:image/jpeg;base64,...`` URL of an RGB PIL image (or HxWx3 uint8 array)."""
    buf = io.BytesIO()
    to_rgb_image(image).save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class _Endpoint:
    """One server: its URL parts and the number of requests in flight to it."""

    def __init__(self, base_url: str, api_key_env: str):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url {base_url!r} is not an http(s) URL such as http://localhost:8000/v1")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("base_url must be scheme://host[:port]/path with no user name, password or query: "
                             f"put the API key in the environment variable {api_key_env} instead")
        self.url = base_url.rstrip("/")
        self.scheme, self.host, self.port = parts.scheme, parts.hostname, parts.port
        self.in_flight = 0


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None):
        super().__init__(reason)
        self.wait = wait


class OpenAIDescriber:
    """Describe frames through an OpenAI-compatible chat-completions endpoint.

    ``model`` is the name the server knows the model by; ``base_url`` ends
    before ``/chat/completions`` (e.g. ``http://localhost:8000/v1``), or is a
    list of such URLs (replicas); ``concurrency`` is per endpoint.
    ``connect_timeout`` and ``read_timeout`` (s) bound a connection and a
    whole answer; ``stop_after_failed_requests`` is the run's fail-fast rule
    (module docstring; default ``None``: twice the items in progress, at least 4).
    ``sleep`` is the function used to wait between attempts (default: a wait
    that ``stop()`` ends).
    """

    name = "openai"
    max_batch_size = 1

    def __init__(
        self,
        model: str,
        base_url: str | Sequence[str] = "http://localhost:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_new_tokens: int = 1024,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        max_retries: int = 6,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        stop_after_failed_requests: int | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        jpeg_quality: int = 90,
        video_input: str = "frames",
        extra_body: dict | None = None,
        rng: Any = None,
        sleep: Callable[[float], None] | None = None,
    ):
        import numpy as np

        if not model:
            raise ValueError("the openai backend needs --model: the model name the server serves")
        _check_settings(api_key_env, video_input, extra_body or {}, connect_timeout=connect_timeout,
                        read_timeout=read_timeout, backoff_max=backoff_max)
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        if not urls:
            raise ValueError("the openai backend needs at least one base_url")
        self._endpoints = [_Endpoint(url, api_key_env) for url in urls]
        if len({e.url for e in self._endpoints}) < len(urls):
            raise ValueError(f"base_url names the same endpoint twice: {urls}")
        self.model = model
        self.base_url = self._endpoints[0].url if len(urls) == 1 else [e.url for e in self._endpoints]
        self.api_key_env = api_key_env
        self.concurrency = max(1, int(concurrency))
        self.max_concurrency = self.concurrency * len(self._endpoints)
        self.max_new_tokens = int(max_new_tokens)
        self.connect_timeout, self.read_timeout = float(connect_timeout), float(read_timeout)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.stop_after_failed_requests = None if stop_after_failed_requests is None else int(stop_after_failed_requests)
        self.max_response_bytes = int(max_response_bytes)
        self.jpeg_quality = int(jpeg_quality)
        self.video_input = video_input
        self.extra_body = dict(extra_body or {})
        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._stopping = threading.Event()
        self._sleep = sleep or self._stopping.wait
        self._slots = threading.Condition()  # guards the endpoints' slots, the counters and the rng
        self._next = 0
        self._failed_in_a_row = self._in_progress = 0
        # no proxy or .netrc from the environment: requests go to base_url as given, and no credential but the key;
        # each request sets its own timeouts (_request)
        self._client = httpx.Client(trust_env=False, limits=httpx.Limits(
            max_connections=None, max_keepalive_connections=self.max_concurrency))

    def config(self) -> dict:
        """The settings that change the text (hashed into the cache key)."""
        config = {"model": self.model, "max_new_tokens": self.max_new_tokens, "temperature": 0.0,
                  "image_format": "jpeg", "jpeg_quality": self.jpeg_quality}
        if self.video_input != "frames":
            config["video_input"] = self.video_input
        if self.extra_body:
            config["extra_body"] = dict(self.extra_body)
        return config

    def run_info(self) -> dict:
        """Settings recorded in the manifest that do not change the text (no secrets)."""
        return {"base_url": self.base_url, "api_key_env": self.api_key_env, "concurrency": self.concurrency,
                "connect_timeout_s": self.connect_timeout, "read_timeout_s": self.read_timeout,
                "max_retries": self.max_retries, "backoff_max_s": self.backoff_max,
                "stop_after_failed_requests": self.stop_after_failed_requests,
                "max_response_bytes": self.max_response_bytes}

    def request_body(self, request: DescribeRequest) -> dict:
        """The chat-completions JSON body for one request."""
        messages = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        urls = [encode_jpeg(frame, self.jpeg_quality) for frame in request.frames]
        if request.is_video and self.video_input == "video":
            frames = ",".join(url.removeprefix("data:image/jpeg;base64,") for url in urls)
            content: list[dict] = [{"type": "video_url", "video_url": {"url": "data:video/jpeg;base64," + frames}}]
        else:
            content = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
        texts = [{"type": "text", "text": part} for part in request.parts or (request.prompt,)]
        at = request.media_at if request.parts else 0
        messages.append({"role": "user", "content": texts[:at] + content + texts[at:]})
        return {**self.extra_body, "model": self.model, "messages": messages, "temperature": 0,
                "max_tokens": self.max_new_tokens}

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        return [self._describe_one(r) for r in requests]

    def load(self) -> "OpenAIDescriber":
        """Check that every endpoint answers and, where it lists its models, serves ``model``; start a run."""
        self._stopping.clear()
        self._failed_in_a_row = 0
        wait = min(self.read_timeout, 30.0)
        for endpoint in self._endpoints:
            try:
                status, _, data = self._request("GET", endpoint.url + "/models", wait)
            except httpx.ConnectError as err:
                self._stop_if_unreachable(endpoint, err)  # the message a first request would give
                continue
            except httpx.TimeoutException as err:
                connect = isinstance(err, httpx.ConnectTimeout)
                what, limit = ("connection", self.connect_timeout) if connect else ("answer", wait)
                raise DescriberEnvironmentError(
                    f"{endpoint.url}/models gave no {what} within {limit:g} s ({type(err).__name__}): "
                    f"the server at {endpoint.url} is not answering. Fix: check that it has finished starting (its "
                    "log), that nothing stands between (a firewall, a VPN), or fix --base-url") from None
            except (httpx.HTTPError, _Retry):
                continue  # a flaky answer: the requests themselves retry
            if status != 200:
                continue  # a server without the listing route: its answers will tell
            try:
                served = [m["id"] for m in json.loads(data)["data"]]
            except (*JSON_ERRORS, KeyError, TypeError):
                continue
            if self.model not in served:
                listed = self._redact(", ".join(map(repr, served[:20])))
                raise DescriberEnvironmentError(
                    f"{endpoint.url} does not serve the model {self.model!r}; it serves "
                    f"{listed or 'no model'}. Fix: pass one of those names as --model, "
                    "or start the server with this model")
        return self

    def stop(self) -> None:
        """End the waits between attempts at once: the run is over (``load()`` starts the next one)."""
        self._stopping.set()

    def _acquire(self) -> _Endpoint:
        """The endpoint with the fewest requests in flight (round-robin among ties), waiting for a free slot."""
        with self._slots:
            self._slots.wait_for(lambda: any(e.in_flight < self.concurrency for e in self._endpoints))
            endpoint = min(self._endpoints[self._next:] + self._endpoints[:self._next], key=lambda e: e.in_flight)
            endpoint.in_flight += 1
            self._next = (self._endpoints.index(endpoint) + 1) % len(self._endpoints)
            return endpoint

    def _describe_one(self, request: DescribeRequest) -> str:
        body = json.dumps(self.request_body(request)).encode("utf-8")
        attempts = tenacity.Retrying(retry=tenacity.retry_if_exception_type(_Retry),
                                     stop=tenacity.stop_after_attempt(self.max_retries + 1),
                                     wait=self._wait, sleep=self._pause)
        with self._slots:
            self._in_progress += 1
        try:
            return attempts(self._attempt, body)
        except tenacity.RetryError as err:
            last = err.last_attempt
            raise OpenAIError(f"gave up after {last.attempt_number} attempts: {last.exception()}") from None
        finally:
            with self._slots:
                self._in_progress -= 1

    def _attempt(self, body: bytes) -> str:
        if self._stopping.is_set():
            raise OpenAIError("not sent: the run has stopped")
        endpoint = self._acquire()
        try:
            text = self._post(endpoint, body)
        except _Retry as failure:
            self._count_failure(failure)
            raise
        finally:
            with self._slots:  # no slot is held while waiting to retry
                endpoint.in_flight -= 1
                self._slots.notify()
        with self._slots:
            self._failed_in_a_row = 0
        return text

    def _count_failure(self, failure: "_Retry") -> None:
        """Count a failed request; ``stop_after_failed_requests`` of them in a row, none answered, stop the run."""
        with self._slots:
            self._failed_in_a_row += 1
            count = self._failed_in_a_row
            limit = self.stop_after_failed_requests or max(4, 2 * self._in_progress)
        if count >= limit:
            urls = ", ".join(e.url for e in self._endpoints)
            raise DescriberEnvironmentError(
                f"the last {count} requests to {urls} for model {self.model!r} all failed, and none was answered "
                f"(the last: {failure}): the server cannot serve this run. Fix: check the server and its log; when "
                "it is overloaded, lower --concurrency; then run the same command again")

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Seconds before the next attempt: the server's ``Retry-After`` up to ``backoff_max``, else the back-off."""
        failure = state.outcome.exception()
        if failure.wait is not None:
            return min(self.backoff_max, failure.wait)
        with self._slots:
            jitter = 0.5 + 0.5 * float(self._rng.random())
        return min(self.backoff_max, self.backoff_base * 2.0 ** (state.attempt_number - 1)) * jitter

    def _pause(self, seconds: float) -> None:
        """Wait ``seconds`` between attempts, or less when ``stop()`` is called; then, if stopped, give up."""
        self._sleep(seconds)
        if self._stopping.is_set():
            raise OpenAIError("not retried: the run has stopped")

    def _redact(self, text: str) -> str:
        """``text`` without the API key's value and any ``Authorization`` / ``Bearer`` value."""
        return redact(text, [os.environ.get(self.api_key_env, "")])

    def _request(self, method: str, url: str, timeout: float,
                 content: bytes | None = None) -> tuple[int, httpx.Headers, bytes]:
        """``(status, headers, body)`` of one request; the body is read as a stream, bounded in size and time."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env)  # read at each request; only ever in this header
        if key:
            headers["Authorization"] = f"Bearer {key}"
        started = time.monotonic()
        with self._client.stream(method, url, content=content, headers=headers,
                                 timeout=httpx.Timeout(timeout, connect=self.connect_timeout)) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.max_response_bytes:
                    raise _Retry(f"the server's answer is longer than {self.max_response_bytes} bytes; it was not "
                                 "read")
                if time.monotonic() - started > timeout:
                    raise _Retry(f"the server's answer took longer than {timeout:g} s (read_timeout)")
            return response.status_code, response.headers, bytes(body)

    def _post(self, endpoint: _Endpoint, body: bytes) -> str:
        url = endpoint.url + "/chat/completions"
        for again in (False, True):
            try:
                status, headers, data = self._request("POST", url, self.read_timeout, body)
                break
            except httpx.ConnectTimeout:
                raise _Retry(f"ConnectTimeout: no connection within {self.connect_timeout:g} s") from None
            except httpx.TimeoutException as err:
                raise _Retry(f"{type(err).__name__}: no answer within {self.read_timeout:g} s") from None
            except httpx.TransportError as err:
                if isinstance(err, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)) and not again:
                    continue  # broken once: perhaps a stale kept-alive connection
                if isinstance(err, httpx.ConnectError):
                    self._stop_if_unreachable(endpoint, err)
                raise _Retry(self._redact(f"{type(err).__name__}: {err}")) from None
        if status == 200:
            return _answer_text(data, os.environ.get(self.api_key_env, ""))
        message = self._redact(_server_message(data))
        if status in (408, 429) or status >= 500:
            raise _Retry(f"HTTP {status}: {message}", _parse_retry_after(headers.get("Retry-After")))
        if status in (401, 403, 404):
            raise self._refused(endpoint, status, message)
        raise OpenAIError(f"HTTP {status} from {url}: {message}")

    def _stop_if_unreachable(self, endpoint: _Endpoint, error: httpx.ConnectError) -> None:
        """End the run (``DescriberEnvironmentError``) when nothing listens at ``endpoint`` or its host does not
        resolve (the operating system's error under ``error``); return for another connection error."""
        err: BaseException | None = error
        while err is not None and not isinstance(err, OSError):
            err = err.__cause__ or err.__context__
        url = f"{endpoint.url}/chat/completions"
        if isinstance(err, socket.gaierror):
            why = f"the host name {endpoint.host!r} does not resolve ({err})"
            fix = "check the host in --base-url"
        elif not isinstance(err, ConnectionRefusedError):
            return
        else:
            port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
            why = f"nothing accepts connections at {endpoint.host}:{port}"
            fix = (f"start the server (e.g. `vllm serve {self.model} --port {endpoint.port or 8000}`), wait until "
                   f"{endpoint.url}/models answers, or fix --base-url")
        raise DescriberEnvironmentError(f"cannot reach {url} for model {self.model!r}: {why}. Fix: {fix}.") from None

    def _refused(self, endpoint: _Endpoint, status: int, message: str) -> DescriberEnvironmentError:
        url = f"{endpoint.url}/chat/completions"
        if status == 404:
            fix = (f"the server does not serve a model named {self.model!r} (see {endpoint.url}/models for the "
                   "names it serves; vLLM serves the id given to `vllm serve` unless --served-model-name is "
                   "set), or --base-url lacks its /v1 path")
        else:
            fix = (f"the server refused the credentials: put a valid API key in the environment variable "
                   f"{self.api_key_env} (--api-key-env names another variable)")
        return DescriberEnvironmentError(f"HTTP {status} from {url} for model {self.model!r}: "
                                         f"{message.rstrip('.')}. Fix: {fix}.")


def _check_settings(api_key_env, video_input: str, extra_body: dict, **waits) -> None:
    """``ValueError`` for an ``api_key_env`` that is no variable's name (never repeating it), an unknown
    ``video_input``, an ``extra_body`` that sets the backend's own fields, or a wait that is not a finite number
    of seconds above 0."""
    if not isinstance(api_key_env, str) or not _VARIABLE_NAME.fullmatch(api_key_env):
        raise ValueError("--api-key-env takes the name of an environment variable (letters, digits and '_'), not "
                         "the key itself: put the key in a variable (export MY_KEY=...) and pass --api-key-env MY_KEY")
    if video_input not in ("frames", "video"):
        raise ValueError(f"video_input must be 'frames' or 'video', got {video_input!r}")
    reserved = {"model", "messages", "temperature", "max_tokens"} & set(extra_body)
    if reserved:
        raise ValueError(f"extra_body cannot set {sorted(reserved)}: they are options of the backend")
    for name, value in waits.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number of seconds above 0, got {value!r}")


def _answer_text(data: bytes, key: str) -> str:
    """The text of a chat completion, ``key`` (the API key, or "") redacted; ``_Retry`` for a body that holds none."""

    try:
        choice = json.loads(data)["choices"][0]
        message = choice["message"]
    except (*JSON_ERRORS, KeyError, IndexError, TypeError):
        raise _Retry(f"the server's answer is not a chat completion: {redact(repr(data[:300]), [key])}") from None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if p.get("type", "text") == "text")
    if not isinstance(content, str):
        raise _Retry(f"the server's answer holds no text: its content is {redact(json.dumps(content)[:100], [key])}")
    if not content.strip():
        finish = choice.get("finish_reason")  # a dict: its "message" was read
        raise _Retry(f"the server's answer is empty (finish_reason {redact(repr(finish), [key])})")
    return content.replace(key, REDACTED) if key else content


def _server_message(data: bytes) -> str:
    with contextlib.suppress(*JSON_ERRORS, AttributeError):
        err = json.loads(data).get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return data[:500].decode("utf-8", "replace").strip() or "(no message)"


def _parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), or None.

    A value that is not a finite time (``inf``, ``nan``, a date out of range) is ignored (None); a time in
    the past is 0. The caller caps it (``backoff_max``).
    """
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - now()
        except (TypeError, ValueError, OverflowError, IndexError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None
