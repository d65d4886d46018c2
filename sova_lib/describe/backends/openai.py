"""A describer for any OpenAI-compatible chat-completions server.

Works with ``vllm serve``, SGLang, and hosted APIs that speak
``POST {base_url}/chat/completions``. One request per item
(``max_batch_size = 1``); the runner keeps up to ``concurrency`` requests in
flight. Each request is::

    {"model": MODEL, "temperature": 0, "max_tokens": MAX_NEW_TOKENS,
     "messages": [{"role": "system", "content": SYSTEM_PROMPT},        # when there is one
                  {"role": "user", "content": [
                      {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,..."}},
                      ...                                              # one part per frame, in time order
                      {"type": "text", "text": INSTRUCTION}]}]}

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
connection errors (reset, closed) and time-outs are retried up to
``max_retries`` times, waiting ``Retry-After`` when the server sends it and
otherwise ``min(backoff_max, backoff_base * 2**attempt)`` seconds times a
jitter factor in [0.5, 1) drawn from ``rng``; then the item fails. Any other
4xx (e.g. 400: a request too long for the model) fails the item at once with
the server's message.

The API key is read from the environment variable ``api_key_env``
(``OPENAI_API_KEY`` by default, as the OpenAI client does) when each request
is sent, and goes only into the ``Authorization: Bearer`` header: it is never
stored on the describer, in its config, in the cache or in any message. With
the variable unset no ``Authorization`` header is sent (a local server
without a key).
"""
from __future__ import annotations

import base64
import email.utils
import http.client
import io
import json
import os
import socket
import threading
import time
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest

__all__ = ["OpenAIDescriber", "OpenAIError", "encode_jpeg"]

_RETRY_STATUS = frozenset({408, 429})


class OpenAIError(RuntimeError):
    """A request that failed for good (a 4xx answer, or retries used up)."""


def encode_jpeg(image: Any, quality: int = 90) -> str:
    """A ``data:image/jpeg;base64,...`` URL of an RGB PIL image (or HxWx3 uint8 array)."""
    from PIL import Image

    if not isinstance(image, Image.Image):
        image = Image.fromarray(image)
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None):
        super().__init__(reason)
        self.wait = wait


class OpenAIDescriber:
    """Describe frames through an OpenAI-compatible chat-completions endpoint.

    ``model`` is the name the server knows the model by; ``base_url`` ends
    before ``/chat/completions`` (e.g. ``http://localhost:8000/v1``).
    ``timeout`` (s) applies to connecting and to each wait for data.
    ``sleep`` is the function used to wait between attempts.
    """

    name = "openai"
    max_batch_size = 1

    def __init__(
        self,
        model: str,
        base_url: str = "http://localhost:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_new_tokens: int = 1024,
        timeout: float = 300.0,
        max_retries: int = 6,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        jpeg_quality: int = 90,
        video_input: str = "frames",
        extra_body: dict | None = None,
        rng: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        import numpy as np

        if not model:
            raise ValueError("the openai backend needs --model: the model name the server serves")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url {base_url!r} is not an http(s) URL such as http://localhost:8000/v1")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("base_url must be scheme://host[:port]/path with no user name, password or query: "
                             f"put the API key in the environment variable {api_key_env} instead")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.max_concurrency = max(1, int(concurrency))
        self.max_new_tokens = int(max_new_tokens)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.jpeg_quality = int(jpeg_quality)
        if video_input not in ("frames", "video"):
            raise ValueError(f"video_input must be 'frames' or 'video', got {video_input!r}")
        self.video_input = video_input
        self.extra_body = dict(extra_body or {})
        reserved = {"model", "messages", "temperature", "max_tokens"} & set(self.extra_body)
        if reserved:
            raise ValueError(f"extra_body cannot set {sorted(reserved)}: they are options of the backend")
        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._rng_lock = threading.Lock()
        self._sleep = sleep
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._path = parts.path.rstrip("/") + "/chat/completions"
        self._local = threading.local()

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
        return {"base_url": self.base_url, "api_key_env": self.api_key_env, "concurrency": self.max_concurrency,
                "timeout_s": self.timeout, "max_retries": self.max_retries}

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
        content.append({"type": "text", "text": request.prompt})
        messages.append({"role": "user", "content": content})
        return {**self.extra_body, "model": self.model, "messages": messages, "temperature": 0,
                "max_tokens": self.max_new_tokens}

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        return [self._describe_one(r) for r in requests]

    def _describe_one(self, request: DescribeRequest) -> str:
        body = json.dumps(self.request_body(request)).encode("utf-8")
        for attempt in range(self.max_retries + 1):
            try:
                return self._post(body)
            except _Retry as err:
                if attempt == self.max_retries:
                    raise OpenAIError(f"gave up after {attempt + 1} attempts: {err}") from None
                self._sleep(err.wait if err.wait is not None else self._backoff(attempt))
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        with self._rng_lock:
            jitter = 0.5 + 0.5 * float(self._rng.random())
        return min(self.backoff_max, self.backoff_base * 2.0**attempt) * jitter

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = self._local.conn = cls(self._host, self._port, timeout=self.timeout)
        return conn

    def _post(self, body: bytes) -> str:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for fresh in (False, True):
            reused = getattr(self._local, "conn", None) is not None
            conn = self._connection()
            try:
                conn.request("POST", self._path, body=body, headers=headers)
                response = conn.getresponse()
                status, data = response.status, response.read()
                retry_after = response.getheader("Retry-After")
                break
            except (OSError, http.client.HTTPException) as err:  # refused, reset, time-out, bad answer
                conn.close()
                self._local.conn = None
                stale = reused and isinstance(err, (http.client.RemoteDisconnected, ConnectionResetError,
                                                    BrokenPipeError))
                if isinstance(err, (ConnectionRefusedError, socket.gaierror)):
                    raise self._unreachable(err) from None
                if fresh or not stale:  # a kept-alive connection the server closed is reopened at once
                    raise _Retry(f"{type(err).__name__}: {err}") from None
        if status == 200:
            return _answer_text(data)
        message = _server_message(data)
        if status in _RETRY_STATUS or status >= 500:
            raise _Retry(f"HTTP {status}: {message}", _parse_retry_after(retry_after))
        if status in (401, 403, 404):
            raise self._refused(status, message)
        raise OpenAIError(f"HTTP {status} from {self.base_url}/chat/completions: {message}")


    def _unreachable(self, err: OSError) -> DescriberEnvironmentError:
        url = f"{self.base_url}/chat/completions"
        if isinstance(err, socket.gaierror):
            why = f"the host name {self._host!r} does not resolve ({err})"
            fix = "check the host in --base-url"
        else:
            why = f"nothing accepts connections at {self._host}:{self._port or (443 if self._scheme == 'https' else 80)}"
            fix = (f"start the server (e.g. `vllm serve {self.model} --port {self._port or 8000}`), wait until "
                   f"{self.base_url}/models answers, or fix --base-url")
        return DescriberEnvironmentError(f"cannot reach {url} for model {self.model!r}: {why}. Fix: {fix}.")

    def _refused(self, status: int, message: str) -> DescriberEnvironmentError:
        url = f"{self.base_url}/chat/completions"
        if status == 404:
            fix = (f"the server does not serve a model named {self.model!r} (see {self.base_url}/models for the "
                   "names it serves; vLLM serves the id given to `vllm serve` unless --served-model-name is "
                   "set), or --base-url lacks its /v1 path")
        else:
            fix = (f"the server refused the credentials: put a valid API key in the environment variable "
                   f"{self.api_key_env} (--api-key-env names another variable)")
        return DescriberEnvironmentError(f"HTTP {status} from {url} for model {self.model!r}: "
                                         f"{message.rstrip('.')}. Fix: {fix}.")


def _answer_text(data: bytes) -> str:
    try:
        message = json.loads(data)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise OpenAIError(f"the server's answer is not a chat completion: {data[:300]!r}") from None
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _server_message(data: bytes) -> str:
    try:
        err = json.loads(data).get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    except (ValueError, AttributeError):
        pass
    return data[:500].decode("utf-8", "replace").strip() or "(no message)"


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
