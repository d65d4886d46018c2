import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from sova_lib.cli import main
from sova_lib.evaluation import oracle_texts
from sova_lib.protocols import get_protocol
from sova_lib.records import fingerprint_label, record_label


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _npz(path, ids, rng):
    owner = np.arange(len(ids))
    np.savez(path, ids=np.asarray(ids), owner=owner, vectors=rng.normal(size=(len(ids), 5)))
    return str(path)


def test_baseline_json_contract(capsys):
    code, out, _ = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--baseline", "prevalence", "--json")
    assert code == 0
    result = json.loads(out)
    assert {"protocol", "metric", "value", "per_class", "n_queries", "per_pair"} <= result.keys()
    assert result["metric"] == "Pair-mAP" and round(result["value"], 1) == 50.3
    assert len(result["per_pair"]) == 7 and len(result["per_class"]) == 14 and result["n_queries"] == 2300
    code, out, _ = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair", "--baseline", "random-ranking", "--json")
    result = json.loads(out)
    assert result["metric"] == "mAP" and "per_pair" not in result and round(result["value"], 1) == 3.5


def test_embeddings_input_and_missing_clips(capsys, tmp_path):
    rng = np.random.default_rng(0)
    ids = get_protocol("inter-pair-constrained").ids()
    full = _npz(tmp_path / "full.npz", ids, rng)
    code, out, _ = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair-constrained", "--embeddings", full, "--json")
    assert code == 0 and json.loads(out)["n_queries"] == 1423
    partial = _npz(tmp_path / "partial.npz", ids[2:], rng)
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair-constrained", "--embeddings",
                          partial, "--bootstrap", "0")
    assert code == 0 and "over 1423 queries" in out  # the default: the 2 missing clips count as failures
    assert f"2 of the 1423 clips of protocol 'inter-pair-constrained' are missing from the input (e.g. ids {ids[:2].tolist()})" in err
    counted = out.splitlines()[1]
    assert counted.startswith("  2 clip(s) missing from the input, counted as failures; with them left out: mAP = ")
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair-constrained", "--embeddings", partial,
                          "--allow-missing", "--bootstrap", "0")
    assert code == 0 and "over 1421 queries" in out and "left out of every ranking" in err
    left_out = out.splitlines()[0].split("mAP = ")[1].split()[0]
    assert f"mAP = {left_out} (a random ranking: " in counted  # the value without them is the --allow-missing score


def test_descriptions_input_with_notes(capsys, tmp_path):
    texts = oracle_texts("intra-pair")
    texts[424242] = "not a clip"
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()))
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", str(path),
                          "--cache-dir", str(tmp_path / "cache"), "--bootstrap", "50")
    assert code == 0
    assert "intra-pair: Pair-mAP = 100.00  (95% CI 100.0-100.0)  over 2300 queries" in out
    assert "1 input id(s) are not SOVABench clips at all and were ignored (e.g. [424242])" in err


def test_unreadable_input_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0, "text": "x"}\n{oops\n')
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", str(bad))
    assert code == 2 and f"sova: error: {bad}, line 2: not valid JSON" in err
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--embeddings", str(tmp_path / "none.npz"))
    assert code == 2 and "none.npz does not exist" in err


def test_usage_errors_exit_2():
    assert main(["sovabench", "evaluate", "--protocol", "intra-pair"]) == 2  # no input
    assert main(["sovabench", "evaluate", "--protocol", "nope", "--baseline", "prevalence"]) == 2


def test_module_entry_point_runs_a_command_and_exits_with_its_code():
    """``python -m sova_lib`` runs the command itself: its output and its exit status, 0 and 2, come through."""
    def sova(*argv):
        return subprocess.run([sys.executable, "-m", "sova_lib", *argv], capture_output=True, text=True)

    done = sova("sovabench", "evaluate", "--protocol", "intra-pair", "--baseline", "prevalence", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # the same number as the in-process call of test_baseline_json_contract
    assert (result["protocol"], result["metric"], round(result["value"], 1)) == ("intra-pair", "Pair-mAP", 50.3)
    bad = sova("sovabench", "evaluate", "--protocol", "nope", "--baseline", "prevalence")
    assert bad.returncode == 2 and bad.stdout == ""
    assert "argument --protocol: invalid choice: 'nope'" in bad.stderr.strip().splitlines()[-1]


def test_default_rule_is_tie_aware_and_ties_are_warned_about(capsys, tmp_path):
    """Every clip with the same vector: the random-ranking value, a warning with the spread, pairs headed as pairs."""
    ids = get_protocol("inter-pair").ids()
    path = tmp_path / "same.npz"
    np.savez(path, ids=ids, owner=np.arange(ids.size), vectors=np.ones((ids.size, 3)))
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair", "--embeddings", str(path),
                             "--bootstrap", "0")
    assert code == 0
    assert out.startswith("inter-pair: mAP = 3.50  over 1423 queries  (ties: expected)\n  per pair (mean AP of its queries):")
    assert "per class" not in out
    warning = [x for x in err.splitlines() if x.startswith("sova: warning: ties")]
    assert len(warning) == 1 and "the score uses the 'expected' tie rule" in warning[0]
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair", "--embeddings", str(path), "--json")
    result = json.loads(out)
    assert result["ties"] == "expected" and result["tie_spread"] > 1 and "sova: warning: ties" in err


def test_no_tie_warning_without_ties(capsys, tmp_path):
    rng = np.random.default_rng(3)
    path = _npz(tmp_path / "r.npz", get_protocol("intra-pair").ids(), rng)
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--embeddings", path)
    assert code == 0 and "warning" not in err and "per pair (mAP over the pair's queries)" in out


def test_the_quickstart_cache_scores_under_its_protocol(capsys, tmp_path, encoder):
    from sova_lib.evaluation import evaluate
    from sova_lib.item_vectors import embed_descriptions, read_descriptions
    from tests.paths import ROOT

    (folder,) = sorted((ROOT / "cache" / "descriptions").glob("quickstart-motion-*"))
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", str(folder),
                          "--cache-dir", str(tmp_path), "--json")
    result = json.loads(out)
    assert code == 0 and result["n_queries"] == 6 and result["ties"] == "expected"
    direct = evaluate("quickstart-direction", embed_descriptions(read_descriptions(folder), encoder))
    assert result["value"] == pytest.approx(direct.value, abs=1e-9)
    assert set(result["per_class"]) == {"forward", "reversed"}
    code, out, _ = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", str(folder),
                        "--cache-dir", str(tmp_path))
    assert "per direction (mean AP of its queries):" in out


@pytest.mark.parametrize("rule", [[], ["--allow-missing"]])
def test_a_constant_describer_on_a_subset_prints_its_own_score_as_the_chance_line(capsys, tmp_path, rule):
    """Fifteen clips of inter-pair, every one with the same vector: the score is chance, and the line beside it
    says so (the protocol's own random ranking, 3.50, is for other clips)."""
    ids = get_protocol("inter-pair").ids()[100:115]
    path = tmp_path / "same.npz"
    np.savez(path, ids=ids, owner=np.arange(ids.size), vectors=np.ones((ids.size, 3)))
    argv = ["sovabench", "evaluate", "--protocol", "inter-pair", "--embeddings", str(path), "--bootstrap", "0", *rule]
    code, out, _ = _run(capsys, *argv)
    score = out.splitlines()[0].split("mAP = ")[1].split()[0]
    assert code == 0 and out.splitlines()[-1].startswith(f"  a random ranking of the same clips scores {score} mAP")
    assert "3.50" not in out.splitlines()[-1]
    code, out, _ = _run(capsys, *argv, "--json", "--out", str(tmp_path / "results"))
    result = json.loads(out)
    assert result["chance"] == pytest.approx(result["value"], abs=1e-9)
    assert result["chance_without_missing"] == pytest.approx(result["value_without_missing"], abs=1e-9)
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "results").iterdir()]
    assert record["chance"] == record["value"] and record["chance_without_missing"] == record["value_without_missing"]


def test_two_files_of_one_name_are_two_records_and_one_file_spelled_two_ways_is_one(capsys, tmp_path, monkeypatch):
    """ckpt1/v.npz and ckpt2/v.npz scored on one protocol into one --out folder: two records, each named by its
    file's name and content digest (no path), and the same file given relatively then absolutely: still two."""
    rng = np.random.default_rng(0)
    ids = get_protocol("quickstart-direction").ids()
    for ckpt in ("ckpt1", "ckpt2"):
        (tmp_path / ckpt).mkdir()
        _npz(tmp_path / ckpt / "v.npz", ids, rng)
    monkeypatch.chdir(tmp_path)
    values = {}
    for spelled in ("ckpt1/v.npz", "ckpt2/v.npz", str(tmp_path / "ckpt1" / "v.npz"), str(tmp_path / "ckpt2" / "v.npz")):
        code, out, _ = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--embeddings",
                            spelled, "--out", "results", "--json")
        assert code == 0
        values.setdefault(spelled.split("/")[-2], round(json.loads(out)["value"], 2))
    assert values["ckpt1"] != values["ckpt2"]
    written = sorted((tmp_path / "results").glob("*.json"))
    assert len(written) == 2
    digests = {hashlib.sha256((tmp_path / c / "v.npz").read_bytes()).hexdigest(): c for c in ("ckpt1", "ckpt2")}
    labels = set()
    for path in written:
        record = json.loads(path.read_text())
        assert path.name.startswith("v.npz__quickstart-direction__max__") and str(tmp_path) not in path.name
        assert record["cache"] == "v.npz" and record["fingerprint"]["method"] == "file-digest"
        assert record["value"] == values[digests[record["fingerprint"]["sha256"]]]
        labels.add(record_label(record))
    assert labels == {f"v.npz @{fingerprint_label({'method': 'file-digest', 'sha256': d})}" for d in digests}
