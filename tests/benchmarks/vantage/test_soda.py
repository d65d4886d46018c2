"""SODA_c: the spec's hand cases, the DP against brute force, and the caption similarities."""
import itertools
import shutil

import numpy as np
import pytest

from sova_lib.benchmarks.vantage.metrics_captions import (
    BertScoreSimilarity,
    CaptionModelUnavailable,
    MeteorSimilarity,
    exact_match_similarity,
    soda_alignment,
    soda_c,
    soda_video,
    token_f1_similarity,
)


def brute_force(c: np.ndarray) -> float:
    """The largest sum of C over order-preserving one-to-one matchings, by enumeration."""
    m, n = c.shape
    best = 0.0
    for k in range(1, min(m, n) + 1):
        for rows in itertools.combinations(range(m), k):
            for cols in itertools.combinations(range(n), k):
                best = max(best, float(sum(c[i, j] for i, j in zip(rows, cols))))
    return best


def test_alignment_equals_brute_force_on_small_matrices():
    rng = np.random.default_rng(0)
    for _ in range(150):
        c = rng.random((rng.integers(1, 5), rng.integers(1, 5))) * (rng.random() < 0.8)
        c[rng.random(c.shape) < 0.3] = 0.0
        s, pairs = soda_alignment(c)
        assert s == pytest.approx(brute_force(c), abs=1e-12)
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(pairs, pairs[1:]))  # order-preserving
        assert sum(c[i, j] for i, j in pairs) <= s + 1e-12


def test_hand_cases():
    events = [(0, 10, "a man walks"), (10, 20, "a car parks")]
    assert soda_video(events, events, exact_match_similarity)["soda_c"] == 1.0
    out = soda_video([(0, 10, "x"), (10, 20, "y")], [(0, 20, "y"), (0, 20, "x")], exact_match_similarity)
    assert out["S"] == 0.5 and out["soda_c"] == 0.25 and out["pairs"] == [(1, 0)] and out["caption_f1"] == 0.5
    assert out["iou_f1"] == pytest.approx(0.25) and out["pair_miou"] == 0.5
    s, pairs = soda_alignment([[1.0, 0.0, 0.0]])
    assert 2 * s / 4 == 0.5 and pairs == [(0, 0)]


@pytest.mark.parametrize("mode, want, n", [("official", 1.0, 1), ("strict", 0.5, 2)])
def test_unreadable_video(mode, want, n):
    events = [(0, 10, "a"), (10, 20, "b")]
    score = soda_c([events, events], [events, None], exact_match_similarity, mode)
    assert score.value == want and score.n_units == n


def test_token_f1_similarity():
    sim = token_f1_similarity(["a man walks", "car"], ["A man runs.", "car car"])
    np.testing.assert_allclose(sim, [[2 / 3, 0.0], [0.0, 2 / 3]])
    assert exact_match_similarity(["A car."], ["a car", "cars"]).tolist() == [[1.0, 0.0]]


def test_bertscore_without_weights_names_the_download(tmp_path):
    with pytest.raises(CaptionModelUnavailable, match="FacebookAI/roberta-large"):
        BertScoreSimilarity(cache_dir=tmp_path)
    with pytest.raises(CaptionModelUnavailable, match="huggingface-cli download"):
        BertScoreSimilarity(str(tmp_path))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR needs Java")
def test_meteor_tiny_case():
    meteor = MeteorSimilarity()
    try:
        sim = meteor(["a man walks across the street"], ["a man walks across the street", "a red car parks"])
    finally:
        meteor.close()
    assert sim.shape == (1, 2) and sim[0, 0] == 1.0 and 0.0 < sim[0, 1] < 0.1


def _byte_symbols() -> list[str]:
    """The 256 printable stand-ins of byte-level BPE (bytes that print keep their character)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    extra = [b for b in range(256) if b not in keep]
    return [chr(b) for b in keep] + [chr(256 + k) for k in range(len(extra))]


@pytest.mark.slow
def test_bertscore_path_on_a_tiny_random_roberta(tmp_path):
    """The BERTScore code path end to end on a tiny randomly initialised RoBERTa (not roberta-large)."""
    import json

    import torch
    from bert_score import BERTScorer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for ch in _byte_symbols():
        vocab[ch] = len(vocab)
    vocab["<mask>"] = len(vocab)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    torch.manual_seed(0)
    RobertaModel(RobertaConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=32, max_position_embeddings=130, pad_token_id=1)).save_pretrained(tmp_path)
    tok = RobertaTokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    tok.model_max_length = 128
    tok.save_pretrained(tmp_path)
    gt, answers = ["a man walks", "a car parks"], ["a car parks", "people wait", "a man walks"]
    sim = BertScoreSimilarity(str(tmp_path), num_layers=2, device="cpu")(gt, answers)
    assert sim.shape == (2, 3) and sim[0, 2] == pytest.approx(1.0, abs=1e-5) and sim[1, 0] == pytest.approx(1.0, abs=1e-5)
    direct = BERTScorer(model_type=str(tmp_path), num_layers=2, device="cpu").score(["people wait"], ["a car parks"])[2]
    assert sim[1, 1] == pytest.approx(float(direct[0]), abs=1e-6)
