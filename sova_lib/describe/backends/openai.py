"""A describer for any OpenAI-compatible chat-completions server (``vllm serve``, SGLang, ``transformers serve``,
hosted APIs): ``POST {base_url}/chat/completions``, one request per item.

This module is the request's body (``request_body``), the parsing of a whole answer (``_answer_text``), the
settings that change the text (``config``) and what the server runs (``fingerprint``); the requests themselves go
through ``sova_lib.describe.backends.transport`` (endpoints, retries, streaming, liveness, the ``/models`` listing).
docs/gpu.md ("The openai backend") states the whole behaviour: the body, what enters the cache key, each failure
and each bound.
"""
from __future__ import annotations

import base64
import io
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from sova_lib.describe.backends.openai_wire import cut, shown
from sova_lib.describe.backends.transport import STREAM_FIELDS, OpenAIError, ServerOptions, Transport
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest, given_options, option
from sova_lib.fingerprint import folder_fingerprint, local_folder
from sova_lib.storage import JSON_ERRORS, REDACTED, redact
from sova_lib.video.frames import to_rgb_image

__all__ = ["OpenAIDescriber", "OpenAIError", "OpenAIOptions", "encode_jpeg"]

#: What the first failures of a ``video_input="video"`` request say while no such request has been answered.
_VIDEO_HINT = ("this server does not accept video_input=video; use frames (--backend-option video_input=frames; "
               "docs/gpu.md lists which servers take which form)")


def encode_jpeg(image: Any, quality: int = 90) -> str:
    """A ``data:image/jpeg;base64,...`` URL of an RGB PIL image (or HxWx3 uint8 array)."""
    buf = io.BytesIO()
    to_rgb_image(image).save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


@dataclass(frozen=True, kw_only=True)
class OpenAIOptions(ServerOptions):
    """The options of the openai describer (``sova_lib.describe.contract.backend_options``): the transport's
    (``ServerOptions``) and the request's. ``ValueError`` at construction for a missing ``model``, an unknown
    ``video_input``, an ``extra_body`` that sets the backend's own fields or an empty ``model_tag``."""

    model: str = option(help="the model name the server serves", flag="NAME")
    max_new_tokens: int = option(1024, "answer length limit in tokens", flag="N")
    jpeg_quality: int = option(90, "JPEG quality of the frames sent")
    video_input: str = option("frames", "how a video is sent: frames (one image each) or video")
    extra_body: dict | None = option(None, "a JSON object merged into every request's body")
    model_tag: str | None = option(None, "a name for the weights the server runs (e.g. a checkpoint's step), which "
                                         "keys the cache in place of what the server's /models reports; for a "
                                         "server that reports nothing that tells checkpoints apart", flag="TAG")

    def __post_init__(self):
        if not self.model:
            raise ValueError("the openai backend needs --model: the model name the server serves")
        super().__post_init__()
        if self.video_input not in ("frames", "video"):
            raise ValueError(f"video_input must be 'frames' or 'video', got {self.video_input!r}")
        reserved = {"model", "messages", "temperature", "max_tokens", *STREAM_FIELDS} & set(self.extra_body or {})
        if reserved:
            raise ValueError(f"extra_body cannot set {sorted(reserved)}: they are options of the backend")
        if self.model_tag is not None and not str(self.model_tag).strip():
            raise ValueError("model_tag must name the weights (e.g. a checkpoint's step or date), not be empty")


class OpenAIDescriber:
    """Describe frames through an OpenAI-compatible chat-completions endpoint.

    ``options``: ``OpenAIOptions``, or its fields as keywords. ``rng`` draws the retries' jitter and ``sleep`` waits
    between attempts (``transport.Transport``'s test hooks).
    """

    name = "openai"
    max_batch_size = 1
    Options = OpenAIOptions

    def __init__(self, options: OpenAIOptions | None = None, *, rng: Any = None,
                 sleep: Callable[[float], None] | None = None, **given: Any):
        self.options = options = given_options(self.Options, options, given, "the openai backend")
        self._transport = Transport(options, options.model, rng, sleep)
        endpoints = self._transport.endpoints
        self.model = options.model
        self.base_url = endpoints[0].url if len(endpoints) == 1 else [e.url for e in endpoints]
        self.max_concurrency = self._transport.concurrency * len(endpoints)
        self.weights_note: str | None = None  # set by fingerprint() (docs/gpu.md)
        self._video_answered = False

    def config(self) -> dict:
        """The settings that change the text (hashed into the cache key); a ``model`` that names a folder on this
        machine as that folder's one path (``sova_lib.fingerprint.local_folder``)."""
        model = str(local_folder(self.model) or self.model)  # a folder as one path, however it was spelled
        config = {"model": model, "max_new_tokens": int(self.options.max_new_tokens), "temperature": 0.0,
                  "image_format": "jpeg", "jpeg_quality": int(self.options.jpeg_quality)}
        if self.options.video_input != "frames":
            config["video_input"] = self.options.video_input
        if self.options.extra_body:
            config["extra_body"] = dict(self.options.extra_body)
        return config

    def fingerprint(self) -> dict:
        """What the endpoints run, for the cache key (docs/gpu.md): ``{"method": "server-models", "id": ...,
        "root": ..., ...}`` as ``GET /models`` reports ``model``, or ``{"method": "tag", "tag": model_tag}``.

        ``DescriberEnvironmentError`` when an endpoint cannot be reached, refuses the credentials, does not serve
        ``model``, or when the endpoints report different models.
        """
        endpoints = self._transport.endpoints
        cards = [{k: str(local_folder(v) or v) if k in ("id", "root") and isinstance(v, str) else v
                  for k, v in self._transport.model_card(endpoint).items()} for endpoint in endpoints]  # one path a folder
        self.weights_note = None
        if self.options.model_tag is not None:
            return {"method": "tag", "tag": str(self.options.model_tag)}
        if any(card != cards[0] for card in cards[1:]):
            shown = "; ".join(f"{e.url}: {self._transport.redact(json.dumps(c))}" for e, c in zip(endpoints, cards))
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
                f"the cache cannot follow the weights: {endpoints[0].url}/models reports "
                f"{self._transport.redact(shown)} for model {self.model!r}, nothing that changes with the weights, "
                "and names no folder on this machine, so a checkpoint saved over this one would reuse these "
                "descriptions; --model-tag names the weights (e.g. --model-tag step-1200)")
        return {"method": "server-models", **card}

    def run_info(self) -> dict:
        """Settings recorded in the manifest that do not change the text (no secrets)."""
        t, o = self._transport, self.options
        note = {"weights_note": self.weights_note} if self.weights_note else {}
        return {**note, "base_url": self.base_url, "api_key_env": o.api_key_env, "concurrency": t.concurrency,
                "connect_timeout_s": float(o.connect_timeout), "read_timeout_s": float(o.read_timeout),
                "stream": t.stream, "first_token_timeout_s": float(o.first_token_timeout),
                "token_timeout_s": float(t.token_timeout), "stream_timeout_s": float(o.stream_timeout),
                "max_retries": int(o.max_retries), "backoff_max_s": float(o.backoff_max),
                "stop_after_failed_requests": o.stop_after_failed_requests,
                "max_response_bytes": int(o.max_response_bytes)}

    def request_body(self, request: DescribeRequest) -> dict:
        """The chat-completions JSON body for one request."""
        messages = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        urls = [encode_jpeg(frame, int(self.options.jpeg_quality)) for frame in request.frames]
        if request.is_video and self.options.video_input == "video":
            frames = ",".join(url.removeprefix("data:image/jpeg;base64,") for url in urls)
            content: list[dict] = [{"type": "video_url", "video_url": {"url": "data:video/jpeg;base64," + frames}}]
        else:
            content = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
        texts = [{"type": "text", "text": part} for part in request.parts or (request.prompt,)]
        at = request.media_at if request.parts else 0
        messages.append({"role": "user", "content": texts[:at] + content + texts[at:]})
        return {**(self.options.extra_body or {}), "model": self.model, "messages": messages, "temperature": 0,
                "max_tokens": int(self.options.max_new_tokens)}

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        return [self._describe_one(r) for r in requests]

    def load(self) -> "OpenAIDescriber":
        """Check that every endpoint answers and, where it lists its models, serves ``model``; start a run."""
        for endpoint in self._transport.endpoints:
            self._transport.model_card(endpoint)
        self._transport.start()
        self._video_answered = False
        return self

    def stop(self) -> None:
        """End the waits between attempts at once: the run is over (``load()`` starts the next one)."""
        self._transport.stop()

    def _describe_one(self, request: DescribeRequest) -> str:
        fields = self.request_body(request)
        video = request.is_video and self.options.video_input == "video"
        answer = self._transport.post(json.dumps(fields).encode("utf-8"),
                                      json.dumps({**fields, **STREAM_FIELDS}).encode("utf-8"),
                                      hint=lambda: _VIDEO_HINT if video and not self._video_answered else None)
        self._video_answered |= video
        return answer if isinstance(answer, str) else _answer_text(answer, os.environ.get(self.options.api_key_env,
                                                                                          ""))


def _answer_text(data: bytes, key: str) -> str:
    """The text of a chat completion, ``key`` (the API key, or "") redacted; an ``OpenAIError`` of kind
    ``"unreadable"`` or ``"empty"`` for a body that holds none."""
    try:
        choice = json.loads(data)["choices"][0]
        message = choice["message"]
    except (*JSON_ERRORS, KeyError, IndexError, TypeError):
        raise OpenAIError("the server's answer is not a chat completion: "
                          f"{shown(data, lambda text: redact(text, [key]), 300)}", "unreadable") from None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if p.get("type", "text") == "text")
    if not isinstance(content, str):
        raise OpenAIError("the server's answer holds no text: its content is "
                          f"{cut(redact(json.dumps(content), [key]), 100)}", "unreadable")
    if not content.strip():
        finish = choice.get("finish_reason")  # a dict: its "message" was read
        raise OpenAIError(f"the server's answer is empty (finish_reason {redact(repr(finish), [key])})", "empty")
    return content.replace(key, REDACTED) if key else content

