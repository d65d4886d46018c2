"""Tests of sova_lib.records: one JSON per evaluation, one CSV of them all, one cell format."""
import json

import numpy as np
import pytest

from sova_lib import records
from sova_lib.cli import main
from sova_lib.evaluation import Result, baseline
from tests.paths import ROOT


def _result(**kw):
    base = dict(protocol="intra-pair", metric="Pair-mAP", value=51.2049, per_class={"turn": 51.0712},
                n_queries=2300, per_pair={"turn": 51.0712, "door": 50.4167}, ci=(50.111, 52.339), ties="expected",
                aggregate="max", tie_spread=0.1234)
    base.update(kw)
    return Result(**base)


def test_make_record_flattens_and_rounds_a_result():
    r = records.make_record(_result(), kind="description cache", source="m (general)", cache="c__1", encoder="e",
                            text_split="sentences", bootstrap=1000, seed=0, fps=2.0)
    assert list(r) == list(records.RECORD_FIELDS)
    assert (r["value"], r["ci_low"], r["ci_high"]) == (51.2, 50.11, 52.34)
    assert r["per_class"] == {"turn": 51.07, "door": 50.42}  # per pair, when the protocol reports pairs
    assert (r["ties"], r["aggregate"], r["n_queries"], r["fps"]) == ("expected", "max", 2300, 2.0)
    assert r["tie_spread"] == 0.12
    assert r["baseline"] is None and r["library_version"] == "0.1.0"
    unscored = records.make_record(kind="description cache", source="m", protocol="inter-pair", value=float("nan"),
                                   note="8524 of 9882 clips missing: not scored")
    assert unscored["value"] is None and unscored["n_queries"] is None
    with pytest.raises(ValueError, match="unknown record fields"):
        records.make_record(kind="x", source="y", colour="blue")


def test_record_names_follow_the_configuration_not_the_numbers(tmp_path):
    a = records.make_record(_result(), kind="description cache", source="s", cache="c__1", encoder="e")
    b = records.make_record(_result(value=10.0), kind="description cache", source="s", cache="c__1", encoder="e")
    c = records.make_record(_result(ties="pessimistic"), kind="description cache", source="s", cache="c__1",
                            encoder="e")
    rerun = [records.make_record(_result(ci=None if n == 0 else (50.0, 52.0)), kind="description cache", source="s",
                                 cache="c__1", encoder="e", bootstrap=n, seed=n) for n in (0, 100, 200)]
    assert records.record_name(a) == records.record_name(b) != records.record_name(c)
    assert {records.record_name(r) for r in rerun} == {records.record_name(a)}  # a rerun replaces its record
    assert records.record_name(a).startswith("c__1__intra-pair__e__max__")
    assert records.write_record(a, tmp_path) == records.write_record(b, tmp_path)  # the same file, rewritten
    assert json.loads(records.write_record(b, tmp_path).read_text())["value"] == 10.0



@pytest.mark.parametrize("kind", ["description cache", "submission", "embeddings", "paired comparison"])
def test_two_checkpoints_never_share_a_record_name(kind):
    """The same cache name, scored the same way, by another model or other weights: another file, whatever the
    record's kind; the same model and weights: the same file. The digest is checked against its own SHA-256."""
    import hashlib

    def named(**fields):
        return records.record_name(records.make_record(_result(), kind=kind, source="s", cache="c__1", **fields))

    first = {"model": "me/vlm", "fingerprint": {"method": "folder-digest", "sha256": "a" * 64}}
    names = {named(**first), named(model="me/vlm", fingerprint={"method": "folder-digest", "sha256": "b" * 64}),
             named(model="me/vlm", fingerprint={"method": "tag", "tag": "ckpt-2"}),
             named(model="me/other", fingerprint=first["fingerprint"]), named(model="me/vlm"), named()}
    assert len(names) == 6 and named(**first) == named(**first)
    config = {k: None for k in ("baseline", "text_split", "missing_rule")}
    config.update(kind=kind, benchmark=None, protocol="intra-pair", cache="c__1", encoder=None, aggregate="max",
                  ties="expected", **first)
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]
    assert named(**first).endswith(f"__{digest}.json")

def test_each_committed_record_has_the_name_its_content_gives():
    """The records under figures/results are named as write_record names them now, so a rerun of a notebook
    rewrites each in place rather than leaving a second copy under an old name."""
    committed = sorted((ROOT / "figures" / "results").glob("*.json"))
    assert len(committed) > 30
    assert [p.name for p in committed if records.record_name(json.loads(p.read_text())) != p.name] == []


def test_collect_records_round_trips_every_field(tmp_path):
    rows = [records.make_record(baseline("intra-pair", "random-ranking"), kind="baseline", source="random",
                                baseline="random-ranking", bootstrap=0, seed=0),
            records.make_record(kind="description cache", source="m", protocol="inter-pair", note="not scored")]
    for r in rows:
        records.write_record(r, tmp_path / "results")
    frame = records.collect_records(tmp_path / "results", tmp_path / "results.csv")
    assert list(frame.columns) == list(records.RECORD_FIELDS) and len(frame) == 2
    by_kind = frame.set_index("kind")
    assert by_kind.loc["baseline", "value"] == 51.2 and np.isnan(by_kind.loc["description cache", "value"])
    assert json.loads(by_kind.loc["baseline", "per_class"])["turn"] == pytest.approx(51.07)
    assert (tmp_path / "results.csv").read_text().splitlines()[0] == ",".join(records.RECORD_FIELDS)
    assert len(records.collect_records(tmp_path / "nothing-here")) == 0
    (tmp_path / "results" / "other.json").write_text('{"a": 1}')
    with pytest.raises(ValueError, match="other.json: not a result record"):
        records.collect_records(tmp_path / "results")


def test_counts_are_written_as_integers_beside_empty_cells(tmp_path):
    """A record without a count (a protocol not scored, no bootstrap seed) leaves the others' counts whole in the CSV."""
    records.write_record(records.make_record(kind="baseline", source="a", protocol="p", value=50.0, n_queries=30,
                                             bootstrap=0, seed=0), tmp_path / "r")
    records.write_record(records.make_record(kind="baseline", source="b", protocol="q", note="not scored",
                                             bootstrap=0), tmp_path / "r")
    frame = records.collect_records(tmp_path / "r", tmp_path / "results.csv")
    lines = (tmp_path / "results.csv").read_text().splitlines()
    assert lines[1].startswith("baseline,a,,p,,50.0,,,30,,,,,,,,,0,0,") and lines[2].startswith("baseline,b,,q,,,,,,,,,,,,,,0,,")
    assert np.isnan(frame["n_queries"][1]) and frame["n_queries"][0] == 30  # the frame itself is as before


def test_format_cell():
    assert records.format_cell(38.25, 36.04, 40.51) == "38.2 [36.0, 40.5]"  # round half to even, as format does
    assert records.format_cell(38.25) == "38.2" and records.format_cell(38.3, np.nan, np.nan) == "38.3"
    assert records.format_cell(None) == records.format_cell(float("nan")) == "not computed here"
    assert records.format_cell(np.nan, missing="-") == "-" and records.format_cell(3.456, digits=2) == "3.46"


def test_sova_evaluate_writes_its_record(tmp_path, capsys):
    assert main(["sovabench", "evaluate", "--protocol", "inter-pair-constrained", "--baseline", "random-ranking",
                 "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("*.json")
    record = json.loads(path.read_text())
    assert record["value"] == 24.06 and record["baseline"] == "random-ranking" and record["benchmark"] == "SOVABench"
    assert f"wrote {path}" in capsys.readouterr().err
