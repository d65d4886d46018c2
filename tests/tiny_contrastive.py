"""Tiny, randomly initialised contrastive models (CLIP, SigLIP) written as model folders, for tests.

Weights are random (seeded): the vectors mean nothing. The tests use them to
check frame sampling, batching, pooling, caching and export, never quality.
The tokenizer is a byte-level BPE over the 256 byte symbols with no merges,
so it needs no download.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["build_tiny_clip", "build_tiny_siglip", "build_tiny_xclip", "byte_level_tokenizer"]

_TEXT = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
_VISION = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=32,
               patch_size=8)


def byte_level_tokenizer(max_length: int, bos: str, eos: str, pad: str):
    """A ``PreTrainedTokenizerFast`` over the 256 byte symbols plus ``bos``/``eos``/``pad``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    backend = Tokenizer(models.BPE(vocab={s: i for i, s in enumerate(alphabet)}, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=bos, eos_token=eos, pad_token=pad,
                                   model_max_length=max_length)


def build_tiny_clip(folder: str | Path, seed: int = 0) -> Path:
    """A CLIP with 16-d towers, 32x32 images in 8x8 patches, a 16-d projection."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    folder = Path(folder)
    tokenizer = byte_level_tokenizer(16, "<s>", "</s>", "<pad>")
    config = CLIPConfig(text_config=dict(_TEXT, vocab_size=len(tokenizer), max_position_embeddings=16,
                                         eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                                         pad_token_id=tokenizer.pad_token_id),
                        vision_config=_VISION, projection_dim=16)
    torch.manual_seed(seed)
    CLIPModel(config).eval().save_pretrained(folder)
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_tiny_siglip(folder: str | Path, seed: int = 0) -> Path:
    """A SigLIP with 16-d towers and 32x32 images in 8x8 patches."""
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    folder = Path(folder)
    tokenizer = byte_level_tokenizer(16, "<s>", "</s>", "<pad>")
    config = SiglipConfig(text_config=dict(_TEXT, vocab_size=len(tokenizer), max_position_embeddings=16,
                                           eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                                           pad_token_id=tokenizer.pad_token_id),
                          vision_config=_VISION)
    torch.manual_seed(seed)
    SiglipModel(config).eval().save_pretrained(folder)
    image_processor = SiglipImageProcessor(size={"height": 32, "width": 32})
    SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_tiny_xclip(folder: str | Path, seed: int = 0, num_frames: int = 4) -> Path:
    """An X-CLIP (video head over ``num_frames`` frames) with 16-d towers and 32x32 images in 8x8 patches."""
    import torch
    from transformers import VideoMAEImageProcessor, XCLIPConfig, XCLIPModel, XCLIPProcessor

    folder = Path(folder)
    tokenizer = byte_level_tokenizer(16, "<s>", "</s>", "<pad>")
    config = XCLIPConfig(text_config=dict(_TEXT, vocab_size=len(tokenizer), max_position_embeddings=16,
                                          eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                                          pad_token_id=tokenizer.pad_token_id),
                         vision_config=dict(_VISION, num_frames=num_frames, mit_hidden_size=16,
                                            mit_intermediate_size=32, mit_num_hidden_layers=1,
                                            mit_num_attention_heads=2),
                         projection_dim=16, prompt_layers=1, prompt_attention_heads=2, prompt_num_attention_heads=2)
    torch.manual_seed(seed)
    XCLIPModel(config).eval().save_pretrained(folder)
    image_processor = VideoMAEImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    XCLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder
