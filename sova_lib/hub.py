"""The Hugging Face hub: offline mode, the local folder of a model id, and failing fast when the hub is away.

``offline_mode()`` reads ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` (now,
not at import); ``hub_folder(name, revision)`` is the local folder of a
model: the folder itself, or the id's snapshot in the local Hugging Face
cache (downloaded first unless offline). The sentence encoder, the
contrastive models and the transformers describer all decide offline mode by
``offline_mode``.

With ``HF_HUB_OFFLINE`` unset and no network, loading a model id that is not
in the local cache retries for minutes before it fails. ``offline_unless_reachable``
settles that question once, in about ``timeout`` seconds: a model that is a
local folder, or a run already offline, needs no probe; otherwise one TCP
connection to the hub's endpoint (``$HF_ENDPOINT``, default
https://huggingface.co) is tried, and if it does not open within ``timeout``
seconds, offline mode is switched on for this process (the environment
variable and ``huggingface_hub.constants.HF_HUB_OFFLINE``, which
``huggingface_hub`` and ``transformers`` read), so that a model in the local
cache still loads and any other fails at once with the loader's "offline and
not in the cache" message.
"""
from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["hub_folder", "hub_reachable", "offline_mode", "offline_unless_reachable"]


def offline_mode() -> bool:
    """True when ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set (read now, not at import)."""
    return any(os.environ.get(n, "").strip().lower() in ("1", "true", "yes", "on")
               for n in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_folder(name: str, revision: str | None = None) -> Path:
    """The local folder of the model ``name``: itself when it is a folder, else its Hugging Face snapshot.

    A hub id is taken from the local Hugging Face cache, downloaded first unless ``offline_mode()``.
    ``RuntimeError`` when it can be neither.
    """
    folder = Path(name).expanduser()
    if folder.is_dir():
        return folder.resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, revision=revision, local_files_only=offline_mode()))
    except Exception as err:
        raise RuntimeError(f"model {name!r} is neither a local folder nor in the Hugging Face cache, and could "
                           f"not be downloaded ({type(err).__name__}); download it on a machine with internet "
                           "(huggingface-cli download NAME) or pass its local folder") from None


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the hub's endpoint opens within ``timeout`` seconds (name lookup included)."""
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host, port = url.hostname, url.port or (80 if url.scheme == "http" else 443)
    if not host:
        return False
    opened: list[bool] = []

    def probe() -> None:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
            opened.append(True)

    worker = threading.Thread(target=probe, daemon=True)  # a hanging name lookup cannot hold the caller
    worker.start()
    worker.join(timeout)
    return bool(opened)


def offline_unless_reachable(model: str | None, timeout: float = 3.0) -> None:
    """Switch this process to offline mode, with one note saying so, when ``model`` would need the hub and the hub
    does not answer."""
    if model is None or offline_mode() or Path(model).exists() or hub_reachable(timeout):
        return
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True
    print(f"sova: note: the Hugging Face hub does not answer within {timeout:g} s; loading {model} from the local "
          "cache only (HF_HUB_OFFLINE=1)", file=sys.stderr)
