"""Requests to OpenAI-compatible servers: the endpoints, retries, streaming, liveness and the ``/models`` listing.

A backend that speaks to such a server keeps its own request body and the parsing of its answer; this module sends
the body and brings the answer back, under the rules docs/gpu.md ("The openai backend") states in full:

* ``ServerOptions``: the options every such backend shares (where the servers are, every wait, the retries);
  a backend's own options class extends it.
* ``Transport(options, model).post(plain, streamed)``: one POST to ``/chat/completions`` of the endpoint with the
  fewest requests in flight, retried (``tenacity``) on HTTP 408, 429, 5xx, broken connections and time-outs, waiting
  ``min(backoff_max, backoff_base * 2**attempt)`` seconds times a jitter in [0.5, 1) or the server's
  ``Retry-After``; streamed while the server streams (server-sent events, each wait bounded), else whole. A server
  that fails every request, or gives no sign of life, stops the run (``DescriberEnvironmentError``).
* ``Transport.model_card(endpoint)``: what ``GET {endpoint}/models`` lists of the model, the one reader of that
  listing.

A POST is one ``_attempt`` per try (the endpoint, the status rules, the fall-back to whole answers) over one
``_exchange`` (the bytes, and the text of a stream, ``_read_events``); a GET of the listing is one ``_exchange``.

HTTP goes through one thread-safe ``httpx.Client`` whose reads keep a deadline for the whole response head
(``head_deadline``); the body is read as a stream, at most ``max_response_bytes`` of it. The API key is read from
the environment variable ``api_key_env`` at each request and goes only into the ``Authorization`` header; whatever
the server says reaches a message redacted (``sova_lib.storage.redact``).
"""
from __future__ import annotations

import contextlib
import email.utils
import json
import math
import os
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence
from urllib.parse import urlsplit

from sova_lib.describe.backends.openai_wire import StreamedAnswer, StreamError, cut, server_message
from sova_lib.describe.contract import DescriberEnvironmentError, option
from sova_lib.storage import JSON_ERRORS, REDACTED, redact

if TYPE_CHECKING:  # httpx and tenacity are imported where a request is made: a parser reading ServerOptions needs neither
    import httpx
    import tenacity

__all__ = ["MAX_RESPONSE_BYTES", "STREAM_FIELDS", "OpenAIError", "ServerOptions", "Transport", "parse_retry_after"]

#: The largest answer body read (bytes); a chat completion of 1,024 tokens is some 10 KB.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

#: What a streamed request adds to the body (OpenAI's chat completions: ``stream``, ``stream_options``).
STREAM_FIELDS = {"stream": True, "stream_options": {"include_usage": True}}

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Statuses a server answers a request it cannot parse with (a server that refuses ``stream``).
_REFUSED = (400, 422)

#: A refusal that names the stream fields (FastAPI's "Unexpected fields in the request: {'stream', ...}", vLLM's
#: "Stream options can only be defined when `stream=True`"), not a media type such as text/event-stream.
_NAMES_STREAM = re.compile(r"(?<![\w/-])stream(_options| options)?(?![\w/-])", re.IGNORECASE)


class OpenAIError(RuntimeError):
    """A request that failed for good (a 4xx answer, an answer that is no description, or retries used up);
    ``status``: the HTTP status, if any; ``kind``: how it failed, for the run's summary (``"refused"``: a 4xx,
    ``"no answer"``: retries used up; for an answer that is no description ``"empty"``, ``"too long"`` (over
    ``max_response_bytes``) or ``"unreadable"`` (not a chat completion, no text): the item's failure, not retried
    in this run (greedy decoding gives the same answer again), not counted by the fail-fast rule)."""

    def __init__(self, message: str, kind: str = "refused", status: int | None = None):
        super().__init__(message)
        self.kind, self.status = kind, status


class _Retry(Exception):
    """A failed attempt to retry: ``wait`` is the server's ``Retry-After``; ``silent`` the seconds waited for an
    answer that never began (a time-out with nothing received), None otherwise."""

    def __init__(self, reason: str, wait: float | None = None, silent: float | None = None):
        super().__init__(reason)
        self.wait, self.silent = wait, silent


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """The options of a backend on an OpenAI-compatible server that concern the transport; ``ValueError`` at
    construction for an ``api_key_env`` that is no variable's name (never repeating it), a ``base_url`` that is not
    one or more distinct http(s) URLs, or a wait that is not a finite number of seconds above 0."""

    base_url: str | Sequence[str] = option("http://localhost:8000/v1", "the server's URL, or several (replicas "
                                           "of one model sharing the requests)", flag="URL")
    api_key_env: str = option("OPENAI_API_KEY", "environment variable holding the API key", flag="NAME")
    concurrency: int = option(8, "requests in flight per server", flag="N")
    connect_timeout: float = option(10.0, "seconds to wait for a connection to the server", flag="S")
    read_timeout: float = option(120.0, "seconds to wait for one whole answer from a server that does not stream",
                                 flag="S")
    first_token_timeout: float = option(20.0, "seconds to wait for the first streamed token, and the longest "
                                              "silence between two (a stream that keeps coming is not cut)", flag="S")
    token_timeout: float | None = option(None, "longest silence between two streamed tokens, in seconds "
                                               "(null: first_token_timeout)")
    stream_timeout: float = option(1800.0, "seconds a whole streamed answer may take")
    stream: bool = option(True, "ask for the answer as a stream")
    max_retries: int = option(6, "retries of a failed request")
    backoff_base: float = option(1.0, "seconds before the first retry, doubled at each retry")
    backoff_max: float = option(60.0, "longest wait between two attempts, in seconds")
    stop_after_failed_requests: int | None = option(None, "failed requests in a row that stop the run (null: "
                                                           "twice the items in progress, at least 4)")
    max_response_bytes: int = option(MAX_RESPONSE_BYTES, "largest answer read, in bytes")

    def __post_init__(self):
        if not isinstance(self.api_key_env, str) or not _VARIABLE_NAME.fullmatch(self.api_key_env):
            raise ValueError("--api-key-env takes the name of an environment variable (letters, digits and '_'), "
                             "not the key itself: put the key in a variable (export MY_KEY=...) and pass "
                             "--api-key-env MY_KEY")
        for name in ("connect_timeout", "read_timeout", "backoff_max", "first_token_timeout", "token_timeout",
                     "stream_timeout"):
            value = getattr(self, name)
            if not (name == "token_timeout" and value is None) and not (
                    isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number of seconds above 0, got {value!r}")
        _endpoints(self.base_url, self.api_key_env)


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


def _endpoints(base_url: str | Sequence[str], api_key_env: str) -> list[_Endpoint]:
    """One ``_Endpoint`` per URL of ``base_url`` (a URL or a list of replicas); ``ValueError`` for none or a
    repeated one."""
    urls = [base_url] if isinstance(base_url, str) else list(base_url)
    if not urls:
        raise ValueError("the openai backend needs at least one base_url")
    endpoints = [_Endpoint(url, api_key_env) for url in urls]
    if len({e.url for e in endpoints}) < len(urls):
        raise ValueError(f"base_url names the same endpoint twice: {urls}")
    return endpoints


class Transport:
    """The requests of one describer to its endpoints (``options``: ``ServerOptions``; ``model``: the served
    model's name, in messages). ``rng`` draws the retries' jitter (default: seed 0); ``sleep`` waits between
    attempts (default: a wait that ``stop()`` ends). ``start()`` begins a run, ``stop()`` ends its waits."""

    def __init__(self, options: ServerOptions, model: str, rng: Any = None,
                 sleep: Callable[[float], None] | None = None):
        import numpy as np

        self.options, self.model, self.endpoints = options, model, _endpoints(options.base_url, options.api_key_env)
        self.concurrency = max(1, int(options.concurrency))
        self.token_timeout = options.first_token_timeout if options.token_timeout is None else options.token_timeout
        self.stream = bool(options.stream)
        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._stopping = threading.Event()
        self._sleep = sleep or self._stopping.wait
        self._slots = threading.Condition()  # guards the endpoints' slots, the counters and the rng
        self._next = 0
        self._failed_in_a_row = self._in_progress = 0
        self._alive_at = time.monotonic()  # the server's last sign of life: an answer, a streamed piece, an error
        self._silent = 0  # requests that got nothing at all since then
        self._client: httpx.Client | None = None  # made at the first request (_http): its TLS set-up takes a while

    def start(self) -> None:
        """A run begins: no failure counted yet, the server alive now, waits no longer ended."""
        self._stopping.clear()
        self._failed_in_a_row, self._alive_at, self._silent = 0, time.monotonic(), 0

    def stop(self) -> None:
        """End the waits between attempts at once: the run is over (``start()`` begins the next one)."""
        self._stopping.set()

    def redact(self, text: str) -> str:
        """``text`` without the API key's value and any ``Authorization`` / ``Bearer`` value."""
        return redact(text, [os.environ.get(self.options.api_key_env, "")])

    # ------------------------------------------------------------------ the listing

    def model_card(self, endpoint: _Endpoint) -> dict:
        """What ``GET {endpoint}/models`` reports of ``model`` (``id``, ``root``, ``created``, ``owned_by``, where
        given; a ``created`` within a minute of the answer's own time, its ``Date`` header else this machine's clock,
        left out: the time of the request, not of the model, vLLM's ``ModelCard``); ``{}`` for a server without that
        listing (a status below 500 other than 200, 401 and 403, or a body that lists nothing).

        ``DescriberEnvironmentError`` for an endpoint that cannot be reached, does not answer within
        ``connect_timeout`` + ``min(read_timeout, 30)`` seconds, refuses the credentials, answers 5xx, or lists its
        models without ``model``.
        """
        url = endpoint.url + "/models"
        try:
            status, headers, data = self._exchange(endpoint, "GET", "/models", min(self.options.read_timeout, 30.0))
        except _Retry as err:
            raise DescriberEnvironmentError(
                f"{url} gave no answer ({err}): the server at {endpoint.url} is not answering. Fix: check that it has "
                "finished starting (its log), that nothing stands between (a firewall, a VPN), or fix --base-url") \
                from None
        if status in (401, 403):
            raise self._refused(endpoint, status, cut(self.redact(server_message(data))))
        if status >= 500:
            raise DescriberEnvironmentError(f"{url} answered HTTP {status}: "
                                            f"{cut(self.redact(server_message(data)))}. Fix: check the server's log")
        try:
            listed = [m for m in json.loads(data)["data"] if isinstance(m, dict)] if status == 200 else None
        except (*JSON_ERRORS, KeyError, TypeError):
            listed = None
        if listed is None:
            return {}
        card = next((m for m in listed if m.get("id") == self.model), None)
        if card is None:
            served = self.redact(", ".join(repr(m.get("id")) for m in listed[:20]))
            raise DescriberEnvironmentError(f"{endpoint.url} does not serve the model {self.model!r}; it serves "
                                            f"{served or 'no model'}. Fix: pass one of those names as --model, or "
                                            "start the server with this model")
        found = {k: card[k] for k in ("id", "root", "created", "owned_by") if card.get(k) is not None}
        if isinstance(found.get("created"), (int, float)) and abs(found["created"] - _answered_at(headers)) <= 60:
            del found["created"]
        return found

    # ------------------------------------------------------------------ a request

    def post(self, plain: bytes, streamed: bytes, hint: Callable[[], str | None] = lambda: None) -> str | bytes:
        """The answer to one chat-completions request: the text of a streamed answer, or the body of a whole one
        (HTTP 200). ``plain`` and ``streamed`` are the request's body without and with ``STREAM_FIELDS``; ``hint()``
        is added to a failure the server answered (None: nothing).

        ``OpenAIError`` for a request refused (4xx), an answer that is no description, retries used up or a stopped
        run; ``DescriberEnvironmentError`` when the server cannot serve the run.
        """
        import tenacity

        attempts = tenacity.Retrying(retry=tenacity.retry_if_exception_type(_Retry),
                                     stop=tenacity.stop_after_attempt(self.options.max_retries + 1),
                                     wait=self._wait, sleep=self._pause)
        with self._slots:
            self._in_progress += 1
        try:
            return attempts(self._attempt, plain, streamed, hint)
        except tenacity.RetryError as err:
            last = err.last_attempt
            raise OpenAIError(f"gave up after {last.attempt_number} attempts: {last.exception()}", "no answer") \
                from None
        finally:
            with self._slots:
                self._in_progress -= 1

    def _attempt(self, plain: bytes, streamed: bytes, hint: Callable[[], str | None]) -> str | bytes:
        """One attempt on the least busy endpoint, counted by the fail-fast rule: the answer's text (streamed) or
        body (whole, HTTP 200); ``_Retry`` for a failure to retry, ``OpenAIError`` for a refusal. Streamed while the
        server streams; a server that answers a stream whole, or refuses one naming the stream fields, is sent the
        same request whole, and whole requests from then on (said once on stderr)."""
        if self._stopping.is_set():
            raise OpenAIError("not sent: the run has stopped")
        endpoint, refusal = self._acquire(), None
        try:
            for stream in (True, False) if self.stream else (False,):
                status, headers, data = self._exchange(endpoint, "POST", "/chat/completions", self.options.read_timeout,
                                                       streamed if stream else plain, stream)
                if isinstance(data, str):  # a streamed answer's text
                    break
                self._alive()
                if status == 200:
                    if stream:
                        self._stop_streaming("it answered a streamed request whole")
                    break
                message = cut(self.redact(server_message(data)))
                if status in (408, 429) or status >= 500:
                    raise _Retry(f"HTTP {status}: {message}", parse_retry_after(headers.get("Retry-After")))
                if status in (401, 403, 404):
                    raise self._refused(endpoint, status, message)
                refusal = OpenAIError(f"HTTP {status} from {endpoint.url}/chat/completions: {message}", status=status)
                if not (stream and status in _REFUSED and _NAMES_STREAM.search(message)):
                    raise refusal  # a refusal that does not name the stream fields is about the request itself
            if refusal is not None:  # the same request, not streamed, is answered
                self._stop_streaming(f"it refused a streamed request ({refusal})")
        except (_Retry, OpenAIError) as failure:
            more = hint()
            if more and str(failure).startswith("HTTP "):  # a server's answer
                failure.args = (f"{failure}; {more}",)
            if isinstance(failure, _Retry):
                self._count_failure(failure)
            else:  # the server answered (a refusal, an answer that is no description): it is alive
                with self._slots:
                    self._failed_in_a_row = 0
            raise
        finally:
            with self._slots:  # no slot is held while waiting to retry
                endpoint.in_flight -= 1
                self._slots.notify()
        with self._slots:
            self._failed_in_a_row = 0
        return data

    def _exchange(self, endpoint: _Endpoint, method: str, path: str, timeout: float, content: bytes | None = None,
                  streamed: bool = False) -> tuple[int, httpx.Headers, bytes | str]:
        """``(status, headers, body)`` of one request to ``endpoint``, the body read as a stream, bounded in size and
        time; ``_Retry`` when no answer comes (a connection broken before any answer, perhaps a kept-alive one the
        server had closed, is opened again once at once), ``DescriberEnvironmentError`` when nothing listens there.

        ``streamed``: the request asks for a stream; a 200 that streams (server-sent events) gives the answer's
        text as ``body`` (``_read_events``), anything else its bytes, read within ``read_timeout``.
        """
        import httpx

        from sova_lib.describe.backends import head_deadline

        o, url = self.options, endpoint.url + path
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(o.api_key_env)  # read at each request; only ever in this header
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if streamed:  # each read waits at most this long; _read_events keeps the finer bounds
            timeout = max(o.first_token_timeout, self.token_timeout)
            headers["Accept"] = "text/event-stream, application/json"
        for again in (False, True):
            started = time.monotonic()
            try:
                with contextlib.ExitStack() as held:
                    # the status line and headers whole within first_token_timeout (a streamed request) or the
                    # request's timeout, however slowly they trickle in (head_deadline)
                    with head_deadline.head_within(o.first_token_timeout if streamed else timeout):
                        response = held.enter_context(self._http().stream(
                            method, url, content=content, headers=headers,
                            timeout=httpx.Timeout(timeout, connect=o.connect_timeout)))
                    kind = response.headers.get("Content-Type", "")
                    if streamed and response.status_code == 200 and kind.startswith("text/event-stream"):
                        return 200, response.headers, self._read_events(response, started)
                    limit = o.read_timeout if streamed else timeout
                    body = bytearray()
                    for chunk in response.iter_bytes():
                        body += chunk
                        if len(body) > o.max_response_bytes:
                            raise OpenAIError(f"the server's answer is longer than {o.max_response_bytes} bytes; "
                                              "it was not read", "too long")
                        if time.monotonic() - started > limit:
                            raise _Retry(f"the server's answer took longer than {limit:g} s (read_timeout)")
                    return response.status_code, response.headers, bytes(body)
            except httpx.ConnectTimeout:
                raise _Retry(f"ConnectTimeout: no connection within {o.connect_timeout:g} s") from None
            except httpx.TimeoutException as err:
                raise _Retry(f"{type(err).__name__}: no answer within {timeout:g} s", silent=timeout) from None
            except httpx.TransportError as err:
                if isinstance(err, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)) and not again:
                    continue  # broken once: perhaps a stale kept-alive connection
                if isinstance(err, httpx.ConnectError):
                    self._stop_if_unreachable(endpoint, err)
                raise _Retry(self.redact(f"{type(err).__name__}: {err}")) from None
        raise AssertionError("not reached: the second try returns or raises")

    def _read_events(self, response: httpx.Response, started: float) -> str:
        """The text of a streamed answer, each wait bounded: ``first_token_timeout`` until its first piece,
        ``token_timeout`` between pieces, ``stream_timeout`` for the whole; ``_Retry`` when one is passed."""
        import httpx

        answer, size, last, limit = StreamedAnswer(self.redact), 0, None, self.options.max_response_bytes
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise OpenAIError(f"the server's answer is longer than {limit} bytes; it was not read", "too long")
                new = answer.feed(chunk)
                now = time.monotonic()
                if new:  # every piece is a sign of life: another request's wait in vain is not the server's death
                    self._alive()
                    last = now
                self._check_waits(started, last, now)
            answer.close()  # read to its end (after [DONE] too), so the connection is kept for the next request
        except StreamError as err:
            raise _Retry(cut(self.redact(str(err)))) from None
        except httpx.TimeoutException:
            self._check_waits(started, last, time.monotonic())
            raise self._stream_silent(last) from None
        except httpx.TransportError as err:
            raise _Retry(self.redact(f"the stream broke off ({type(err).__name__}: {err})")) from None
        if not (answer.done or answer.finish_reason):
            raise _Retry("the stream ended before the answer did (neither a finish_reason nor [DONE])")
        if not answer.text.strip():
            raise OpenAIError(f"the server's answer is empty (finish_reason {self.redact(repr(answer.finish_reason))})",
                              "empty")
        key = os.environ.get(self.options.api_key_env, "")
        return answer.text.replace(key, REDACTED) if key else answer.text

    def _check_waits(self, started: float, last: float | None, now: float) -> None:
        if last is None and now - started > self.options.first_token_timeout:
            raise self._stream_silent(None)
        if last is not None and now - last > self.token_timeout:
            raise self._stream_silent(last)
        if now - started > self.options.stream_timeout:
            raise _Retry(f"the streamed answer took longer than {self.options.stream_timeout:g} s (stream_timeout)")

    def _stream_silent(self, last: float | None) -> _Retry:
        if last is None:
            wait = self.options.first_token_timeout
            return _Retry(f"no streamed token within {wait:g} s (first_token_timeout)", silent=wait)
        return _Retry(f"the stream went silent for {self.token_timeout:g} s (token_timeout)")

    def _stop_streaming(self, why: str) -> None:
        with self._slots:
            if not self.stream:
                return
            self.stream = False
        print(f"sova: note: {self.endpoints[0].url} does not stream answers: {why}; requests are sent whole from "
              f"now on, each answer bounded by --read-timeout ({self.options.read_timeout:g} s)", file=sys.stderr)

    def _http(self) -> httpx.Client:
        """The one HTTP client, made at the first request."""
        import httpx

        from sova_lib.describe.backends import head_deadline

        with self._slots:
            if self._client is None:
                # no proxy or .netrc from the environment: requests go to base_url as given, and no credential but
                # the key; each request sets its own timeouts (_exchange)
                self._client = httpx.Client(trust_env=False, transport=head_deadline.transport(httpx.Limits(
                    max_connections=None, max_keepalive_connections=self.concurrency * len(self.endpoints))))
            return self._client

    # ------------------------------------------------------------------ routing, waits and liveness

    def _acquire(self) -> _Endpoint:
        """The endpoint with the fewest requests in flight (round-robin among ties), waiting for a free slot."""
        with self._slots:
            self._slots.wait_for(lambda: any(e.in_flight < self.concurrency for e in self.endpoints))
            endpoint = min(self.endpoints[self._next:] + self.endpoints[:self._next], key=lambda e: e.in_flight)
            endpoint.in_flight += 1
            self._next = (self.endpoints.index(endpoint) + 1) % len(self.endpoints)
            return endpoint

    def _alive(self) -> None:
        """The server has given a sign of life: an answer, an error answer, a streamed piece."""
        with self._slots:
            self._alive_at, self._silent = time.monotonic(), 0

    def _count_failure(self, failure: _Retry) -> None:
        """Count a failed request; ``stop_after_failed_requests`` of them in a row, none answered, stop the run; so
        do two requests that got nothing at all, once twice their wait has passed since the last sign of life."""
        with self._slots:
            self._failed_in_a_row += 1
            count = self._failed_in_a_row
            limit = self.options.stop_after_failed_requests or max(4, 2 * self._in_progress)
            silent_for = time.monotonic() - self._alive_at
            if failure.silent is not None:
                self._silent += 1
            silent = self._silent
        urls = ", ".join(e.url for e in self.endpoints)
        if failure.silent is not None and silent >= 2 and silent_for >= 2 * failure.silent:
            raise DescriberEnvironmentError(
                f"{urls} gave no answer to any request for model {self.model!r} for {silent_for:.0f} s (the last: "
                f"{failure}): the server is not answering. Fix: check the server and its log; a server that is "
                "busy or slow to start answering needs a larger --first-token-timeout (--read-timeout for one "
                "that does not stream); then run the same command again")
        if count >= limit:
            raise DescriberEnvironmentError(
                f"the last {count} requests to {urls} for model {self.model!r} all failed, and none was answered "
                f"(the last: {failure}): the server cannot serve this run. Fix: check the server and its log; when "
                "it is overloaded, lower --concurrency; then run the same command again")

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Seconds before the next attempt: the server's ``Retry-After`` up to ``backoff_max``, else the back-off."""
        failure, o = state.outcome.exception(), self.options
        if failure.wait is not None:
            return min(o.backoff_max, failure.wait)
        with self._slots:
            jitter = 0.5 + 0.5 * float(self._rng.random())
        return min(o.backoff_max, o.backoff_base * 2.0 ** (state.attempt_number - 1)) * jitter

    def _pause(self, seconds: float) -> None:
        """Wait ``seconds`` between attempts, or less when ``stop()`` is called; then, if stopped, give up."""
        self._sleep(seconds)
        if self._stopping.is_set():
            raise OpenAIError("not retried: the run has stopped")

    # ------------------------------------------------------------------ failures about the server

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
                   f"{self.options.api_key_env} (--api-key-env names another variable)")
        return DescriberEnvironmentError(f"HTTP {status} from {url} for model {self.model!r}: "
                                         f"{message.rstrip('.')}. Fix: {fix}.")


def _answered_at(headers: httpx.Headers) -> float:
    """When an answer was made (seconds since the epoch): its ``Date`` header, else this machine's clock."""
    with contextlib.suppress(TypeError, ValueError, OverflowError, IndexError):
        if headers.get("Date"):
            return email.utils.parsedate_to_datetime(headers["Date"]).timestamp()
    return time.time()


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
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
