"""Tiny, randomly initialised vision-language models for tests (no download).

Each builder writes a complete Hugging Face model folder (config, weights,
tokenizer, processor with its chat template) that ``from_pretrained`` loads
exactly as it would load a real model id. The weights are random (seeded), so
the text these models produce is meaningless: the tests use them to check
wiring, shapes, padding and determinism, never the quality of a description.

The tokenizer is a byte-level BPE with no merges: its vocabulary is the 256
byte symbols plus the special tokens the processor needs, so any text
round-trips exactly and the prompt that reaches a model can be decoded back.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["CHAT_TEMPLATE", "byte_tokenizer", "build_tiny_llava", "build_tiny_qwen2_5_vl", "build_tiny_qwen3_vl"]

#: A ChatML-style template written for these tests; ``_template`` fills in
#: the text that stands for an image (@IMAGE@) and a video (@VIDEO@).
_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}@IMAGE@"
    "{% elif part['type'] == 'video' %}@VIDEO@"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                 "<|image_pad|>", "<|video_pad|>"]


def _template(image: str, video: str) -> str:
    return _TEMPLATE.replace("@IMAGE@", image).replace("@VIDEO@", video)


#: The template of the tiny Qwen models (Qwen's own placeholders).
CHAT_TEMPLATE = _template("<|vision_start|><|image_pad|><|vision_end|>", "<|vision_start|><|video_pad|><|vision_end|>")


def byte_tokenizer(specials: list[str], eos: str, pad: str, chat_template: str):
    """A ``PreTrainedTokenizerFast`` over the 256 byte symbols plus ``specials``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    backend = Tokenizer(models.BPE(vocab={symbol: i for i, symbol in enumerate(alphabet)}, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    others = [token for token in specials if token not in (eos, pad)]
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=eos, pad_token=pad,
                                        additional_special_tokens=others)
    tokenizer.chat_template = chat_template
    return tokenizer


def _save_model(model, tokenizer, folder: Path) -> None:
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)


def build_tiny_llava(folder: str | Path, seed: int = 0) -> Path:
    """A LLaVA (CLIP vision tower + Llama) with hidden size 32 and one layer each.

    Its processor is image-only (no video processor), so it loads without
    torchvision: videos reach it as their frames, one image each. Images are
    resized to 32x32 and cut into 8x8 patches (16 image tokens).
    """
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    folder = Path(folder)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>"]
    tokenizer = byte_tokenizer(specials, eos="<|im_end|>", pad="<|endoftext|>", chat_template=_template("<image>", ""))
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=tokenizer.chat_template)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=32, patch_size=8),
        text_config=LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                max_position_embeddings=512, eos_token_id=tokenizer.eos_token_id,
                                pad_token_id=tokenizer.pad_token_id),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        image_seq_length=16,
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    _save_model(model, tokenizer, folder)
    processor.save_pretrained(folder)
    return folder


def _qwen_vision_and_text(tokenizer, text_config_extra: dict):
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in [
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>")]}
    text = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1024,
                bos_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id, **text_config_extra)
    return ids, text


def build_tiny_qwen2_5_vl(folder: str | Path, seed: int = 0) -> Path:
    """A Qwen2.5-VL with hidden size 32, one text and one vision layer.

    Images and frames are resized to multiples of 28 pixels between 28x28 and
    56x56 (a 64x48 frame becomes 56x56: 16 patches of 14x14, 4 tokens after
    the 2x2 merge); video frames are paired in time (temporal patch 2).
    """
    import torch
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    folder = Path(folder)
    tokenizer = byte_tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>", chat_template=CHAT_TEMPLATE)
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    processor = Qwen2_5_VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels), tokenizer=tokenizer,
                                    video_processor=Qwen2VLVideoProcessor(**pixels), chat_template=CHAT_TEMPLATE)
    ids, text = _qwen_vision_and_text(tokenizer, {"rope_parameters": {
        "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}})
    config = Qwen2_5_VLConfig(
        text_config=text,
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=56,
                           fullatt_block_indexes=[0], tokens_per_second=2),
        **ids,
    )
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config)
    _save_model(model, tokenizer, folder)
    processor.save_pretrained(folder)
    return folder


def build_tiny_qwen3_vl(folder: str | Path, seed: int = 0) -> Path:
    """A Qwen3-VL with hidden size 32 and one layer each (same pixel limits).

    Qwen3-VL writes each frame pair's time ("<0.5 seconds>") into the prompt
    from the video metadata, which makes the timestamps a request carries
    visible in the tokens that reach the model.
    """
    import torch
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    folder = Path(folder)
    tokenizer = byte_tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>", chat_template=CHAT_TEMPLATE)
    size = {"shortest_edge": 32 * 32, "longest_edge": 64 * 64}
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(size=size, patch_size=16),
                                 tokenizer=tokenizer,
                                 video_processor=Qwen3VLVideoProcessor(size=size, patch_size=16),
                                 chat_template=CHAT_TEMPLATE)
    ids, text = _qwen_vision_and_text(tokenizer, {"head_dim": 16, "rope_parameters": {
        "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3], "mrope_interleaved": True}})
    config = Qwen3VLConfig(
        text_config=text,
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                           num_position_embeddings=64, deepstack_visual_indexes=[]),
        **ids,
    )
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config)
    _save_model(model, tokenizer, folder)
    processor.save_pretrained(folder)
    return folder
