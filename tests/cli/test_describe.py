"""``sova describe`` and ``sova import``, run in-process with a test-only describer backend."""
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from sova_lib.benchmarks.sovabench.clips.items import clip_path
from sova_lib.benchmarks.sovabench.splits import load_split
from sova_lib.cli import main
from sova_lib.describe import contract as describe
from sova_lib.describe.cache import DescriptionCache
from sova_lib.video.frames import example_videos


class FakeBackend:
    """Says how many frames it saw; takes ``model`` and ``max_new_tokens`` like a real backend."""

    name = "fake-cli"
    max_batch_size, max_concurrency = 2, 2

    def __init__(self, model, max_new_tokens=1024):
        self.model, self.max_new_tokens = model, max_new_tokens

    def config(self):
        return {"model": self.model, "max_new_tokens": self.max_new_tokens}

    def describe(self, requests):
        return [f"{self.model}: {len(r.frames)} frames, {r.prompt}" for r in requests]


class ModelFree(FakeBackend):
    name = "fake-free"

    def __init__(self, model="none"):
        super().__init__(model)


@pytest.fixture(autouse=True)
def fake_backends(monkeypatch):
    monkeypatch.setitem(describe.DESCRIBERS, "fake-cli", f"{__name__}:FakeBackend")
    monkeypatch.setitem(describe.DESCRIBERS, "fake-free", f"{__name__}:ModelFree")


def lines(path):
    return [json.loads(x) for x in Path(path).read_text().splitlines()]


def only_folder(cache):
    (folder,) = (cache / "descriptions").iterdir()
    return folder


def test_describe_a_folder_ids_are_stems(tmp_path):
    videos = tmp_path / "in"
    videos.mkdir()
    for p in example_videos()[:2]:
        shutil.copy(p, videos / p.name)
    Image.new("RGB", (20, 10)).save(videos / "frame.jpg")
    (videos / "notes.txt").write_text("not media")
    rc = main(["describe", "--backend", "fake-cli", "--model", "org/tiny-vlm", "--prompt", "general", "--fps", "1",
               "--cache-dir", str(tmp_path / "cache"), "--videos", str(videos), "--max-new-tokens", "64",
               "--no-progress"])
    assert rc == 0
    folder = only_folder(tmp_path / "cache")
    assert folder.name.startswith("fake-cli-tiny-vlm-general-1fps__")
    texts = {r["id"]: r["text"] for r in lines(folder / "descriptions.jsonl")}
    assert texts == {"frame": "org/tiny-vlm: 1 frames, Describe the image.",
                     "vtest_lawn_0600-0659": "org/tiny-vlm: 7 frames, Describe this video.",
                     "vtest_square_0000-0049_half": "org/tiny-vlm: 6 frames, Describe this video."}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["describer"] == {"model": "org/tiny-vlm", "max_new_tokens": 64}
    assert manifest["crop_source"] == "none"


def test_describe_a_glob_a_busy_folder_and_a_broken_cache(tmp_path, capsys):
    for p in example_videos():
        shutil.copy(p, tmp_path / p.name)
    rc = main(["describe", "--backend", "fake-free", "--prompt", "Which way do people walk?", "--fps", "0.5",
               "--cache-dir", str(tmp_path / "cache"), "--videos", str(tmp_path / "*lawn*.mp4"), "--no-progress"])
    assert rc == 0
    folder = only_folder(tmp_path / "cache")
    assert lines(folder / "descriptions.jsonl") == [
        {"id": "vtest_lawn_0600-0659", "text": "none: 4 frames, Which way do people walk?"}]
    assert folder.name.startswith("fake-free-none-custom-0.5fps__")
    argv = ["describe", "--backend", "fake-free", "--prompt", "Which way do people walk?", "--fps", "0.5",
            "--cache-dir", str(tmp_path / "cache"), "--videos", str(tmp_path / "*lawn*.mp4"), "--no-progress"]
    busy = DescriptionCache(folder).open()
    try:
        assert main(argv) == 1  # a condition of the environment, not a wrong invocation
        (line,) = capsys.readouterr().err.splitlines()
        assert line == f"sova: error: another run is writing to {folder}; wait for it to finish or stop it"
    finally:
        busy.close()
    with open(folder / "descriptions.jsonl", "a") as f:
        f.write('{"id": "x", "te\n{"id": "y", "text": "fine"}\n')
    assert main(argv) == 2
    assert "descriptions.jsonl, line 2: broken record" in capsys.readouterr().err


def test_benchmark_clips_by_index_missing_ones_recorded_and_retried(tmp_path, capsys):
    clips = load_split("interpair_queries")
    root = tmp_path / "clips"
    first, second = clips[0], clips[1]
    tail = Path(second.prefix).name  # e.g. 2018-03-11: a tail of the TSV prefix
    (root / tail).mkdir(parents=True)
    shutil.copy(example_videos()[0], root / f"{first.name}.mp4")
    shutil.copy(example_videos()[1], root / tail / f"{second.name}.mp4")
    argv = ["sovabench", "describe", "--backend", "fake-cli", "--model", "m", "--prompt", "task-aware", "--fps", "1",
            "--cache-dir", str(tmp_path / "cache"), "--protocol",
            "inter-pair-constrained", "--video-root", str(root), "--no-progress"]
    assert main(argv) == 0
    folder = only_folder(tmp_path / "cache")
    assert sorted(r["id"] for r in lines(folder / "descriptions.jsonl")) == sorted([first.index, second.index])
    errors = lines(folder / "errors.jsonl")
    assert len(errors) == len(clips) - 2 == 1421
    assert errors[0]["error"].startswith("FileNotFoundError: no such file:") and errors[0]["error"].endswith(".mp4")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["counts"] == {"done": 2, "failed": 1421} and manifest["crop_source"] == "clip-files"
    assert "failed 1421" in capsys.readouterr().out

    third = clips[2]
    shutil.copy(example_videos()[2], root / f"{third.name}.mp4")
    assert main(argv) == 0  # recorded failures are skipped ...
    assert len(lines(folder / "descriptions.jsonl")) == 2
    assert main(argv + ["--retry-errors"]) == 0  # ... until --retry-errors
    assert sorted(r["id"] for r in lines(folder / "descriptions.jsonl")) == sorted(
        [first.index, second.index, third.index])


def test_clip_path_prefers_the_root_then_tails_of_the_prefix(tmp_path):
    prefix = "mllm_embedding/datasets/MEVA/generated_clips/videos/2018-03-05"
    assert clip_path(tmp_path, "a", prefix) == tmp_path / "a.mp4"  # found nowhere: the first place
    (tmp_path / "videos" / "2018-03-05").mkdir(parents=True)
    (tmp_path / "videos" / "2018-03-05" / "a.mp4").write_bytes(b"x")
    assert clip_path(tmp_path, "a", prefix) == tmp_path / "videos" / "2018-03-05" / "a.mp4"
    (tmp_path / "a.mp4").write_bytes(b"x")
    assert clip_path(tmp_path, "a", prefix) == tmp_path / "a.mp4"


@pytest.mark.parametrize("extra, message", [
    (["--base-url", "http://localhost:8000/v1"], "--base-url does not apply to the fake-cli backend"),
    (["--prompt", "genral"], "unknown prompt preset 'genral'"),
    (["--backend-option", "nonsense"], "is not KEY=VALUE"),
])
def test_usage_errors(tmp_path, capsys, extra, message):
    (tmp_path / "v.png").write_bytes(b"")
    argv = ["describe", "--backend", "fake-cli", "--model", "m", "--prompt", "general", "--cache-dir",
            str(tmp_path / "c"), "--videos", str(tmp_path), *extra]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_more_usage_errors(tmp_path, capsys):
    base = ["describe", "--prompt", "general", "--cache-dir", str(tmp_path / "c")]
    assert main([*base, "--backend", "fake-cli", "--videos", str(tmp_path / "none*.mp4")]) == 2
    assert "the fake-cli backend needs --model" in capsys.readouterr().err
    assert main([*base, "--backend", "fake-free", "--videos", str(tmp_path / "none*.mp4")]) == 2
    assert "matches no video or image file" in capsys.readouterr().err
    assert main(["sovabench", *base, "--backend", "fake-free", "--video-root", str(tmp_path)]) == 2
    assert "one of the arguments --protocol --manifest is required" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_import_the_authors_json(tmp_path, capsys):
    src = tmp_path / "authors.json"
    src.write_text(json.dumps({"3": "A car turns left.", "2922": "A person walks.\nThey carry a box."}))
    argv = ["import", "--authors-json", str(src), "--cache-dir", str(tmp_path / "cache"), "--backend",
            "transformers", "--model", "openbmb/MiniCPM-V-4_5", "--prompt", "general", "--fps", "1"]
    assert main(argv) == 0
    folder = only_folder(tmp_path / "cache")
    assert folder.name.startswith("imported-transformers-MiniCPM-V-4_5-general-1fps__")
    assert lines(folder / "descriptions.jsonl") == [{"id": 3, "text": "A car turns left."},
                                                    {"id": 2922, "text": "A person walks.\nThey carry a box."}]
    m = json.loads((folder / "manifest.json").read_text())
    assert m["source"] == "import" and m["model"] == "openbmb/MiniCPM-V-4_5" and m["counts"]["done"] == 2
    assert m["source_details"]["imported_from"] == {"file": "authors.json",
                                                    "sha256": hashlib.sha256(src.read_bytes()).hexdigest()}
    assert (m["sampler_version"], m["crop_source"]) == ("authors", "authors-clips")
    assert "imported 2 descriptions" in capsys.readouterr().out
    assert main(argv) == 0 and len(lines(folder / "descriptions.jsonl")) == 2  # again: nothing added
    src.write_text(json.dumps({"3": "Another text."}))
    assert main(argv) == 2 and "already in" in capsys.readouterr().err
    src.write_text(json.dumps({"3": ["not", "text"]}))
    assert main(argv) == 2 and "the value of '3' is list, not text" in capsys.readouterr().err


def test_without_prompt_every_backend_uses_the_default_its_help_states(tmp_path, capsys):
    from sova_lib.cli import build_parser

    assert main(["describe", "--help"]) == 0
    assert "(default: general; not used by motion)" in " ".join(capsys.readouterr().out.split())
    rc = main(["describe", "--backend", "fake-cli", "--model", "org/tiny-vlm", "--protocol", "quickstart-direction",
               "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert rc == 0
    folder = only_folder(tmp_path / "cache")
    assert folder.name.startswith("quickstart-fake-cli-tiny-vlm-general-1fps__")
    assert lines(folder / "descriptions.jsonl")[0]["text"].endswith(", Describe this video.")
    assert build_parser().parse_args(["describe", "--backend", "motion", "--videos", "x"]).prompt == "general"


def test_an_unknown_backend_option_is_refused_with_the_known_ones_listed(tmp_path, capsys):
    base = ["describe", "--backend", "motion", "--protocol", "quickstart-direction", "--cache-dir", str(tmp_path)]
    assert main([*base, "--backend-option", "max_object=3"]) == 2
    assert capsys.readouterr().err == (
        "sova: error: --backend-option max_object: the motion backend has no such option; its options: work_size, "
        "diff_threshold, min_area, max_speed, max_area_ratio, still_radius, min_travel, min_still, scale_change, "
        "hog_threshold, max_objects, detect_people\n")
    assert main([*base, "--backend-option", "max_objects=three"]) == 2
    assert capsys.readouterr().err == (
        "sova: error: --backend-option max_objects: max_objects takes an integer, not 'three'\n")
    assert main([*base, "--backend-option", "detect_people=maybe"]) == 2
    assert capsys.readouterr().err.endswith("detect_people takes true or false, not 'maybe'\n")
    assert list(tmp_path.iterdir()) == []


def test_backend_options_reach_the_describer_as_their_declared_types(tmp_path, capsys):
    from sova_lib.cli import describe as cli

    args = cli_args(cli, "--backend", "openai", "--model", "m", "--concurrency", "2", "--backend-option",
                    "stream=false", "--backend-option", "token_timeout=5", "--backend-option", "extra_body={\"a\": 1}")
    assert cli.describer_options(args) == {"model": "m", "concurrency": 2, "stream": False, "token_timeout": 5.0,
                                           "extra_body": {"a": 1}}
    args = cli_args(cli, "--backend", "motion", "--model", "m", "--backend-option", "min_area=0")
    assert cli.describer_options(args) == {"min_area": 0.0}
    assert "the motion backend has no model; --model is ignored" in capsys.readouterr().err
    help_text = cli_help()
    assert "other options of each backend (--backend-option KEY=VALUE):\n" in help_text
    listed = help_text.split("other options of each backend")[1]
    assert "    stream (true or false; default true)" in listed and "    base_url (" not in listed  # a flag: not again
    assert "    max_objects (an integer; default 5): most objects described, those that travel farthest\n" in help_text


def cli_args(cli, *argv):
    from sova_lib.cli import build_parser

    return build_parser("describe").parse_args(["describe", "--protocol", "quickstart-direction", *argv])


def cli_help():
    from sova_lib.cli import build_parser

    parser = build_parser("describe")
    (sub,) = [a for a in parser._actions if a.choices and "describe" in a.choices]
    return sub.choices["describe"].format_help()
