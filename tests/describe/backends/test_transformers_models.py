"""Model identification and loading helpers of the transformers backend (``sova_lib.describe.backends.transformers_models``)."""
from __future__ import annotations

import pytest

from sova_lib.describe.backends.transformers_models import (
    explain_load_error,
    offline_mode,
    resolve_device,
    resolve_dtype,
    resolve_family,
    resolve_revision,
)


def test_resolve_family():
    assert resolve_family("openbmb/MiniCPM-V-4_5") == "minicpm-v"
    assert resolve_family("OpenBMB/minicpm-v-2_6") == "minicpm-v"
    assert resolve_family("Qwen/Qwen2.5-VL-7B-Instruct") == "image-text-to-text"
    assert resolve_family("Qwen/Qwen2.5-VL-7B-Instruct", family="minicpm-v") == "minicpm-v"
    with pytest.raises(ValueError, match="unknown family"):
        resolve_family("x/y", family="llama")


def test_resolve_family_reads_a_local_folders_model_type(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "minicpmv"}')
    assert resolve_family(str(tmp_path)) == "minicpm-v"


def test_resolve_revision_from_cache_snapshot_and_git(tmp_path):
    commit, other = "a" * 40, "b" * 40
    repo = tmp_path / "hub" / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "refs" / "v1").write_text(other)
    for c in (commit, other):
        (repo / "snapshots" / c).mkdir(parents=True)
        (repo / "snapshots" / c / "config.json").write_text("{}")
    cache = str(tmp_path / "hub")
    assert resolve_revision("org/tiny", None, cache_dir=cache) == commit
    assert resolve_revision("org/tiny", "v1", cache_dir=cache) == other
    assert resolve_revision("org/absent", "v2", cache_dir=cache) == "v2"
    assert resolve_revision("org/absent", None, cache_dir=cache) is None
    assert resolve_revision("org/absent", "c" * 40, cache_dir=cache) == "c" * 40
    assert resolve_revision(str(repo / "snapshots" / other)) == other
    clone = tmp_path / "clone"
    (clone / ".git" / "refs" / "heads").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (clone / ".git" / "refs" / "heads" / "main").write_text(commit + "\n")
    assert resolve_revision(str(clone)) == commit
    assert resolve_revision(str(tmp_path)) is None


def test_offline_mode_device_and_dtype(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    assert offline_mode() is False
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "yes")
    assert offline_mode() is True
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    assert offline_mode() is False
    assert resolve_device("cuda:1") == "cuda:1" and resolve_device("auto") in ("cpu", "cuda")
    assert (resolve_dtype("auto", "cpu"), resolve_dtype("auto", "cuda:0")) == ("float32", "bfloat16")
    assert resolve_dtype("torch.float16", "cpu") == "float16"
    with pytest.raises(ValueError, match="dtype must be 'auto' or one of"):
        resolve_dtype("int8", "cpu")


def test_load_error_advice_depends_on_the_cause(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    err = explain_load_error("model", OSError("not found"), model="org/absent", revision="v2",
                             cache_dir=str(tmp_path))
    assert isinstance(err, OSError)
    text = str(err)
    assert text.startswith("could not load the model of 'org/absent' at revision 'v2': OSError: not found\n")
    assert f"local Hugging Face cache ({tmp_path})" in text and "(`hf download org/absent --revision v2`)" in text
    folder = explain_load_error("processor", ValueError("no config"), model=str(tmp_path / "m"))
    assert f"No usable model folder at {tmp_path / 'm'}" in str(folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    online = explain_load_error("model", ValueError("needs trust_remote_code"), model="org/custom",
                                trust_remote_code=False)
    assert "network access to the Hugging Face Hub" in str(online)
    assert str(online).endswith("This model needs its own code: pass trust_remote_code=True.")
