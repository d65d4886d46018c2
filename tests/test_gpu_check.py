"""The GPU check's own parts that need no GPU (``tests/gpu_check.py``): its arguments, its one line when no GPU
is visible, and its report, from a run on the CPU on two architectures (a clip's frames as images, and videos)."""
from __future__ import annotations

import json

import pytest

from tests import gpu_check


def test_an_unknown_architecture_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as done:
        gpu_check.parse_args(["--architectures", "llava,gpt-5"])
    assert done.value.code == 2
    assert "--architectures: unknown ['gpt-5']; choose from llava, qwen2.5-vl, qwen3-vl" in capsys.readouterr().err


def test_without_a_visible_gpu_it_says_so_in_one_line(monkeypatch, capsys, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_check.main(["--out", str(tmp_path / "r.json")]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"gpu-check: no CUDA GPU is visible to torch {torch.__version__} (built for CUDA ")
    assert line.endswith("): nothing checked; run it on a machine with an NVIDIA GPU and driver")
    assert not (tmp_path / "r.json").exists()
    assert gpu_check.no_gpu_line("cpu") is None


def test_a_cpu_run_reports_every_check(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert gpu_check.main(["--device", "cpu", "--dtype", "float32", "--architectures", "llava,smolvlm",
                           "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert (report["device"], report["dtype"], report["passed"]) == ("cpu", "float32", True)
    assert set(report["versions"]) == {"python", "torch", "cuda", "transformers", "gpu"}
    rows = report["rows"]
    assert [(r["check"], r["placement"]) for r in rows] == [
        ("llava", "device"), ("llava", "device_map=auto"), ("smolvlm", "device"), ("smolvlm", "device_map=auto"),
        ("tiny CLIP frame vectors", "device"), ("all-MiniLM-L6-v2 sentence vectors", "device")]
    assert all(r["passed"] and r["items_per_s"] > 0 for r in rows)
    assert all(r["max_vector_difference"] <= 1e-4 for r in rows)  # float32 on the CPU against itself
    assert [r["batched_equals_alone"] for r in rows[2:4]] == [True, True]  # videos of one length per batch
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["check", "dtype", "placement", "items/s", "batched", "=", "alone", "max", "|diff|",
                                  "passed", "note"]
    assert len(printed) == 1 + len(rows) + 1 and printed[-1] == f"gpu-check: every check passed; the table: {out}"


def test_the_out_of_memory_check_caps_the_memory_and_expects_the_environment_error(tmp_path, monkeypatch):
    """On the CPU, with torch's CUDA memory calls recorded and the device's allocation failing as it does when the
    cap is reached: the row passes, and the cap is lifted again afterwards."""
    import torch

    from sova_lib.describe.backends import transformers as backend
    from tests import tiny_vlm

    calls = []
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: type("P", (), {"total_memory": 2**30}))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda index: 2**20)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda f, index: calls.append((f, index)))

    def full(self, requests):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 24.00 MiB")

    monkeypatch.setattr(backend._ImageTextToText, "inputs", full)
    folder = tiny_vlm.build_tiny_llava(tmp_path / "llava")
    row = gpu_check.out_of_memory_row(folder, gpu_check.clips(), "cpu", "float32", tmp_path, batch=4)
    assert row.passed, row.note
    assert row.note.startswith(f"{folder} ran out of memory on cpu describing ")
    assert calls == [(9 * 2**20 / 2**30, 0), (1.0, 0)]
