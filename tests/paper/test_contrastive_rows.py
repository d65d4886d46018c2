"""Contrastive rows of Table 4 / C.1 from frame-embedding caches, scored by the results notebook's cells."""
import numpy as np
import pandas as pd

from sova_lib.describe.contrastive import EmbeddingCache, embedding_folder, embedding_key
from sova_lib.evaluation import evaluate
from sova_lib.protocols import get_protocol
from sova_lib.similarity import ItemVectors, l2_normalize
from tests.paper_tables import beside, results_cells

from paper import results


def _cache(cache_dir, model, ids, per_clip, rng):
    key = embedding_key({"model": model, "revision": None, "identity": "test", "class": "CLIPModel",
                         "dtype": "float32"}, 1.0, "none" if per_clip > 1 else "mean")
    cache = EmbeddingCache(embedding_folder(cache_dir, key)).open()
    cache.start_manifest(key)
    vectors = [rng.standard_normal((per_clip, 6)).astype(np.float32) for _ in ids]
    cache.add([(i, v, np.arange(per_clip)) for i, v in zip(ids, vectors)])
    cache.update_manifest()
    cache.close()
    return vectors


def test_embedding_rows_match_evaluate_and_sit_beside_the_paper_row(tmp_path):
    rng = np.random.default_rng(0)
    ids = get_protocol("inter-pair-constrained").ids().tolist()
    vectors = _cache(tmp_path, "openai/clip-vit-large-patch14", ids, 3, rng)
    _cache(tmp_path, "some/other-model", ids[:10], 1, rng)
    ns = results_cells("embeddings", tmp_path / "out", cache_dir=tmp_path, protocols=["inter-pair-constrained"],
                       bootstrap=0, made=[])
    caches = ns["embedding_caches"]
    assert [m["model"] for m, _ in caches.values()] == ["openai/clip-vit-large-patch14", "some/other-model"]
    rows = ns["made"]
    assert len(rows) == 2  # one per cache and protocol
    owner = np.repeat(np.arange(len(ids)), 3)
    direct = evaluate("inter-pair-constrained", ItemVectors(np.array(ids), owner, l2_normalize(np.concatenate(vectors))),
                      ties="expected")
    assert rows[0]["value"] == round(direct.value, 2) and rows[0]["ties"] == "expected"
    assert rows[0]["kind"] == "embeddings" and rows[0]["text_split"] == "none pooling"
    # 10 of the 1423 clips: the other 1413 count as failures, and the score without them is beside it
    assert (rows[1]["n_missing"], rows[1]["missing_rule"], rows[1]["note"]) == (1413, "failures", None)
    assert rows[1]["value"] < rows[1]["value_without_missing"]
    table = beside("Table C.1", pd.DataFrame(rows)).set_index("model")
    assert table.loc["CLIP-ViT-L-14", "inter-pair-constrained paper"] == 37.4
    assert table.loc["CLIP-ViT-L-14", "inter-pair-constrained here"] == rows[0]["value"]
    clip = table.loc["CLIP-ViT-L-14"]
    assert (clip["kind"], clip["source model"], clip["cache"]) == \
        ("embeddings", "openai/clip-vit-large-patch14", rows[0]["cache"])
    assert "none pooling" in clip["source"]
    assert table.loc["SigLIP2-Giant", ["source", "cache"]].isna().all()
    shown = results.computed_as(table.reset_index(), "Table C.1")
    assert shown[list(table.index).index("CLIP-ViT-L-14")] == f"{clip['source']}; cache {clip['cache']}"
    assert shown[list(table.index).index("SigLIP2-Giant")] == results.NOT_COMPUTED
