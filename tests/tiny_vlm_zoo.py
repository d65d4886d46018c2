"""More tiny, randomly initialised vision-language models for tests (Gemma 3, Idefics3 and five video models).

Same idea as ``tests/tiny_vlm.py`` (whose byte-level tokenizer they share in
spirit): a complete model folder built offline from a config, hidden size 32,
one or two layers, seeded random weights, so the text is noise and only the
wiring is tested. What each builder adds:

* ``build_tiny_gemma3``: Gemma 3's image path (no video processor; a clip's
  frames go in as images). Its chat template renders ``{{ bos_token }}`` and its
  tokenizer also adds BOS, as the published tokenizer does, so a second BOS
  appears unless the prompt is tokenised without special tokens.
* ``build_tiny_idefics3``: Idefics3 (the template writes ``<|begin_of_text|>``
  literally; same double-BOS hazard), image splitting into a 2x2 grid plus a
  global view.
* ``build_tiny_qwen2_vl``, ``build_tiny_smolvlm``, ``build_tiny_llava_onevision``,
  ``build_tiny_internvl`` (transformers' InternVL format, as the ``-HF``
  checkpoints) and ``build_tiny_videollama3``: video processors
  (``VIDEO_BUILDERS``; transformers' video processors run on torchvision).

The chat templates are written for these tests after the layout of the
published ones (which tokens come where); they are not copies.
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_vlm import CHAT_TEMPLATE, QWEN_SPECIALS, _save_model

__all__ = ["BUILDERS", "VIDEO_BUILDERS", "build_tiny_gemma3", "build_tiny_idefics3", "build_tiny_internvl",
           "build_tiny_llava_onevision", "build_tiny_qwen2_vl", "build_tiny_smolvlm", "build_tiny_videollama3",
           "named_byte_tokenizer"]

GEMMA3_TEMPLATE = (
    "{{ bos_token }}"
    "{% set ns = namespace(prefix='') %}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set ns.prefix = messages[0]['content'][0]['text'] + '\n\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set turns = messages %}{% endif %}"
    "{% for message in turns %}"
    "<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if loop.first %}{{ ns.prefix }}{% endif %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<start_of_image>{% elif part['type'] == 'text' %}{{ part['text'] | trim }}"
    "{% endif %}{% endfor %}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)

IDEFICS3_TEMPLATE = (
    "<|begin_of_text|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{{ ':' if message['content'][0]['type'] == 'image' else ': ' }}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% elif part['type'] == 'image' %}<image>{% endif %}"
    "{% endfor %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)

_TEXT = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
             max_position_embeddings=4096)


def named_byte_tokenizer(specials: list[str], *, eos: str, pad: str, chat_template: str, bos: str | None = None,
                         named: dict | None = None, add_bos: bool = False):
    """A byte-level ``PreTrainedTokenizerFast`` (256 byte symbols, no merges) plus ``specials``.

    ``named`` maps attribute names the processors look up (``image_token``, ``boi_token``, ...) to
    tokens; ``add_bos=True`` makes plain tokenisation prepend ``bos`` as Llama-3 and Gemma tokenizers do.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    backend = Tokenizer(models.BPE(vocab={symbol: i for i, symbol in enumerate(alphabet)}, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    kwargs: dict = {"tokenizer_object": backend, "eos_token": eos, "pad_token": pad}
    if bos:
        kwargs["bos_token"] = bos
    if named:
        kwargs["extra_special_tokens"] = dict(named)
    tokenizer = PreTrainedTokenizerFast(**kwargs)
    absent = [token for token in specials if tokenizer.convert_tokens_to_ids(token) in (None, tokenizer.unk_token_id)
              or token not in tokenizer.get_vocab()]
    tokenizer.add_tokens(absent, special_tokens=True)
    if add_bos:
        bos_id = tokenizer.convert_tokens_to_ids(bos)
        tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, bos_id)])
    tokenizer.chat_template = chat_template
    return tokenizer


def _finish(model, processor, tokenizer, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _save_model(model, tokenizer, folder)
    processor.save_pretrained(folder)
    return folder


def build_tiny_gemma3(folder: str | Path, seed: int = 0) -> Path:
    """Gemma 3: SigLIP tower on 32x32 images (8x8 patches), 4 soft tokens per image, 2 text layers."""
    import torch
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor

    named = {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}
    tokenizer = named_byte_tokenizer(["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>", *named.values()],
                                     eos="<eos>", pad="<pad>", bos="<bos>", named=named, add_bos=True,
                                     chat_template=GEMMA3_TEMPLATE)
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": 32, "width": 32},
                                                                     do_pan_and_scan=False),
                                tokenizer=tokenizer, chat_template=GEMMA3_TEMPLATE, image_seq_length=4)
    ids = tokenizer.convert_tokens_to_ids
    config = Gemma3Config(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=4096,
                         sliding_window=64, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id),
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=1, num_attention_heads=2, image_size=32, patch_size=8),
        mm_tokens_per_image=4, boi_token_index=ids("<start_of_image>"), eoi_token_index=ids("<end_of_image>"),
        image_token_index=ids("<image_soft_token>"))
    torch.manual_seed(seed)
    folder = _finish(Gemma3ForConditionalGeneration(config), processor, tokenizer, Path(folder))
    return folder


def _idefics_named() -> tuple[list[str], dict]:
    grid = [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    named = {"fake_image_token": "<fake_token_around_image>", "image_token": "<image>",
             "end_of_utterance_token": "<end_of_utterance>", "global_image_token": "<global-img>"}
    return grid, named


def build_tiny_idefics3(folder: str | Path, seed: int = 0) -> Path:
    """Idefics3: images split into 32-pixel tiles (64x48 -> a 2x2 grid + a global view), 4 tokens per tile."""
    import torch
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessor,
        Idefics3Processor,
    )

    grid, named = _idefics_named()
    tokenizer = named_byte_tokenizer(["<|begin_of_text|>", "<|end_of_text|>", *named.values(), *grid],
                                     eos="<end_of_utterance>", pad="<|end_of_text|>", bos="<|begin_of_text|>",
                                     named=named, add_bos=True, chat_template=IDEFICS3_TEMPLATE)
    image_processor = Idefics3ImageProcessor(size={"longest_edge": 64}, max_image_size={"longest_edge": 32},
                                             do_image_splitting=True)
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_len=4,
                                  chat_template=IDEFICS3_TEMPLATE)
    config = Idefics3Config(
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=8),
        text_config=dict(model_type="llama", vocab_size=len(tokenizer), **_TEXT, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=2)
    torch.manual_seed(seed)
    return _finish(Idefics3ForConditionalGeneration(config), processor, tokenizer, Path(folder))


def build_tiny_qwen2_vl(folder: str | Path, seed: int = 0) -> Path:
    """Qwen2-VL (needs torchvision): 14-pixel patches, 2x2 merge, frames paired in time."""
    import torch
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    from tests.tiny_vlm import _qwen_vision_and_text, byte_tokenizer

    tokenizer = byte_tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>", chat_template=CHAT_TEMPLATE)
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    processor = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels), tokenizer=tokenizer,
                                 video_processor=Qwen2VLVideoProcessor(**pixels), chat_template=CHAT_TEMPLATE)
    ids, text = _qwen_vision_and_text(tokenizer, {"rope_parameters": {
        "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}})
    config = Qwen2VLConfig(text_config=text, vision_config=dict(depth=1, embed_dim=32, hidden_size=32, mlp_ratio=2,
                                                                num_heads=2, patch_size=14, spatial_merge_size=2,
                                                                temporal_patch_size=2), **ids)
    torch.manual_seed(seed)
    return _finish(Qwen2VLForConditionalGeneration(config), processor, tokenizer, Path(folder))


def build_tiny_smolvlm(folder: str | Path, seed: int = 0) -> Path:
    """SmolVLM2 (needs torchvision and num2words): Idefics3-style tiles, videos as frame sequences."""
    import torch
    from transformers import (
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessor,
        SmolVLMProcessor,
        SmolVLMVideoProcessor,
    )
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    grid, named = _idefics_named()
    tokenizer = named_byte_tokenizer(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<video>", *named.values(), *grid],
                                     eos="<end_of_utterance>", pad="<|im_end|>", named=named,
                                     chat_template=DEFAULT_CHAT_TEMPLATE)
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(size={"longest_edge": 64}, max_image_size={"longest_edge": 32},
                                              do_image_splitting=True),
        video_processor=SmolVLMVideoProcessor(size={"longest_edge": 32}, max_image_size={"longest_edge": 32}),
        tokenizer=tokenizer, image_seq_len=4, chat_template=DEFAULT_CHAT_TEMPLATE)
    config = SmolVLMConfig(
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=8),
        text_config=dict(model_type="llama", vocab_size=len(tokenizer), **_TEXT, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=2)
    torch.manual_seed(seed)
    return _finish(SmolVLMForConditionalGeneration(config), processor, tokenizer, Path(folder))


def build_tiny_llava_onevision(folder: str | Path, seed: int = 0) -> Path:
    """LLaVA-OneVision (needs torchvision): SigLIP tower on 32x32 views, Qwen2 text, videos as one tensor."""
    import torch
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessor,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )

    template = _template_with("<image>", "<video>")
    tokenizer = named_byte_tokenizer(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"],
                                     eos="<|im_end|>", pad="<|endoftext|>", chat_template=template)
    pinpoints = [[32, 32], [32, 64], [64, 32], [64, 64]]
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size={"height": 32, "width": 32}, image_grid_pinpoints=pinpoints),
        video_processor=LlavaOnevisionVideoProcessor(size={"height": 32, "width": 32}),
        tokenizer=tokenizer, num_image_tokens=16, vision_feature_select_strategy="full", chat_template=template)
    ids = tokenizer.convert_tokens_to_ids
    config = LlavaOnevisionConfig(
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=1, num_attention_heads=2, image_size=32, patch_size=8),
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), **_TEXT, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id),
        image_token_index=ids("<image>"), video_token_index=ids("<video>"), vision_feature_select_strategy="full",
        vision_feature_layer=-1, image_grid_pinpoints=pinpoints)
    torch.manual_seed(seed)
    return _finish(LlavaOnevisionForConditionalGeneration(config), processor, tokenizer, Path(folder))


def build_tiny_internvl(folder: str | Path, seed: int = 0) -> Path:
    """InternVL in transformers' format, as the -HF checkpoints (needs torchvision): 32x32 tiles, 4 tokens each."""
    import torch
    from transformers import (
        GotOcr2ImageProcessor,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVideoProcessor,
    )

    named = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
             "video_token": "<video>"}
    template = _template_with("<IMG_CONTEXT>\n", "<video>\n")
    tokenizer = named_byte_tokenizer(["<|endoftext|>", "<|im_start|>", "<|im_end|>", *named.values()],
                                     eos="<|im_end|>", pad="<|endoftext|>", named=named, chat_template=template)
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(size={"height": 32, "width": 32}, crop_to_patches=True, max_patches=4,
                                              min_patches=1),
        video_processor=InternVLVideoProcessor(size={"height": 32, "width": 32}),
        tokenizer=tokenizer, image_seq_length=4, chat_template=template)
    config = InternVLConfig(
        vision_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                           image_size=[32, 32], patch_size=[8, 8]),
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), **_TEXT, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id),
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"), image_seq_length=4, downsample_ratio=0.5)
    torch.manual_seed(seed)
    return _finish(InternVLForConditionalGeneration(config), processor, tokenizer, Path(folder))


def build_tiny_videollama3(folder: str | Path, seed: int = 0) -> Path:
    """VideoLLaMA3 in transformers' format (needs torchvision): 14-pixel patches, Qwen2 text."""
    import torch
    from transformers import (
        VideoLlama3Config,
        VideoLlama3ForConditionalGeneration,
        VideoLlama3ImageProcessor,
        VideoLlama3Processor,
        VideoLlama3VideoProcessor,
    )

    template = _template_with("<|image_pad|>", "<|video_pad|>")
    tokenizer = named_byte_tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>", chat_template=template)
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    processor = VideoLlama3Processor(image_processor=VideoLlama3ImageProcessor(**pixels),
                                     video_processor=VideoLlama3VideoProcessor(**pixels), tokenizer=tokenizer,
                                     chat_template=template)
    ids = tokenizer.convert_tokens_to_ids
    config = VideoLlama3Config(
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), **_TEXT, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           patch_size=14),
        image_token_id=ids("<|image_pad|>"), video_token_id=ids("<|video_pad|>"))
    torch.manual_seed(seed)
    return _finish(VideoLlama3ForConditionalGeneration(config), processor, tokenizer, Path(folder))


def _template_with(image: str, video: str) -> str:
    """The ChatML template of ``tests/tiny_vlm.py`` with this architecture's image and video placeholders."""
    return CHAT_TEMPLATE.replace("<|vision_start|><|image_pad|><|vision_end|>", image).replace(
        "<|vision_start|><|video_pad|><|vision_end|>", video)


#: Builders of image-path models (a clip's frames go in as images), and of models with a video processor.
BUILDERS = {"gemma3": build_tiny_gemma3, "idefics3": build_tiny_idefics3}
VIDEO_BUILDERS = {"qwen2-vl": build_tiny_qwen2_vl, "smolvlm": build_tiny_smolvlm,
                        "llava-onevision": build_tiny_llava_onevision, "internvl": build_tiny_internvl,
                        "videollama3": build_tiny_videollama3}
