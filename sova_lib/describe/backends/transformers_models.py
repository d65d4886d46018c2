"""Which Hugging Face model, which commit, where it runs, and why it did not load: for the transformers backend.

``resolve_family`` picks the describer path for a model id or folder,
``resolve_revision`` finds the commit a revision names without a network (a
Hugging Face cache snapshot, a git clone), ``offline_mode`` reads
``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``, ``resolve_device`` and
``resolve_dtype`` settle ``"auto"``, and ``explain_load_error`` turns a failed
``from_pretrained`` into an error that says what to do. Nothing here imports
torch or transformers at import time.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "FAMILIES",
    "explain_load_error",
    "missing_torchvision",
    "offline_mode",
    "resolve_device",
    "resolve_dtype",
    "resolve_family",
    "resolve_revision",
]

#: The describer paths of the transformers backend (``sova_lib.describe.backends.transformers``).
FAMILIES = ("image-text-to-text", "minicpm-v")
_DTYPES = ("bfloat16", "float16", "float32")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def offline_mode() -> bool:
    """True when ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set (read now, not at import)."""
    return _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE")


def resolve_family(model: str, family: str | None = None) -> str:
    """The describer path for ``model``: ``family`` if given, else from the id or folder.

    ``openbmb/MiniCPM-V*`` ids (any case) and local folders whose
    ``config.json`` has ``"model_type": "minicpmv"`` give ``"minicpm-v"``;
    everything else ``"image-text-to-text"``.
    """
    if family is not None:
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r} for the transformers backend; choose one of {list(FAMILIES)}")
        return family
    if re.match(r"openbmb/minicpm-v", str(model), flags=re.IGNORECASE):
        return "minicpm-v"
    config = Path(str(model)).expanduser() / "config.json"
    if config.is_file():
        import json

        try:
            model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
        except (OSError, ValueError):
            model_type = None
        if model_type == "minicpmv":
            return "minicpm-v"
    return "image-text-to-text"


def resolve_revision(model: str, revision: str | None = None, cache_dir: str | None = None) -> str | None:
    """The commit hash of ``model`` at ``revision``, when it can be known without a network.

    * A 40-hex ``revision`` is returned as is.
    * A local folder: the ``<hash>`` of a ``.../snapshots/<hash>`` folder of a
      Hugging Face cache, or the commit checked out in a git clone; else
      ``revision``.
    * A hub id: the snapshot that the local Hugging Face cache (``cache_dir``,
      default ``HF_HUB_CACHE``) holds for ``revision`` (default ``main``);
      else ``revision`` (``None`` when not given).
    """
    if revision is not None and _COMMIT.fullmatch(revision):
        return revision
    folder = Path(str(model)).expanduser()
    if folder.is_dir():
        return _folder_commit(folder.resolve()) or revision
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(str(model), "config.json", cache_dir=cache_dir, revision=revision)
    except Exception:  # an id the cache cannot even parse: nothing to resolve
        return revision
    if isinstance(found, str):
        match = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", found)
        if match:
            return match.group(1)
    return revision


def _folder_commit(folder: Path) -> str | None:
    if folder.parent.name == "snapshots" and _COMMIT.fullmatch(folder.name):
        return folder.name
    head = folder / ".git" / "HEAD"
    if not head.is_file():
        return None
    text = head.read_text(encoding="utf-8").strip()
    if _COMMIT.fullmatch(text):
        return text
    if text.startswith("ref: "):
        ref = folder / ".git" / text[5:]
        if ref.is_file() and _COMMIT.fullmatch(commit := ref.read_text(encoding="utf-8").strip()):
            return commit
    return None


def missing_torchvision(error: Exception) -> bool:
    """Whether ``error`` comes from torchvision missing (or failing to import)."""
    text = f"{type(error).__name__} {error}".lower()
    if "torchvision" not in text and "video_processor" not in text:
        return False
    try:
        import torchvision  # noqa: F401
    except Exception:
        return True
    return False


def resolve_device(device: str) -> str:
    """``device``, with ``"auto"`` resolved to ``"cuda"`` when available, else ``"cpu"``."""
    if device != "auto":
        return str(device)
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_dtype(dtype: str, device: str) -> str:
    """The dtype name for ``device``: ``"auto"`` is float32 on the CPU and bfloat16 elsewhere."""
    if dtype == "auto":
        return "float32" if device == "cpu" else "bfloat16"
    name = str(dtype).removeprefix("torch.")
    if name not in _DTYPES:
        raise ValueError(f"dtype must be 'auto' or one of {list(_DTYPES)}, got {dtype!r}")
    return name


def explain_load_error(what: str, error: Exception, *, model: str, revision: str | None = None,
                       cache_dir: str | None = None, trust_remote_code: bool | None = None) -> OSError:
    """An ``OSError`` that says why the ``what`` (e.g. ``"model"``) of ``model`` did not load and what to do.

    The advice depends on the cause: torchvision missing for a video processor, a local folder that holds
    no model, offline mode with the model not in the Hugging Face cache, a hub id that could not be
    fetched, or model code that needs ``trust_remote_code=True``.
    """
    where = f"{model!r}" + (f" at revision {revision!r}" if revision else "")
    message = f"could not load the {what} of {where}: {type(error).__name__}: {error}\n"
    folder = Path(model).expanduser()
    if missing_torchvision(error):
        message += ("This model's processor handles video, and transformers' video processors need "
                    "torchvision: install the torchvision release that matches your torch "
                    "(torch 2.13 -> torchvision 0.28; a build for the same CUDA or CPU variant), or use an "
                    "image-only model.")
    elif folder.is_absolute() or model.startswith((".", "~")) or folder.exists():
        message += (f"No usable model folder at {folder}: check the path, or pass a hub id "
                    "such as Qwen/Qwen2.5-VL-7B-Instruct.")
    elif offline_mode():
        from huggingface_hub import constants

        cache = cache_dir or constants.HF_HUB_CACHE
        message += (f"HF_HUB_OFFLINE=1 is set and the model is not (completely) in the local Hugging Face "
                    f"cache ({cache}). Download it on a machine with internet "
                    f"(`hf download {model}" + (f" --revision {revision}" if revision else "")
                    + "`), copy the cache here and point HF_HUB_CACHE (or HF_HOME) at it, or pass the "
                    "model's local folder as --model.")
    else:
        message += ("Check the model id and revision, your network access to the Hugging Face Hub and, for "
                    "gated models, your login (`hf auth login`); or pass a local folder.")
    if trust_remote_code is False and "trust_remote_code" in str(error):
        message += " This model needs its own code: pass trust_remote_code=True."
    return OSError(message)
