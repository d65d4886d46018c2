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

The answer is streamed (``stream=True``, the default): the body ends with
``"stream": true, "stream_options": {"include_usage": true}`` and the server
sends server-sent events, read by ``openai_wire.StreamedAnswer``; the text is
the same as the whole answer's ``choices[0].message.content``. Streaming tells
a live server from a dead one without cutting a long answer:
``first_token_timeout`` (default 20 s) bounds the wait for the answer's whole
response head (``head_deadline``: a head that trickles in a byte at a time
is cut there too) and for the first piece of text, ``token_timeout`` (default: the same) the silence between two pieces,
``stream_timeout`` (default 1800 s) the whole streamed answer. A server that
answers a streamed request whole, or refuses it with HTTP 400/422 naming the
stream fields (FastAPI's "Unexpected fields in the request"), gets whole
requests from then on (``stream`` turns False; said once on stderr), each
answer bounded by ``read_timeout``. ``stream=False`` sends whole requests from
the start.

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
not serve, or a ``base_url`` without ``/v1``). An answer that arrives but is
no description (content null or empty, a body that is not a chat completion,
a body over ``max_response_bytes``) fails its item at once: the server is
alive and greedy decoding would answer the same, so the item is recorded in
``errors.jsonl`` (``--retry-errors`` asks again on a later run) and the run
goes on. HTTP 408, 429 and 5xx, other connection errors (reset, closed) and
time-outs are retried up to ``max_retries`` times, waiting
``min(backoff_max, backoff_base * 2**attempt)`` seconds times a jitter
factor in [0.5, 1) drawn from ``rng``, or the server's ``Retry-After`` (in
seconds or as an HTTP date; never longer than ``backoff_max``, and ignored
when it is not a finite time); then the item fails. Any other 4xx (e.g. 400:
a request too long for the model) fails the item at once with the server's
message. A server that fails every request stops the run: once
``stop_after_failed_requests`` requests in a row have failed with none
answered (an error answer that is not retried, such as a 4xx, or an answer
that is no description, is an answer and starts the count again) (default: twice the items being described at that moment, at least
4, so each has failed twice), the run stops with
``DescriberEnvironmentError`` naming the last failure: a second or two after
the first failures when the server answers at once with errors. A server that
gives no sign of life (no answer, no error answer, no streamed text) stops the
run once two requests have waited in vain and twice that wait has passed since
its last sign (or since ``load()``): two ``first_token_timeout`` (about 41 s with
the defaults) when it never answers, two ``read_timeout`` for a server that
does not stream. The message of a failed request is the server's own, found by
``openai_wire.server_message`` in any of the error bodies it lists, cut to 500
characters. While no ``video_input="video"`` request of a run has been
answered, a failed one says that the server may not take that form.

Every wait is bounded: ``connect_timeout`` (default 10 s) for a connection, the streaming
limits above, ``read_timeout`` (default 120 s: a long answer of
``max_new_tokens`` from a busy server) for a whole answer that is not
streamed, ``backoff_max`` between attempts. ``stop()`` (the runner calls it when a run ends early, e.g. on
Ctrl-C) ends the waits between attempts at once.

What the server runs is part of the cache key: ``fingerprint()`` (asked once
per run, before anything is skipped) reads ``GET {base_url}/models`` of every
endpoint and keeps what it reports of ``model``: ``id``, ``root`` (vLLM: the
weights' path or hub id), ``created`` and ``owned_by``, where given. A
``created`` within a minute of the answer's own time (its ``Date`` header, else
this machine's clock) is the time of the request, not of the model (vLLM,
SGLang and LMDeploy stamp their listing's ``ModelCard`` with ``time.time()``;
vLLM's ``vllm/entrypoints/openai/protocol.py``), so it is left out. A model
swapped under the same name therefore gets a new cache folder. When the served
model names a folder on this machine (the listing's ``root``, else ``model``:
``transformers serve`` lists the path it was given as ``id`` and ``created: 0``,
its ``cli/serving/model_manager.py``; vLLM the path it serves as ``root``), the
folder's content fingerprint (``sova_lib.fingerprint.folder_fingerprint``, the
transformers backend's) joins the key as ``folder`` and ``sha256``, so a
checkpoint saved over the last one gets a new folder too. ``model_tag``
(``--model-tag``) names the weights instead. When nothing reported changes with
the weights (no ``created`` but the request's time or 0) and no folder is
found, ``weights_note`` says that the cache cannot follow the weights and names
``--model-tag``; ``run_info()`` carries it into the manifest and the run's
summary. An endpoint that cannot be reached stops the run here
(``DescriberEnvironmentError``), even one with nothing left to describe.

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
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

import httpx
import tenacity

from sova_lib.describe.backends import head_deadline
from sova_lib.describe.backends.openai_wire import StreamedAnswer, StreamError, cut, server_message
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest, option
from sova_lib.fingerprint import folder_fingerprint, local_folder
from sova_lib.storage import JSON_ERRORS, REDACTED, redact
from sova_lib.video.frames import to_rgb_image

__all__ = ["OpenAIDescriber", "OpenAIError", "OpenAIOptions", "encode_jpeg"]

#: The largest answer body read (bytes); a chat completion of 1,024 tokens is some 10 KB.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: What a streamed request adds to the body (OpenAI's chat completions: ``stream``, ``stream_options``).
STREAM_FIELDS = {"stream": True, "stream_options": {"include_usage": True}}

#: Statuses a server answers a request it cannot parse with (a server that refuses ``stream``).
_REFUSED = (400, 422)

#: A refusal that names the stream fields (FastAPI's "Unexpected fields in the request: {'stream', ...}", vLLM's
#: "Stream options can only be defined when `stream=True`"), not a media type such as text/event-stream.
_NAMES_STREAM = re.compile(r"(?<![\w/-])stream(_options| options)?(?![\w/-])", re.IGNORECASE)

#: What the first failures of a ``video_input="video"`` request say while no such request has been answered.
_VIDEO_HINT = ("this server does not accept video_input=video; use frames (--backend-option video_input=frames; "
               "docs/gpu.md lists which servers take which form)")


class OpenAIError(RuntimeError):
    """A request that failed for good (a 4xx answer, an answer that is no description, or retries used up);
    ``status``: the HTTP status, if any; ``kind``: how it failed, for the run's summary (``"refused"``: a 4xx,
    ``"no answer"``: retries used up; ``_unusable``'s kinds)."""

    status: int | None = None
    kind: str = "refused"


def encode_jpeg(image: Any, quality: int = 90) -> str:
    """A ``data:image/jpeg;base64,...`` URL of an RGB PIL image (or HxWx3 uint8 array)."""
    buf = io.BytesIO()
    to_rgb_image(image).save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _unusable(kind: str, message: str) -> OpenAIError:
    """The error of an answer that is no description: ``kind`` ``"empty"``, ``"too long"`` (over
    ``max_response_bytes``) or ``"unreadable"`` (not a chat completion, no text). The item's failure: not retried
    in this run (greedy decoding gives the same answer again), not counted by the fail-fast rule."""
    error = OpenAIError(message)
    error.kind = kind
    return error


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
    """A failed attempt to retry: ``wait`` is the server's ``Retry-After``; ``silent`` the seconds waited for an
    answer that never began (a time-out with nothing received), None otherwise."""

    def __init__(self, reason: str, wait: float | None = None, silent: float | None = None):
        super().__init__(reason)
        self.wait, self.silent = wait, silent


@dataclass(frozen=True)
class OpenAIOptions:
    """The options of the openai describer (``sova_lib.describe.contract.backend_options``): ``OpenAIDescriber``'s
    keywords, all but the test hooks ``rng`` and ``sleep``."""

    model: str = option(help="the model name the server serves (--model)")
    base_url: str | Sequence[str] = option("http://localhost:8000/v1", "the server's URL, or several (--base-url)")
    api_key_env: str = option("OPENAI_API_KEY", "environment variable holding the API key (--api-key-env)")
    concurrency: int = option(8, "requests in flight per server (--concurrency)")
    max_new_tokens: int = option(1024, "answer length limit in tokens (--max-new-tokens)")
    connect_timeout: float = option(10.0, "seconds to wait for a connection (--connect-timeout)")
    read_timeout: float = option(120.0, "seconds to wait for a whole answer that is not streamed (--read-timeout)")
    first_token_timeout: float = option(20.0, "seconds to wait for the first streamed token "
                                               "(--first-token-timeout)")
    token_timeout: float | None = option(None, "longest silence between two streamed tokens, in seconds "
                                                "(default: first_token_timeout)")
    stream_timeout: float = option(1800.0, "seconds a whole streamed answer may take")
    stream: bool = option(True, "ask for the answer as a stream")
    max_retries: int = option(6, "retries of a failed request")
    backoff_base: float = option(1.0, "seconds before the first retry, doubled at each retry")
    backoff_max: float = option(60.0, "longest wait between two attempts, in seconds")
    stop_after_failed_requests: int | None = option(None, "failed requests in a row that stop the run (default: "
                                                           "twice the items in progress, at least 4)")
    max_response_bytes: int = option(MAX_RESPONSE_BYTES, "largest answer read, in bytes")
    jpeg_quality: int = option(90, "JPEG quality of the frames sent")
    video_input: str = option("frames", "how a video is sent: frames (one image each) or video")
    extra_body: dict | None = option(None, "a JSON object merged into every request's body")
    model_tag: str | None = option(None, "a name for the weights the server runs, keying the cache (--model-tag)")


def _endpoints(base_url: str | Sequence[str], api_key_env: str) -> list:
    """One ``_Endpoint`` per URL of ``base_url`` (a URL or a list of replicas); ``ValueError`` for none or a
    repeated one."""
    urls = [base_url] if isinstance(base_url, str) else list(base_url)
    if not urls:
        raise ValueError("the openai backend needs at least one base_url")
    endpoints = [_Endpoint(url, api_key_env) for url in urls]
    if len({e.url for e in endpoints}) < len(urls):
        raise ValueError(f"base_url names the same endpoint twice: {urls}")
    return endpoints


class OpenAIDescriber:
    """Describe frames through an OpenAI-compatible chat-completions endpoint.

    ``model`` is the name the server knows the model by; ``base_url`` ends
    before ``/chat/completions`` (e.g. ``http://localhost:8000/v1``), or is a
    list of such URLs (replicas); ``concurrency`` is per endpoint.
    ``connect_timeout`` and ``read_timeout`` (s) bound a connection and a
    whole answer; ``stop_after_failed_requests`` is the run's fail-fast rule
    (module docstring; default ``None``: twice the items in progress, at least 4).
    ``model_tag``: a name for the weights the server runs, which keys the cache in place of what the server
    reports (``fingerprint``).
    ``sleep`` is the function used to wait between attempts (default: a wait
    that ``stop()`` ends).
    """

    name = "openai"
    max_batch_size = 1
    Options = OpenAIOptions

    def __init__(
        self,
        model: str,
        base_url: str | Sequence[str] = "http://localhost:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_new_tokens: int = 1024,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        first_token_timeout: float = 20.0,
        token_timeout: float | None = None,
        stream_timeout: float = 1800.0,
        stream: bool = True,
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
        model_tag: str | None = None,
    ):
        if not model:
            raise ValueError("the openai backend needs --model: the model name the server serves")
        _check_settings(api_key_env, video_input, extra_body or {}, connect_timeout=connect_timeout,
                        read_timeout=read_timeout, backoff_max=backoff_max, first_token_timeout=first_token_timeout,
                        token_timeout=first_token_timeout if token_timeout is None else token_timeout,
                        stream_timeout=stream_timeout)
        self._endpoints = _endpoints(base_url, api_key_env)
        if model_tag is not None and not str(model_tag).strip():
            raise ValueError("model_tag must name the weights (e.g. a checkpoint's step or date), not be empty")
        self.model = model
        self.model_tag = None if model_tag is None else str(model_tag)
        self.base_url = self._endpoints[0].url if len(self._endpoints) == 1 else [e.url for e in self._endpoints]
        self.api_key_env = api_key_env
        self.concurrency = max(1, int(concurrency))
        self.max_concurrency = self.concurrency * len(self._endpoints)
        self.max_new_tokens = int(max_new_tokens)
        self.connect_timeout, self.read_timeout = float(connect_timeout), float(read_timeout)
        self.first_token_timeout = float(first_token_timeout)
        self.token_timeout = self.first_token_timeout if token_timeout is None else float(token_timeout)
        self.stream_timeout = float(stream_timeout)
        self.stream = bool(stream)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.stop_after_failed_requests = None if stop_after_failed_requests is None else int(stop_after_failed_requests)
        self.max_response_bytes = int(max_response_bytes)
        self.jpeg_quality = int(jpeg_quality)
        self.video_input = video_input
        self.extra_body = dict(extra_body or {})
        self.weights_note: str | None = None  # set by fingerprint() (module docstring)
        self._start_run_state(rng, sleep)

    def _start_run_state(self, rng, sleep) -> None:
        """The state a run changes as it goes: the retry jitter's generator, the stop signal and the wait, the
        endpoints' turn, the failure and liveness counters, and the HTTP client (made at the first request)."""
        import numpy as np

        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._stopping = threading.Event()
        self._sleep = sleep or self._stopping.wait
        self._slots = threading.Condition()  # guards the endpoints' slots, the counters and the rng
        self._next = 0
        self._failed_in_a_row = self._in_progress = 0
        self._alive_at = time.monotonic()  # the server's last sign of life: an answer, a streamed piece, an error
        self._silent = 0  # requests that got nothing at all since then
        self._video_answered = False
        self._client: httpx.Client | None = None  # made at the first request (_http): its TLS set-up takes a while

    def config(self) -> dict:
        """The settings that change the text (hashed into the cache key); a ``model`` that names a folder on this
        machine as that folder's one path (``sova_lib.fingerprint.local_folder``)."""
        model = str(local_folder(self.model) or self.model)  # a folder as one path, however it was spelled
        config = {"model": model, "max_new_tokens": self.max_new_tokens, "temperature": 0.0,
                  "image_format": "jpeg", "jpeg_quality": self.jpeg_quality}
        if self.video_input != "frames":
            config["video_input"] = self.video_input
        if self.extra_body:
            config["extra_body"] = dict(self.extra_body)
        return config

    def fingerprint(self) -> dict:
        """What the endpoints run, for the cache key (module docstring): ``{"method": "server-models", "id": ...,
        "root": ..., ...}`` as ``GET /models`` reports ``model``, or ``{"method": "tag", "tag": model_tag}``.

        ``DescriberEnvironmentError`` when an endpoint cannot be reached, refuses the credentials, does not serve
        ``model``, or when the endpoints report different models.
        """
        cards = [{k: str(local_folder(v) or v) if k in ("id", "root") and isinstance(v, str) else v
                  for k, v in self._model_card(endpoint).items()} for endpoint in self._endpoints]  # one path a folder
        self.weights_note = None
        if self.model_tag is not None:
            return {"method": "tag", "tag": self.model_tag}
        if any(card != cards[0] for card in cards[1:]):
            shown = "; ".join(f"{e.url}: {self._redact(json.dumps(c))}" for e, c in zip(self._endpoints, cards))
            raise DescriberEnvironmentError(f"the endpoints report different models named {self.model!r} ({shown}). "
                                            "Fix: serve one checkpoint on every --base-url")
        card = cards[0]
        folder = local_folder(card.get("root")) or local_folder(self.model)
        if folder is not None:
            return {"method": "server-models", **card, "folder": str(folder), "sha256": folder_fingerprint(folder)}
        created = card.get("created")
        if not (isinstance(created, (int, float)) and created > 0):
            shown = ", ".join(f"{k} {v!r}" for k, v in card.items()) or "nothing"
            self.weights_note = (
                f"the cache cannot follow the weights: {self._endpoints[0].url}/models reports {self._redact(shown)} "
                f"for model {self.model!r}, nothing that changes with the weights, and names no folder on this "
                "machine, so a checkpoint saved over this one would reuse these descriptions; --model-tag names the "
                "weights (e.g. --model-tag step-1200)")
        return {"method": "server-models", **card}

    def _model_card(self, endpoint: _Endpoint) -> dict:
        """What ``GET {endpoint}/models`` reports of ``model`` (``id``, ``root``, ``created``, ``owned_by``, where
        given; a ``created`` that is the answer's own time left out); ``{}`` when the server has no such route."""
        url = endpoint.url + "/models"
        try:
            status, headers, data = self._request("GET", url, min(self.read_timeout, 30.0))
        except httpx.ConnectError as err:
            self._stop_if_unreachable(endpoint, err)
            raise DescriberEnvironmentError(f"cannot connect to {url}: {self._redact(str(err))}. Fix: check that the "
                                            "server is running, or fix --base-url") from None
        except (httpx.HTTPError, _Retry) as err:
            raise DescriberEnvironmentError(f"{url} gave no answer ({type(err).__name__}: {self._redact(str(err))}): "
                                            "the server is not answering. Fix: check it and its log, then run the "
                                            "same command again") from None
        if status in (401, 403):
            raise self._refused(endpoint, status, cut(self._redact(server_message(data))))
        if status != 200:
            if status >= 500:
                raise DescriberEnvironmentError(f"{url} answered HTTP {status}: "
                                                f"{cut(self._redact(server_message(data)))}. Fix: check the server's log")
            return {}  # no listing route
        try:
            listed = [m for m in json.loads(data)["data"] if isinstance(m, dict)]
        except (*JSON_ERRORS, KeyError, TypeError):
            return {}
        card = next((m for m in listed if m.get("id") == self.model), None)
        if card is None:
            served = self._redact(", ".join(repr(m.get("id")) for m in listed[:20]))
            raise DescriberEnvironmentError(f"{endpoint.url} does not serve the model {self.model!r}; it serves "
                                            f"{served or 'no model'}. Fix: pass one of those names as --model, or "
                                            "start the server with this model")
        found = {k: card[k] for k in ("id", "root", "created", "owned_by") if card.get(k) is not None}
        if isinstance(found.get("created"), (int, float)) and abs(found["created"] - _answered_at(headers)) <= 60:
            del found["created"]  # the time of this request (vLLM), not of the model
        return found

    def run_info(self) -> dict:
        """Settings recorded in the manifest that do not change the text (no secrets)."""
        note = {"weights_note": self.weights_note} if self.weights_note else {}
        return {**note, "base_url": self.base_url, "api_key_env": self.api_key_env, "concurrency": self.concurrency,
                "connect_timeout_s": self.connect_timeout, "read_timeout_s": self.read_timeout, "stream": self.stream,
                "first_token_timeout_s": self.first_token_timeout, "token_timeout_s": self.token_timeout,
                "stream_timeout_s": self.stream_timeout,
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
        self._alive_at, self._silent = time.monotonic(), 0
        self._video_answered = False
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
        fields = self.request_body(request)
        body = (json.dumps(fields).encode("utf-8"), json.dumps({**fields, **STREAM_FIELDS}).encode("utf-8"),
                request.is_video and self.video_input == "video")
        attempts = tenacity.Retrying(retry=tenacity.retry_if_exception_type(_Retry),
                                     stop=tenacity.stop_after_attempt(self.max_retries + 1),
                                     wait=self._wait, sleep=self._pause)
        with self._slots:
            self._in_progress += 1
        try:
            return attempts(self._attempt, body)
        except tenacity.RetryError as err:
            last = err.last_attempt
            error = OpenAIError(f"gave up after {last.attempt_number} attempts: {last.exception()}")
            error.kind = "no answer"
            raise error from None
        finally:
            with self._slots:
                self._in_progress -= 1

    def _attempt(self, body: tuple[bytes, bytes, bool]) -> str:
        if self._stopping.is_set():
            raise OpenAIError("not sent: the run has stopped")
        endpoint = self._acquire()
        plain, streamed, video = body
        try:
            try:
                text = self._post(endpoint, plain, streamed)
            except (_Retry, OpenAIError) as failure:
                if video and not self._video_answered and str(failure).startswith("HTTP "):  # a server's answer
                    failure.args = (f"{failure}; {_VIDEO_HINT}",)
                raise
        except _Retry as failure:
            self._count_failure(failure)
            raise
        except OpenAIError:  # the server answered (a refusal, an answer that is no description): it is alive
            with self._slots:
                self._failed_in_a_row = 0
            raise
        finally:
            with self._slots:  # no slot is held while waiting to retry
                endpoint.in_flight -= 1
                self._slots.notify()
        with self._slots:
            self._failed_in_a_row = 0
            self._video_answered |= video
        return text

    def _alive(self) -> None:
        """The server has given a sign of life: an answer, an error answer, a streamed piece."""
        with self._slots:
            self._alive_at, self._silent = time.monotonic(), 0

    def _count_failure(self, failure: "_Retry") -> None:
        """Count a failed request; ``stop_after_failed_requests`` of them in a row, none answered, stop the run."""
        with self._slots:
            self._failed_in_a_row += 1
            count = self._failed_in_a_row
            limit = self.stop_after_failed_requests or max(4, 2 * self._in_progress)
            silent_for = time.monotonic() - self._alive_at
            if failure.silent is not None:
                self._silent += 1
            silent = self._silent
        if failure.silent is not None and silent >= 2 and silent_for >= 2 * failure.silent:
            urls = ", ".join(e.url for e in self._endpoints)
            raise DescriberEnvironmentError(
                f"{urls} gave no answer to any request for model {self.model!r} for {silent_for:.0f} s (the last: "
                f"{failure}): the server is not answering. Fix: check the server and its log; a server that is "
                "busy or slow to start answering needs a larger --first-token-timeout (--read-timeout for one "
                "that does not stream); then run the same command again")
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

    def _http(self) -> httpx.Client:
        """The one HTTP client, made at the first request."""
        with self._slots:
            if self._client is None:
                # no proxy or .netrc from the environment: requests go to base_url as given, and no credential but
                # the key; each request sets its own timeouts (_request)
                self._client = httpx.Client(trust_env=False, transport=head_deadline.transport(httpx.Limits(
                    max_connections=None, max_keepalive_connections=self.max_concurrency)))
            return self._client

    def _request(self, method: str, url: str, timeout: float, content: bytes | None = None,
                 streamed: bool = False) -> tuple[int, httpx.Headers, bytes | str]:
        """``(status, headers, body)`` of one request; the body is read as a stream, bounded in size and time.

        ``streamed``: the request asks for a stream; a 200 that streams (server-sent events) gives the answer's
        text as ``body`` (``_read_events``), anything else its bytes, read within ``read_timeout``.
        """
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env)  # read at each request; only ever in this header
        if key:
            headers["Authorization"] = f"Bearer {key}"
        started = time.monotonic()
        if streamed:  # each read waits at most this long; _read_events keeps the finer bounds
            timeout = max(self.first_token_timeout, self.token_timeout)
            headers["Accept"] = "text/event-stream, application/json"
        with contextlib.ExitStack() as held:
            # the status line and headers whole within first_token_timeout (a streamed request) or the request's
            # timeout, however slowly they trickle in (head_deadline)
            with head_deadline.head_within(self.first_token_timeout if streamed else timeout):
                response = held.enter_context(self._http().stream(
                    method, url, content=content, headers=headers,
                    timeout=httpx.Timeout(timeout, connect=self.connect_timeout)))
            kind = response.headers.get("Content-Type", "")
            if streamed and response.status_code == 200 and kind.startswith("text/event-stream"):
                return 200, response.headers, self._read_events(response, started)
            limit = self.read_timeout if streamed else timeout
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.max_response_bytes:
                    raise _unusable("too long", f"the server's answer is longer than {self.max_response_bytes} "
                                    "bytes; it was not read")
                if time.monotonic() - started > limit:
                    raise _Retry(f"the server's answer took longer than {limit:g} s (read_timeout)")
            return response.status_code, response.headers, bytes(body)

    def _read_events(self, response: httpx.Response, started: float) -> str:
        """The text of a streamed answer, each wait bounded: ``first_token_timeout`` until its first piece,
        ``token_timeout`` between pieces, ``stream_timeout`` for the whole; ``_Retry`` when one is passed."""
        answer, size, last = StreamedAnswer(self._redact), 0, None
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise _unusable("too long", f"the server's answer is longer than {self.max_response_bytes} "
                                    "bytes; it was not read")
                new = answer.feed(chunk)
                now = time.monotonic()
                if new:  # every piece is a sign of life: another request's wait in vain is not the server's death
                    self._alive()
                    last = now
                self._check_waits(started, last, now)
            answer.close()  # read to its end (after [DONE] too), so the connection is kept for the next request
        except StreamError as err:
            raise _Retry(cut(self._redact(str(err)))) from None
        except httpx.TimeoutException:
            self._check_waits(started, last, time.monotonic())
            raise self._stream_silent(last) from None
        except httpx.TransportError as err:
            raise _Retry(self._redact(f"the stream broke off ({type(err).__name__}: {err})")) from None
        if not (answer.done or answer.finish_reason):
            raise _Retry("the stream ended before the answer did (neither a finish_reason nor [DONE])")
        if not answer.text.strip():
            raise _unusable("empty", "the server's answer is empty (finish_reason "
                            f"{self._redact(repr(answer.finish_reason))})")
        key = os.environ.get(self.api_key_env, "")
        return answer.text.replace(key, REDACTED) if key else answer.text

    def _check_waits(self, started: float, last: float | None, now: float) -> None:
        if last is None and now - started > self.first_token_timeout:
            raise self._stream_silent(None)
        if last is not None and now - last > self.token_timeout:
            raise self._stream_silent(last)
        if now - started > self.stream_timeout:
            raise _Retry(f"the streamed answer took longer than {self.stream_timeout:g} s (stream_timeout)")

    def _stream_silent(self, last: float | None) -> _Retry:
        if last is None:
            return _Retry(f"no streamed token within {self.first_token_timeout:g} s (first_token_timeout)",
                          silent=self.first_token_timeout)
        return _Retry(f"the stream went silent for {self.token_timeout:g} s (token_timeout)")

    def _post(self, endpoint: _Endpoint, plain: bytes, streamed: bytes) -> str:
        """The answer to one request: streamed while the server streams, else plain (said once on stderr)."""
        if not self.stream:
            return self._exchange(endpoint, plain, False)
        try:
            return self._exchange(endpoint, streamed, True)
        except OpenAIError as refused:
            if refused.status not in _REFUSED or not _NAMES_STREAM.search(str(refused)):
                raise  # a refusal that does not name the stream fields is about the request itself
            text = self._exchange(endpoint, plain, False)  # the same request, not streamed, is answered
            self._stop_streaming(f"it refused a streamed request ({refused})")
            return text

    def _stop_streaming(self, why: str) -> None:
        with self._slots:
            if not self.stream:
                return
            self.stream = False
        print(f"sova: note: {self._endpoints[0].url} does not stream answers: {why}; requests are sent whole from "
              f"now on, each answer bounded by --read-timeout ({self.read_timeout:g} s)", file=sys.stderr)

    def _exchange(self, endpoint: _Endpoint, body: bytes, streamed: bool) -> str:
        url = endpoint.url + "/chat/completions"
        wait = max(self.first_token_timeout, self.token_timeout) if streamed else self.read_timeout
        for again in (False, True):
            try:
                status, headers, data = self._request("POST", url, self.read_timeout, body, streamed)
                break
            except httpx.ConnectTimeout:
                raise _Retry(f"ConnectTimeout: no connection within {self.connect_timeout:g} s") from None
            except httpx.TimeoutException as err:
                raise _Retry(f"{type(err).__name__}: no answer within {wait:g} s", silent=wait) from None
            except httpx.TransportError as err:
                if isinstance(err, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)) and not again:
                    continue  # broken once: perhaps a stale kept-alive connection
                if isinstance(err, httpx.ConnectError):
                    self._stop_if_unreachable(endpoint, err)
                raise _Retry(self._redact(f"{type(err).__name__}: {err}")) from None
        if isinstance(data, str):  # a streamed answer's text
            return data
        self._alive()
        if status == 200:
            text = _answer_text(data, os.environ.get(self.api_key_env, ""))
            if streamed:
                self._stop_streaming("it answered a streamed request whole")
            return text
        message = cut(self._redact(server_message(data)))
        if status in (408, 429) or status >= 500:
            raise _Retry(f"HTTP {status}: {message}", _parse_retry_after(headers.get("Retry-After")))
        if status in (401, 403, 404):
            raise self._refused(endpoint, status, message)
        error = OpenAIError(f"HTTP {status} from {url}: {message}")
        error.status = status
        raise error

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
    reserved = {"model", "messages", "temperature", "max_tokens", *STREAM_FIELDS} & set(extra_body)
    if reserved:
        raise ValueError(f"extra_body cannot set {sorted(reserved)}: they are options of the backend")
    for name, value in waits.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number of seconds above 0, got {value!r}")


def _answer_text(data: bytes, key: str) -> str:
    """The text of a chat completion, ``key`` (the API key, or "") redacted; ``_unusable`` for a body that holds
    none."""

    try:
        choice = json.loads(data)["choices"][0]
        message = choice["message"]
    except (*JSON_ERRORS, KeyError, IndexError, TypeError):
        raise _unusable("unreadable", f"the server's answer is not a chat completion: {_shown(data, key, 300)}") from None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if p.get("type", "text") == "text")
    if not isinstance(content, str):
        raise _unusable("unreadable", "the server's answer holds no text: its content is "
                                      f"{cut(redact(json.dumps(content), [key]), 100)}")
    if not content.strip():
        finish = choice.get("finish_reason")  # a dict: its "message" was read
        raise _unusable("empty", f"the server's answer is empty (finish_reason {redact(repr(finish), [key])})")
    return content.replace(key, REDACTED) if key else content


def _shown(data: bytes, key: str, limit: int) -> str:
    """``data`` as a server's text is shown: decoded, ``key`` redacted, then written as a ``repr`` cut to ``limit``
    characters (redacted before cut, so no piece of the key is left at the cut)."""
    return cut(repr(redact(data.decode("utf-8", "replace"), [key]).encode()), limit)


def _answered_at(headers: httpx.Headers) -> float:
    """When an answer was made (seconds since the epoch): its ``Date`` header, else this machine's clock."""
    with contextlib.suppress(TypeError, ValueError, OverflowError, IndexError):
        if headers.get("Date"):
            return email.utils.parsedate_to_datetime(headers["Date"]).timestamp()
    return time.time()


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
