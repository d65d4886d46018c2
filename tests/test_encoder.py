import numpy as np

from sova_lib.encoder import SentenceEncoder, resolve_encoder_path


def test_offline_encoder_gives_unit_vectors(encoder):
    vectors = encoder.encode(["A car turns left.", "A person opens the trunk.", ""])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    same = encoder.encode(["A car turns left."])[0]
    np.testing.assert_array_equal(same, vectors[0])
    # related sentences are closer than unrelated ones
    a, b, c = encoder.encode(["A car turns left.", "The vehicle turns to the left.", "A man reads a book."])
    assert a @ b > a @ c + 0.2


def test_disk_cache_is_reused_without_loading_the_model(encoder, tmp_path):
    first = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    first._model = encoder.model  # share the already loaded weights
    texts = ["The truck reverses.", "Nobody moves."]
    vectors = first.encode(texts)
    shards = list(first.cache_path.glob("shard-*.npz"))
    assert len(shards) == 1
    second = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    np.testing.assert_array_equal(second.encode(texts), vectors)
    assert second._model is None  # nothing was re-encoded
    first.encode(texts)  # known texts write no new shard
    assert len(list(first.cache_path.glob("shard-*.npz"))) == 1


def test_identity_is_the_content_of_the_model_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "weights.bin").write_bytes(b"\x00" * 10)
    one = SentenceEncoder(str(folder), cache_dir=tmp_path / "c")
    (folder / "weights.bin").write_bytes(b"\x01" * 10)
    two = SentenceEncoder(str(folder), cache_dir=tmp_path / "c")
    assert one.identity != two.identity
    assert one.cache_path != two.cache_path
    assert resolve_encoder_path(str(folder)) == str(folder.resolve())


def test_no_progress_bar_at_all_without_show_progress(tmp_path, capfd):
    """Neither transformers' weight-loading bar nor sentence-transformers' batch bar; the global switch restored."""
    from transformers.utils import logging as transformers_logging

    before = transformers_logging.is_progress_bar_enabled()
    encoder = SentenceEncoder(cache_dir=tmp_path, show_progress=False, batch_size=8)
    encoder.encode([f"Sentence number {k}." for k in range(40)])  # five batches
    out, err = capfd.readouterr()
    assert "Loading weights" not in err + out and "Batches" not in err + out and "it/s" not in err + out
    assert transformers_logging.is_progress_bar_enabled() == before


def test_one_progress_bar_over_all_sentences_and_the_vectors_of_one_encode_call(encoder, tmp_path, capfd,
                                                                                 monkeypatch):
    """Batch by batch under one bar (no per-call "Batches" bar); a shard per batch when SHARD_SECONDS is 0;
    every vector bit for bit what one ``SentenceTransformer.encode`` call over all the sentences gives."""
    from sova_lib import encoder as encoder_module

    texts = [f"Sentence number {k} {'is longer ' * (k % 7)}than the last." for k in range(40)]
    reference = encoder.model.encode(texts, batch_size=8, normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False).astype(np.float32)
    capfd.readouterr()
    monkeypatch.setattr(encoder_module, "SHARD_SECONDS", 0.0)
    fresh = SentenceEncoder(cache_dir=tmp_path, show_progress=True, batch_size=8)
    fresh._model = encoder.model
    vectors = fresh.encode(texts)
    out, err = capfd.readouterr()
    assert "Batches" not in err + out and err.count("encoding sentences: 100%") >= 1
    assert "40/40" in err and "sentence/s" in err
    assert np.array_equal(vectors.view(np.uint32), reference.view(np.uint32))
    assert len(list(fresh.cache_path.glob("shard-*.npz"))) == 5  # 40 sentences, 8 a batch
    again = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    assert np.array_equal(again.encode(texts), vectors) and again._model is None
