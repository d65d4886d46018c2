import numpy as np
import pandas as pd
import pytest

from sova_lib.evaluation import baseline
from sova_lib.report import cache_scan
from tests.synthetic_cache import write_synthetic_cache

from paper import ablations, error_analysis, results


def test_paper_tables_as_printed():
    t7 = ablations.paper_wide("Table 7")
    assert t7["fps"].tolist() == ["1", "3", "5", "7"]
    assert t7["inter-pair"].tolist() == [38.3, 37.3, 36.3, 36.2] and t7["intra-pair"].tolist() == [53.6, 54.0, 53.8, 53.4]
    t5 = ablations.paper_wide("Table 5")
    assert len(t5) == 4 and t5.columns[-1] == "Avg."
    assert t5.set_index(["prompt", "text_split"]).loc[("general", "whole text"), "Avg."] == 42.1


def test_tables_without_any_cache_say_so(tmp_path):
    note = ablations.no_cache_note(tmp_path)
    assert f"in {tmp_path.name}/descriptions: nothing computed here" in note
    assert ablations.settings_table(pd.DataFrame(), "aggregate", tmp_path)["source"].tolist() == [note]
    t7 = ablations.fps_compare(pd.DataFrame(), tmp_path)
    assert len(t7) == 5 and t7.iloc[-1]["inter-pair mAP"] == results.NOT_COMPUTED
    available = pd.DataFrame([{"encoder": "all-MiniLM-L6-v2", "available": True, "reason": ""},
                              {"encoder": "Alibaba-NLP/gte-large-en-v1.5", "available": False, "reason": "no hub"}])
    t6 = ablations.encoder_table(available, pd.DataFrame()).set_index("encoder")
    assert len(t6) == 6 and t6.loc["GTE-Large-8152", "inter-pair mAP (paper, MiniCPM-V 4.5 task-aware)"] == 38.3
    assert t6.loc["GTE-Large-8152", "here"] == "not computed here: no hub"
    assert t6.loc["all-MiniLM-L6-v2", "here"].startswith("not computed here: loads here, but")
    assert t6.loc["EmbeddingGemma", "here"] == "not computed here (not tried)"
    assert t6.loc["Qwen3 Embedding 0.6B", "params (M)"] == 596


def test_encoder_rows_report_what_does_not_load(tmp_path):
    frame, loaded = ablations.encoder_rows(["all-MiniLM-L6-v2", "no-such-org/no-such-model"], cache_dir=tmp_path)
    assert frame["available"].tolist() == [True, False] and list(loaded) == ["all-MiniLM-L6-v2"]
    assert frame.loc[1, "reason"] == "weights not on this machine and the model hub not reachable"


def test_ablation_rows_on_a_cache(tmp_path, encoder):
    texts, _ = error_analysis.synthetic_texts("intra-pair", rng=np.random.default_rng(0))
    texts = {k: f"{v}. The scene is a parking lot." for k, v in texts.items()}  # two sentences each
    write_synthetic_cache(tmp_path, texts, description="two sentences")
    caches = cache_scan.find_description_caches(tmp_path)
    rows = pd.DataFrame(ablations.ablation_rows(caches, encoder, ["intra-pair", "inter-pair"],
                                                [(True, "max"), (True, "mean"), (False, "max")], ties="expected"))
    assert len(rows) == 6
    intra = rows[rows["protocol"] == "intra-pair"].set_index(["text_split", "aggregate"])["value"]
    assert intra[("sentences", "mean")] > intra[("sentences", "max")]
    inter = rows[rows["protocol"] == "inter-pair"]  # 8,524 of its 9,882 clips are missing: counted as failures
    assert (inter["n_missing"] == 8524).all() and (inter["value"] < inter["value_without_missing"]).all()
    assert (rows[rows["protocol"] == "intra-pair"]["n_missing"] == 0).all()
    table = ablations.settings_table(rows[rows["aggregate"] == "max"], "text_split", tmp_path)
    assert list(table.columns[:3]) == ["source", "cache", "protocol"] and "note" not in table
    sentences = inter[inter["text_split"] == "sentences"].iloc[0]
    # the shared sentence ties every clip under max: the score is the chance level of the same clips, and says so
    assert sentences["value"] == sentences["chance"]
    assert table.set_index("protocol").loc["inter-pair", "sentences"].endswith(
        f"; 8524 missing, {sentences['value_without_missing']:.1f} without them; chance {sentences['chance']:.1f}, "
        f"{sentences['chance_without_missing']:.1f} without them")
    t7 = ablations.fps_compare(rows[(rows["aggregate"] == "max") & (rows["text_split"] == "sentences")], tmp_path)
    assert t7.iloc[-1]["fps"] == "not recorded" and t7.iloc[-1]["inter-pair mAP"].endswith("without them")


def test_all_tied_clips_score_as_a_random_ranking(tmp_path, encoder):
    texts, _ = error_analysis.synthetic_texts("intra-pair", rng=np.random.default_rng(0))
    texts = {k: f"{v}. The scene is a parking lot." for k, v in texts.items()}  # one sentence shared by all
    write_synthetic_cache(tmp_path, texts, description="shared sentence")
    rows = ablations.ablation_rows(cache_scan.find_description_caches(tmp_path), encoder, ["intra-pair"],
                                   [(True, "max")], ties="expected")
    # every pair's maximum is the shared sentence's cosine with itself: all clips tie, and the tie-aware AP of
    # a fully tied ranking is a random ranking's expected AP
    assert rows[0]["value"] == pytest.approx(baseline("intra-pair", "random-ranking").value, abs=0.01)


def _setting_cell(options: dict) -> str:
    """How docs/sovabench.md writes an encoder's settings: the --embedder-option values, or none."""
    import json

    cells = [f"{k}={json.dumps(v) if k == 'prompt' else str(v).lower() if isinstance(v, bool) else v}"
             for k, v in options.items()]
    return f"`{' '.join(cells)}`" if cells else "none"


def test_every_table6_encoder_has_its_settings_with_a_reason_and_the_docs_state_them():
    from tests.paths import ROOT

    assert set(ablations.ENCODER_SETTINGS) == set(ablations.ENCODER_IDS.values())
    settings = {k: v["options"] for k, v in ablations.ENCODER_SETTINGS.items()}
    assert settings["Alibaba-NLP/gte-large-en-v1.5"] == {"trust_remote_code": True}
    assert settings["google/embeddinggemma-300m"] == {"prompt_name": "STS"}
    assert settings["intfloat/multilingual-e5-large-instruct"] == {
        "prompt": "Instruct: Retrieve semantically similar text.\nQuery: "}
    assert settings["Qwen/Qwen3-Embedding-0.6B"] == {"prompt": "Instruct: Retrieve semantically similar text\nQuery:"}
    assert settings["all-MiniLM-L6-v2"] == settings["sentence-transformers/clip-ViT-L-14"] == {}
    assert all(len(v["reason"]) > 20 for v in ablations.ENCODER_SETTINGS.values())
    page = (ROOT / "docs" / "sovabench.md").read_text()
    for paper_name, enc_id in ablations.ENCODER_IDS.items():
        row = f"| {paper_name} | `{enc_id}` | {_setting_cell(settings[enc_id])} |"
        assert row in page, row
    assert _setting_cell({"trust_remote_code": True}) == "`trust_remote_code=true`"


def test_encoder_rows_load_each_encoder_with_its_settings(tmp_path, monkeypatch):
    monkeypatch.setitem(ablations.ENCODER_SETTINGS, "all-MiniLM-L6-v2",
                        {"options": {"prompt": "Describe: ", "trust_remote_code": True}, "reason": "a test"})
    frame, loaded = ablations.encoder_rows(["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"],
                                           cache_dir=tmp_path)
    assert frame["available"].tolist() == [True, True]
    with_settings, without = loaded["all-MiniLM-L6-v2"], loaded["sentence-transformers/all-MiniLM-L6-v2"]
    assert (with_settings.prompt, with_settings.trust_remote_code) == ("Describe: ", True)
    assert (without.prompt, without.prompt_name, without.trust_remote_code) == (None, None, False)
    assert with_settings.identity == without.identity and with_settings.cache_path.name != without.cache_path.name
