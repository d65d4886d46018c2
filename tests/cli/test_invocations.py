"""Wrong invocations end in one line on stderr naming the option or file and what to do, exit status 2
(or, for an environment that cannot serve, exit 1 within seconds); one test per case. The README's quickstart
runs on an empty cache."""
import json
import socket
import time

import huggingface_hub.constants
import numpy as np
import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.vantage.synthetic import write_street_benchmark
from sova_lib.cli import main
from sova_lib.video.frames import example_videos, probe, sample_frames
from tests.paths import ROOT

VIDEOS = ROOT / "sova_lib" / "data" / "video"


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _one_error(err):
    lines = [x for x in err.splitlines() if x.startswith("sova: error:")]
    assert len(lines) == 1 and len(err.strip().splitlines()) == 1, err
    return lines[0]


def _motion(*extra):
    return ["describe", "--backend", "motion", "--no-progress", *extra]


# --------------------------------------------------------------------------- the quickstart, on an empty cache

def test_readme_quickstart_on_an_empty_cache(capsys, tmp_path):
    """The README's two commands: the bundled excerpts and their reversed copies, then 58.89 beside 59.25."""
    cache = tmp_path / "cache"
    code, out, _ = _run(capsys, *_motion("--fps", 2, "--protocol", "quickstart-direction", "--cache-dir", cache))
    folder = cache / "descriptions" / "quickstart-motion-classical-motion-general-2fps__35741fb179ec"
    assert code == 0 and len((folder / "descriptions.jsonl").read_text().splitlines()) == 6
    code, out, _ = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions",
                        folder, "--cache-dir", cache)
    # 58.89: the committed cache's score (README); 59.25 = random_ranking_ap(2, 5), the protocol's docstring
    assert code == 0 and out.startswith("quickstart-direction: mAP = 58.89")
    assert "a random ranking scores 59.25 mAP" in out


# --------------------------------------------------------------------------- one test per case

def test_cache_dir_naming_a_file(capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    code, _, err = _run(capsys, *_motion("--videos", VIDEOS, "--cache-dir", tmp_path / "f"))
    assert code == 2 and f"argument --cache-dir: {tmp_path / 'f'} is a file, not a folder" in _one_error(err)


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_fps_that_is_not_a_finite_positive_number(capsys, tmp_path, value):
    code, _, err = _run(capsys, *_motion("--videos", VIDEOS, "--cache-dir", tmp_path, "--fps", value))
    assert code == 2 and f"argument --fps: {value} is not a finite number above 0" in _one_error(err)
    assert not (tmp_path / "descriptions").exists()


def test_fps_above_the_source_rate_is_capped_before_decoding(capsys, tmp_path):
    """The bundled excerpts are 10 fps: --fps 1000 samples (and keys the cache) as --fps 10."""
    path = example_videos()[0]
    assert probe(path).fps == 10.0
    capped = sample_frames(path, rate=1000, cap_rate=True)
    # F = 60 frames at 10 fps: n = round(60 / 10 * 10) + 1 = 61 frames at 10 fps, 6001 at 1000 fps uncapped
    assert len(capped.images) == 61 == len(sample_frames(path, rate=10).images)
    code, _, err = _run(capsys, *_motion("--videos", VIDEOS, "--cache-dir", tmp_path, "--fps", 1000))
    assert code == 0 and "--fps 1000 is above every video's own frame rate; sampling (and the cache key) use 10 fps" in err
    code, out, _ = _run(capsys, *_motion("--videos", VIDEOS, "--cache-dir", tmp_path, "--fps", 10))
    assert code == 0 and "described 0, skipped 3" in out  # the same cache folder
    assert [p.name.split("__")[0] for p in (tmp_path / "descriptions").iterdir()] == ["motion-classical-motion-general-10fps"]


def test_video_root_without_the_clips_stops_at_once(capsys, tmp_path):
    code, _, err = _run(capsys, "sovabench", "describe", "--backend", "motion", "--protocol", "intra-pair",
                        "--video-root", tmp_path, "--cache-dir", tmp_path / "cache", "--no-progress")
    line = _one_error(err)
    assert code == 2 and f"--video-root {tmp_path}: the first 5 items all miss their video" in line
    assert "give the folder that holds them" in line and not (tmp_path / "cache").exists()


def test_clips_extract_with_a_missing_video_root(capsys, tmp_path):
    manifest = tmp_path / "m.tsv"
    manifest.write_text("x\n")
    code, _, err = _run(capsys, "sovabench", "clips", "extract", "--manifest", manifest, "--video-root",
                        tmp_path / "nope", "--out", tmp_path / "clips")
    assert code == 2 and f"argument --video-root: {tmp_path / 'nope'}: no such folder" in _one_error(err)


@pytest.mark.parametrize("step", ["extract", "stats"])
def test_clips_missing_manifest_names_the_option(capsys, tmp_path, step):
    extra = ["--video-root", tmp_path, "--out", tmp_path / "c"] if step == "extract" else []
    code, _, err = _run(capsys, "sovabench", "clips", step, "--manifest", "nope.tsv", *extra)
    assert code == 2 and "argument --manifest: nope.tsv: no such file" in _one_error(err)


def test_clips_plan_negative_min_size(capsys, tmp_path):
    code, _, err = _run(capsys, "sovabench", "clips", "plan", "--tsv", "intra-pair", "--annotations", tmp_path,
                        "--out", tmp_path / "m.tsv", "--min-size", -5)
    assert code == 2 and "argument --min-size: -5 is negative; give 0 or more" in _one_error(err)
    assert not (tmp_path / "m.tsv").exists()


@pytest.fixture
def street(tmp_path):
    videos = example_videos()[:1]
    tsvs = write_street_benchmark(tmp_path / "bench", videos, [probe(videos[0]).num_frames / 10.0])
    return tmp_path / "bench" / "event_verification_gt.jsonl", tsvs


@pytest.mark.parametrize("option, value, message", [
    ("--bootstrap", "-1", "argument --bootstrap: -1 is negative; give 0 or more"),
    ("--frames", "0", "argument --frames: 0 is below 1; give 1 or more"),
    ("--frames", "-3", "argument --frames: -3 is below 1; give 1 or more"),
    ("--submission", "/dev/null", "argument --submission: /dev/null is not a regular file"),
    ("--submission", "nope.jsonl", "argument --submission: nope.jsonl: no such file"),
])
def test_vantage_evaluate_bad_values(capsys, street, option, value, message):
    gt, _ = street
    argv = ["vantage", "evaluate", "--task", "event_verification", "--ground-truth", gt]
    if option != "--submission":
        argv += ["--submission", gt]
    code, out, err = _run(capsys, *argv, option, value)
    assert code == 2 and out == "" and message in _one_error(err)


def test_vantage_missing_ground_truth_names_the_option(capsys, street):
    gt, _ = street
    code, _, err = _run(capsys, "vantage", "evaluate", "--task", "event_verification", "--ground-truth", "nope.jsonl",
                        "--submission", gt)
    assert code == 2 and "argument --ground-truth: nope.jsonl: no such file" in _one_error(err)


def test_muvr_negative_tag_weight(capsys, tmp_path):
    data = muvr.write_synthetic(tmp_path, np.random.default_rng(1), partitions=("news",), topics=2,
                                videos_per_topic=3, distractors=1)
    code, _, err = _run(capsys, "muvr", "evaluate", "--data", data, "--version", "filter", "--tag-weight", -3,
                        "--baseline", "random-ranking")
    assert code == 2 and "argument --tag-weight: -3 is not a finite number of 0 or more" in _one_error(err)


def test_motion_needs_no_prompt(capsys, tmp_path):
    code, out, err = _run(capsys, *_motion("--videos", VIDEOS, "--cache-dir", tmp_path))
    assert code == 0 and "described 3" in out and "error" not in err
    assert (tmp_path / "descriptions" / "motion-classical-motion-general-1fps__").parent.is_dir()


def test_a_wrong_model_id_fails_fast_without_hf_hub_offline(capsys, tmp_path, monkeypatch):
    """No HF_HUB_OFFLINE, and a hub that does not answer (a closed local port as its endpoint): exit 1 in < 10 s."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    start = time.monotonic()
    code, _, err = _run(capsys, "describe", "--backend", "transformers", "--model", "sova-tests/no-such-model",
                        "--prompt", "general", "--videos", VIDEOS, "--cache-dir", tmp_path / "cache", "--no-progress",
                        "--backend-option", f"cache_dir={tmp_path / 'hf'}")
    seconds = time.monotonic() - start
    assert code == 1 and seconds < 10, (seconds, err)
    (line,) = [x for x in err.splitlines() if x.startswith("sova: error:")]
    assert line.startswith("sova: error: could not load the model of 'sova-tests/no-such-model' (hub-offline)")
    assert "the Hugging Face hub does not answer" in err


def test_allow_missing_names_the_file(capsys, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": 90000001, "text": "A car."}) + "\n")
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair", "--descriptions", path,
                        "--allow-missing", "--cache-dir", tmp_path / "cache", "--json")
    assert code == 2 and _one_error(err).startswith(f"sova: error: --descriptions {path}: the input covers none")


def test_nothing_to_do_prints_no_empty_progress_bar(capsys, tmp_path):
    argv = ["describe", "--backend", "motion", "--videos", VIDEOS, "--cache-dir", tmp_path]
    assert _run(capsys, *argv)[0] == 0
    code, out, err = _run(capsys, *argv)
    assert code == 0 and "described 0, skipped 3" in out and "item/s" not in err and "0item" not in err


def test_a_text_file_named_mp4_is_one_reason_in_the_summary(capfd, tmp_path):
    """No raw decoder lines on stderr; the item's reason is in the summary and errors.jsonl; the run goes on."""
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "a.mp4").write_text("not a video\n")
    (folder / "b.mp4").write_bytes(example_videos()[0].read_bytes())
    code = main(["describe", "--backend", "motion", "--videos", str(folder), "--cache-dir", str(tmp_path / "c"),
                 "--no-progress"])
    out, err = capfd.readouterr()
    assert code == 0 and "described 1" in out and "failed 1" in out
    assert "moov atom" not in err and "video_reader.cc" not in err and "ERROR opening" not in err
    assert f"  failed 'a': VideoError: cannot open video {folder / 'a.mp4'} with decord" in err


def test_clips_extract_with_a_video_root_without_the_sources(capsys, tmp_path):
    """Planned from the bundled MEVA sample, extracted against a folder that holds no source video: one line."""
    manifest = tmp_path / "m.tsv"
    ann = ROOT / "sova_lib" / "benchmarks" / "sovabench" / "data" / "meva-annotations-sample"
    assert main(["sovabench", "clips", "plan", "--tsv", "inter-pair", "--annotations", str(ann), "--out",
                 str(manifest), "--no-index", "--no-progress"]) == 0
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    code, _, err = _run(capsys, "sovabench", "clips", "extract", "--manifest", manifest, "--video-root",
                        tmp_path / "empty", "--out", tmp_path / "clips")
    line = _one_error(err)
    assert code == 2 and f"--video-root {tmp_path / 'empty'}: none of the" in line and "source videos" in line
