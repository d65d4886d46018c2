"""Model identification and loading helpers of the transformers backend (``sova_lib.describe.backends.transformers_models``)."""
from __future__ import annotations

import pytest

from sova_lib.describe.backends.transformers_models import (
    explain_load_error,
    missing_package,
    preflight,
    resolve_device,
    resolve_dtype,
    resolve_family,
    resolve_revision,
)
from sova_lib.describe.contract import DescriberEnvironmentError
from sova_lib.hub import offline_mode
from tests.hub_cache import MAIN, V1, write_hub_cache


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
    commit, other = MAIN, V1
    repo = write_hub_cache(tmp_path / "hub")
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
    assert isinstance(err, DescriberEnvironmentError) and isinstance(err, OSError)
    text = str(err)
    assert text.startswith("could not load the model of 'org/absent' at revision 'v2' (hub-offline): "
                           "OSError: not found. Fix: HF_HUB_OFFLINE=1 is set")
    assert f"local Hugging Face cache ({tmp_path})" in text and "(`hf download org/absent --revision v2`)" in text
    folder = explain_load_error("processor", ValueError("no config"), model=str(tmp_path / "m"))
    assert f"(path): ValueError: no config. Fix: no usable model folder at {tmp_path / 'm'}" in str(folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    online = explain_load_error("model", OSError("401 Client Error"), model="org/gated")
    assert "(hub): OSError: 401 Client Error. Fix: check the model id" in str(online)
    assert "`hf auth login`" in str(online)


@pytest.mark.parametrize("error, package", [
    (ModuleNotFoundError("No module named 'num2words'"), "num2words"),
    (ImportError("SmolVLMProcessor requires the num2words library but it was not found in your environment."),
     "num2words"),
    (ImportError("This modeling file requires the following packages that were not found in your environment: "
                 "timm. Run `pip install timm`"), "timm"),
    (ValueError("Using a `device_map` requires the accelerate library: `pip install 'accelerate>=0.26.0'`"),
     "accelerate"),
])
def test_a_missing_package_is_named_with_the_install_line(error, package):
    assert missing_package(error) == package
    message = str(explain_load_error("processor", error, model="org/m"))
    assert "(missing-package)" in message and f"Fix: install {package} (make venv in a checkout installs every package" in message


def test_torchvision_missing_for_a_video_processor(monkeypatch):
    import builtins

    error = ImportError("Qwen2VLVideoProcessor requires the Torchvision library but it was not found in your "
                        "environment.")
    assert missing_package(error) == "Torchvision"  # it imports here
    assert "(missing-package)" in str(explain_load_error("processor", error, model="Qwen/Qwen2.5-VL-7B-Instruct"))
    real_import = builtins.__import__

    def no_torchvision(name, *args, **kwargs):
        if name.split(".")[0] == "torchvision":
            raise ImportError("No module named 'torchvision'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torchvision)
    message = str(explain_load_error("processor", error, model="Qwen/Qwen2.5-VL-7B-Instruct"))
    assert "torch 2.13 -> torchvision 0.28, pinned in the lock: make venv in a checkout" in message


def test_out_of_memory_and_flash_attn_advice():
    import torch

    oom = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 79.10 GiB total)")
    message = str(explain_load_error("model", oom, model="Qwen/Qwen3-VL-235B-A22B-Instruct", device="cuda:0"))
    assert "(out-of-memory): OutOfMemoryError: CUDA out of memory" in message
    assert "does not fit in the memory of cuda:0: split it over every visible GPU with --device-map auto" in message
    flash = ImportError("FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
                        "the package flash_attn seems to be not installed.")
    flash_message = str(explain_load_error("model", flash, model="org/m"))
    assert "(flash-attn): ImportError" in flash_message and "pip install flash-attn --no-build-isolation" in flash_message


def test_remote_code_checkpoints_point_to_their_route(tmp_path):
    error = ValueError("The checkpoint you are trying to load has model type `internvl_chat` but Transformers "
                       "does not recognize this architecture.")
    message = str(explain_load_error("model", error, model="OpenGVLab/InternVL3_5-8B"))
    assert "(remote-code)" in message and "OpenGVLab/InternVL3_5-8B-HF" in message and "--backend openai" in message
    (tmp_path / "config.json").write_text('{"model_type": "minicpmv"}')
    folder = str(explain_load_error("model", OSError("whatever"), model=str(tmp_path)))
    assert "(remote-code)" in folder and "family=minicpm-v" in folder and "vllm serve openbmb/MiniCPM-V-4_5" in folder
    other = str(explain_load_error("model", ValueError("set trust_remote_code=True"), model="org/custom"))
    assert "(remote-code)" in other and "--backend-option trust_remote_code=true" in other


def test_preflight_stops_before_loading(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with pytest.raises(DescriberEnvironmentError) as error:
        preflight("OpenGVLab/InternVL3_5-8B")
    assert "(remote-code)" in str(error.value) and "OpenGVLab/InternVL3_5-8B-HF" in str(error.value)
    preflight("OpenGVLab/InternVL3_5-8B-HF")  # native: left to from_pretrained (online, nothing checked)
    with pytest.raises(DescriberEnvironmentError, match=r"\(path\): FileNotFoundError: .*config.json does not exist"):
        preflight(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    preflight(str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DescriberEnvironmentError, match=r"\(hub-offline\)"):
        preflight("sova-tests/not-cached", cache_dir=str(tmp_path / "hub"))


def test_minicpm_v_4_6_and_later_are_native():
    assert resolve_family("openbmb/MiniCPM-V-4_6") == "image-text-to-text"
    assert resolve_family("openbmb/MiniCPM-V-4.7-1B") == "image-text-to-text"
    assert resolve_family("openbmb/MiniCPM-Llama3-V-2_5") == "minicpm-v"
    assert resolve_family("openbmb/MiniCPM-V-4") == "minicpm-v"
