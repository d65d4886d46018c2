"""A sentence-vector shard killed (SIGKILL) at each step of its write never breaks a later evaluation, and a
broken shard is named in one line."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sova_lib.encoder import SentenceEncoder
from tests.paths import ROOT

#: A child that writes one shard of two unrelated sentences and kills itself (SIGKILL) at the step it is given:
#: ``created`` (the temporary file is empty), ``half`` (half of its bytes written), ``written`` (whole, not yet
#: renamed), ``renamed`` (the shard in place).
_WRITER = """
import io, os, signal, sys
import numpy as np
from sova_lib import storage
from sova_lib.encoder import SentenceEncoder

cache_dir, step = sys.argv[1], sys.argv[2]
encoder = SentenceEncoder(cache_dir=cache_dir, show_progress=False)
real_savez, real_replace = np.savez, os.replace

def die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)

def savez(file, **arrays):
    if step == "created":
        die()
    if step == "half":
        buffer = io.BytesIO()
        real_savez(buffer, **arrays)
        file.write(buffer.getvalue()[:len(buffer.getvalue()) // 2])
        file.flush()
        die()
    real_savez(file, **arrays)

def replace(source, target):
    if str(target).endswith(".npz") and step == "written":
        die()
    real_replace(source, target)
    if str(target).endswith(".npz") and step == "renamed":
        die()

np.savez = savez
storage.os.replace = replace
texts = [f"kill test sentence {step} one", f"kill test sentence {step} two"]
encoder._memory.update(zip(texts, np.full((2, 384), 1 / np.sqrt(384), np.float32)))
encoder._write_shard(texts)
"""

STEPS = ("created", "half", "written", "renamed")


def _quickstart_evaluation(cache_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sova_lib", "sovabench", "evaluate", "--protocol", "quickstart-direction",
         "--descriptions", str(ROOT / "cache" / "descriptions" / "quickstart-motion-classical-motion-general-2fps__35741fb179ec"),
         "--cache-dir", str(cache_dir), "--bootstrap", "0"], capture_output=True, text=True, timeout=600)


def test_a_shard_write_killed_at_each_step_then_an_evaluation(tmp_path):
    cache = tmp_path / "cache"
    for step in STEPS:
        child = subprocess.run([sys.executable, "-c", _WRITER, str(cache), step], capture_output=True, text=True,
                               timeout=300)
        assert child.returncode == -9, child.stderr  # killed where it was told
    folder = SentenceEncoder(cache_dir=cache, show_progress=False).cache_path
    shards = sorted(p.name for p in folder.glob("shard-*.npz"))
    temporary = sorted(folder.glob(".*.tmp"))
    assert len(shards) == 1 and len(temporary) == 3  # the renamed one; the three killed before their rename
    assert all(p.name.startswith(".shard-") and ".npz." in p.name for p in temporary)
    stale = temporary[0]
    os.utime(stale, (time.time() - 7200, time.time() - 7200))  # as if killed two hours ago

    done = _quickstart_evaluation(cache)  # reads every cache, sees no part of a shard
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("quickstart-direction: mAP = 58.89  over 6 queries")
    assert not stale.exists() and len(list(folder.glob(".*.tmp"))) == 2  # a killed writer's, an hour old, removed
    reader = SentenceEncoder(cache_dir=cache, show_progress=False)
    killed = [t for t in reader._memory if t.startswith("kill test sentence")]
    assert sorted(killed) == ["kill test sentence renamed one", "kill test sentence renamed two"]


def test_a_broken_shard_is_named_in_one_line(tmp_path):
    encoder = SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    encoder._memory["a car"] = np.ones(384, np.float32)
    encoder._write_shard(["a car"])
    (shard,) = encoder.cache_path.glob("shard-*.npz")
    shard.write_bytes(shard.read_bytes()[:100])  # damaged on disk
    with pytest.raises(ValueError) as err:
        SentenceEncoder(cache_dir=tmp_path, show_progress=False)
    assert str(err.value).startswith(f"{shard}: not a readable shard of sentence vectors (BadZipFile: ")
    assert str(err.value).endswith("; delete it, and its sentences are encoded again")
