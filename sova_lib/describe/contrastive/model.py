"""A contrastive vision-language model loaded through Hugging Face transformers.

``ContrastiveModel(model=...)`` (its options, ``ContrastiveOptions``, whole or as keywords) loads any checkpoint whose ``AutoModel`` has
``get_image_features`` (CLIP, SigLIP, SigLIP2) or ``get_video_features``
(X-CLIP, which has no image head) with its
``AutoProcessor``, from a hub id (the local hub cache when offline) or a
local folder. It gives:

* ``image_features(images)``: one vector per RGB image, ``(n, D)`` float32,
  computed in batches of ``batch_frames`` images;
* ``video_features(frames)``: one vector per clip from ``get_video_features``,
  for models that have it (X-CLIP);
* ``text_features(texts)``: one vector per text (the CLIP zero-shot baseline).

Vectors are returned as the model gives them (not normalised). On a GPU the
weights run in bfloat16, on a CPU in float32 (``dtype`` overrides);
``config()["identity"]`` is the content fingerprint of the checkpoint's files
(``sova_lib.fingerprint.folder_fingerprint``), so a cache never mixes two sets
of weights under one name. A local folder is keyed by that content and by
the name of its one path (``sova_lib.fingerprint.local_folder``: absolute,
symlinks followed, no trailing slash), not by the path itself: one model
however it is spelled, and the same key on every machine that holds those
weights under that name (``ContrastiveModel.path`` is the full path).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sova_lib.describe.contract import given_options, option
from sova_lib.fingerprint import folder_fingerprint, local_folder
from sova_lib.hub import hub_folder

__all__ = ["ContrastiveModel", "ContrastiveOptions", "ModelLoadError", "planned_config"]


@dataclass(frozen=True, kw_only=True)
class ContrastiveOptions:
    """The options of ``ContrastiveModel``, each the ``sova embed`` flag of its name (``--batch-frames``), which the
    command line makes from this class (``sova_lib.describe.contract.option``: help, metavar, choices; the default is added
    to the help where there is one)."""

    model: str = option(help="the contrastive model (CLIP, SigLIP, X-CLIP, ...): a Hugging Face id or a local folder",
                        flag="ID_OR_PATH")
    revision: str | None = option(None, "the model's hub revision: a branch, tag or commit", flag="REV")
    batch_frames: int = option(64, "frames per forward pass", flag="N")
    device: str | None = option(None, "torch device (default: cuda when available, else cpu)", flag="DEV")
    dtype: str | None = option(None, "weights' precision (default: bfloat16 on a GPU, float32 on a CPU)",
                               choices=("bfloat16", "float16", "float32"))

    def __post_init__(self):
        if self.batch_frames < 1:
            raise ValueError(f"batch_frames must be at least 1, got {self.batch_frames}")


class ModelLoadError(RuntimeError):
    """A model or its processor could not be loaded."""


def planned_config(name: str, *, revision: str | None = None, device: str = "cpu",
                   dtype: str | None = None) -> tuple[dict, type, Path]:
    """``(config(), model class, local folder)`` of ``ContrastiveModel(name, ...)`` on ``device``, weights unloaded.

    Reads the checkpoint's ``config.json`` (``AutoConfig``) and hashes its
    files, so a process that never loads the model (the Ray engine's driver)
    names the same cache folder as one that does; ``ContrastiveModel`` itself
    starts here. The folder is ``sova_lib.hub.hub_folder(name, revision)``
    (``RuntimeError`` for a model it cannot find); ``ModelLoadError`` for a
    configuration ``AutoModel`` cannot map.
    """
    from transformers import AutoConfig, AutoModel

    folder = local_folder(name)  # a folder as one path, however it was spelled; keyed by its name and content
    path = folder or hub_folder(name, revision)
    try:
        config = AutoConfig.from_pretrained(path)
        model_class = AutoModel._model_mapping[type(config)]
    except Exception as err:
        raise ModelLoadError(f"could not load {name!r} from {path} with AutoConfig/AutoModel: "
                             f"{type(err).__name__}: {err}") from None
    video = hasattr(model_class, "get_video_features")
    frames = getattr(getattr(config, "vision_config", None), "num_frames", None) if video else None
    identity = folder_fingerprint(path)  # each file hashed once per version (the memo of sova_lib.fingerprint)
    return ({"model": folder.name if folder else name, "revision": revision, "identity": identity, "class": model_class.__name__,
             "dtype": dtype or ("bfloat16" if device.startswith("cuda") else "float32"), "video_frames": frames},
            model_class, path)


class ContrastiveModel:
    """A contrastive model and its processor (see the module docstring).

    ``options``: ``ContrastiveOptions`` (``model``, ``revision``, ``batch_frames``,
    ``device``, ``dtype``), or its fields as keywords. ``config()`` is
    ``planned_config``'s; ``video_frames`` is the number of frames the model's
    video head takes (X-CLIP: ``vision_config.num_frames``), or None.
    """

    #: The options this model takes (``ContrastiveOptions``), from which ``sova embed`` makes its flags.
    Options = ContrastiveOptions

    def __init__(self, options: ContrastiveOptions | None = None, /, **given):
        import torch
        from transformers import AutoProcessor

        self.options = given_options(self.Options, options, given, "ContrastiveModel")
        if not isinstance(self.options, ContrastiveOptions):
            raise TypeError(f"ContrastiveModel takes ContrastiveOptions, not {type(self.options).__name__}; "
                            f"give keywords: ContrastiveModel(model=...)")
        name, self.batch_frames = self.options.model, self.options.batch_frames
        self.name, self.revision = name, self.options.revision
        self.device = self.options.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._config, model_class, self.path = planned_config(name, revision=self.revision, device=self.device,
                                                              dtype=self.options.dtype)
        self.dtype, self.video_frames = self._config["dtype"], self._config["video_frames"]
        try:
            self.processor = AutoProcessor.from_pretrained(self.path)
            self.model = model_class.from_pretrained(self.path, dtype=getattr(torch, self.dtype))
        except Exception as err:
            raise ModelLoadError(f"could not load {name!r} from {self.path} with AutoModel/AutoProcessor: "
                                 f"{type(err).__name__}: {err}") from None
        if not (hasattr(self.model, "get_image_features") or hasattr(self.model, "get_video_features")):
            raise ModelLoadError(f"{name!r} loads as {type(self.model).__name__}, which has neither "
                                 "get_image_features nor get_video_features: not a contrastive vision-text model")
        self.model.to(self.device).eval()

    def config(self) -> dict:
        """What identifies the vectors: name, revision, weights digest, class, precision and video frames."""
        return dict(self._config)

    def _run(self, method: str, inputs) -> np.ndarray:
        import torch

        floating = {k: v.to(self.device, getattr(torch, self.dtype)) if v.is_floating_point() else v.to(self.device)
                    for k, v in inputs.items()}
        with torch.inference_mode():
            output = getattr(self.model, method)(**floating)  # a tensor, or an output holding it as pooler_output
        return getattr(output, "pooler_output", output).float().cpu().numpy()

    def image_features(self, images: list) -> np.ndarray:
        """``(n, D)`` float32 vectors of RGB PIL images, ``batch_frames`` at a time."""
        if not hasattr(self.model, "get_image_features"):
            raise ModelLoadError(f"{type(self.model).__name__} has no get_image_features (a video-only model such "
                                 "as X-CLIP); use pool 'video'")
        parts = [self._run("get_image_features", self.processor(images=images[i:i + self.batch_frames],
                                                                return_tensors="pt"))
                 for i in range(0, len(images), self.batch_frames)]
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def video_features(self, frames: list) -> np.ndarray:
        """``(D,)`` float32: ``get_video_features`` of one clip's frames (RGB PIL images, in time order).

        A model whose video head takes a fixed number of frames (X-CLIP: 8)
        gets that many, spread evenly over the given frames
        (``rint(linspace(0, n - 1, video_frames))``; frames repeat when the
        clip has fewer).
        """
        if not hasattr(self.model, "get_video_features"):
            raise ModelLoadError(f"{type(self.model).__name__} has no get_video_features; use pool 'mean' or 'none'")
        if self.video_frames and len(frames) != self.video_frames:
            frames = [frames[i] for i in np.rint(np.linspace(0, len(frames) - 1, self.video_frames)).astype(int)]
        return self._run("get_video_features", self.processor(videos=[frames], return_tensors="pt"))[0]

    def text_features(self, texts: list[str]) -> np.ndarray:
        """``(n, D)`` float32 vectors of texts (padded to the processor's maximum length)."""
        parts = []
        for i in range(0, len(texts), self.batch_frames):
            inputs = self.processor(text=texts[i:i + self.batch_frames], padding="max_length", truncation=True,
                                    return_tensors="pt")
            parts.append(self._run("get_text_features", {k: v for k, v in inputs.items() if k != "pixel_values"}))
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
