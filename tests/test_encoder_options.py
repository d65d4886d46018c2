"""The sentence encoder's settings: modeling code of the encoder's own (``trust_remote_code``) and the prompt put
before every sentence (``prompt_name``, ``prompt``), on a tiny random encoder whose code is a file of its folder."""
import json

import numpy as np
import pytest

from sova_lib.encoder import SentenceEncoder
from tests.tiny_encoder import build_remote_code_encoder

STS = "task: sentence similarity | query: "
SENTENCES = ["A car turns left.", "The person opens the trunk of the red car.", ""]


@pytest.fixture(scope="module")
def remote_folder(tmp_path_factory):
    """The tiny remote-code encoder with one named prompt; transformers copies its code into a module cache of
    this test's own (not the user's)."""
    from transformers import dynamic_module_utils

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dynamic_module_utils, "HF_MODULES_CACHE", str(tmp_path_factory.mktemp("hf-modules")))
        yield build_remote_code_encoder(tmp_path_factory.mktemp("encoder") / "tiny-remote", prompts={"STS": STS})


def _independent_vectors(folder, texts):
    """Mean-pooled, unit-length vectors computed with transformers alone (not through sentence-transformers)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    mean = (hidden * mask).sum(1) / mask.sum(1)
    return torch.nn.functional.normalize(mean, dim=1).numpy()


def test_an_encoder_with_code_of_its_own_fails_in_one_line_naming_the_setting(remote_folder, tmp_path):
    encoder = SentenceEncoder(str(remote_folder), cache_dir=tmp_path, show_progress=False)
    with pytest.raises(ValueError) as info:
        encoder.encode(SENTENCES)
    message = str(info.value)
    assert "\n" not in message and "tiny-remote" in message
    assert "trust_remote_code=True" in message and "--embedder-option trust_remote_code=true" in message
    assert not encoder.cache_path.exists()  # nothing was written


def test_it_loads_with_trust_remote_code_and_gives_the_vectors_of_its_own_code(remote_folder, tmp_path):
    encoder = SentenceEncoder(str(remote_folder), cache_dir=tmp_path, show_progress=False, trust_remote_code=True)
    vectors = encoder.encode(SENTENCES)
    assert type(encoder.model[0].auto_model).__name__ == "TinyRemoteModel"  # the class of modeling_tiny.py
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors, _independent_vectors(str(remote_folder), SENTENCES), atol=1e-5)
    # the setting decides only whether the model loads: one cache for both
    assert SentenceEncoder(str(remote_folder), cache_dir=tmp_path).cache_path == encoder.cache_path
    assert encoder.cache_path.name.endswith(encoder.identity[:12])


def test_a_prompt_changes_the_vectors_and_the_cache_key(remote_folder, tmp_path):
    def make(**settings):
        return SentenceEncoder(str(remote_folder), cache_dir=tmp_path, show_progress=False, trust_remote_code=True,
                               **settings)

    plain, named, written, empty = make(), make(prompt_name="STS"), make(prompt=STS), make(prompt="")
    folders = {e.cache_path for e in (plain, named, written, empty)}
    assert len(folders) == 4 and plain.cache_path.name.endswith(plain.identity[:12])
    by_name, by_text, without = named.encode(SENTENCES), written.encode(SENTENCES), plain.encode(SENTENCES)
    np.testing.assert_array_equal(by_name, by_text)  # the named prompt is that text
    # the prompt is put before every sentence: the plain vectors of the prompted texts
    np.testing.assert_allclose(by_name, plain.encode([STS + s for s in SENTENCES]), atol=1e-6)
    assert np.abs(by_name - without).max() > 1e-3
    np.testing.assert_array_equal(empty.encode(SENTENCES), without)  # no default prompt in this model
    info = json.loads((named.cache_path / "encoder.json").read_text())
    assert info["prompt_name"] == "STS" and "prompt" not in info
    assert "prompt_name" not in json.loads((plain.cache_path / "encoder.json").read_text())
    again = make(prompt_name="STS")  # the cached vectors, without loading the model
    np.testing.assert_array_equal(again.encode(SENTENCES), by_name)
    assert "model" not in vars(again)


def test_settings_that_cannot_apply_are_refused_in_one_line(remote_folder, tmp_path):
    unknown = SentenceEncoder(str(remote_folder), cache_dir=tmp_path, show_progress=False, trust_remote_code=True,
                              prompt_name="paraphrase")
    with pytest.raises(ValueError, match=r"has no prompt named 'paraphrase' \(prompt_name\); its prompts: .*STS"):
        unknown.encode(["A car."])
    with pytest.raises(ValueError, match="prompt_name or prompt, not both"):
        SentenceEncoder(str(remote_folder), prompt_name="STS", prompt=STS)
    with pytest.raises(ValueError, match="trust_remote_code is true or false, not 'yes'"):
        SentenceEncoder(str(remote_folder), trust_remote_code="yes")
    with pytest.raises(ValueError, match="prompt is a text, not 3"):
        SentenceEncoder(str(remote_folder), prompt=3)
