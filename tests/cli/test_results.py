"""``sova results``: two checkpoints' records gathered from two folders read apart, in the CSV and the table."""
import csv
import json

from sova_lib.cli import main
from sova_lib.records import fingerprint_label, make_record, record_label, write_record


def _checkpoint(folder, digest, value):
    """The record of one checkpoint of ``me/vlm``, scored on intra-pair, written into ``folder``."""
    fingerprint = {"method": "folder-digest", "sha256": digest}
    record = make_record(kind="description cache", source="cache/descriptions/x (general, transformers)",
                         benchmark="SOVABench", protocol="intra-pair", metric="Pair-mAP", value=value,
                         model="me/vlm", fingerprint=fingerprint, prompt="general", cache=f"x__{digest[:12]}")
    return write_record(record, folder)


def test_two_checkpoints_are_two_labelled_rows(tmp_path, capsys):
    _checkpoint(tmp_path / "run1", "a" * 64, 55.5)
    _checkpoint(tmp_path / "run2", "b" * 64, 57.25)
    assert main(["results", str(tmp_path / "run1"), str(tmp_path / "run2"), "--out", str(tmp_path / "r.csv")]) == 0
    out, err = capsys.readouterr()
    short = [fingerprint_label({"method": "folder-digest", "sha256": d * 64}) for d in "ab"]
    assert short[0] != short[1] and all(len(s) == 8 for s in short)
    lines = out.splitlines()
    assert lines[0] == "| scored | prompt | benchmark | protocol | metric | value | record |"
    assert lines[2:] == [f"| me/vlm @{short[0]} | general | SOVABench | intra-pair | Pair-mAP | 55.50 | x__aaaaaaaaaaaa |",
                         f"| me/vlm @{short[1]} | general | SOVABench | intra-pair | Pair-mAP | 57.25 | x__bbbbbbbbbbbb |"]
    assert err == f"wrote {tmp_path / 'r.csv'} (2 records from 2 folder(s))\n"
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert [json.loads(r["fingerprint"])["sha256"][0] for r in rows] == ["a", "b"]  # JSON, not a Python repr


def test_a_model_tag_names_the_weights_and_a_baseline_its_source():
    assert fingerprint_label({"method": "tag", "tag": "ckpt-1200"}) == "ckpt-1200"
    assert record_label({"model": "me/vlm", "fingerprint": '{"method": "tag", "tag": "ckpt-1200"}'}) == "me/vlm @ckpt-1200"
    assert record_label({"kind": "baseline", "source": "random-ranking", "model": None}) == "random-ranking"


def test_a_folder_that_is_not_there_is_one_line(tmp_path, capsys):
    assert main(["results", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none" in err
