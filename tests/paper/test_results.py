import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from sova_lib import records
from sova_lib.describe.cache import cache_key, new_manifest
from sova_lib.describe.prompts import Prompt
from sova_lib.evaluation import evaluate
from sova_lib.item_vectors import embed_descriptions
from sova_lib.report import cache_scan
from tests.paper_tables import beside, figure2b_points, results_cells

from paper import error_analysis, results

# --------------------------------------------------------------------------- the paper's numbers

def test_paper_numbers_spot_checks():
    t4 = results.paper_results("Table 4")
    assert len(t4) == 42  # 21 rows x (inter-pair, intra-pair)
    get = {(r.model, r.prompt, r.column): r.value for r in t4.itertuples()}
    assert get[("MiniCPM-V 4.5", "task-aware", "inter-pair")] == 38.3
    assert get[("MiniCPM-V 4.5", "task-aware", "intra-pair")] == 53.6
    assert get[("Qwen3-VL 235B A22B", "general", "inter-pair")] == 14.7
    assert get[("Random", "", "intra-pair")] == 50.3
    c1 = results.paper_results("Table C.1")
    con = {(r.model, r.prompt): r.value for r in c1.itertuples() if r.column == "inter-pair-constrained"}
    assert con[("Random", "")] == 23.7 and con[("VideoCLIP", "")] == 41.4 and len(con) == 21
    eff = {(r.model, r.prompt): r.value for r in c1.itertuples() if r.column == "efficiency"}
    assert eff[("CLIP-ViT-L-14", "")] == 22.88 and ("Gemini 2.5 Flash", "general") not in eff  # printed as "-"
    t7 = results.paper_results("Table 7")
    assert t7[t7["column"] == "inter-pair"]["value"].tolist() == [38.3, 37.3, 36.3, 36.2]
    e = results.paper_results("Appendix E")
    assert e["value"].sum() == 97  # the 97 clips of the trunk pair


def test_paper_numbers_unknown_table():
    with pytest.raises(ValueError, match="Table 99.*known"):
        results.paper_results("Table 99")


def test_every_paper_row_names_its_table_and_unit():
    frame = results.paper_results()
    assert set(frame["table"]) == {"Table 2", "Table 3", "Table 4", "Table 5", "Table 6", "Table 7", "Table C.1",
                                   "Appendix E"}
    assert frame["value"].notna().all() and (frame["metric"] != "").all()
    percent = frame[frame["metric"].isin(["mAP", "Pair-mAP", "accuracy"])]["value"]
    assert percent.between(0, 100).all()


# --------------------------------------------------------------------------- caches

def _runner_manifest(model, prompt_name, backend="transformers", fps=1.0, source="run", video="Describe this video."):
    """A manifest as the one cache writer makes it (``sova_lib.describe.cache.new_manifest``)."""
    key = cache_key(backend, {"model": model}, Prompt(prompt_name, video, "Describe the image."), fps)
    return new_manifest(key, source=source)


def _write_cache(root, name, texts, manifest):
    folder = root / "descriptions" / name
    folder.mkdir(parents=True)
    (folder / "descriptions.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()))
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.fixture(scope="module")
def intra_texts():
    texts, _ = error_analysis.synthetic_texts("intra-pair", rng=np.random.default_rng(1))
    return texts


def test_find_caches_coverage_and_status(tmp_path, intra_texts):
    _write_cache(tmp_path, "a-minicpm__1", intra_texts, _runner_manifest("openbmb/MiniCPM-V-4_5", "task-aware"))
    _write_cache(tmp_path, "b-motion__2", {"vtest_lawn": "A person moves.", "vtest_square": "No motion is detected."},
                 _runner_manifest("classical-motion", "general", backend="motion", fps=2.0))
    _write_cache(tmp_path, "c-mixed__3", {0: "x", "clip-a": "y"}, _runner_manifest("m", "general"))
    caches = cache_scan.find_description_caches(tmp_path)
    assert [c.name for c in caches] == ["a-minicpm__1", "b-motion__2", "c-mixed__3"]
    a, b, c = caches
    assert a.coverage["intra-pair"] == (2300, 2300) and a.coverage["inter-pair"][1] == 9882
    assert a.covers("intra-pair") and not a.covers("inter-pair") and a.is_sovabench
    assert a.prompt == "task-aware" and a.fps == 1.0 and a.model == "openbmb/MiniCPM-V-4_5"
    assert not b.is_sovabench and b.benchmark_ids == 0 and b.fps == 2.0
    assert c.benchmark_ids == 1 and not c.is_sovabench
    assert cache_scan.sovabench_caches(caches) == [a]
    status = cache_scan.caches_frame(caches).set_index("cache")["status"]
    assert status["a-minicpm__1"] == ("scored on inter-pair (8524 missing, counted as failures), inter-pair-constrained "
                                      "(65 missing, counted as failures), intra-pair")
    assert status["b-motion__2"] == "skipped: its ids are not SOVABench clips"
    assert status["c-mixed__3"] == "skipped: 1 ids are not SOVABench clips"


def test_the_caches_table_gives_a_frames_run_its_frame_count(tmp_path):
    """A --frames run has no rate (fps None): the table says how many frames it took, where a rate run says its fps."""
    key = cache_key("transformers", {"model": "m"}, Prompt("general", "Describe.", "Describe the image."), None,
                    frames=8)
    _write_cache(tmp_path, "a-frames__1", {"clip-a": "x"}, new_manifest(key, source="run"))
    _write_cache(tmp_path, "b-rate__2", {"clip-a": "x"}, _runner_manifest("m", "general", fps=2.0))
    caches = cache_scan.find_description_caches(tmp_path)
    assert [(c.fps, c.frames) for c in caches] == [(None, 8), (2.0, None)]
    assert cache_scan.caches_frame(caches)["fps"].tolist() == ["8 frames", 2.0]


def test_find_caches_without_folder_and_broken_manifest(tmp_path):
    assert cache_scan.find_description_caches(tmp_path) == []
    folder = _write_cache(tmp_path, "x__1", {0: "a"}, {})
    (folder / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match="manifest.json: not valid JSON"):
        cache_scan.find_description_caches(tmp_path)
    (folder / "manifest.json").write_text('{"backend": "x"}')  # a manifest of another layout
    with pytest.raises(ValueError, match="manifest schema None, expected 1"):
        cache_scan.find_description_caches(tmp_path)
    (folder / "manifest.json").unlink()
    with pytest.raises(ValueError, match="no manifest.json"):
        cache_scan.find_description_caches(tmp_path)


def test_source_labels_say_what_made_the_text():
    label = cache_scan.source_label(_runner_manifest("openbmb/MiniCPM-V-4_5", "task-aware"))
    assert label == "MiniCPM-V 4.5 [openbmb/MiniCPM-V-4_5] (task-aware, transformers)"
    assert "not an MLLM" in cache_scan.source_label(_runner_manifest("classical-motion", "general", backend="motion"))
    synthetic = _runner_manifest("none", "none", backend="synthetic", source="synthetic")
    synthetic["source_details"] = {"description": "swapped"}
    assert cache_scan.source_label(synthetic) == "synthetic demonstration (swapped)"
    imported = cache_scan.source_label(_runner_manifest("some/model", "general", source="import"))
    assert imported == "some/model (general, transformers, imported descriptions)"
    custom = _runner_manifest("m", "custom")
    assert cache_scan.source_label(custom) == "m (general, transformers)"  # the paper's general text, given as free text
    task_aware = _runner_manifest("x", "custom", backend="openai",
                                  video="Briefly classify the actions occurring in this video.")
    assert cache_scan.source_label(task_aware) == "x (task-aware, openai)"
    # two checkpoints of one model: the short name of each one's weights tells them apart (8 hex digits of the
    # fingerprint's JSON, or the --model-tag given)
    first, second = (_runner_manifest("me/vlm", "general") for _ in range(2))
    first["fingerprint"] = {"method": "folder-digest", "sha256": "a" * 64}
    second["fingerprint"] = {"method": "tag", "tag": "ckpt-1200"}
    short = hashlib.sha256(json.dumps(first["fingerprint"], sort_keys=True).encode()).hexdigest()[:8]
    assert cache_scan.source_label(first) == f"me/vlm @{short} (general, transformers)"
    assert cache_scan.source_label(second) == "me/vlm @ckpt-1200 (general, transformers)"


# --------------------------------------------------------------------------- paper beside computed

def _computed():
    return pd.DataFrame([
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence (...)", "protocol": "inter-pair",
         "value": 3.42, "ci_low": 3.35, "ci_high": 3.49},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence (...)", "protocol": "intra-pair",
         "value": 50.31, "ci_low": 50.15, "ci_high": 50.47},
        {"kind": "description cache", "source": "MiniCPM-V 4.5 [openbmb/MiniCPM-V-4_5] (task-aware, transformers)",
         "model": "openbmb/MiniCPM-V-4_5", "prompt": "task-aware", "cache": "c1", "encoder": "all-MiniLM-L6-v2",
         "protocol": "inter-pair", "value": 37.0, "ci_low": 36.0, "ci_high": 38.0, "note": ""},
        {"kind": "description cache", "source": "motion describer (...)", "model": "classical-motion",
         "prompt": "general", "cache": "c2", "encoder": "all-MiniLM-L6-v2", "protocol": "intra-pair",
         "value": 51.0, "ci_low": 50.5, "ci_high": 51.5, "note": ""},
    ])


def test_the_table_matches_rows_and_never_fills_in():
    table = beside("Table 4", _computed())
    assert len(table) == 21 + 1  # every paper row, then the motion describer (not in the paper)
    rows = table.set_index(["model", "prompt"])
    assert rows.loc[("Random", "-"), "inter-pair here"] == 3.42
    assert rows.loc[("Random", "-"), "intra-pair CI high"] == 50.47
    minicpm = rows.loc[("MiniCPM-V 4.5", "task-aware")]
    assert minicpm["inter-pair paper"] == 38.3 and minicpm["inter-pair here"] == 37.0
    assert np.isnan(minicpm["intra-pair here"])  # this cache was not scored on intra-pair
    assert (minicpm["encoder"], minicpm["cache"]) == ("all-MiniLM-L6-v2", "c1")
    assert rows.loc[("CLIP4Clip", "-"), ["source", "encoder", "cache"]].isna().all()
    extra = table.iloc[-1]
    assert extra["group"].startswith("Computed here") and np.isnan(extra["inter-pair paper"])
    shown = results.format_table(table, "Table 4").set_index(["model", "prompt"])
    assert shown.loc[("MiniCPM-V 4.5", "task-aware"), "inter-pair (here, 95% CI)"] == "37.0 [36.0, 38.0]"
    assert shown.loc[("MiniCPM-V 4.5", "task-aware"), "intra-pair (here, 95% CI)"] == results.NOT_COMPUTED
    assert shown.loc[("VideoCLIP", "-"), "inter-pair (paper)"] == "34.5"
    assert shown.loc[("MiniCPM-V 4.5", "task-aware"), "computed as"] == \
        "MiniCPM-V 4.5 [openbmb/MiniCPM-V-4_5] (task-aware, transformers); encoder all-MiniLM-L6-v2; cache c1"
    assert shown.loc[("CLIP4Clip", "-"), "computed as"] == results.NOT_COMPUTED


def test_the_table_keeps_a_paper_only_column():
    table = beside("Table C.1", _computed())
    rows = table.set_index(["model", "prompt"])
    assert rows.loc[("VideoCLIP", "-"), "efficiency paper"] == 0.47
    assert np.isnan(rows.loc[("Random", "-"), "efficiency paper"])
    assert table["source"].isna().sum() == 21  # nothing computed on this protocol


def test_figure2b_points_keep_paper_rows_and_complete_computed_rows(tmp_path):
    computed = _computed()
    computed.loc[len(computed)] = {"kind": "description cache", "source": "motion describer (...)",
                                   "model": "classical-motion", "prompt": "general", "cache": "c2",
                                   "encoder": "e", "protocol": "inter-pair", "value": 10.0, "note": ""}
    points = figure2b_points(beside("Table 4", computed), tmp_path)["points"]
    assert (points["source"] == "paper").sum() == 21
    here = points[points["source"] != "paper"]
    # named by its model id and prompt; MiniCPM has no intra-pair value here
    assert here["label"].tolist() == ["classical-motion (general) [here]"]
    assert here[["inter", "intra"]].values.tolist() == [[10.0, 51.0]]


def test_evaluate_cache_scores_only_covered_protocols(tmp_path, intra_texts, encoder):
    synthetic = _runner_manifest("none", "none", backend="synthetic", source="synthetic")
    synthetic["source_details"] = {"description": "test"}
    _write_cache(tmp_path, "s__1", intra_texts, synthetic)
    cache = cache_scan.find_description_caches(tmp_path)[0]
    rows = results.evaluate_cache(cache, encoder, ["inter-pair", "intra-pair"], bootstrap=0, ties="expected")
    inter, intra = rows
    vectors = embed_descriptions(intra_texts, encoder)
    direct = evaluate("inter-pair", vectors, ties="expected")  # 1,358 clips shared, the other 8,524 count as failures
    assert (inter["value"], inter["n_missing"], inter["missing_rule"]) == (round(direct.value, 2), 8524, "failures")
    assert inter["value_without_missing"] == round(direct.value_without_missing, 2) > inter["value"]
    assert inter["note"] is None and intra["n_missing"] == 0
    direct = evaluate("intra-pair", vectors, ties="expected")
    assert intra["value"] == round(direct.value, 2) and intra["n_queries"] == 2300
    assert intra["source"] == "synthetic demonstration (test)"


# --------------------------------------------------------------------------- paired comparisons of two caches

class LabelEncoder:
    """By hand: the sentence ``"It shows <action>."`` is the unit axis of that action; any other sentence the last axis."""

    name = "label one-hot"

    def __init__(self, labels):
        self.axis = {f"It shows {a}.": k for k, a in enumerate(labels)}

    def encode(self, sentences):
        out = np.zeros((len(sentences), len(self.axis) + 1), dtype=np.float32)
        out[np.arange(len(sentences)), [self.axis.get(s, len(self.axis)) for s in sentences]] = 1
        return out


def _tied_ap(n, r):
    """Expected AP of a query whose ``n`` gallery clips all tie, ``r`` of them relevant: each place k equally likely
    for a relevant clip, with (k - 1)(r - 1)/(n - 1) other relevant clips expected above it."""
    return sum((1 + (k - 1) * (r - 1) / (n - 1)) / k for k in range(1, n + 1)) / n


def _paired(caches, encoder, out, **parameters):
    """``(comparisons, note)`` of the results notebook's cells that pick and compare the pairs (``intra-pair``)."""
    ns = results_cells("comparisons", out, caches=caches, encoder=encoder, **parameters)
    return ns["comparisons"], ns["comparison_note"]


def test_paired_comparisons_of_two_caches(tmp_path):
    from sova_lib import records
    from sova_lib.protocols import get_protocol

    proto = get_protocol("intra-pair")
    clips = proto.clips()
    labels = sorted({proto.query_class(c) for c in clips})
    # task-aware: every clip says its action, so same-action clips have cosine 1 and others 0: AP 1 for every query.
    # general: every clip says the same, so every gallery ties: the expected AP of _tied_ap.
    model = "openbmb/MiniCPM-V-4_5"
    _write_cache(tmp_path, "a-task-aware", {c.index: f"It shows {proto.query_class(c)}." for c in clips},
                 _runner_manifest(model, "task-aware"))
    _write_cache(tmp_path, "b-general", {c.index: "A clip." for c in clips}, _runner_manifest(model, "general"))
    caches = cache_scan.find_description_caches(tmp_path)
    found, note = _paired(caches, LabelEncoder(labels), tmp_path / "out", bootstrap=50, seed=3)
    assert note == "task-aware against general prompt, per model (the paper's Table 5)" and len(found) == 1
    c = found[0]
    assert c.name_a == caches[0].label and "task-aware" in c.name_a and "general" in c.name_b
    # the expected difference, pair by pair: the mean over each pair's queries of 1 - tied AP, then over pairs
    per_pair = []
    for task in proto.tasks():
        same = (task.labels[task.queries][:, None] == task.labels[task.gallery][None, :]).sum(axis=1) - 1
        per_pair.append(np.mean([1 - _tied_ap(task.gallery.size - 1, r) for r in same]))
    expected = 100 * float(np.mean(per_pair))
    assert c.value_a == pytest.approx(100.0) and c.difference == pytest.approx(expected, abs=1e-9)
    assert c.value_a - c.value_b == pytest.approx(expected, abs=1e-9)
    assert c.n_queries == len(clips) and c.ci[0] <= c.difference <= c.ci[1] and c.ci[0] < c.ci[1]
    assert c.summary()["a_better"] == len(clips)
    # the record, collected into results.csv as the results notebook does
    records.write_record(c.to_record(encoder="label one-hot", text_split="sentences", benchmark="SOVABench"),
                         tmp_path / "results")
    table = records.collect_records(tmp_path / "results", tmp_path / "results.csv")
    written = pd.read_csv(tmp_path / "results.csv")
    for frame in (table, written):
        row = frame[frame["kind"] == "paired comparison"].iloc[0]
        assert row["protocol"] == "intra-pair" and row["metric"] == "Pair-mAP difference"
        assert row["value"] == pytest.approx(expected, abs=0.01) and row["source"] == f"{c.name_a} minus {c.name_b}"
        assert row["ci_low"] == pytest.approx(c.ci[0], abs=0.01) and row["n_queries"] == len(clips)
    # no model with both prompts: each cache against the next, by folder name; one cache: nothing to compare
    _write_cache(tmp_path / "other", "a-model", {c.index: "A clip." for c in clips}, _runner_manifest("m1", "general"))
    _write_cache(tmp_path / "other", "b-model", {c.index: f"It shows {proto.query_class(c)}." for c in clips},
                 _runner_manifest("m2", "general"))
    others = cache_scan.find_description_caches(tmp_path / "other")
    found, note = _paired(others, LabelEncoder(labels), tmp_path / "out", bootstrap=0)
    assert "each cache against the next" in note and found[0].difference == pytest.approx(-expected, abs=1e-9)
    assert found[0].ci is None
    found, note = _paired(others[:1], LabelEncoder(labels), tmp_path / "out")
    assert found == [] and "needs two" in note


# --------------------------------------------------------------------------- Table 4, Figure 2(b), Table C.1

def _table4_computed() -> pd.DataFrame:
    # the prevalence baseline (the paper's Random row), one description cache matched to a paper row, one not
    return pd.DataFrame([
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "inter-pair",
         "value": 3.42, "ci_low": 3.3, "ci_high": 3.5, "note": ""},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "intra-pair",
         "value": 50.29, "ci_low": 50.1, "ci_high": 50.47, "note": ""},
        {"kind": "description cache", "source": "MiniCPM-V 4.5 (task-aware)", "model": "openbmb/MiniCPM-V-4_5",
         "prompt": "task-aware", "cache": "c1", "encoder": "all-MiniLM-L6-v2", "protocol": "inter-pair",
         "value": 37.0, "ci_low": 36.0, "ci_high": 38.0, "note": ""},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "two-class",
         "value": 51.0, "ci_low": 50.0, "ci_high": 52.0, "note": ""},  # not a Table 4 column: left out
    ])


def test_table4_has_the_papers_21_rows_with_the_computed_ones_beside_them():
    table = beside("Table 4", _table4_computed())
    assert len(table) == 21  # the paper's rows; nothing computed here is outside the paper
    assert list(table.columns) == ["group", "model", "prompt", "inter-pair paper", "intra-pair paper",
                                   *(f"{p} {part}" for p in ("inter-pair", "intra-pair")
                                     for part in ("here", "CI low", "CI high", "missing", "without missing",
                                                  "chance", "chance without missing", "note")),
                                   "source", "kind", "baseline", "source model", "source prompt", "encoder", "fps",
                                   "cache"]
    rows = table.set_index(["model", "prompt"])
    assert rows.loc[("Random", "-"), ["inter-pair paper", "inter-pair here", "intra-pair here"]].tolist() == \
        [3.4, 3.42, 50.29]
    assert rows.loc[("MiniCPM-V 4.5", "task-aware"), "inter-pair here"] == 37.0
    assert table["source"].isna().sum() == 19  # 21 rows, Random and MiniCPM-V computed
    shown = results.format_table(table, "Table 4").set_index(["model", "prompt"])
    assert shown.loc[("Random", "-"), "intra-pair (here, 95% CI)"] == "50.3 [50.1, 50.5]"
    assert shown.loc[("MiniCPM-V 4.5", "task-aware"), "inter-pair (paper)"] == "38.3"


def _table_c1_computed() -> pd.DataFrame:
    # the prevalence baseline (the paper's Random row), one description cache matched to a paper row, and a
    # Table 4 row (inter-pair, not constrained) that Table C.1 leaves out
    return pd.DataFrame([
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "inter-pair-constrained",
         "value": 23.71, "ci_low": 22.9, "ci_high": 24.46, "note": ""},
        {"kind": "description cache", "source": "MiniCPM-V 4.5 (task-aware)", "model": "openbmb/MiniCPM-V-4_5",
         "prompt": "task-aware", "cache": "c1", "encoder": "all-MiniLM-L6-v2", "protocol": "inter-pair-constrained",
         "value": 44.0, "ci_low": 43.0, "ci_high": 45.0, "note": ""},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "inter-pair",
         "value": 3.42, "ci_low": 3.3, "ci_high": 3.5, "note": ""},
    ])


def test_table_c1_has_the_papers_21_rows_with_efficiency_as_reported():
    table = beside("Table C.1", _table_c1_computed())
    # the paper's rows: Random, 6 contrastive models, 4 general and 6 video MLLM rows, 4 API rows
    assert len(table) == 21
    assert list(table.columns) == ["group", "model", "prompt", "efficiency paper",
                                   "inter-pair-constrained paper", "inter-pair-constrained here",
                                   "inter-pair-constrained CI low", "inter-pair-constrained CI high",
                                   "inter-pair-constrained missing", "inter-pair-constrained without missing",
                                   "inter-pair-constrained chance", "inter-pair-constrained chance without missing",
                                   "inter-pair-constrained note", "source", "kind", "baseline", "source model",
                                   "source prompt", "encoder", "fps", "cache"]
    rows = table.set_index(["model", "prompt"])
    assert rows.loc[("Random", "-"), ["inter-pair-constrained paper", "inter-pair-constrained here"]].tolist() == \
        [23.7, 23.71]
    assert math.isnan(rows.loc[("Random", "-"), "efficiency paper"])  # the paper gives Random no efficiency
    minicpm = rows.loc[("MiniCPM-V 4.5", "task-aware")]
    assert (minicpm["efficiency paper"], minicpm["inter-pair-constrained paper"],
            minicpm["inter-pair-constrained here"]) == (0.26, 44.8, 44.0)
    assert table["source"].isna().sum() == 19  # 21 rows, Random and MiniCPM-V computed
    shown = results.format_table(table, "Table C.1").set_index(["model", "prompt"])
    assert list(shown.columns) == ["group", "efficiency (paper)", "inter-pair-constrained (paper)",
                                   "inter-pair-constrained (here, 95% CI)", "computed as"]
    assert shown.loc[("Random", "-"), "efficiency (paper)"] == "-"
    assert shown.loc[("Random", "-"), "inter-pair-constrained (here, 95% CI)"] == "23.7 [22.9, 24.5]"
    assert shown.loc[("VideoChat-R1 7B", "general"), "efficiency (paper)"] == "0.06"
    assert shown.loc[("VideoChat-R1 7B", "general"), "inter-pair-constrained (here, 95% CI)"] == results.NOT_COMPUTED


def test_a_command_and_a_notebook_write_the_same_record_for_one_cache(tmp_path, intra_texts, encoder):
    """``sova sovabench evaluate --out`` and the notebooks' ``evaluate_cache`` name the cache alike, field for field:
    model, fingerprint, prompt, fps, key hash, software, and the missing clips."""
    from sova_lib.cli import main

    manifest = _runner_manifest("openbmb/MiniCPM-V-4_5", "task-aware")
    manifest["fingerprint"] = "sha256:0123abcd"
    partial = dict(list(intra_texts.items())[5:])  # 5 clips were never described
    folder = _write_cache(tmp_path, "minicpm__1", partial, manifest)
    assert main(["sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", str(folder), "--bootstrap",
                 "100", "--out", str(tmp_path / "command"), "--cache-dir", str(tmp_path / "sentences")]) == 0
    (cache,) = cache_scan.find_description_caches(tmp_path)
    written = [records.write_record(r, tmp_path / "notebook")
               for r in results.evaluate_cache(cache, encoder, ["intra-pair"], bootstrap=100)]
    (command,) = (tmp_path / "command").glob("*.json")
    assert command.name == written[0].name
    record = json.loads(command.read_text())
    assert record == json.loads(written[0].read_text())
    assert (record["model"], record["fingerprint"], record["prompt"], record["fps"], record["n_missing"]) == \
        ("openbmb/MiniCPM-V-4_5", "sha256:0123abcd", "task-aware", 1.0, 5)
    assert record["config_hash"] == manifest["config_hash"] and record["versions"] == manifest["versions"]
    short = hashlib.sha256(json.dumps("sha256:0123abcd").encode()).hexdigest()[:8]  # the weights, in short
    assert record["source"] == f"MiniCPM-V 4.5 [openbmb/MiniCPM-V-4_5] @{short} (task-aware, transformers)"


def test_results_csv_keeps_one_row_per_evaluation(tmp_path, intra_texts, encoder):
    """Reruns with other resamples replace their record; another tie rule is another evaluation."""
    _write_cache(tmp_path, "minicpm__1", intra_texts, _runner_manifest("openbmb/MiniCPM-V-4_5", "general"))
    (cache,) = cache_scan.find_description_caches(tmp_path)
    for bootstrap, ties in ((0, "expected"), (100, "expected"), (200, "expected"), (0, "pessimistic")):
        for record in results.evaluate_cache(cache, encoder, ["intra-pair"], bootstrap=bootstrap, ties=ties):
            records.write_record(record, tmp_path / "results")
    frame = records.collect_records(tmp_path / "results", tmp_path / "results.csv")
    assert sorted(zip(frame["ties"], frame["bootstrap"])) == [("expected", 200), ("pessimistic", 0)]
    assert not frame.duplicated(["kind", "cache", "protocol", "encoder", "aggregate", "text_split", "ties"]).any()


def test_no_nan_in_a_table_a_person_reads():
    """A baseline row outside the paper has no prompt; beside a model row with one it reads "-", not nan. A partial
    cache's cell says how many clips it lacked, its score without them and the chance level of the same clips
    under each rule."""
    computed = pd.concat([_table4_computed(), pd.DataFrame([
        {"kind": "baseline", "baseline": "random-ranking", "source": "random ranking", "protocol": "inter-pair",
         "value": 3.5, "ci_low": np.nan, "ci_high": np.nan, "prompt": np.nan, "note": np.nan},
        {"kind": "description cache", "source": "my model (general)", "model": "me/mine", "prompt": "general",
         "cache": "c2", "encoder": "all-MiniLM-L6-v2", "protocol": "inter-pair", "value": 20.0, "ci_low": 19.0,
         "ci_high": 21.0, "n_missing": 3, "value_without_missing": 20.26, "chance": 3.47,
         "chance_without_missing": 3.51, "note": np.nan}])], ignore_index=True)
    table = beside("Table 4", computed)
    shown = results.format_table(table, "Table 4")
    assert not shown.astype(str).apply(lambda col: col.str.contains("nan")).any().any()
    rows = shown.set_index("model")
    assert rows.loc["random ranking", "prompt"] == "-"
    assert rows.loc["my model (general)", "inter-pair (here, 95% CI)"] == \
        "20.0 [19.0, 21.0]; 3 missing, 20.3 without them; chance 3.5, 3.5 without them"
    assert "inter-pair chance" not in results.number_table(table, "Table 4")  # the CSV's numbers, as before


def test_table4_keeps_what_was_scored_as_data_and_the_scatter_reads_it(tmp_path):
    """Source, model, encoder, prompt, fps and cache are columns of their own; the figure's points come from them,
    whatever the source's wording, and the cell a person reads is written from them."""
    computed = pd.concat([_table4_computed(), pd.DataFrame([
        {"kind": "description cache", "source": "anything at all; (oracle) [x]", "model": "me/mine",
         "prompt": "task-aware", "cache": "c2", "encoder": "enc", "fps": 2.0, "protocol": p, "value": v,
         "ci_low": np.nan, "ci_high": np.nan, "note": n}
        for p, v, n in (("inter-pair", 20.0, ""), ("intra-pair", 52.0, "subset"))] + [
        {"kind": "baseline", "baseline": "oracle", "source": "upper bound", "encoder": "enc", "protocol": p,
         "value": 100.0, "ci_low": np.nan, "ci_high": np.nan, "note": ""} for p in ("inter-pair", "intra-pair")] + [
        {"kind": "baseline", "baseline": "random-ranking", "source": "chance", "protocol": p, "value": v,
         "ci_low": np.nan, "ci_high": np.nan, "note": ""} for p, v in (("inter-pair", 3.5), ("intra-pair", 51.2))])],
        ignore_index=True)
    table = beside("Table 4", computed)
    mine = table[table["source model"] == "me/mine"]
    assert len(mine) == 1
    assert mine[["source", "kind", "baseline", "source model", "source prompt", "encoder", "fps", "cache",
                 "inter-pair note", "intra-pair note"]].iloc[0].fillna("(empty)").tolist() == \
        ["anything at all; (oracle) [x]", "description cache", "(empty)", "me/mine", "task-aware", "enc", 2.0, "c2",
         "(empty)", "subset"]
    minicpm = table.set_index(["model", "prompt"]).loc[("MiniCPM-V 4.5", "task-aware")]
    assert (minicpm["source model"], minicpm["source prompt"], minicpm["encoder"], minicpm["cache"]) == \
        ("openbmb/MiniCPM-V-4_5", "task-aware", "all-MiniLM-L6-v2", "c1")
    assert results.computed_as(mine, "Table 4") == \
        ["anything at all; (oracle) [x]; encoder enc; cache c2 (intra-pair: subset)"]
    points = figure2b_points(table, tmp_path)["points"]
    here = points[points["source"] == "computed here"]
    # the oracle is known by its baseline, not by its wording; the others are named by baseline or model and prompt
    assert here[["label", "inter", "intra"]].values.tolist() == [["me/mine (task-aware) [here]", 20.0, 52.0],
                                                                  ["random ranking [here]", 3.5, 51.2]]
    numbers = results.number_table(table, "Table 4")
    assert list(numbers.columns)[-1] == "computed as" and "source" not in numbers.columns
    assert numbers["computed as"].tolist() == results.computed_as(table, "Table 4")
