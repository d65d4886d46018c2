"""``--prompts`` on ``sova vantage describe`` and ``sova vantage harness-prompts``, end to end on the street items.

A loopback chat server records every request, so each test reads the exact messages an item was asked and the
frames it was sent (the server's JPEG parts compared with the frames read at the planned indices and encoded the
same way). The harness is a stand-in folder each test writes: the harness's module paths, a ``build_prompt``
returning marked text.
"""
import hashlib
import json
import sys
import textwrap

import pytest

from sova_lib.benchmarks.vantage.run import uniform_frame_plan
from sova_lib.benchmarks.vantage.synthetic import write_street_benchmark
from sova_lib.cli import main
from sova_lib.describe.backends.openai import encode_jpeg
from sova_lib.video.frames import example_videos, probe, read_frames
from tests.vantage_harness import harness_packages


@pytest.fixture
def street(tmp_path):
    video = example_videos()[0]
    tsvs = write_street_benchmark(tmp_path / "bench", [video], [probe(video).num_frames / 10.0])
    return tmp_path, tsvs, video


def _jpegs(video, indices):
    return [{"type": "image_url", "image_url": {"url": encode_jpeg(a)}} for a in read_frames(video, indices)]


def _describe(tmp, tsv, video, url, prompts, *extra):
    return main(["vantage", "describe", "--task", "vqa", "--items", str(tsv), "--media-root", str(video.parent),
                 "--backend", "openai", "--model", "m", "--base-url", url, "--concurrency", "1",
                 "--cache-dir", str(tmp / "cache"), "--no-progress", "--prompts", str(prompts), *extra])


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_each_item_is_asked_its_record_with_its_frames(street, server_factory, capsys):
    tmp, tsvs, video = street
    server = server_factory()
    prompts = _write(tmp / "p.jsonl", [
        {"id": "0", "messages": [{"role": "system", "content": "SYSTEM zero"},
                                 {"role": "user", "content": ["FIRST zero", "SECOND zero"]}],
         "media_at": 1, "frames": {"indices": [3, 7, 11]}},
        {"id": 1, "messages": [{"role": "user", "content": "ONLY one"}], "frames": {"nframe": 4, "max_pixels": 100}},
    ])
    assert _describe(tmp, tsvs["vqa"], video, server.url, prompts, "--out", str(tmp / "sub.jsonl")) == 0
    bodies = {json.dumps(r["body"]["messages"][-1]["content"][-1]["text"]): r["body"] for r in server.requests}
    assert len(server.requests) == 2
    assert bodies['"SECOND zero"']["messages"] == [
        {"role": "system", "content": "SYSTEM zero"},
        {"role": "user", "content": [{"type": "text", "text": "FIRST zero"}, *_jpegs(video, [3, 7, 11]),
                                     {"type": "text", "text": "SECOND zero"}]}]
    four = uniform_frame_plan(probe(video).num_frames, 4)  # int(i * F / 5), i = 1..4
    assert bodies['"ONLY one"']["messages"] == [
        {"role": "user", "content": [*_jpegs(video, four), {"type": "text", "text": "ONLY one"}]}]
    # the route: in the submission's metadata (beside the weights' fingerprint of the manifest) and the manifest
    sha = hashlib.sha256(prompts.read_bytes()).hexdigest()
    extra = [json.loads(x)["metadata"]["extra"] for x in (tmp / "sub.jsonl").read_text().splitlines()]
    folder, = (tmp / "cache" / "descriptions").iterdir()
    weights = json.loads((folder / "manifest.json").read_text())["fingerprint"]
    assert extra == [{"prompts": "prompts-file", "prompts_file": "p.jsonl", "prompts_sha256": sha,
                      "fingerprint": weights}] * 2 and weights["method"] == "server-models"
    details = json.loads((folder / "manifest.json").read_text())["source_details"]
    assert details["route"] == "prompts-file" and details["prompts"] == {"sha256": sha}
    assert details["prompts_file"] == str(prompts)
    # submit finds the cached answers by the same file's records; without it, the run's manifest says which file
    # the answers were asked with, and the command asks for it (one line, exit 2)
    submit = ["vantage", "submit", "--task", "vqa", "--items", str(tsvs["vqa"]), "--answers", str(folder),
              "--model", "m", "--out", str(tmp / "again.jsonl")]
    assert main([*submit, "--prompts", str(prompts)]) == 0
    assert (tmp / "again.jsonl").read_bytes() == (tmp / "sub.jsonl").read_bytes()
    assert main(submit) == 2


def test_the_cache_key_follows_the_file(street, server_factory):
    tmp, tsvs, video = street
    server = server_factory()
    records = [{"id": str(k), "messages": [{"role": "user", "content": f"Q{k}"}], "frames": {"nframe": 2}}
               for k in range(2)]
    prompts = _write(tmp / "p.jsonl", records)
    assert _describe(tmp, tsvs["vqa"], video, server.url, prompts) == 0
    assert _describe(tmp, tsvs["vqa"], video, server.url, prompts) == 0  # resumed: nothing asked again
    assert len(server.requests) == 2
    records[1]["messages"][0]["content"] = "Q1 changed"
    _write(prompts, records)
    assert _describe(tmp, tsvs["vqa"], video, server.url, prompts) == 0
    assert len(server.requests) == 4  # another file, another folder: both items asked again
    assert len(list((tmp / "cache" / "descriptions").iterdir())) == 2


def test_one_line_per_malformed_record_and_for_ids(street, capsys):
    tmp, tsvs, video = street
    bad = tmp / "bad.jsonl"
    bad.write_text("\n".join([
        '{"id": "0", "messages": [{"role": "user", "content": "ok"}]}',
        "not json",
        '{"id": "1", "messages": [{"role": "assistant", "content": "x"}]}',
        '{"id": "2", "messages": [{"role": "user", "content": "x"}], "media_at": 5}',
        '{"id": "0", "messages": [{"role": "user", "content": "again"}]}',
        '{"id": "3", "messages": [{"role": "user", "content": "x"}], "frames": {"indices": [-1]}}',
    ]) + "\n")
    assert _describe(tmp, tsvs["vqa"], video, "http://127.0.0.1:9/v1", bad) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in err[:5]] == [f"{bad}, line {n}" for n in (2, 3, 4, 5, 6)]
    assert "not JSON" in err[0] and "appears again (first on line 1)" in err[3] and len(err) == 6
    assert err[5] == f"sova: error: {bad}: 5 problem(s) in the prompts file"
    ids = _write(tmp / "ids.jsonl", [{"id": k, "messages": [{"role": "user", "content": "q"}]} for k in ("0", "9")])
    assert _describe(tmp, tsvs["vqa"], video, "http://127.0.0.1:9/v1", ids) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [f"{ids}: no record for item id '1'", f"{ids}, line 2: id '9' is no item of this run"]


_STAND_IN = '''
class VANTAGE_VQA:
    def __init__(self, dataset="VANTAGE_VQA", nframe=0, fps=-1, total_pixels=None, max_pixels=None,
                 max_frames=None):
        raise AssertionError("the harness's __init__ is never run")

    def build_prompt(self, line, video_llm=True):
        text = f"<MARK {line['index']} {line['question']} family={self.model_family} nframe={self.nframe}>"
        if video_llm:
            return [dict(type="video", value="v.mp4", nframes=self.nframe), dict(type="text", value=text)]
        frames = self.save_video_frames(line["video"])
        return [*(dict(type="image", value=f) for f in frames),
                dict(type="text", value=f"<MARK {len(frames)} frames>"), dict(type="text", value=text)]
'''


def _stand_in_harness(folder):
    """A folder with the harness's module paths: ``vlmeval.smp.load`` and ``vlmeval.dataset.vantage_vqa``."""
    harness_packages(folder)
    (folder / "vlmeval/dataset/vantage_vqa.py").write_text(textwrap.dedent(_STAND_IN))
    return folder


@pytest.mark.parametrize("video_input", ["frames", "video"])
def test_harness_prompts_calls_the_harness(street, server_factory, capsys, monkeypatch, video_input):
    tmp, tsvs, video = street
    harness = _stand_in_harness(tmp / f"harness-{video_input}")
    monkeypatch.setattr("sys.path", list(sys.path))  # the command puts the checkout first
    monkeypatch.delitem(sys.modules, "vlmeval", raising=False)
    out = tmp / "vqa_prompts.jsonl"
    assert main(["vantage", "harness-prompts", "--harness", str(harness), "--task", "video_qa", "--items",
                 str(tsvs["vqa"]), "--media-root", str(video.parent), "--model-family", "gpt", "--nframe", "3",
                 "--video-input", video_input, "--out", str(out)]) == 0
    for name in [m for m in sys.modules if m == "vlmeval" or m.startswith("vlmeval.")]:
        monkeypatch.delitem(sys.modules, name)
    assert capsys.readouterr().out.startswith(f"prompts: {out} (2 video_qa items")
    questions = [row.split("\t")[2] for row in tsvs["vqa"].read_text().splitlines()[1:]]
    marks = [f"<MARK {k} {q} family=gpt nframe=3>" for k, q in enumerate(questions)]
    head = ["<MARK 3 frames>"] if video_input == "frames" else []
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {"id": str(k), "messages": [{"role": "user", "content": [*head, mark]}], "media_at": 0,
         "frames": {"nframe": 3}} for k, mark in enumerate(marks)]
    server = server_factory()
    assert _describe(tmp, tsvs["vqa"], video, server.url, out) == 0
    three = _jpegs(video, uniform_frame_plan(probe(video).num_frames, 3))
    texts = [{"type": "text", "text": t} for t in head]
    assert sorted((r["body"]["messages"] for r in server.requests), key=json.dumps) == sorted(
        ([{"role": "user", "content": [*three, *texts, {"type": "text", "text": mark}]}] for mark in marks),
        key=json.dumps)


def test_harness_prompts_refuses_a_folder_without_the_harness(street, capsys):
    tmp, tsvs, video = street
    assert main(["vantage", "harness-prompts", "--harness", str(tmp), "--task", "vqa", "--items", str(tsvs["vqa"]),
                 "--model-family", "gpt", "--out", str(tmp / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "vlmeval/dataset/vantage_vqa.py" in err


def test_message_record_of_a_harness_message():
    from sova_lib.benchmarks.vantage.harness_prompts import message_record

    message = [{"type": "text", "value": "A"}, {"type": "image", "value": "f1"}, {"type": "image", "value": "f2"},
               {"type": "text", "value": "B"}]
    assert message_record(5, message, {"nframe": 2}) == {
        "id": "5", "messages": [{"role": "user", "content": ["A", "B"]}], "media_at": 1, "frames": {"nframe": 2}}
    with pytest.raises(ValueError, match="item 5: the harness's message puts media in 2 places"):
        message_record(5, [*message, {"type": "image", "value": "f3"}], {})
    with pytest.raises(ValueError, match="item 5: the harness's message holds no video or frames"):
        message_record(5, [{"type": "text", "value": "A"}], {})


def _harness_run(harness, tsvs, out, monkeypatch):
    monkeypatch.setattr("sys.path", list(sys.path))
    for name in [m for m in sys.modules if m == "vlmeval" or m.startswith("vlmeval.")]:
        del sys.modules[name]
    try:
        return main(["vantage", "harness-prompts", "--harness", str(harness), "--task", "vqa", "--items",
                     str(tsvs["vqa"]), "--model-family", "gpt", "--nframe", "3", "--out", str(out)])
    finally:
        for name in [m for m in sys.modules if m == "vlmeval" or m.startswith("vlmeval.")]:
            del sys.modules[name]


def test_a_package_the_harness_lacks_is_named_as_the_harness_s(street, capsys, monkeypatch):
    tmp, tsvs, video = street
    harness = _stand_in_harness(tmp / "harness")
    module = harness / "vlmeval/dataset/vantage_vqa.py"
    module.write_text("import validators.url\n" + module.read_text())  # the harness's own requirement, absent here
    assert _harness_run(harness, tsvs, tmp / "o.jsonl", monkeypatch) == 1
    assert capsys.readouterr().err == (
        "sova: vantage harness-prompts: the VANTAGE-Bench harness needs validators, a dependency of the harness (not "
        f"of sova_lib), which is not installed: pip install -r {harness.resolve() / 'requirements.txt'}\n")
    assert not (tmp / "o.jsonl").exists()


def test_a_package_build_prompt_imports_late_is_named_as_well(street, capsys, monkeypatch):
    tmp, tsvs, video = street
    harness = _stand_in_harness(tmp / "harness")
    module = harness / "vlmeval/dataset/vantage_vqa.py"
    module.write_text(module.read_text().replace("        text = ", "        import timeout_decorator\n        text = "))
    assert _harness_run(harness, tsvs, tmp / "o.jsonl", monkeypatch) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs timeout_decorator, a dependency of the harness (not of sova_lib)" in err


def test_a_checkout_missing_its_own_module_is_bad_input(street, capsys, monkeypatch):
    tmp, tsvs, video = street
    harness = _stand_in_harness(tmp / "harness")
    (harness / "vlmeval/smp/__init__.py").unlink()
    (harness / "vlmeval/smp").rmdir()
    assert _harness_run(harness, tsvs, tmp / "o.jsonl", monkeypatch) == 2
    assert capsys.readouterr().err == (f"sova: error: --harness {harness.resolve()}: the checkout lacks vlmeval.smp; "
                                       "give the folder of a complete VANTAGE-Bench checkout\n")


def test_a_question_with_unicode_line_separators_goes_round_trip(street, server_factory, capsys, monkeypatch):
    """harness-prompts writes text as it is (ensure_ascii=False); --prompts reads it back whole."""
    tmp, tsvs, video = street
    rows = tsvs["vqa"].read_text(encoding="utf-8").split("\n")
    cells = rows[1].split("\t")
    cells[2] = "Is it red\u2028or blue?\x85Say\x0conce."
    rows[1] = "\t".join(cells)
    tsvs["vqa"].write_text("\n".join(rows), encoding="utf-8")
    harness = _stand_in_harness(tmp / "harness")
    monkeypatch.setattr("sys.path", list(sys.path))
    monkeypatch.delitem(sys.modules, "vlmeval", raising=False)
    out = tmp / "vqa_prompts.jsonl"
    assert main(["vantage", "harness-prompts", "--harness", str(harness), "--task", "video_qa", "--items",
                 str(tsvs["vqa"]), "--media-root", str(video.parent), "--model-family", "gpt", "--nframe", "3",
                 "--video-input", "video", "--out", str(out)]) == 0
    for name in [m for m in sys.modules if m == "vlmeval" or m.startswith("vlmeval.")]:
        monkeypatch.delitem(sys.modules, name)
    assert "\u2028" in out.read_text(encoding="utf-8")  # written as the character itself
    server = server_factory()
    capsys.readouterr()
    assert _describe(tmp, tsvs["vqa"], video, server.url, out) == 0, capsys.readouterr().err
    texts = sorted(r["body"]["messages"][0]["content"][-1]["text"] for r in server.requests)
    assert f"<MARK 0 {cells[2]} family=gpt nframe=3>" in texts


def test_a_plan_of_more_frames_than_the_video_fails_its_item_naming_file_and_line(street, server_factory):
    tmp, tsvs, video = street
    frames = probe(video).num_frames
    prompts = _write(tmp / "p.jsonl", [
        {"id": "0", "messages": [{"role": "user", "content": "q"}], "frames": {"nframe": 2}},
        {"id": "1", "messages": [{"role": "user", "content": "q"}], "frames": {"nframe": frames + 1}}])
    server = server_factory()
    assert _describe(tmp, tsvs["vqa"], video, server.url, prompts) == 2  # its submission lacks the failed item
    (errors,) = (tmp / "cache").rglob("errors.jsonl")
    [failure] = [json.loads(line) for line in errors.read_text().splitlines()]
    assert f"{prompts}, line 2: the frame plan asks for {frames + 1} frames, more than the video's {frames}" in \
        json.dumps(failure), failure
    assert len(server.requests) == 1


def test_media_paths_stay_under_the_media_root(tmp_path):
    from sova_lib.benchmarks.vantage.run import media_path

    (tmp_path / "media").mkdir()
    assert media_path(tmp_path / "media", "a/b.mp4") == tmp_path / "media" / "a" / "b.mp4"
    for name in ("/etc/passwd", "../outside.mp4", "a/../../outside.mp4"):
        with pytest.raises(ValueError, match=r"^media path .* is not under the media root "):
            media_path(tmp_path / "media", name)
