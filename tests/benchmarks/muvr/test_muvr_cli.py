"""``sova muvr evaluate`` and ``sova muvr describe``: results, result JSON, bad input."""
import hashlib
import json
import shutil

import numpy as np
import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.muvr import framework, qa, retrieval
from sova_lib.benchmarks.muvr.features import write_vectors_npz
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL
from sova_lib.cli import main
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine
from sova_lib.records import collect_records, fingerprint_label, record_label
from sova_lib.similarity import ItemVectors
from tests.benchmarks.muvr import fixtures
from tests.benchmarks.muvr.fixtures import synthetic
from tests.benchmarks.muvr.test_muvr_qa_framework import FakeDescriber, HashEncoder


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic(tmp_path_factory.mktemp("cli"), 1, partitions=("news", "dance"),
                                topics=2, videos_per_topic=5, distractors=2)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_features_writes_one_result_json(capsys, data, tmp_path):
    features = data / "features" / "VLMs_1_15" / SYNTHETIC_MODEL
    code, out, err = _run(capsys, "muvr", "evaluate", "--data", data, "--partitions", "news", "dance",
                          "--features", features, "--query", "video", "--out", tmp_path, "--json")
    assert code == 0
    result = json.loads(out)
    direct = retrieval.evaluate_vectors([muvr.load_partition(data, p) for p in ("news", "dance")],
                           muvr.released_vectors(features, query="video"), query="video")
    assert result["metrics"]["mAP"] == pytest.approx(direct.metrics["mAP"])
    assert result["ties"] == "expected" and result["query"] == "video"
    (written,) = tmp_path.glob("*.json")
    record = json.loads(written.read_text())
    assert str(written) in err and record["benchmark"] == "MUVR" and record["protocol"] == "base video"
    assert record["value"] == round(result["metrics"]["mAP"], 2) and record["ties"] == "expected"
    assert record["per_class"] == {p: round(v["mAP"], 2) for p, v in result["per_partition"].items()}
    assert collect_records(tmp_path)["value"].tolist() == [record["value"]]
    code, out, err = _run(capsys, "muvr", "evaluate", "--data", data, "--partitions", "news",
                        "--version", "filter", "--tag-weight", "0", "--features", features, "--ties", "gallery-order",
                        "--out", tmp_path, "--json")
    assert code == 0 and json.loads(out)["tag_weight"] == 0 and "uAP" not in json.loads(out)["metrics"]
    assert json.loads(out)["ties"] == "gallery-order"
    assert sorted(collect_records(tmp_path)["protocol"]) == ["base video", "filter text+video p=0"]


def test_evaluate_qa_answers(capsys, data, tmp_path):
    questions = qa.load_qa(data, ["news"])
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": q.id, "text": "Yes"}) + "\n" for q in questions))
    code, out, _ = _run(capsys, "muvr", "evaluate", "--data", data, "--partitions", "news",
                        "--version", "qa", "--answers", answers, "--out", tmp_path, "--json")
    result = json.loads(out)
    assert code == 0 and result["accuracy"]["all"] == 50.0 and result["reranking_score"]["all"] == 0.0
    record = collect_records(tmp_path).iloc[0]
    assert record["metric"] == "accuracy" and record["value"] == 50.0 and "reranking score all +0.00" in record["note"]


@pytest.mark.parametrize("argv, message", [
    (["--features", "nowhere"], "the following arguments are required: --data"),
    (["--data", "{data}", "--features", "{data}/nowhere"], "nowhere/news: no such folder"),
    (["--data", "{data}", "--baseline", "prevalence"], "argument --baseline: invalid choice: 'prevalence'"),
    (["--data", "{data}", "--ties", "stable", "--baseline", "random-ranking"], "argument --ties: invalid choice: 'stable'"),
    (["--data", "{data}"], "one of the arguments --descriptions --embeddings --baseline --features --answers is required"),
    (["--data", "{data}", "--version", "qa", "--features", "{data}"], "--version qa needs --answers"),
    (["--data", "{data}", "--partitions", "sports", "--baseline", "random-ranking"], "unknown MUVR partition"),
    (["--data", "{data}", "--embeddings", "{data}/none.npz"], "none.npz: file not found"),
])
def test_bad_input_exits_2_with_one_line(capsys, data, tmp_path, argv, message):
    argv = [a.replace("{data}", str(data)) for a in argv]
    if "--partitions" not in argv:
        argv += ["--partitions", "news", "dance"]
    code, out, err = _run(capsys, "muvr", "evaluate", "--out", tmp_path, *argv)
    assert code == 2 and out == ""
    assert err.startswith("sova: error: ") and err.count("\n") == 1 and message in err


def test_sovabench_evaluate_keeps_its_contract(capsys):
    assert main(["sovabench", "evaluate", "--baseline", "random-ranking"]) == 2
    assert "required: --protocol" in capsys.readouterr().err
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair", "--baseline", "random-ranking", "--ties",
                        "official")
    assert code == 2 and "argument --ties: invalid choice: 'official'" in err


def test_describe_muvr_needs_data(capsys, tmp_path):
    code, _, err = _run(capsys, "muvr", "describe", "--backend", "motion", "--cache-dir", tmp_path)
    assert code == 2 and "the following arguments are required: --data, --video-root" in err


def test_describe_muvr_qa_through_the_command(capsys, data, tmp_path, monkeypatch):
    from PIL import Image

    from sova_lib.describe.contract import DESCRIBERS

    monkeypatch.setitem(DESCRIBERS, "fake-muvr", "tests.benchmarks.muvr.test_muvr_qa_framework:FakeDescriber")
    questions = qa.load_qa(data, ["news"])
    for vid in {q.query for q in questions} | {q.target for q in questions}:
        (tmp_path / "v" / vid).mkdir(parents=True)
        Image.fromarray(np.full((4, 4, 3), 200, np.uint8)).save(tmp_path / "v" / vid / "0000.png")
    code, _, _ = _run(capsys, "muvr", "describe", "--version", "qa", "--data", data, "--partitions",
                      "news", "--video-root", tmp_path / "v", "--backend", "fake-muvr", "--cache-dir", tmp_path / "c",
                      "--no-progress")
    assert code == 0
    (folder,) = (tmp_path / "c" / "descriptions").iterdir()
    code, out, _ = _run(capsys, "muvr", "evaluate", "--data", data, "--partitions", "news",
                        "--version", "qa", "--answers", folder, "--json")
    assert code == 0 and json.loads(out)["accuracy"]["all"] == 50.0  # every target bright: always Yes
    code, _, err = _run(capsys, "muvr", "describe", "--data", data, "--partitions", "news",
                        "--video-root", tmp_path / "v", "--backend", "fake-muvr", "--cache-dir", tmp_path / "c")
    assert code == 1  # no --prompt: the general preset, as its help says; frame folders cannot be windowed
    windows = [f for f in (tmp_path / "c" / "descriptions").iterdir() if f != folder]
    assert [json.loads((f / "manifest.json").read_text())["prompt"]["name"] for f in windows] == ["general"]


class _Checkpoint(FakeDescriber):
    """The fake QA describer as the model ``me/vlm``, whose weights are named by ``digest``."""

    digest = ""

    def config(self):
        return {"model": "me/vlm"}

    def fingerprint(self):
        return {"method": "folder-digest", "sha256": self.digest}


class FirstCheckpoint(_Checkpoint):
    digest = "a" * 64


class SecondCheckpoint(_Checkpoint):
    digest = "b" * 64


def test_two_checkpoints_qa_answers_are_two_records_and_two_rows(capsys, data, tmp_path, monkeypatch):
    """Two checkpoints of one model (QA caches whose manifests name other weights), each evaluated twice with
    --out into one folder: two records naming their fingerprints, and two rows of sova results labelled apart."""
    from PIL import Image

    from sova_lib.describe.contract import DESCRIBERS

    for q in qa.load_qa(data, ["news"]):
        for vid in (q.query, q.target):
            (tmp_path / "v" / vid).mkdir(parents=True, exist_ok=True)
            Image.fromarray(np.full((4, 4, 3), 200, np.uint8)).save(tmp_path / "v" / vid / "0000.png")
    for name in ("FirstCheckpoint", "SecondCheckpoint"):
        monkeypatch.setitem(DESCRIBERS, "me", f"{__name__}:{name}")
        code, _, _ = _run(capsys, "muvr", "describe", "--version", "qa", "--data", data, "--partitions", "news",
                          "--video-root", tmp_path / "v", "--backend", "me", "--cache-dir", tmp_path / "c",
                          "--no-progress")
        assert code == 0
    folders = sorted((tmp_path / "c" / "descriptions").iterdir())
    digests = [json.loads((f / "manifest.json").read_text())["fingerprint"]["sha256"][0] for f in folders]
    assert sorted(digests) == ["a", "b"]
    for folder in [*folders, *folders]:  # the same cache twice: its record is rewritten
        code, _, _ = _run(capsys, "muvr", "evaluate", "--data", data, "--partitions", "news", "--version", "qa",
                          "--answers", folder, "--out", tmp_path / "results")
        assert code == 0
    written = [json.loads(p.read_text()) for p in sorted((tmp_path / "results").iterdir())]
    assert sorted((r["model"], r["fingerprint"]["sha256"][0], r["cache"], r["value"]) for r in written) == \
        sorted(("me/vlm", d, f.name, 50.0) for d, f in zip(digests, folders))  # every target bright: always Yes
    code, out, _ = _run(capsys, "results", tmp_path / "results", "--out", tmp_path / "results.csv")
    short = {d: fingerprint_label({"method": "folder-digest", "sha256": d * 64}) for d in "ab"}
    prompt = written[0]["prompt"]
    assert code == 0 and sorted(out.splitlines()[2:]) == sorted(
        f"| me/vlm @{short[d]} | {prompt} | MUVR | qa (official parse) | accuracy | 50.00 | {f.name} |"
        for d, f in zip(digests, folders))


class NamedHashEncoder(HashEncoder):
    name = "hash-16"


def test_two_checkpoints_described_windows_are_two_records(data, tmp_path):
    """Base retrieval on two checkpoints' described windows, each recorded twice into one folder: two records
    naming their fingerprints, labelled apart in the gathered table."""
    from sova_lib.records import results_table, write_record
    from sova_lib.video import example_videos

    loaded = muvr.load_partition(data, "news")
    ids = sorted({*loaded.gallery, *(q.id for q in loaded.queries)})
    video = example_videos()[0]
    (tmp_path / "v").mkdir()
    for vid in ids:
        (tmp_path / "v" / f"{vid}{video.suffix}").symlink_to(video)

    def loader(item, fps):
        return [np.full((2, 2, 3), 200, np.uint8)] * 6, (), True

    for describer in (FirstCheckpoint(), SecondCheckpoint()):
        framework.describe_windows(describer, ids, tmp_path / "v", tmp_path / "c", prompt="Describe this video.",
                                   engine=LocalEngine(loader), run=RunOptions(show_progress=False, verbose=False))
    folders = sorted((tmp_path / "c" / "descriptions").iterdir())
    for folder in [*folders, *folders]:  # the same cache twice: its record is rewritten
        result = muvr.evaluate_files(data, partitions=["news"], descriptions=folder, encoder=NamedHashEncoder())
        write_record(result.to_record(), tmp_path / "results")
    written = [json.loads(p.read_text()) for p in sorted((tmp_path / "results").iterdir())]
    digests = [json.loads((f / "manifest.json").read_text())["fingerprint"]["sha256"][0] for f in folders]
    assert sorted((r["model"], r["fingerprint"]["sha256"][0], r["cache"]) for r in written) == \
        sorted(("me/vlm", d, f.name) for d, f in zip(digests, folders)) and sorted(digests) == ["a", "b"]
    table = results_table(collect_records(tmp_path / "results"))
    short = {d: fingerprint_label({"method": "folder-digest", "sha256": d * 64}) for d in "ab"}
    assert sorted(table["scored"]) == sorted(f"me/vlm @{short[d]}" for d in "ab")
    assert table["benchmark"].tolist() == ["MUVR"] * 2 and table["protocol"].tolist() == ["base text+video"] * 2


def test_video_names_where_the_released_files_hold_ids_exit_2(capsys, tmp_path):
    ids = fixtures.write_partition(tmp_path, videos=["A", "B", "q1"], queries={"q1": "one"}, positives={"q1": ["A"]})
    code, _, err = _run(capsys, "muvr", "evaluate", "--data", tmp_path, "--partitions", "news",
                        "--baseline", "random-ranking", "--json")
    assert code == 0 and ids == {"A": 100, "B": 101, "q1": 102}
    path = fixtures.annotations_dir(tmp_path) / "query_rel_lists.json"
    path.write_text(json.dumps([{"query_id": 102, "rel_lists": {"pos_all": {"id_list": ["A"]}}}]))
    code, _, err = _run(capsys, "muvr", "evaluate", "--data", tmp_path, "--partitions", "news",
                        "--baseline", "random-ranking")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{path}: [0].rel_lists.pos_all[0]: lists the video name 'A'" in err
    path.write_text(json.dumps([{"query_id": 102, "rel_lists": {"pos_all": {"id_list": [7]}}}]))
    code, _, err = _run(capsys, "muvr", "evaluate", "--data", tmp_path, "--partitions", "news",
                        "--baseline", "random-ranking")
    assert code == 2 and f"{path}: [0].rel_lists.pos_all[0]: id 7 is in no record of videos.json" in err
    code, _, err = _run(capsys, "muvr", "evaluate", "--data", tmp_path, "--partitions", "news",
                        "--baseline", "random-ranking", "--join-listed")
    assert code == 0 and "kept as gallery entries without features" in err


def _folder_digest(folder):
    """The SHA-256 over sorted relative names and each file's own SHA-256: a cross-check of the folder digest."""
    total = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        total.update(str(path.relative_to(folder)).encode())
        total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def test_two_checkpoints_vectors_of_one_name_are_two_records(capsys, data, tmp_path, monkeypatch):
    """ckpt1/ and ckpt2/ each hold a features folder and a v.npz of the same names: scored into one --out folder
    they are two records per input kind, named by content; the same input spelled relatively, absolutely or with a
    trailing slash rewrites its own record."""
    released = data / "features" / "VLMs_1_15" / SYNTHETIC_MODEL
    gallery = muvr.load_partition(data, "news").gallery
    rng = np.random.default_rng(3)
    for ckpt in ("ckpt1", "ckpt2"):
        shutil.copytree(released, tmp_path / ckpt / "feat")
        write_vectors_npz(tmp_path / ckpt / "v.npz", ItemVectors(np.array(gallery), np.arange(len(gallery)),
                                                                  rng.normal(size=(len(gallery), 4))))
    np.save(tmp_path / "ckpt2" / "feat" / "news" / f"{gallery[0]}.npy", rng.normal(size=(2, 32)))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results"
    values = {}
    for flag, name in (("--features", "feat"), ("--embeddings", "v.npz")):
        for ckpt in ("ckpt1", "ckpt2"):
            for spelled in (f"{ckpt}/{name}", tmp_path / ckpt / name, *([f"{ckpt}/{name}/"] if name == "feat" else [])):
                code, printed, err = _run(capsys, "muvr", "evaluate", "--data", data, "--partitions", "news",
                                        flag, spelled, "--query", "video", "--out", out, "--json")
                assert code == 0, err
                values[(name, ckpt)] = round(json.loads(printed)["metrics"]["mAP"], 2)
    assert values[("feat", "ckpt1")] != values[("feat", "ckpt2")]
    assert values[("v.npz", "ckpt1")] != values[("v.npz", "ckpt2")]
    records = {(r["cache"], r["fingerprint"]["sha256"]): (p.name, r)
               for p in out.glob("*.json") for r in [json.loads(p.read_text())]}
    expected = {("feat", _folder_digest(tmp_path / c / "feat")): ("feat", c) for c in ("ckpt1", "ckpt2")}
    expected |= {("v.npz", hashlib.sha256((tmp_path / c / "v.npz").read_bytes()).hexdigest()): ("v.npz", c)
                 for c in ("ckpt1", "ckpt2")}
    assert len(list(out.glob("*.json"))) == 4 and records.keys() == expected.keys()
    for key, (file, record) in records.items():
        method = "folder-digest" if key[0] == "feat" else "file-digest"
        assert record["fingerprint"]["method"] == method and record["value"] == values[expected[key]]
        assert file.startswith(f"{key[0]}__base-video__") and str(tmp_path.name) not in file
        assert record_label(record) == f"{key[0]} @{fingerprint_label(record['fingerprint'])}"
    assert len({record_label(r) for _, r in records.values()}) == 4
