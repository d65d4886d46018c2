"""Fail fast when the Hugging Face hub cannot be reached: offline mode unless a short probe gets through.

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

import os
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["hub_reachable", "offline_unless_reachable"]


def _offline() -> bool:
    return any(os.environ.get(n, "").strip().lower() in ("1", "true", "yes", "on")
               for n in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_reachable(timeout: float = 3.0, endpoint: str | None = None) -> bool:
    """Whether a TCP connection to the hub's endpoint opens within ``timeout`` seconds (name lookup included)."""
    url = urlparse(endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host, port = url.hostname, url.port or (80 if url.scheme == "http" else 443)
    if not host:
        return False
    answer: dict[str, bool] = {}

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                answer["ok"] = True
        except OSError:
            answer["ok"] = False

    worker = threading.Thread(target=probe, daemon=True)  # a hanging name lookup cannot hold the caller
    worker.start()
    worker.join(timeout)
    return answer.get("ok", False)


def offline_unless_reachable(model: str | None, timeout: float = 3.0) -> bool:
    """Switch this process to offline mode when ``model`` would need the hub and the hub does not answer.

    Returns True when it switched (and prints one note saying so), False otherwise.
    """
    if model is None or _offline() or Path(model).exists() or hub_reachable(timeout):
        return False
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True
    print(f"sova: note: the Hugging Face hub does not answer within {timeout:g} s; loading {model} from the local "
          "cache only (HF_HUB_OFFLINE=1)", file=sys.stderr)
    return True
