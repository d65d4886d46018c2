"""The describer contract and the registry of describer backends.

A describer turns visual input plus an instruction into text. Every backend
(a local Hugging Face model, an OpenAI-compatible server, the classical motion
describer) implements the same small contract, and one runner
(``sova_lib.describe.runner``) drives all of them, so no backend has its own loop,
cache or progress bar.

Contract (``Describer``):

* ``name``: the backend's registry name.
* ``config() -> dict``: every setting that changes the text the backend
  produces (model id and revision, decoding settings, dtype, ...). It is
  written to the cache manifest and hashed into the cache key. Secrets (API
  keys) never appear in it.
* ``max_batch_size``: how many requests one ``describe`` call may take.
* ``max_concurrency``: how many ``describe`` calls the runner may have in
  flight at once (1 for a local model, more for a remote server).
* ``describe(requests) -> list[str]``: one answer per request, in order. It
  raises on failure; the runner then retries the batch item by item and
  records each item that still fails.
* optional ``load()`` (load the weights, check the server; the runner calls
  it once before any item), ``stop()`` (end the calls in flight when a run
  is interrupted), ``run_info() -> dict`` (what the manifest records of
  the run, such as the server's model name) and ``fingerprint() -> dict``:
  what the weights are, asked once per run before anything else and part of
  the cache key, so a changed checkpoint never reuses old text. It is
  ``{"method": ..., ...}``: ``"folder-digest"`` (``sha256``: the content of a
  local model folder, ``sova_lib.fingerprint``), ``"hub-commit"``
  (``commit``), ``"server-models"`` (what a server's ``GET /models`` reports
  of the model) or ``"tag"`` (a name the user gives). A describer that cannot
  tell (its server is down) raises ``DescriberEnvironmentError``; one without
  weights (motion) has no such method.

``PromptedDescriber`` wraps a describer to send each item its own prompt (a
benchmark whose questions differ per item) and keeps all of the above.

Two kinds of failure. An error about an item (a video that does not decode,
a request the server rejects for that item, time-outs after retries) is
recorded in the cache's ``errors.jsonl`` and the run goes on. An error about
the environment (the model or its processor cannot load, a package is
missing, the server refuses connections or does not know the model, the
credentials are refused, the GPU runs out of memory) is a
``DescriberEnvironmentError``: the runner stops at once, records nothing for
the item, and the error's message names the model or URL and the likely fix.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["DESCRIBERS", "DescribeRequest", "Describer", "DescriberEnvironmentError", "PromptedDescriber",
           "describer_factory", "make_describer"]


class DescriberEnvironmentError(OSError):
    """The describer cannot work in this environment; no item is to blame.

    Backends raise it for a model or processor that cannot load, a missing
    package, a server that refuses connections or cannot be resolved, a 401 /
    403 answer, a model the server does not serve, or running out of GPU
    memory (while loading, or while describing: every later item would too). The runner stops the run on it (nothing goes to
    ``errors.jsonl``) and ``sova describe`` prints the message and exits with
    status 1. The message names the model or URL and the likely fix.
    """


@dataclass(frozen=True)
class DescribeRequest:
    """One item to describe.

    ``frames`` are RGB ``PIL.Image`` objects: the sampled frames of a video in
    time order, or a single image. ``timestamps`` gives each frame's time in
    seconds from the start of the clip (empty for an image). ``parts``: the
    user message's text parts in order, when a prompts file gives them
    (``sova_lib.describe.prompt_file``; ``prompt`` is then their line-joined
    text, for a backend that takes one text), with the frames before part
    ``media_at``; empty: ``prompt`` after the frames.
    """

    id: int | str
    frames: Sequence[Any]
    prompt: str
    system_prompt: str | None = None
    is_video: bool = True
    timestamps: Sequence[float] = field(default_factory=tuple)
    parts: Sequence[str] = ()
    media_at: int = 0


@runtime_checkable
class Describer(Protocol):
    name: str
    max_batch_size: int
    max_concurrency: int

    def config(self) -> dict: ...

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]: ...


class PromptedDescriber:
    """``inner`` with each request's fields replaced by its id's entry of ``fields`` (its own prompt, ...).

    ``config()`` is the inner config plus ``settings`` under ``key``, so they
    enter the cache key; every other attribute (``name``, ``max_batch_size``,
    ``load()``, ``stop()``, ``run_info()``, ``device``, ...) is the inner
    describer's, present exactly when it is there, so a benchmark's run
    starts, stops and is recorded as any other.
    """

    def __init__(self, inner: Describer, fields: dict, key: str, settings: dict):
        self.inner, self.fields, self.key, self.settings = inner, fields, key, settings
        # the protocol's own attributes are set here, not forwarded: isinstance(..., Describer) reads them
        # statically on Python 3.12 and later, without calling __getattr__
        self.name, self.max_batch_size, self.max_concurrency = inner.name, inner.max_batch_size, inner.max_concurrency

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being made): no inner describer to ask
            raise AttributeError(name)
        return getattr(self.inner, name)

    def config(self) -> dict:
        return {**self.inner.config(), self.key: self.settings}

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        return self.inner.describe([replace(r, **self.fields[r.id]) for r in requests])


#: Backend name -> "module:factory". The factory takes keyword options and
#: returns a ``Describer``. Modules are imported only when the backend is used.
#: A new backend is registered by adding its entry: ``DESCRIBERS["mine"] = "my_package.module:MyDescriber"``.
DESCRIBERS: dict[str, str] = {
    "transformers": "sova_lib.describe.backends.transformers:TransformersDescriber",
    "openai": "sova_lib.describe.backends.openai:OpenAIDescriber",
    "motion": "sova_lib.describe.backends.motion:MotionDescriber",
}


def describer_factory(backend: str) -> Callable[..., Describer]:
    """The factory registered as ``backend`` (its module imported now)."""
    if backend not in DESCRIBERS:
        raise ValueError(f"unknown describer backend {backend!r}; choose one of {sorted(DESCRIBERS)}")
    module, _, factory = DESCRIBERS[backend].partition(":")
    return getattr(importlib.import_module(module), factory)


def make_describer(backend: str, **options: Any) -> Describer:
    """Build the describer registered as ``backend`` with ``options``."""
    return describer_factory(backend)(**options)
