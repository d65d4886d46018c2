"""Which Hugging Face model, which commit, where it runs, and why it did not load: for the transformers backend.

``resolve_family`` picks the describer path for a model id or folder,
``resolve_revision`` finds the commit a revision names without a network (a
Hugging Face cache snapshot, a git clone), ``weights_fingerprint`` says what
the weights are for the cache key (a local folder's content digest, a hub id's
commit), ``resolve_device`` and
``resolve_dtype`` settle ``"auto"``, and ``explain_load_error`` turns a failed
``from_pretrained`` into an error that says what to do. Nothing here imports
torch or transformers at import time.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from sova_lib.describe.contract import DescriberEnvironmentError
from sova_lib.fingerprint import folder_fingerprint
from sova_lib.hub import offline_mode

__all__ = ["FAMILIES", "explain_load_error", "missing_package",
           "preflight", "resolve_device", "resolve_dtype", "resolve_family", "resolve_revision", "weights_fingerprint"]

#: The describer paths of the transformers backend (``sova_lib.describe.backends.transformers``).
FAMILIES = ("image-text-to-text", "minicpm-v")
_DTYPES = ("bfloat16", "float16", "float32")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _remote_code_minicpm(model: str) -> bool:
    """Whether a hub id names a MiniCPM-V release that runs only through its own code (up to 4.5).

    transformers has MiniCPM-V 4.6 and later natively (``minicpmv4_6``, ``minicpmv4_7``), so
    ``openbmb/MiniCPM-V-4_6`` takes the image-text-to-text path like any native model.
    """
    found = re.match(r"openbmb/minicpm-(?:llama3-)?v(?:-(\d+)(?:[._](\d+))?)?(?![.\d])", str(model),
                     flags=re.IGNORECASE)
    if not found:
        return False
    major, minor = int(found.group(1) or 0), int(found.group(2) or 0)
    return (major, minor) < (4, 6)


def resolve_family(model: str, family: str | None = None) -> str:
    """The describer path for ``model``: ``family`` if given, else from the id or folder.

    Hub ids of MiniCPM-V up to 4.5 (``openbmb/MiniCPM-V-4_5``, ``openbmb/MiniCPM-V-2_6``,
    ``openbmb/MiniCPM-Llama3-V-2_5``; any case) and local folders whose ``config.json`` has
    ``"model_type": "minicpmv"`` give ``"minicpm-v"``; everything else, MiniCPM-V 4.6 and later
    included (native in transformers), ``"image-text-to-text"``.
    """
    if family is not None:
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r} for the transformers backend; choose one of {list(FAMILIES)}")
        return family
    return "minicpm-v" if _remote_code_minicpm(model) or _model_type(model) == "minicpmv" else "image-text-to-text"


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
    match = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", found) if isinstance(found, str) else None
    return match.group(1) if match else revision


def weights_fingerprint(model: str, revision: str | None = None, cache_dir: str | None = None) -> dict:
    """What the weights of ``model`` are, for the cache key (``sova_lib.describe.contract``: ``fingerprint()``).

    * A local folder: ``{"method": "folder-digest", "sha256": ...}``, the content of its model files
      (``sova_lib.fingerprint.folder_fingerprint``: each file read once per version), so a checkpoint saved over
      the last one gets a new cache folder.
    * A hub id: ``{"method": "hub-commit", "commit": ...}``, the commit ``revision`` (default ``main``) names:
      from the local Hugging Face cache (``resolve_revision``), else from the hub.

    ``DescriberEnvironmentError`` (``preflight``'s, or the hub's answer) when neither can be known.
    """
    preflight(model, revision=revision, cache_dir=cache_dir)
    folder = Path(str(model)).expanduser()
    if folder.is_dir():
        return {"method": "folder-digest", "sha256": folder_fingerprint(folder)}
    commit = resolve_revision(model, revision, cache_dir)
    if commit is None or not _COMMIT.fullmatch(commit):
        commit = _hub_commit(model, revision)
    return {"method": "hub-commit", "commit": commit}


def _hub_commit(model: str, revision: str | None) -> str:
    """The commit the hub gives for ``model`` at ``revision`` (a model not in the local cache)."""
    where = f"{model!r} at revision {revision or 'main'!r}"
    if offline_mode():
        raise DescriberEnvironmentError(
            f"{where} is not in the local Hugging Face cache and the hub is off (HF_HUB_OFFLINE), so its commit, "
            f"which names the cache, is unknown. Fix: download it where there is internet (huggingface-cli download "
            f"{model}), or pass its local folder as --model")
    try:
        from huggingface_hub import model_info

        commit = model_info(str(model), revision=revision).sha
    except Exception as err:  # noqa: BLE001 - any failure of the hub leaves the commit unknown
        raise DescriberEnvironmentError(
            f"the Hugging Face hub did not say which commit {where} is ({type(err).__name__}: "
            f"{' '.join(str(err).split())[:200]}). Fix: check the id and --revision, and the connection to the hub, "
            "or pass a local folder as --model") from None
    if not commit:
        raise DescriberEnvironmentError(f"the Hugging Face hub gave no commit for {where}; pass a local folder "
                                        "as --model")
    return commit


def _folder_commit(folder: Path) -> str | None:
    if folder.parent.name == "snapshots" and _COMMIT.fullmatch(folder.name):
        return folder.name
    head = folder / ".git" / "HEAD"
    if not head.is_file():
        return None
    text = head.read_text(encoding="utf-8").strip()
    if text.startswith("ref: "):  # a branch checked out: its file holds the commit
        ref = folder / ".git" / text[5:]
        text = ref.read_text(encoding="utf-8").strip() if ref.is_file() else ""
    return text if _COMMIT.fullmatch(text) else None


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


#: Remote-code model types this backend knows another route for (README, "Models of the paper").
_OTHER_ROUTES = {
    "internvl_chat": ("the original InternVL checkpoints ship their own code; use the transformers-native "
                      "checkpoint of the same model (its id ends in -HF, e.g. OpenGVLab/InternVL3_5-8B-HF), or "
                      "serve the original with `vllm serve OpenGVLab/InternVL3_5-8B --trust-remote-code` and "
                      "describe with --backend openai"),
    "minicpmv": ("MiniCPM-V up to 4.5 runs through its own code: --backend-option family=minicpm-v in an "
                 "environment with the transformers version its model card names, or `vllm serve "
                 "openbmb/MiniCPM-V-4_5 --trust-remote-code` and --backend openai"),
}


def _is_path(model: str) -> bool:
    """Whether ``model`` names a local folder (absolute, relative with ``.``/``~``, or existing), not a hub id."""
    folder = Path(model).expanduser()
    return folder.is_absolute() or model.startswith((".", "~")) or folder.exists()


def _original_internvl(model: str) -> bool:
    """An original InternVL checkpoint (``OpenGVLab/InternVL*`` not ending in ``-HF``): remote code."""
    return bool(re.match(r"opengvlab/internvl", model, flags=re.IGNORECASE)) and not model.lower().endswith("-hf")


def _model_type(model: str) -> str | None:
    """The ``model_type`` of a local folder's ``config.json``; None for a hub id or an unreadable file."""
    try:
        return json.loads((Path(str(model)).expanduser() / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError):
        return None


def missing_package(error: Exception) -> str | None:
    """The name of the package whose absence caused ``error``, or None (torchvision: missing or failing to import)."""
    text = str(error)
    if any(word in f"{type(error).__name__} {text}".lower() for word in ("torchvision", "video_processor")):
        try:
            import torchvision  # noqa: F401
        except Exception:
            return "torchvision"
    found = re.search(r"No module named '([A-Za-z0-9_]+)", text)
    if found:
        return found.group(1).replace("_", "-")
    found = re.search(r"(?:requires? the following packages?|packages? that (?:were|was) not found in your "
                      r"environment)[^:]*:\s*([A-Za-z0-9_.\-]+)", text)
    if found:
        return found.group(1).rstrip(".")
    found = re.search(r"requires? the ([A-Za-z0-9_\-]+) library", text)
    if found:
        return found.group(1)
    if isinstance(error, ImportError) and getattr(error, "name", None):
        return str(error.name).split(".")[0].replace("_", "-")
    return None


def _diagnose(error: Exception, model: str, revision: str | None = None, cache_dir: str | None = None,
              device: str | None = None) -> tuple[str, str]:
    """``(cause, fix)`` of a failed load: why ``model`` did not load, one of ``out-of-memory``, ``flash-attn``,
    ``missing-package``, ``remote-code``, ``path``, ``hub-offline`` (offline and not in the local cache) or ``hub``
    (anything else about fetching it: a wrong id, no network, a gated model), and what to do about it."""
    lower = f"{type(error).__name__}: {error}".lower()
    if type(error).__name__ == "OutOfMemoryError" or "out of memory" in lower:
        return "out-of-memory", (
            f"the model does not fit in the memory of {device or 'the device'}: split it over every visible "
            "GPU with --device-map auto, use dtype=bfloat16, free the GPU (nvidia-smi), or take a smaller model")
    if "flash_attn" in lower or "flash-attn" in lower or "flashattention" in lower:
        return "flash-attn", (
            "attn_implementation=flash_attention_2 needs the flash-attn package built for this torch and CUDA "
            "(pip install flash-attn --no-build-isolation; not pinned, see docs/gpu.md), or leave "
            "attn_implementation unset to use PyTorch's sdpa attention")
    package = missing_package(error)
    if package == "torchvision":
        return "missing-package", (
            "this model's processor handles video, and transformers' video processors need torchvision: "
            "install the release that matches torch (torch 2.13 -> torchvision 0.28, pinned in "
            "the lock: make venv in a checkout), or use an image-only model")
    if package is not None:
        return "missing-package", (f"install {package} (make venv in a checkout installs every package "
                                   "this project's describers use)")
    model_type = _model_type(model)
    if model_type in _OTHER_ROUTES:
        return "remote-code", _OTHER_ROUTES[model_type]
    if ("trust_remote_code" in lower or "remote code" in lower
            or "does not recognize this architecture" in lower or "unrecognized configuration class" in lower):
        if _original_internvl(model):
            return "remote-code", _OTHER_ROUTES["internvl_chat"]
        return "remote-code", (
            "this model ships its own code, which this transformers cannot run as is: use a "
            "transformers-native checkpoint of it if there is one, or pass "
            "--backend-option trust_remote_code=true (only for code you trust) in the transformers "
            "version its model card names, or serve it with vLLM and use --backend openai")
    if _is_path(model):
        return "path", (f"no usable model folder at {Path(model).expanduser()} (it needs config.json, the weights "
                        "and the processor files): check the path, or pass a hub id such as "
                        "Qwen/Qwen2.5-VL-7B-Instruct")
    if offline_mode():
        from huggingface_hub import constants

        return "hub-offline", (
            "HF_HUB_OFFLINE=1 is set and the model is not (completely) in the local Hugging Face cache "
            f"({cache_dir or constants.HF_HUB_CACHE}): check the id's spelling, download it on a machine with "
            f"internet (`hf download {model}" + (f" --revision {revision}" if revision else "")
            + "`), copy the cache here and point HF_HUB_CACHE (or HF_HOME) at it, or pass the model's "
            "local folder as --model")
    return "hub", ("check the model id and revision, your network access to the Hugging Face Hub and, for gated "
                   "models, your login (`hf auth login`); or pass a local folder")


def preflight(model: str, *, revision: str | None = None, cache_dir: str | None = None) -> None:
    """Fail in well under a second, before torch and transformers are imported, when the model cannot be there.

    Raises ``DescriberEnvironmentError`` (``explain_load_error``) for a local path with no
    ``config.json``; for the original InternVL checkpoints (``OpenGVLab/InternVL*`` ids not ending in
    ``-HF``), whose own code transformers' image-text-to-text classes cannot run, before gigabytes are
    downloaded; and, in offline mode, for a hub id whose ``config.json`` is not in the local Hugging Face
    cache. Anything else is left to ``from_pretrained``.
    """
    error: Exception | None = None
    if _original_internvl(model):
        error = ValueError("the original InternVL checkpoints are remote code, not a transformers image-text-to-text "
                           "model")
    elif _is_path(str(model)):
        config = Path(str(model)).expanduser() / "config.json"
        if not config.is_file():
            error = FileNotFoundError(f"{config} does not exist")
    elif offline_mode():
        from huggingface_hub import try_to_load_from_cache

        try:
            found = try_to_load_from_cache(str(model), "config.json", cache_dir=cache_dir, revision=revision)
        except Exception:  # an id the cache cannot parse: from_pretrained will say what is wrong
            return
        if not isinstance(found, str):
            error = FileNotFoundError("config.json is not in the local Hugging Face cache")
    if error is not None:
        raise explain_load_error("model", error, model=str(model), revision=revision, cache_dir=cache_dir)


def explain_load_error(what: str, error: Exception, *, model: str, revision: str | None = None,
                       cache_dir: str | None = None, device: str | None = None) -> DescriberEnvironmentError:
    """A ``DescriberEnvironmentError`` (an ``OSError``) saying why the ``what`` (e.g. ``"model"``) of
    ``model`` did not load and what to do, by cause (its name in brackets): a missing package (torchvision
    for video processors, num2words, accelerate, ...), flash-attn, running out of GPU memory, model code
    this transformers cannot run (remote code, the original InternVL and MiniCPM-V checkpoints), a local
    folder that holds no model, offline mode with the model not in the local cache, or the Hub.
    """
    cause, fix = _diagnose(error, model, revision, cache_dir, device)
    where = f"{model!r}" + (f" at revision {revision!r}" if revision else "")
    detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
    detail = (detail if len(detail) <= 300 else detail[:297] + "...").rstrip(".")
    head = f"could not load the {what} of {where} ({cause}): {type(error).__name__}: {detail}"
    return DescriberEnvironmentError(f"{head}. Fix: {fix}.")
