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
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["DESCRIBERS", "DescribeRequest", "Describer", "make_describer", "register_describer"]


@dataclass(frozen=True)
class DescribeRequest:
    """One item to describe.

    ``frames`` are RGB ``PIL.Image`` objects: the sampled frames of a video in
    time order, or a single image. ``timestamps`` gives each frame's time in
    seconds from the start of the clip (empty for an image).
    """

    id: int | str
    frames: Sequence[Any]
    prompt: str
    system_prompt: str | None = None
    is_video: bool = True
    timestamps: Sequence[float] = field(default_factory=tuple)


@runtime_checkable
class Describer(Protocol):
    name: str
    max_batch_size: int
    max_concurrency: int

    def config(self) -> dict: ...

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]: ...


#: Backend name -> "module:factory". The factory takes keyword options and
#: returns a ``Describer``. Modules are imported only when the backend is used.
DESCRIBERS: dict[str, str] = {
    "transformers": "sova_lib.describe.backends.transformers:TransformersDescriber",
    "openai": "sova_lib.describe.backends.openai:OpenAIDescriber",
    "motion": "sova_lib.describe.backends.motion:MotionDescriber",
}


def register_describer(name: str, target: str) -> None:
    """Register ``target`` (``"package.module:factory"``) under ``name``."""
    DESCRIBERS[name] = target


def make_describer(backend: str, **options: Any) -> Describer:
    """Build the describer registered as ``backend`` with ``options``."""
    if backend not in DESCRIBERS:
        raise ValueError(f"unknown describer backend {backend!r}; choose one of {sorted(DESCRIBERS)}")
    module, _, factory = DESCRIBERS[backend].partition(":")
    build: Callable[..., Describer] = getattr(importlib.import_module(module), factory)
    return build(**options)
