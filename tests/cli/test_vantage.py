"""``sova vantage``: describe -> submission, score a submission, bad input exits 2 with one line."""
import json

import huggingface_hub.constants
import pytest

from sova_lib.benchmarks.vantage.synthetic import RuleBasedStandIn, write_street_benchmark
from sova_lib.cli import main
from sova_lib.describe import contract
from sova_lib.records import fingerprint_label
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
    assert main([*base, "--out", str(tmp / "sub.jsonl")]) == 0
    lines = [json.loads(x) for x in (tmp / "sub.jsonl").read_text().splitlines()]
    # Leaderboard ids of TSV rows 0 and 1 of the clip vtest_lawn_0600-0659.mp4 (id_rules.py: <stem>__ev_<index:06d>).
    assert [x["id"] for x in lines] == ["vtest_lawn_0600-0659__ev_000000", "vtest_lawn_0600-0659__ev_000001"]
    assert lines[0]["task"] == "event_verification"
    capsys.readouterr()
    gt = str(tmp / "bench" / "event_verification_gt.jsonl")
    assert main(["vantage", "evaluate", "--task", "event_verification", "--ground-truth", gt, "--submission",
                 str(tmp / "sub.jsonl"), "--bootstrap", "100", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mode"] == "official" and result["parse_rate"] == 1.0 and result["n_resamples"] == 100
    assert main([*base, "--ground-truth", gt, "--scoring", "strict", "--bootstrap", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["value"] == result["value"]


def test_bad_input_exits_2_with_one_line(street, capsys):
    tmp, tsvs, root = street
    bad = tmp / "bad.jsonl"
    bad.write_text('{"id": 1, "task": "video_qa"}\n')
    good = tmp / "good.jsonl"
    good.write_text(json.dumps({"id": "00", "task": "video_qa", "conversations": [{"from": "assistant", "value": "A"}],
                                "metadata": {"model": "m"}}) + "\n")
    gt = str(tmp / "bench" / "vqa_gt.jsonl")
    runs = [
        (["vantage", "evaluate", "--task", "vqa", "--ground-truth", gt, "--submission", str(bad)],
         f"{bad}, line 1, field 'conversations'"),
        (["vantage", "evaluate", "--task", "dvc", "--ground-truth", str(tmp / "bench" / "dvc_gt.jsonl"), "--submission",
          str(good)], "holds task 'video_qa'"),
        (["vantage", "submit", "--task", "vqa", "--items", str(tmp / "none.tsv"), "--answers", str(tmp),
          "--model", "m", "--out", str(tmp / "o.jsonl")], "no such file or folder"),
        (["vantage", "evaluate", "--task", "vqa", "--ground-truth", str(tsvs["vqa"]), "--submission", str(bad)],
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
    argv = ["vantage", "evaluate", "--task", "dvc", "--ground-truth", str(tmp / "bench" / "dvc_gt.jsonl"),
            "--submission", str(sub)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "FacebookAI/roberta-large" in err
    assert main([*argv, "--similarity", "token-f1", "--bootstrap", "0"]) == 0


def _emitted(path, task_string, answers, model, extra=None):
    """A submission as the harness's emitter writes it (emit.py lines 227-240; io.py write_jsonl), with ``extra``
    as its ``metadata.extra`` (the emitter's: empty)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for rid, text in answers.items():
            f.write(json.dumps({"id": rid, "task": task_string,
                                "conversations": [{"from": "assistant", "value": str(text)}],
                                "metadata": {"model": model, "box_coord_order": "xyxy", "extra": extra or {}}},
                               ensure_ascii=False) + "\n")
    return path


def test_submit_validate_and_score_the_harness_files(street, capsys):
    tmp, tsvs, root = street
    items = ["--items", str(tsvs["vqa"])]
    assert main(["vantage", "describe", "--task", "video_qa", *items, "--media-root", str(root), "--backend",
                 "stand-in", "--cache-dir", str(tmp / "cache"), "--no-progress", "--ground-truth",
                 str(tmp / "bench" / "vqa_gt.jsonl"), "--bootstrap", "0", "--json"]) == 0
    described = json.loads(capsys.readouterr().out.splitlines()[-1])
    folder = next((tmp / "cache" / "descriptions").iterdir())
    sub = tmp / "vqa.jsonl"
    assert main(["vantage", "submit", "--task", "vqa", *items, "--answers", str(folder), "--model", "M",
                 "--out", str(sub)]) == 0
    assert "valid" in capsys.readouterr().out
    records = [json.loads(x) for x in sub.read_text(encoding="utf-8").splitlines()]
    answers = {r["id"]: r["conversations"][0]["value"] for r in records}
    assert list(answers) == ["vtest_lawn_0600-0659__q_000000", "vtest_lawn_0600-0659__q_000001"]
    # the same bytes as the emitter's, the route in metadata.extra
    assert sub.read_bytes() == _emitted(tmp / "ours.jsonl", "video_qa", answers, "M",
                                        {"prompts": "library-prompts"}).read_bytes()
    theirs = _emitted(tmp / "theirs.jsonl", "video_qa", answers, "M")
    gt = ["--ground-truth", str(tmp / "bench" / "vqa_gt.jsonl")]
    assert main(["vantage", "validate", str(sub), "--task", "vqa", *gt]) == 0
    assert capsys.readouterr().out == f"{sub}: valid video_qa submission (2 records, each of the 2 expected ids once)\n"
    assert main(["vantage", "validate", str(theirs), "--task", "video_qa", *items]) == 0
    scores = []
    for path in (sub, theirs):
        capsys.readouterr()
        assert main(["vantage", "evaluate", "--task", "video_qa", *gt, "--submission", str(path), "--bootstrap", "0",
                     "--json"]) == 0
        out = capsys.readouterr()
        assert out.err == ""
        scores.append(json.loads(out.out))
    assert scores[0] == scores[1] and scores[0]["value"] == described["value"] and scores[0]["parse_rate"] == 1.0
    # ids that are the TSV's index, not the leaderboard's: no answer matches, one error line naming an id of each
    old = tmp / "old.jsonl"
    old.write_text("".join(json.dumps({"id": str(k), "task": "video_qa", "conversations": [{"from": "assistant",
                                       "value": v}], "metadata": {"model": "M"}}) + "\n"
                           for k, v in enumerate(answers.values())))
    assert main(["vantage", "evaluate", "--task", "vqa", *gt, "--submission", str(old)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["sova: error: none of the 2 answer ids is a ground-truth id (answer id '0', ground-truth id "
                   "'vtest_lawn_0600-0659__q_000000')"]


def test_invalid_submissions_exit_2_with_one_line_per_problem(street, capsys):
    tmp, tsvs, root = street
    bad = tmp / "bad.jsonl"
    bad.write_text(json.dumps({"id": "0", "task": "vqa", "conversations": [{"from": "assistant", "value": "A"}],
                               "metadata": {"model": "m"}}) + "\n")
    assert main(["vantage", "validate", str(bad), "--task", "vqa", "--items", str(tsvs["vqa"])]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{bad}, line 1, id 0: task 'vqa'; the leaderboard needs 'video_qa'",
        rf"{bad}, line 1, id 0: id does not have the video_qa shape ^.+__q_\d{{6}}$",
        f"{bad}, id vtest_lawn_0600-0659__q_000000: no record for this ground-truth id",
        f"{bad}, id vtest_lawn_0600-0659__q_000001: no record for this ground-truth id",
        f"{bad}, line 1, id 0: not an id of the ground truth",
        f"sova: error: {bad} is not a valid VANTAGE-Bench submission (5 problems; first: {err[0]})",
    ]
    # describe writes a submission and checks it: an item whose video is missing has no answer, so it is refused.
    tsv = tmp / "vqa_plus.tsv"
    tsv.write_text(tsvs["vqa"].read_text() + '9\tabsent.mp4\tWhat?\t["A. x", "B. y"]\n')
    assert main(["vantage", "describe", "--task", "vqa", "--items", str(tsv), "--media-root", str(root),
                 "--backend", "stand-in", "--cache-dir", str(tmp / "c2"), "--no-progress", "--out",
                 str(tmp / "s.jsonl")]) == 2
    err = capsys.readouterr().err.splitlines()  # one problem: the error line says it, once
    assert err[-1] == (f"sova: error: {tmp / 's.jsonl'} is not a valid VANTAGE-Bench submission (1 problem; first: "
                       f"{tmp / 's.jsonl'}, id absent__q_000009: no record for this ground-truth id)")
    assert sum("id absent__q_000009" in line for line in err) == 1


def test_cached_answers_are_scored_with_the_plan_that_made_them(street, capsys):
    """A cache made with --frames 4 is scored without --frames (the manifest gives the plan); a contradicting
    option is refused in one line; answers that match no item are refused with exit 1 and no record."""
    tmp, tsvs, root = street
    assert main(["vantage", "describe", "--task", "vqa", "--items", str(tsvs["vqa"]), "--media-root", str(root),
                 "--backend", "stand-in", "--cache-dir", str(tmp / "cache"), "--no-progress", "--frames", "4",
                 "--out", str(tmp / "described.jsonl")]) == 0
    (folder,) = (tmp / "cache" / "descriptions").iterdir()
    capsys.readouterr()
    gt = str(tmp / "bench" / "vqa_gt.jsonl")
    base = ["vantage", "evaluate", "--task", "vqa", "--ground-truth", gt, "--answers", str(folder), "--items",
            str(tsvs["vqa"]), "--bootstrap", "0"]
    assert main([*base, "--json", "--out", str(tmp / "results")]) == 0
    out, err = capsys.readouterr()
    plan = json.loads(out)
    assert plan["parse_rate"] == 1.0 and "no answer" not in err
    assert main(["vantage", "evaluate", "--task", "vqa", "--ground-truth", gt, "--submission",
                 str(tmp / "described.jsonl"), "--bootstrap", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == plan["value"]  # the answers describe wrote
    assert main([*base, "--frames", "4", "--json"]) == 0 and json.loads(capsys.readouterr().out) == plan
    from sova_lib.benchmarks.vantage import read_items

    prompts = tmp / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"id": str(it.id), "messages": [{"role": "user", "content": "Which?"}]})
                               + "\n" for it in read_items("vqa", tsvs["vqa"])))
    for extra, text in [(["--frames", "8"], "--frames 8 contradicts the run's plan of 4 frames per video"),
                        (["--prompts", str(prompts)], "the answers were asked with the library's prompts")]:
        code = main([*base, *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and err.startswith("sova: error: ") and text in err, err
    assert main(["vantage", "submit", "--task", "vqa", "--items", str(tsvs["vqa"]), "--answers", str(folder),
                 "--model", "m", "--out", str(tmp / "sub.jsonl")]) == 0
    assert (tmp / "sub.jsonl").read_text() == (tmp / "described.jsonl").read_text().replace('"stand-in"', '"m"')
    # the same cache asked for other questions: no answer matches, nothing is scored or written
    capsys.readouterr()
    other = tmp / "other.tsv"
    other.write_text(tsvs["vqa"].read_text().replace("What moves", "What stays").replace("Where is", "Where was"))
    records = sorted((tmp / "results").iterdir())
    code = main([*base[:-4], "--items", str(other), "--bootstrap", "0", "--out", str(tmp / "results")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "none of the" in err and "has an answer there" in err, err
    assert sorted((tmp / "results").iterdir()) == records
    code = main(["vantage", "submit", "--task", "vqa", "--items", str(other), "--answers", str(folder), "--model",
                 "m", "--out", str(tmp / "none.jsonl")])
    assert code == 1 and capsys.readouterr().err.count("\n") == 1 and not (tmp / "none.jsonl").exists()


class _Checkpoint(RuleBasedStandIn):
    """The stand-in answering as the model ``me/vlm``, whose weights are named by ``digest``."""

    digest = ""

    def config(self) -> dict:
        return {"model": "me/vlm", "threshold": self.threshold}

    def fingerprint(self) -> dict:
        return {"method": "folder-digest", "sha256": self.digest}


class FirstCheckpoint(_Checkpoint):
    digest = "a" * 64


class SecondCheckpoint(_Checkpoint):
    digest = "b" * 64


def test_two_checkpoints_answers_are_two_records_and_two_rows(street, capsys, monkeypatch):
    """Two checkpoints of one model (caches whose manifests name other weights), each evaluated twice with --out
    into one folder: two records, each naming its fingerprint, and two rows of sova results labelled apart. Their
    submissions, written to one path in turn, keep the fingerprint and give two records too."""
    tmp, tsvs, root = street
    gt = ["--ground-truth", str(tmp / "bench" / "vqa_gt.jsonl"), "--bootstrap", "0"]
    extra = []
    for name in ("FirstCheckpoint", "SecondCheckpoint"):
        monkeypatch.setitem(contract.DESCRIBERS, "me", f"{__name__}:{name}")
        assert main(["vantage", "describe", "--task", "vqa", "--items", str(tsvs["vqa"]), "--media-root", str(root),
                     "--backend", "me", "--cache-dir", str(tmp / "cache"), "--no-progress",
                     "--out", str(tmp / "vqa.jsonl")]) == 0
        extra += [json.loads(line)["metadata"]["extra"] for line in (tmp / "vqa.jsonl").read_text().splitlines()]
        assert main(["vantage", "evaluate", "--task", "vqa", *gt, "--submission", str(tmp / "vqa.jsonl"),
                     "--out", str(tmp / "submitted")]) == 0
    assert [e["fingerprint"]["sha256"][0] for e in extra] == ["a", "a", "b", "b"]  # metadata.extra, beside the route
    assert all(e["prompts"] == "library-prompts" for e in extra)
    submitted = [json.loads(p.read_text()) for p in sorted((tmp / "submitted").iterdir())]
    assert sorted((r["kind"], r["model"], r["fingerprint"]["sha256"][0], r["cache"]) for r in submitted) == \
        [("submission", "me", "a", f"{tmp.name}-vqa"), ("submission", "me", "b", f"{tmp.name}-vqa")]
    folders = sorted((tmp / "cache" / "descriptions").iterdir())
    digests = [json.loads((f / "manifest.json").read_text())["fingerprint"]["sha256"][0] for f in folders]
    assert sorted(digests) == ["a", "b"]
    for folder in [*folders, *folders]:  # the same cache twice: its record is rewritten
        assert main(["vantage", "evaluate", "--task", "vqa", *gt, "--answers", str(folder), "--items",
                     str(tsvs["vqa"]), "--out", str(tmp / "results")]) == 0
    written = [json.loads(p.read_text()) for p in sorted((tmp / "results").iterdir())]
    assert len(written) == 2
    assert sorted((r["model"], r["fingerprint"]["sha256"][0], r["cache"]) for r in written) == \
        sorted(("me/vlm", d, f.name) for d, f in zip(digests, folders))
    capsys.readouterr()
    assert main(["results", str(tmp / "results"), "--out", str(tmp / "results.csv")]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    short = {d: fingerprint_label({"method": "folder-digest", "sha256": d * 64}) for d in "ab"}
    value = f"{written[0]['value']:.2f}"
    assert sorted(rows) == sorted(f"| me/vlm @{short[d]} | vantage-vqa | VANTAGE-Bench | video_qa (official) | "
                                  f"accuracy | {value} | {f.name} |" for d, f in zip(digests, folders))
