"""``sova vantage``: describe -> submission, score a submission, bad input exits 2 with one line."""
import json

import huggingface_hub.constants
import pytest

from sova_lib.benchmarks.vantage.synthetic import write_street_benchmark
from sova_lib.cli import main
from sova_lib.describe import contract
from sova_lib.video.frames import example_videos, probe


@pytest.fixture
def street(tmp_path, monkeypatch):
    monkeypatch.setitem(contract.DESCRIBERS, "stand-in", "sova_lib.benchmarks.vantage.synthetic:RuleBasedStandIn")
    videos = example_videos()[:1]
    tsvs = write_street_benchmark(tmp_path / "bench", videos, [probe(videos[0]).num_frames / 10.0])
    return tmp_path, tsvs, videos[0].parent


def test_describe_submit_and_score(street, capsys):
    tmp, tsvs, root = street
    base = ["vantage", "describe", "--task", "event_verification", "--items", str(tsvs["event_verification"]),
            "--media-root", str(root), "--backend", "stand-in", "--cache-dir", str(tmp / "cache"), "--no-progress"]
    assert main([*base, "--submission", str(tmp / "sub.jsonl")]) == 0
    lines = [json.loads(x) for x in (tmp / "sub.jsonl").read_text().splitlines()]
    # Leaderboard ids of TSV rows 0 and 1 of the clip vtest_lawn_0600-0659.mp4 (id_rules.py: <stem>__ev_<index:06d>).
    assert [x["id"] for x in lines] == ["vtest_lawn_0600-0659__ev_000000", "vtest_lawn_0600-0659__ev_000001"]
    assert lines[0]["task"] == "event_verification"
    capsys.readouterr()
    gt = str(tmp / "bench" / "event_verification_gt.jsonl")
    assert main(["vantage", "score", "--task", "event_verification", "--ground-truth", gt, "--submission",
                 str(tmp / "sub.jsonl"), "--bootstrap", "100", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mode"] == "parity" and result["parse_rate"] == 1.0 and result["n_resamples"] == 100
    assert main([*base, "--ground-truth", gt, "--mode", "strict", "--bootstrap", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["value"] == result["value"]


def test_bad_input_exits_2_with_one_line(street, capsys):
    tmp, tsvs, root = street
    bad = tmp / "bad.jsonl"
    bad.write_text('{"id": 1, "task": "vqa"}\n')
    good = tmp / "good.jsonl"
    good.write_text(json.dumps({"id": "00", "task": "vqa", "conversations": [{"from": "assistant", "value": "A"}],
                                "metadata": {"model": "m"}}) + "\n")
    gt = str(tmp / "bench" / "vqa_gt.jsonl")
    runs = [
        (["vantage", "score", "--task", "vqa", "--ground-truth", gt, "--submission", str(bad)],
         f"{bad}, line 1, field 'conversations'"),
        (["vantage", "score", "--task", "dvc", "--ground-truth", str(tmp / "bench" / "dvc_gt.jsonl"), "--submission",
          str(good)], "holds task 'vqa'"),
        (["vantage", "submit", "--task", "vqa", "--items", str(tmp / "none.tsv"), "--answers", str(tmp),
          "--model", "m", "--out", str(tmp / "o.jsonl")], "no such file or folder"),
        (["vantage", "score", "--task", "vqa", "--ground-truth", str(tsvs["vqa"]), "--submission", str(bad)],
         "line 1"),
    ]
    for argv, text in runs:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("sova: error: ") and text in err, err


def test_dvc_without_bertscore_weights_says_what_to_download(street, capsys, monkeypatch):
    tmp, tsvs, root = street
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp / "empty-hf"))
    sub = tmp / "dvc.jsonl"
    sub.write_text(json.dumps({"id": "vtest_lawn_0600-0659__dvc_000000", "task": "dense_video_captioning",
                               "conversations": [{"from": "assistant", "value": "[]"}],
                               "metadata": {"model": "m", "box_coord_order": "xyxy", "extra": {}}}) + "\n")
    argv = ["vantage", "score", "--task", "dvc", "--ground-truth", str(tmp / "bench" / "dvc_gt.jsonl"),
            "--submission", str(sub)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "FacebookAI/roberta-large" in err
    assert main([*argv, "--similarity", "token-f1", "--bootstrap", "0"]) == 0
