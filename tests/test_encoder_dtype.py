"""The bfloat16 path of the sentence encoder: its own cache key, unit vectors within a cosine of 0.9999 of
float32's, and the quickstart's mAP on the committed cache unchanged; float32 stays the default."""
import json

import numpy as np
import pytest
import torch

from sova_lib.benchmarks.sovabench.api import evaluate_files
from sova_lib.encoder import DTYPES, SentenceEncoder
from sova_lib.sentences import split
from tests.paths import ROOT

QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))


@pytest.fixture(scope="module")
def sentences():
    """The sentences of the committed quickstart cache's six descriptions."""
    texts = [json.loads(line)["text"] for line in (QUICKSTART / "descriptions.jsonl").read_text().splitlines()]
    found = list(dict.fromkeys(s for t in texts for s in split(t)))
    assert len(found) >= 20
    return found


@pytest.fixture(scope="module")
def bf16(tmp_path_factory):
    return SentenceEncoder(cache_dir=tmp_path_factory.mktemp("bf16"), dtype="bfloat16", show_progress=False)


def test_float32_is_the_default_and_keeps_the_models_own_key(tmp_path):
    plain = SentenceEncoder(cache_dir=tmp_path)
    assert DTYPES[0] == plain.dtype == "float32" and plain.settings == {}
    assert plain.cache_path.name == f"all-MiniLM-L6-v2__{plain.identity[:12]}"
    assert SentenceEncoder(cache_dir=tmp_path, dtype="float32").cache_path == plain.cache_path


def test_bfloat16_has_a_key_of_its_own(tmp_path, bf16):
    plain, half = SentenceEncoder(cache_dir=tmp_path), SentenceEncoder(cache_dir=tmp_path, dtype="bfloat16")
    assert half.settings == {"dtype": "bfloat16"} and half.cache_path != plain.cache_path
    assert half.cache_path.name.startswith("all-MiniLM-L6-v2__") and half.identity == plain.identity
    prompted = SentenceEncoder(cache_dir=tmp_path, dtype="bfloat16", prompt="")
    assert len({plain.cache_path, half.cache_path, prompted.cache_path}) == 3
    bf16.encode(["A car turns left."])
    assert json.loads((bf16.cache_path / "encoder.json").read_text())["dtype"] == "bfloat16"


def test_an_unknown_dtype_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^the sentence encoder's dtype is one of float32, bfloat16, not 'float16'$"):
        SentenceEncoder(dtype="float16")


def test_bfloat16_vectors_are_unit_and_within_a_cosine_of_float32s(encoder, bf16, sentences):
    wide, half = encoder.encode(sentences), bf16.encode(sentences)
    assert bf16.model[0].auto_model.dtype == torch.bfloat16 and encoder.model[0].auto_model.dtype == torch.float32
    assert half.dtype == np.float32 and half.shape == wide.shape == (len(sentences), 384)
    np.testing.assert_allclose(np.linalg.norm(half, axis=1), 1.0, atol=1e-6)
    cosine = (wide * half).sum(axis=1)
    assert cosine.min() >= 0.999 and np.abs(wide - half).max() > 1e-4  # close, and really computed in bfloat16
    # the same vectors come back from the cache, without the model
    again = SentenceEncoder(cache_dir=bf16.cache_dir, dtype="bfloat16")
    np.testing.assert_array_equal(again.encode(sentences), half)
    assert "model" not in vars(again)


def test_the_quickstart_map_on_the_committed_cache_is_unchanged(encoder, bf16):
    wide = evaluate_files("quickstart-direction", descriptions=QUICKSTART, encoder=encoder)
    half = evaluate_files("quickstart-direction", descriptions=QUICKSTART, encoder=bf16)
    assert wide.value == pytest.approx(58.8889, abs=1e-4)  # the quickstart's mAP in README.md
    assert half.value == wide.value and half.per_class == wide.per_class
