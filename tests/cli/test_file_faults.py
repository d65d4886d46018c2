"""Files that are crafted, nested without end, or on a full disk: one line naming the file and what to do, exit 2
for the input, 1 for the environment, and nothing written outside the folder given."""
import builtins
import errno
import json

import pytest

from sova_lib import storage
from sova_lib.benchmarks.sovabench.clips.plan import MANIFEST_COLUMNS
from sova_lib.cli import main


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err.splitlines()


@pytest.mark.parametrize("video", ["../../ESCAPED-CLIP", "/tmp/ESCAPED-CLIP", "sub/clip", "..", "C:clip"])
def test_a_manifest_whose_clip_name_leaves_the_output_folder_is_refused(capsys, tmp_path, video):
    manifest = tmp_path / "manifest.tsv"
    row = ["7", video, "2018-03-05.10-00-00.10-05-00.bus.G331", "vehicle_turns_left", "0", "10", "0", "0", "200",
           "200", "False", "ok"]
    manifest.write_text("\t".join(MANIFEST_COLUMNS) + "\n" + "\t".join(row) + "\n")
    (tmp_path / "videos").mkdir()
    code, out, err = _run(capsys, "sovabench", "clips", "extract", "--manifest", manifest, "--video-root",
                          tmp_path / "videos", "--out", tmp_path / "out" / "clips")
    assert code == 2 and out == ""
    assert err == [f"sova: error: --manifest {manifest}: {manifest}, line 2: video {video!r} is not a plain file name "
                   "(no folder, '..', drive or absolute path): a clip is written as <out>/<video>.mp4"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.tsv", "videos"]  # nothing was written


def test_a_nested_authors_json_is_one_line(capsys, tmp_path):
    src = tmp_path / "authors.json"
    src.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = _run(capsys, "import", "--authors-json", src, "--cache-dir", tmp_path / "cache", "--backend",
                        "transformers", "--model", "m", "--prompt", "general", "--fps", "1")
    assert code == 2 and err == [
        f"sova: error: {src}: nested more deeply than can be read (thousands of levels); expected one JSON object "
        '{"<index>": "<text>", ...}']
    assert not (tmp_path / "cache").exists()


def test_a_nested_description_line_is_one_line(capsys, tmp_path):
    src = tmp_path / "descriptions.jsonl"
    src.write_text(json.dumps({"id": 1, "text": "a car"}) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", src,
                        "--cache-dir", tmp_path / "cache")
    assert code == 2 and err == [f"sova: error: {src}, line 2: not valid JSON (nested more deeply than can be read "
                                 '(thousands of levels)); expected {"id": ..., "text": ...}']


class _FullDisk:
    """``open`` of ``sova_lib.storage`` on a full disk: files open, every write fails with ENOSPC."""

    def __init__(self, *args, **kwargs):
        self.file = builtins.open(*args, **kwargs)

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()

    def __getattr__(self, name):
        return getattr(self.file, name)


def test_evaluate_with_out_on_a_full_disk(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "open", _FullDisk, raising=False)
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--baseline",
                          "prevalence", "--out", tmp_path / "results")
    assert code == 1 and out == ""
    (line,) = err
    assert line.startswith(f"sova: error: cannot write {tmp_path / 'results'}/") and line.endswith(
        ".json: No space left on device; the disk is full: free some space, or use a folder on another disk")
    assert [p.name for p in (tmp_path / "results").iterdir()] == []  # no temporary file is left behind


def test_evaluate_with_a_cache_dir_on_a_full_disk(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "open", _FullDisk, raising=False)
    src = tmp_path / "descriptions.jsonl"
    src.write_text(json.dumps({"id": "vtest_lawn_0600-0659", "text": "a car"}) + "\n")
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", src,
                        "--cache-dir", tmp_path / "cache", "--allow-missing")
    assert code == 1
    (line,) = err  # the first file the run writes: the sentence splitter's record
    assert line.startswith(f"sova: error: cannot write {tmp_path / 'cache' / 'sentences'}/punkt-english__")
    assert line.endswith("/splitter.json: No space left on device; the disk is full: free some space, or use a "
                         "folder on another disk")
