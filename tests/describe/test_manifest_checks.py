"""A cache's manifest is checked against itself and its folder before a score names what wrote it."""
import json
import shutil

import pytest

from sova_lib.cli import main
from sova_lib.describe.provenance import config_hash, read_cache_manifest
from tests.paths import ROOT

(QUICK,) = sorted((ROOT / "cache" / "descriptions").glob("quickstart-motion-*"))


@pytest.fixture
def copy(tmp_path):
    folder = tmp_path / QUICK.name
    shutil.copytree(QUICK, folder)
    return folder


def _evaluate(capsys, folder, tmp_path):
    code = main(["sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", str(folder),
                 "--out", str(tmp_path / "results"), "--bootstrap", "0"])
    err = capsys.readouterr().err
    assert not (tmp_path / "results").exists()  # refused: no record
    return code, err


def test_the_committed_cache_hashes_to_its_folder_name():
    manifest = read_cache_manifest(QUICK)
    assert config_hash({k: manifest[k] for k in manifest["hash_fields"]}) == QUICK.name.split("__")[-1]


def test_an_edited_manifest_is_refused_naming_both_hashes(copy, tmp_path, capsys):
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(prompt={**manifest["prompt"], "name": "task-aware"}, fps=8)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    fields_hash = config_hash({k: manifest[k] for k in manifest["hash_fields"]})
    code, err = _evaluate(capsys, copy, tmp_path)
    assert code == 2 and err.count("\n") == 1 and err.startswith("sova: error: ")
    assert str(copy / "manifest.json") in err and fields_hash in err and "35741fb179ec" in err
    # the recorded hash rewritten to match the fields: the folder's name still disagrees
    manifest["config_hash"] = fields_hash
    (copy / "manifest.json").write_text(json.dumps(manifest))
    code, err = _evaluate(capsys, copy, tmp_path)
    assert code == 2 and err.count("\n") == 1 and fields_hash in err and "35741fb179ec" in err and copy.name in err


def test_a_model_that_is_not_the_describers_is_refused(copy, tmp_path, capsys):
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["model"] = "gpt-4o"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    code, err = _evaluate(capsys, copy, tmp_path)
    assert code == 2 and err.count("\n") == 1 and "'gpt-4o'" in err and str(copy / "manifest.json") in err


@pytest.mark.parametrize("content, words", [
    (b"[]", "not a cache manifest"),
    (None, "no field 'prompt'"),
    (b"{\"schema\": \"\xff\xfe\"}", "not UTF-8"),
    (b"{", "not valid JSON"),
])
def test_a_malformed_manifest_is_one_line_naming_the_file(copy, tmp_path, capsys, content, words):
    if content is None:
        manifest = json.loads((copy / "manifest.json").read_text())
        del manifest["prompt"]
        content = json.dumps(manifest).encode()
    (copy / "manifest.json").write_bytes(content)
    code, err = _evaluate(capsys, copy, tmp_path)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"sova: error: {copy / 'manifest.json'}: ")
    assert words in err, err
