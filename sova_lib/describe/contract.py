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

import dataclasses
import inspect
import json
import os
import pkgutil
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["DESCRIBERS", "BackendOption", "backend_flags", "DescribeRequest", "Describer", "DescriberEnvironmentError",
           "PromptedDescriber", "backend_keywords", "backend_options", "declared_options", "describer_factory",
           "given_options", "make_describer", "option", "option_value", "options_of", "type_words"]


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
    return pkgutil.resolve_name(DESCRIBERS[backend])


def make_describer(backend: str, options: Any = None, /, **keywords: Any) -> Describer:
    """Build the describer registered as ``backend``: from ``options``, an instance of its ``Options`` (what a Ray
    actor is sent, ``options_of``), or from ``keywords`` (its options' fields); ``options`` may also be a dict of
    them."""
    factory = describer_factory(backend)
    if isinstance(options, dict):
        options, keywords = None, {**options, **keywords}
    return factory(**keywords) if options is None else factory(options, **keywords)


def options_of(backend: str, keywords: dict) -> Any:
    """``keywords`` as the options of the backend registered as ``backend``: an instance of its ``Options`` (which
    checks them: ``TypeError`` or ``ValueError``), or the dict itself for a backend that declares none."""
    declared = getattr(describer_factory(backend), "Options", None)
    return dict(keywords) if declared is None else declared(**keywords)


def given_options(declared: type, options: Any, keywords: dict, who: str) -> Any:
    """The options a constructor was given: ``options`` itself, or an instance of ``declared`` made from
    ``keywords`` (its fields). Both at once is a ``TypeError`` that names the constructor as ``who``."""
    if options is not None and keywords:
        raise TypeError(f"give {who} its options or their keywords, not both")
    return options if options is not None else declared(**keywords)


def option(default: Any = dataclasses.MISSING, help: str = "", flag: str | None = None,  # noqa: A002
           choices: Sequence[str] | None = None) -> Any:
    """A field of a backend's ``Options``: its ``default`` (none: required), ``help`` (argparse's word) and, for an
    option the command line offers as ``--name``, that flag's ``flag`` metavar (``--base-url URL``) and the
    ``choices`` it takes, if it takes only some."""
    return field(default=default, metadata={"help": help, "flag": flag, "choices": choices})


@dataclass(frozen=True)
class BackendOption:
    """One keyword a backend takes: its ``name``, declared ``type`` (its annotation as written, ``"float | None"``;
    ``Any`` when undeclared), ``default`` (``required``: none), ``help`` and, where the command line offers it as
    ``--name``, that flag's metavar ``flag`` and the ``choices`` it takes (None: any value of its type)."""

    name: str
    type: Any
    default: Any
    help: str = ""
    flag: str | None = None
    choices: Sequence[str] | None = None

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    def kinds(self) -> list[str]:
        """The names of the types ``type`` joins with ``|``, in the order a value is tried: null first, text last
        (``str | None`` reads ``null`` as None, ``str | dict`` a JSON object as a dict)."""
        text = self.type if isinstance(self.type, str) else getattr(self.type, "__name__", str(self.type))
        return sorted((name.strip() for name in text.split("|")), key=lambda name: (name != "None", name == "str"))


def backend_options(backend: str) -> dict[str, BackendOption] | None:
    """The options the backend registered as ``backend`` takes, by name; None: it takes any keyword.

    A backend declares them once, as its factory's ``Options`` (which the factory takes whole): a frozen dataclass
    with one field per keyword (``option``), its type, its default (none: the option is required), its help and, for
    an option the command line offers as a flag of its own (``--base-url``), the flag's metavar. The ``sova`` command
    line makes those flags from it (``sova_lib.cli.options.add_describer_options``), converts each
    ``--backend-option KEY=VALUE`` to the declared type (``option_value``), refuses a key that is not declared and
    lists every backend's options in its help; the Ray engine sends the options to its actors. A factory with no
    ``Options`` is read from its signature: its keywords, each value decoded as JSON when it can be.
    """
    factory = describer_factory(backend)
    declared = getattr(factory, "Options", None)
    if declared is not None:
        return declared_options(declared)
    params = inspect.signature(factory).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    return {name: BackendOption(name, Any, dataclasses.MISSING if p.default is p.empty else p.default)
            for name, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def declared_options(declared: type) -> dict[str, BackendOption]:
    """The fields of ``declared``, a frozen dataclass of ``option`` fields (a backend's ``Options``, the contrastive
    model's ``ContrastiveOptions``), as ``BackendOption``s by name, in the order they are declared."""
    return {f.name: BackendOption(f.name, f.type, f.default, f.metadata.get("help", ""), f.metadata.get("flag"),
                                  f.metadata.get("choices")) for f in dataclasses.fields(declared)}


def backend_flags() -> dict[str, list[tuple[str, BackendOption]]]:
    """The options the backends declare with a ``flag`` (``option``), which the command line offers as flags of
    their own, by name: ``[(backend, BackendOption), ...]`` in the backends' order (a backend that cannot be imported
    offers none)."""
    flags: dict[str, list[tuple[str, BackendOption]]] = {}
    for backend in sorted(DESCRIBERS):
        try:
            declared = backend_options(backend) or {}
        except (ImportError, AttributeError):
            continue
        for key, option in declared.items():
            if option.flag:
                flags.setdefault(key, []).append((backend, option))
    return flags


def _null(text: str) -> None:
    if text.lower() not in ("null", "none"):
        raise ValueError(text)


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


def _json(kind: type) -> Callable[[str], Any]:
    def read(text: str) -> Any:
        value = json.loads(text)
        if not isinstance(value, kind):
            raise ValueError(text)
        return value
    return read


def _any(text: str) -> Any:
    """An undeclared value: JSON when the text is JSON, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


#: Each type an option may declare, by the name its annotation writes: how a value is read from text (ValueError:
#: not one) and how a refusal names it. Another name is read as ``_any`` and named "a JSON value".
_KINDS: dict[str, tuple[Callable[[str], Any], str]] = {
    "None": (_null, "null"), "bool": (_bool, "true or false"), "int": (int, "an integer"), "float": (float, "a number"),
    "str": (str, "text"), "dict": (_json(dict), "a JSON object"), "list": (_json(list), "a JSON list"),
    "Sequence[str]": (_json(list), "a JSON list")}


def type_words(option: BackendOption) -> str:
    """How a value of ``option``'s declared type is written (``an integer``, ``text or null``, ...)."""
    kinds = option.kinds()[::-1] if "None" in option.kinds() else option.kinds()
    return " or ".join(dict.fromkeys(_KINDS.get(kind, (_any, "a JSON value"))[1] for kind in kinds))


def option_value(option: BackendOption, text: str) -> Any:
    """``text`` as a value of ``option``'s declared type (ValueError: it is not one)."""
    for kind in option.kinds():
        try:
            return _KINDS.get(kind, (_any,))[0](text)
        except ValueError:
            continue
    raise ValueError(f"{option.name} takes {type_words(option)}, not {text!r}")


def backend_keywords(backend: str, given: dict, settings: Sequence[str] = ()) -> dict:
    """The keywords of the backend registered as ``backend`` from the flags ``given`` (``{name: value}``, None: not
    given; a ``model`` is dropped for a backend that has none) and the ``KEY=VALUE`` texts ``settings`` (as the
    command line's ``--backend-option``), each checked against the options the backend declares and read as its
    declared type (``option_value``). ValueError, one line naming the flag, for a backend that cannot be loaded, an
    option it does not take, a value of another type, a required option missing or an ``api_key_env`` naming an
    environment variable that is not set."""
    try:
        declared = backend_options(backend)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"backend {backend!r} cannot be loaded ({DESCRIBERS[backend]}): {err}") from None
    options = {key: value for key, value in given.items() if value is not None}
    if declared is not None:
        if "model" not in declared:
            options.pop("model", None)
        for key in options:
            if key not in declared:
                raise ValueError(f"--{key.replace('_', '-')} does not apply to the {backend} backend")
    name = options.get("api_key_env")
    if name is not None and name.isidentifier() and name not in os.environ:  # not a name: the backend says so
        raise ValueError("--api-key-env names an environment variable that is not set: set it to the key (export "
                         "NAME=...), or leave --api-key-env out for a server that needs no key")
    for text in settings:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise ValueError(f"--backend-option {text!r} is not KEY=VALUE")
        if declared is not None and key not in declared:
            raise ValueError(f"--backend-option {key}: the {backend} backend has no such option; its options: "
                             f"{', '.join(declared)}")
        try:
            options[key] = option_value(declared[key] if declared is not None else BackendOption(key, Any, None),
                                        value)
        except ValueError as err:
            raise ValueError(f"--backend-option {key}: {err}") from None
    for key, option_ in (declared or {}).items():
        if option_.required and key not in options:
            raise ValueError(f"the {backend} backend needs --{key.replace('_', '-')}")
    return options
