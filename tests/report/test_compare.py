"""The paired comparison: the bootstrap against brute force, known differences, the command and its record."""
import itertools
import json

import numpy as np
import pytest

from sova_lib import metrics
from sova_lib.benchmarks.excerpts import DIRECTION_PROTOCOL, example_clips
from sova_lib.report.compare import compare
from sova_lib.similarity import ItemVectors

A = np.array([0.9, 0.1, 0.5, 0.7, 0.3])
B = np.array([0.4, 0.2, 0.5, 0.1, 0.6])


def _exact_quantiles(a, b, groups, q):
    """Every resample (within each group) listed once, each equally likely: the bootstrap's exact distribution."""
    labels = np.unique(groups)
    members = [np.flatnonzero(groups == g) for g in labels]
    stats = []
    for picks in itertools.product(*[itertools.product(m, repeat=m.size) for m in members]):
        stats.append(np.mean([a[list(p)].mean() - b[list(p)].mean() for p in picks]))
    return np.quantile(np.array(stats), q)


def test_paired_bootstrap_is_the_resampling_of_both_scorers_on_the_same_draws():
    # brute force with the same generator: draw the query sets, score A and B on each, subtract
    rng = np.random.default_rng(7)
    idx = rng.integers(0, A.size, size=(500, A.size))
    brute = np.quantile(A[idx].mean(axis=1) - B[idx].mean(axis=1), [0.025, 0.975])
    got = metrics.paired_bootstrap_ci(A, B, np.random.default_rng(7), n_resamples=500)
    assert got == pytest.approx(tuple(brute), abs=1e-12)


@pytest.mark.parametrize("groups", [None, np.array([0, 0, 1, 1, 1])])
def test_paired_bootstrap_converges_to_the_enumerated_distribution(groups):
    # 5 queries: 5^5 = 3125 resamples (2^2 * 3^3 = 108 within the two groups), each listed by hand once
    g = np.zeros(A.size, dtype=int) if groups is None else groups
    exact = _exact_quantiles(A, B, g, [0.05, 0.95])
    got = metrics.paired_bootstrap_ci(A, B, np.random.default_rng(0), groups=groups, n_resamples=40_000,
                                      confidence=0.90)
    assert got == pytest.approx(tuple(exact), abs=0.02)
    # the paired interval is narrower than the two single intervals' spread would suggest: B's and A's noise cancel
    assert got[1] - got[0] < 0.6


def test_a_scorer_against_itself_differs_by_exactly_zero():
    assert metrics.paired_bootstrap_ci(A, A, np.random.default_rng(1), n_resamples=200) == (0.0, 0.0)
    items = _items(perfect=True)
    c = compare(DIRECTION_PROTOCOL, items, items, bootstrap=200)
    assert c.difference == 0.0 and c.ci == (0.0, 0.0) and (c.per_query["difference"] == 0).all()
    with pytest.raises(ValueError, match="one value per query"):
        metrics.paired_bootstrap_ci(A, A[:3], np.random.default_rng(1))


def _items(*, perfect: bool) -> ItemVectors:
    """The six quickstart clips: one vector each, by playing direction (perfect) or all the same (uninformed)."""
    clips = example_clips()
    vectors = np.array([[1.0, 0.0] if c.direction == "forward" or not perfect else [0.0, 1.0] for c in clips])
    return ItemVectors(np.array([c.index for c in clips]), np.arange(len(clips)), vectors.astype(np.float32))


def test_known_difference_on_the_quickstart_protocol(tmp_path):
    # A ranks the two same-direction clips first for every query: AP 1. B ties all five: the exact random AP with
    # R = 2 of N = 5, (1/5) * sum_k (1 + (k-1)/4) / k = 0.5925. Every query differs by 40.75 points, so the
    # interval has zero width.
    c = compare(DIRECTION_PROTOCOL, _items(perfect=True), _items(perfect=False), name_a="perfect",
                name_b="tied", bootstrap=100)
    assert c.value_a == 100.0 and c.value_b == pytest.approx(59.25)
    assert c.difference == pytest.approx(40.75) and c.ci == pytest.approx((40.75, 40.75))
    assert len(c.per_query) == 6 and c.per_query["difference"].to_numpy() == pytest.approx([40.75] * 6)
    assert c.summary()["a_better"] == 6
    record = c.to_record()
    assert record["kind"] == "paired comparison" and record["value"] == 40.75 and record["source"] == \
        "perfect minus tied"


def test_compare_command(tmp_path, capsys):
    from sova_lib.cli import main
    from sova_lib.item_vectors import write_embeddings
    from sova_lib.records import collect_records

    a, b = write_embeddings(tmp_path / "a.npz", _items(perfect=True)), write_embeddings(tmp_path / "b.npz",
                                                                                     _items(perfect=False))
    assert main(["compare", "--protocol", DIRECTION_PROTOCOL, str(a), str(b), "--json", "--bootstrap", "50",
                 "--out", str(tmp_path / "results")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["difference"] == pytest.approx(40.75) and out["ci"] == pytest.approx([40.75, 40.75])
    assert out["n_queries"] == 6
    assert len(out["disagreements"]) == 6
    table = collect_records(tmp_path / "results")
    assert table["kind"].tolist() == ["paired comparison"] and table["value"].tolist() == [40.75]
    assert main(["compare", "--protocol", "intra-pair", str(a), str(b)]) == 2
    assert "none of the" in capsys.readouterr().err
    assert main(["compare", "--protocol", DIRECTION_PROTOCOL, str(a), str(tmp_path / "missing.npz")]) == 2
    assert "missing.npz: no such file" in capsys.readouterr().err


def _angles() -> ItemVectors:
    """The six quickstart clips, one unit vector each at 0, 1, ..., 5 radians / 2: no tie in any ranking."""
    clips = example_clips()
    angles = np.arange(len(clips)) / 2
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    return ItemVectors(np.array([c.index for c in clips]), np.arange(len(clips)), vectors)


def test_compare_json_is_full_precision_in_snake_case(tmp_path, capsys):
    """Keys as ``sova sovabench evaluate --json`` spells them; numbers as computed, not rounded for print."""
    from sklearn.metrics import average_precision_score

    from sova_lib.cli import main
    from sova_lib.item_vectors import write_embeddings

    a, b = write_embeddings(tmp_path / "a.npz", _items(perfect=True)), write_embeddings(tmp_path / "b.npz", _angles())
    assert main(["compare", "--protocol", DIRECTION_PROTOCOL, str(a), str(b), "--json", "--bootstrap", "0",
                 "--names", "perfect", "angles", "--top", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["protocol", "metric", "name_a", "name_b", "value_a", "value_b", "difference", "ci",
                         "n_queries", "a_better", "b_better", "equal", "bootstrap", "seed", "ties", "aggregate",
                         "text_split", "missing_rule", "n_missing_a", "n_missing_b", "disagreements"]
    assert all(k == k.lower() and " " not in k for row in out["disagreements"] for k in row)
    # B's AP of each query, by scikit-learn on the cosines (no ties): the JSON holds it to the last bit
    clips, v = example_clips(), _angles().vectors.astype(np.float64)
    aps = []
    for q, clip in enumerate(clips):
        others = [g for g in range(len(clips)) if g != q]
        relevant = [clips[g].direction == clip.direction for g in others]
        aps.append(average_precision_score(relevant, v[others] @ v[q]))
    assert out["value_b"] == pytest.approx(100 * np.mean(aps), rel=1e-12)
    assert out["difference"] == pytest.approx(100 - 100 * np.mean(aps), rel=1e-12)
    assert out["difference"] != round(out["difference"], 2) and out["ci"] is None
    worst = max(range(6), key=lambda q: (1 - aps[q], -q))
    assert out["disagreements"][0]["id"] == clips[worst].index
    assert out["disagreements"][0]["ap_b"] == pytest.approx(100 * aps[worst], rel=1e-12)


def test_plain_text_report_leads_with_the_difference():
    # the known case above: every query 100 against 59.25, so A - B = 40.75 on each and an interval of zero width
    c = compare(DIRECTION_PROTOCOL, _items(perfect=True), _items(perfect=False), name_a="perfect", name_b="tied",
                bootstrap=100, seed=4)
    lines = c.text(top=2).splitlines()
    assert lines[0] == "quickstart-direction (mAP, 6 queries): A - B = +40.75 points, 95% paired CI +40.75 to +40.75"
    assert lines[1:4] == ["  A = 100.00  perfect", "  B =  59.25  tied", "  A better on 6 queries, B on 0, equal on 0"]
    assert lines[4] == "  (paired bootstrap: 100 resamples of the queries, seed 4; AP ties: expected)"
    assert lines[5] == "the 2 queries where A and B disagree most (AP in points):"
    assert c.text(top=1).splitlines()[5] == "the query where A and B disagree most (AP in points):"
    table = lines[6:]
    assert len(table) == 3 and len({len(t) for t in table}) == 1  # header and rows aligned to one width
    assert table[0].split() == ["query", "class", "AP", "A", "AP", "B", "A", "-", "B"]
    first = c.per_query["id"].iloc[0]
    assert table[1].split() == [first, c.per_query["class"].iloc[0], "100.00", "59.25", "+40.75"]
    assert "no interval" in compare(DIRECTION_PROTOCOL, _items(perfect=True), _items(perfect=False),
                                    bootstrap=0).text(top=0)
    assert len(c.text(top=0).splitlines()) == 5


def test_compare_command_into_a_closed_pipe(tmp_path):
    """``sova compare ... | head -1``: the reader leaves early; the command still exits 0 without a traceback."""
    import os
    import subprocess
    import sys

    from sova_lib.item_vectors import write_embeddings
    from tests.paths import ROOT

    a = write_embeddings(tmp_path / "a.npz", _items(perfect=True))
    b = write_embeddings(tmp_path / "b.npz", _items(perfect=False))
    read, write = os.pipe()
    os.close(read)  # closed before the command writes: its first write meets a broken pipe, as under `| head -1`
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "sova_lib", "compare", "--protocol", DIRECTION_PROTOCOL, str(a),
                           str(b), "--bootstrap", "10"], stdout=write, stderr=subprocess.PIPE, env=env, text=True)
    os.close(write)
    assert done.returncode == 0 and done.stderr == ""


def _description_file(path, text_of):
    """A JSON Lines description file ({"id", "text"} a line, as ``sova describe`` writes it) of the six clips."""
    path.write_text("".join(json.dumps({"id": c.index, "text": text_of(c)}) + "\n" for c in example_clips()))
    return path


def test_compare_no_split_scores_as_sovabench_evaluate_no_split(tmp_path, capsys, monkeypatch):
    """``sova compare --no-split`` embeds each description whole: the same per-query APs as two
    ``sova sovabench evaluate --no-split`` runs, and its record says so."""
    from sova_lib.benchmarks import sovabench
    from sova_lib.cli import main
    from sova_lib.records import collect_records

    # A: the direction sentence, then a scene sentence every clip shares. Whole, the three texts of one direction
    # are the same text (cosine 1) and the other direction's differ: every query has AP 1 (100 points). Split into
    # sentences, the shared sentence gives every pair the same maximum cosine, so the direction is no longer seen.
    a = _description_file(tmp_path / "a.jsonl", lambda c: f"The clip plays {c.direction}. People walk across an "
                                                          "open square.")
    # B: the place of the clip, unrelated to its direction, then a sentence every clip shares. Whole, a query's
    # first is the same place played the other way (cosine 1, not relevant), then two tied groups, one per other
    # place, each of one relevant and one not: expected AP = 1/2 * (mean(1/2, 1/3) + mean(2/4, 2/5)) = 0.43333.
    # Split, the shared sentence ties every clip, as for A: the exact random AP 0.5925 (R = 2 of N = 5, above).
    b = _description_file(tmp_path / "b.jsonl", lambda c: f"This is the {c.index.split('_')[1]}. Nothing else "
                                                          "happens here.")
    cache = str(tmp_path / "cache")
    scored = []
    real = sovabench.evaluate_files
    monkeypatch.setattr(sovabench, "evaluate_files", lambda *a, **k: scored.append(real(*a, **k)) or scored[-1])
    for path in (a, b):
        assert main(["sovabench", "evaluate", "--protocol", DIRECTION_PROTOCOL, "--descriptions", str(path),
                     "--no-split", "--cache-dir", cache, "--json", "--bootstrap", "0"]) == 0
    capsys.readouterr()
    assert [round(r.value, 2) for r in scored] == [100.0, 43.33]  # as worked out above

    def compared(*split):
        assert main(["compare", "--protocol", DIRECTION_PROTOCOL, str(a), str(b), *split, "--cache-dir", cache,
                     "--json", "--top", "6", "--bootstrap", "0", "--out", str(tmp_path / "results" / str(split))]) == 0
        rows = json.loads(capsys.readouterr().out)["disagreements"]
        return {r["id"]: (round(r["ap_a"], 2), round(r["ap_b"], 2)) for r in rows}  # full precision: rounded here

    whole = compared("--no-split")
    expected = {i: (round(100 * scored[0].per_query[i], 2), round(100 * scored[1].per_query[i], 2))
                for i in scored[0].per_query}
    assert whole == expected == {c.index: (100.0, 43.33) for c in example_clips()}
    # without it, compare splits into sentences: every clip tied, for A and for B
    assert compared() == {c.index: (59.25, 59.25) for c in example_clips()}
    assert collect_records(tmp_path / "results" / "('--no-split',)")["text_split"].tolist() == ["whole text"]
    assert collect_records(tmp_path / "results" / "()")["text_split"].tolist() == ["sentences"]


def test_no_split_on_two_vector_files_is_ignored_with_a_note(tmp_path, capsys):
    from sova_lib.cli import main
    from sova_lib.item_vectors import write_embeddings

    a, b = write_embeddings(tmp_path / "a.npz", _items(perfect=True)), write_embeddings(tmp_path / "b.npz",
                                                                                     _items(perfect=False))
    assert main(["compare", "--protocol", DIRECTION_PROTOCOL, str(a), str(b), "--no-split", "--json", "--bootstrap",
                 "0", "--out", str(tmp_path / "r")]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["difference"] == pytest.approx(40.75)
    assert err.startswith("sova: note: --no-split does not apply to two .npz inputs")
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "r").glob("*.json")]
    assert record.get("text_split") is None and record.get("encoder") is None


def _cache(tmp_path, name: str, texts: dict):
    """A describe cache folder of ``texts`` (synthetic), under ``tmp_path/name``."""
    from tests.synthetic_cache import write_synthetic_cache

    return write_synthetic_cache(tmp_path / name, texts, name=name, description=f"constructed texts {name}")


def _direction_texts(right: bool) -> dict:
    """Texts of the six quickstart clips: each clip's direction (``right``), or the same text for all."""
    return {c.index: (f"the video plays {c.direction}." if right else "a car is there.") for c in example_clips()}


def _compare_out(a, b, out, names=("ckpt1", "ckpt2"), allow_missing=False):
    from sova_lib.records import write_record
    from sova_lib.report.compare import compare_files
    from tests.helpers_ranking import OneHotEncoder

    c = compare_files(DIRECTION_PROTOCOL, a, b, OneHotEncoder, name_a=names[0], name_b=names[1], bootstrap=0,
                      allow_missing=allow_missing)
    return write_record(c.to_record(encoder="one-hot"), out)


def test_two_comparisons_under_the_same_names_are_two_records_naming_both_sides(tmp_path):
    right, blind, other = (_cache(tmp_path, "right", _direction_texts(True)),
                           _cache(tmp_path, "blind", _direction_texts(False)),
                           _cache(tmp_path, "other", {**_direction_texts(False), "vtest_lawn_0600-0659": "grass."}))
    first = _compare_out(right, blind, tmp_path / "results")
    second = _compare_out(right, other, tmp_path / "results")
    assert first != second and sorted((tmp_path / "results").iterdir()) == sorted([first, second])
    record = json.loads(first.read_text())
    assert record["cache"] == f"{right.resolve()} vs {blind.resolve()}"
    assert record["source"] == "ckpt1 minus ckpt2"
    assert record["model"] == "none (synthetic) vs none (synthetic)" and record["prompt"] == "none vs none"
    assert record["config_hash"] == f"{right.name.split('__')[-1]} vs {blind.name.split('__')[-1]}"
    assert record["missing_rule"] == "failures" and record["ties"] == "expected"
    assert first.name.startswith(f"{right.name[:22]}-vs-{blind.name[:22]}__quickstart-direction__one-hot__")


def test_one_comparison_spelled_three_ways_is_one_record(tmp_path, monkeypatch):
    right, blind = _cache(tmp_path, "right", _direction_texts(True)), _cache(tmp_path, "blind", _direction_texts(False))
    monkeypatch.chdir(tmp_path)
    spelled = [(right.relative_to(tmp_path), blind.relative_to(tmp_path)), (right.resolve(), blind.resolve()),
               (f"{right}/", f"./{blind.relative_to(tmp_path)}/")]
    written = {_compare_out(str(a), str(b), tmp_path / "results") for a, b in spelled}
    assert len(written) == 1 and len(list((tmp_path / "results").iterdir())) == 1
    # the missing rule is part of what was compared: leaving missing clips out is another record
    assert _compare_out(right, blind, tmp_path / "results", allow_missing=True) not in written


def test_compare_marks_missing_clips_and_says_how_to_score_them(tmp_path, capsys):
    """B lacks one clip: its query is marked missing in the table and the JSON, the summary counts it, and
    --allow-missing (whose queries then differ) is refused naming the rule that scores both on every query."""
    from sova_lib.cli import main
    from sova_lib.item_vectors import write_embeddings
    from sova_lib.similarity import ItemVectors

    full = _items(perfect=True)
    lacking = ItemVectors(full.ids[1:], np.arange(len(full.ids) - 1), full.vectors[1:])
    a, b = write_embeddings(tmp_path / "a.npz", full), write_embeddings(tmp_path / "b.npz", lacking)
    argv = ["compare", "--protocol", DIRECTION_PROTOCOL, str(a), str(b), "--bootstrap", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    first = str(full.ids[0])
    assert "  missing clips: A lacks 0, B lacks 1 (counted as failures: a missing query scores AP 0, a missing " \
           "gallery clip ranks last; --allow-missing leaves them out of both)" in out
    header = next(line for line in out if line.lstrip().startswith("query"))
    (row,) = [line for line in out if line.strip().startswith(first + " ")]
    assert header.split()[-1] == "missing" and row.split()[-1] == "B" and row.split()[3] == "0.00"
    assert all(line.split()[-1] != "B" for line in out[out.index(header) + 1:] if line is not row)
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["n_missing_a"], data["n_missing_b"], data["missing_rule"]) == (0, 1, "failures")
    assert {r["id"]: r["missing"] for r in data["disagreements"]}[first] == "B"
    assert main([*argv, "--allow-missing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(1 only in" in err and ", 0 only in" in err
    assert "without --allow-missing both are scored on every query, each missing clip counted as a failure" in err
