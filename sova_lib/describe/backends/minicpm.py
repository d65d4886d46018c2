"""The remote-code chat path of MiniCPM-V (``openbmb/MiniCPM-V-4_5``), the paper's describer.

Used by ``TransformersDescriber`` with ``family="minicpm-v"`` (chosen
automatically for ``openbmb/MiniCPM-V*`` ids). The model ships its own code,
so it loads with ``trust_remote_code=True``:

* ``AutoModel.from_pretrained(model, trust_remote_code=True, dtype=..., attn_implementation="sdpa")``,
  then ``.eval()`` on the chosen device; its tokenizer and processor from the
  same id and revision (``AutoTokenizer`` / ``AutoProcessor``).
* One ``model.chat(...)`` call per request, as in the model card:
  ``msgs=[{"role": "user", "content": [frame_1, ..., frame_n, instruction]}]``
  (PIL images in time order, then the text), ``tokenizer=``, ``processor=``,
  ``sampling=False``, ``max_new_tokens=``, and ``system_prompt=`` (the chat
  API's own argument; it becomes a system message of the chat template).
  For a video the model card's video settings are added:
  ``use_image_id=False`` and ``max_slice_nums=1`` (each frame is one
  448-pixel view, with no per-image id tokens).
* ``frame_packing=k`` (optional) also passes ``temporal_ids``: the frames'
  times on MiniCPM-V 4.5's 0.1 s scale, in groups of ``k`` frames that its
  3D resampler compresses together, as the model card's high-frame-rate video
  example does. Left unset (the default), the frames go in as a plain list of
  images, with no temporal ids.

What ``sampling=False`` means is decided by the model's own code: in the
published MiniCPM-V 4.5 code it is deterministic beam search
(``num_beams=3``, ``repetition_penalty=1.2``), not one-beam greedy search.
``generate_kwargs`` (for instance ``{"num_beams": 1, "repetition_penalty":
1.0}`` for plain greedy decoding) is passed to ``chat``, which lets it
override those two settings. The chat API was written from the model card and
the published remote code; this project's tests check how the call is wired
with a fake model, not the model itself.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from sova_lib.describe.contract import DescribeRequest
from sova_lib.video.frames import to_rgb_image

if TYPE_CHECKING:
    from sova_lib.describe.backends.transformers import TransformersDescriber

__all__ = ["MiniCPMVChat", "chat_arguments", "temporal_ids"]

#: MiniCPM-V 4.5 counts time in steps of 0.1 s for its temporal ids.
TIME_SCALE = 0.1


def temporal_ids(timestamps: Sequence[float], packing: int) -> list[list[int]]:
    """Frame times as MiniCPM-V 4.5 temporal ids (round(t / 0.1)), in groups of ``packing`` frames.

    >>> temporal_ids([0.0, 1.0, 2.0, 3.0, 4.05], 2)
    [[0, 10], [20, 30], [40]]
    """
    if packing < 1:
        raise ValueError(f"frame_packing must be at least 1, got {packing}")
    ids = [int(round(float(t) / TIME_SCALE)) for t in timestamps]
    return [ids[i:i + packing] for i in range(0, len(ids), packing)]


def chat_arguments(request: DescribeRequest, max_new_tokens: int, frame_packing: int | None = None,
                   generate_kwargs: dict | None = None) -> dict:
    """The keyword arguments of ``model.chat`` for ``request`` (without model objects).

    The user content is the frames (RGB PIL images, in order) followed by the
    instruction; see the module docstring for the rest.
    """
    frames = [to_rgb_image(frame) for frame in request.frames]
    arguments: dict[str, Any] = {
        "msgs": [{"role": "user", "content": [*frames, request.prompt]}],
        "sampling": False,
        "max_new_tokens": int(max_new_tokens),
        "system_prompt": request.system_prompt or "",
    }
    if request.is_video:
        arguments.update(use_image_id=False, max_slice_nums=1)
        if frame_packing is not None:
            arguments["temporal_ids"] = temporal_ids(request.timestamps or range(len(frames)), int(frame_packing))
    arguments.update(generate_kwargs or {})
    return arguments


class MiniCPMVChat:
    """Loads MiniCPM-V with its remote code and describes each request with ``model.chat``."""

    def __init__(self, owner: "TransformersDescriber"):
        self.owner = owner
        self.model: Any = None
        self.tokenizer: Any = None
        self.processor: Any = None

    def load(self) -> None:
        import torch
        from transformers import AutoModel, AutoProcessor, AutoTokenizer

        owner, o = self.owner, self.owner.options
        common = owner.from_pretrained_kwargs()
        try:
            model = AutoModel.from_pretrained(owner.model, dtype=getattr(torch, owner.dtype),
                                              attn_implementation=o.attn_implementation or "sdpa",
                                              device_map=o.device_map, **common)
        except Exception as error:
            raise owner.load_error("model", error) from error
        self.model = model.eval() if o.device_map is not None else model.eval().to(owner.device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(owner.model, **common)
            self.processor = AutoProcessor.from_pretrained(owner.model, **common, **(o.processor_kwargs or {}))
        except Exception as error:
            raise owner.load_error("tokenizer or processor", error) from error

    def render(self, requests: Sequence[DescribeRequest]) -> list[str]:
        """The text part of each chat, with ``(<image>./</image>)`` per frame, as the chat code builds it."""
        rendered = []
        for request in requests:
            messages = []
            if request.system_prompt:
                messages.append({"role": "system", "content": request.system_prompt})
            content = "\n".join(["(<image>./</image>)"] * len(request.frames) + [request.prompt])
            messages.append({"role": "user", "content": content})
            rendered.append(self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
        return rendered

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        import torch

        owner, o = self.owner, self.owner.options
        answers = []
        for request in requests:
            arguments = chat_arguments(request, owner.max_new_tokens, o.frame_packing, o.generate_kwargs)
            try:
                answer = self.model.chat(tokenizer=self.tokenizer, processor=self.processor, **arguments)
            except torch.OutOfMemoryError as error:
                raise owner.out_of_memory(error, 1) from None
            if not isinstance(answer, str):
                raise TypeError(f"MiniCPM-V chat returned {type(answer).__name__} for request {request.id!r}, "
                                "expected the answer text")
            answers.append(answer.strip())
        return answers
