"""``sova muvr synthetic`` and ``sova vantage synthetic``: a dry run's data from one command, which describe and
evaluate then read with their defaults (MUVR's ``--partitions``: what the root holds)."""
import json

import pytest

from sova_lib.benchmarks import muvr
from sova_lib.cli import main
from sova_lib.video.frames import example_videos


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _video_names(root, partition):
    records = json.loads((root / "annotations" / "retrieval" / partition / "videos.json").read_text())
    return [r["frames_path"].rsplit("/", 1)[-1] for r in records]


def test_muvr_synthetic_writes_data_and_videos_that_describe_and_evaluate_read(capsys, tmp_path):
    root = tmp_path / "muvr"
    code, out, _ = _run(capsys, "muvr", "synthetic", "--out", root, "--partitions", "news", "dance")
    assert code == 0
    assert out.splitlines() == [
        f"synthetic MUVR data: {root} (2 partitions; made up, no result)",
        f"stand-in videos: {root / 'videos'} (32 links to the package's street excerpts)",
        f"next: sova muvr describe --data {root} --video-root {root / 'videos'} --backend motion --cache-dir CACHE"]
    assert muvr.partitions_present(root) == ("news", "dance") == muvr.partitions_present(root, qa=True)
    names = _video_names(root, "news") + _video_names(root, "dance")
    assert len(names) == 32 == len(set(names))  # 2 topics x (5 videos + 2 queries) + 2 distractors, per partition
    streets = set(example_videos())
    assert sorted(p.name for p in (root / "videos").iterdir()) == sorted(f"{n}.mp4" for n in names)
    assert {(root / "videos" / f"{n}.mp4").resolve() for n in names} == {p.resolve() for p in streets}

    # describe with the default --partitions: every gallery video and query of both partitions, nothing else
    code, out, _ = _run(capsys, "muvr", "describe", "--data", root, "--video-root", root / "videos", "--backend",
                        "motion", "--cache-dir", tmp_path / "cache", "--no-progress")
    loaded = [muvr.load_partition(root, p) for p in ("news", "dance")]
    expected = {v for p in loaded for v in p.gallery} | {q.id for p in loaded for q in p.queries}
    assert code == 0 and f"described {len(expected)}, skipped 0" in out
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    ids = {json.loads(line)["id"].split("@")[0] for line in (folder / "descriptions.jsonl").read_text().splitlines()}
    assert ids == expected

    code, out, _ = _run(capsys, "muvr", "evaluate", "--data", root, "--baseline", "random-ranking", "--bootstrap", 0,
                        "--json")
    assert code == 0 and list(json.loads(out)["per_partition"]) == ["news", "dance"]


def test_muvr_synthetic_same_seed_same_files(tmp_path):
    one, two = muvr.write_dry_run(tmp_path / "one"), muvr.write_dry_run(tmp_path / "two")
    assert one["partitions"] == 5 and one["video_files"] == two["video_files"] == 80
    files = sorted(p.relative_to(one["data"]) for p in one["data"].rglob("*") if p.is_file() and "videos" not in p.parts)
    assert len(files) > 5 * 6
    assert all((one["data"] / f).read_bytes() == (two["data"] / f).read_bytes() for f in files)


def test_partitions_present_reads_aliases_and_refuses_an_empty_root(tmp_path):
    (tmp_path / "annotations" / "retrieval" / "geng").mkdir(parents=True)
    (tmp_path / "annotations" / "retrieval" / "dance").mkdir()
    assert muvr.partitions_present(tmp_path) == ("others", "dance")
    with pytest.raises(muvr.MuvrDataError, match=r"QA/annotations: holds no partition of news, others"):
        muvr.partitions_present(tmp_path, qa=True)


def test_vantage_synthetic_writes_the_four_tasks_that_describe_scores(capsys, tmp_path):
    root = tmp_path / "street"
    code, out, _ = _run(capsys, "vantage", "synthetic", "--out", root)
    assert code == 0
    lines = out.splitlines()
    tsv = root / "datasets" / "VANTAGE_VQA" / "VANTAGE_VQA.tsv"
    assert lines[0] == (f"vqa: {tsv} (6 items; videos in {tsv.parent / 'videos'}; answer key {root / 'vqa_gt.jsonl'})")
    assert [line.split(":")[0] for line in lines] == ["vqa", "event_verification", "temporal", "dvc", "next"]
    # three clips: two questions each for vqa and event verification, one item each for temporal and dvc
    counts = {task: len((root / f"{task}_gt.jsonl").read_text().splitlines())
              for task in ("vqa", "event_verification", "temporal", "dvc")}
    assert counts == {"vqa": 6, "event_verification": 6, "temporal": 3, "dvc": 3}
    assert sorted(p.name for p in (tsv.parent / "videos").iterdir()) == sorted(p.name for p in example_videos())
    code, out, _ = _run(capsys, "vantage", "describe", "--task", "vqa", "--items", tsv, "--media-root",
                        tsv.parent / "videos", "--ground-truth", root / "vqa_gt.jsonl", "--backend", "motion",
                        "--cache-dir", tmp_path / "cache", "--no-progress", "--bootstrap", 0)
    assert code == 0 and "described 6, skipped 0" in out and "parsed 6/6" in out
