"""``sova_lib.benchmarks.vantage``'s describe, submit, validate and evaluate, as the command and the notebook call
them, on the street footage with the rule-based stand-in describer."""
import pytest

from sova_lib.benchmarks import vantage
from sova_lib.benchmarks.vantage.synthetic import RuleBasedStandIn, write_street_benchmark
from sova_lib.describe.run_cache import RunOptions
from sova_lib.video.frames import example_videos, probe

QUIET = RunOptions(show_progress=False, verbose=False)


@pytest.fixture(scope="module")
def street(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("street")
    videos = example_videos()[:1]
    tsvs = write_street_benchmark(tmp / "bench", videos, [probe(videos[0]).num_frames / 10.0])
    described = vantage.describe(RuleBasedStandIn(), "video_qa", tsvs["vqa"], tmp / "cache",
                                 media_root=videos[0].parent, run=QUIET)
    return tmp, tsvs, described


def test_describe_gives_the_answers_by_leaderboard_id(street):
    tmp, tsvs, described = street
    # TSV rows 0 and 1 of vtest_lawn_0600-0659.mp4 (id_rules.py: <stem>__q_<index:06d>)
    assert list(described.answers) == ["vtest_lawn_0600-0659__q_000000", "vtest_lawn_0600-0659__q_000001"]
    assert [it.id for it in described.items] == ["0", "1"] and described.summary.total_done == 2


def test_submit_validate_and_evaluate_the_same_answers(street):
    tmp, tsvs, described = street
    out, count = vantage.submit("vqa", tsvs["vqa"], described.summary.folder, model="M", out=tmp / "vqa.jsonl")
    assert count == 2 and out.read_text(encoding="utf-8").count("\n") == 2
    assert vantage.validate(out, "vqa", ground_truth=tmp / "bench" / "vqa_gt.jsonl") == ([], 2, 2)
    assert vantage.validate(out, "vqa") == ([], 2, None)
    from_file = vantage.evaluate_answers("vqa", tmp / "bench" / "vqa_gt.jsonl", submission=out)
    given = vantage.evaluate_answers("vqa", tmp / "bench" / "vqa_gt.jsonl", answers=described.answers)
    cached = vantage.evaluate_answers("vqa", tmp / "bench" / "vqa_gt.jsonl", answers=described.summary.folder,
                              items=tsvs["vqa"])
    assert from_file.value == given.value == cached.value and from_file.n_parsed == 2
    record = from_file.to_record()
    assert (record["kind"], record["model"], record["cache"]) == ("submission", "M", f"{tmp.name}-vqa")
    assert cached.to_record()["kind"] == "description cache"
    with pytest.raises(TypeError):  # raw answers given as such: the caller says what they are
        given.to_record()
    assert given.to_record(kind="answers", source="stand-in")["protocol"] == "video_qa (official)"


def test_no_answers_write_no_file_and_a_folder_needs_the_items(street, tmp_path):
    tmp, tsvs, _ = street
    assert vantage.submit("vqa", tsvs["vqa"], {}, model="M", out=tmp_path / "none.jsonl") == (None, 0)
    assert not (tmp_path / "none.jsonl").exists()
    with pytest.raises(ValueError, match="--answers needs --items"):
        vantage.evaluate_answers("vqa", tmp / "bench" / "vqa_gt.jsonl", answers=tmp)
    with pytest.raises(FileNotFoundError, match="no such file or folder; give the task's public items"):
        vantage.submit("vqa", tmp_path / "absent.tsv", {}, model="M", out=tmp_path / "o.jsonl")
