"""sova_lib.fingerprint: a model folder's digest worked out by hand, which files count, and the memo."""
import hashlib
import json
import os

import pytest

from sova_lib import fingerprint


def _model_folder(root):
    (root / "sub").mkdir(parents=True)
    (root / ".cache").mkdir()
    (root / "config.json").write_bytes(b'{"a": 1}')
    (root / "sub" / "weights.bin").write_bytes(bytes(range(256)) * 3)
    (root / ".cache" / "note").write_bytes(b"download bookkeeping")
    (root / "README.md").write_bytes(b"# a model")
    (root / "optimizer.pt").write_bytes(b"adam state")
    return root


def test_folder_fingerprint_is_names_then_file_digests_in_sorted_order(tmp_path):
    folder = _model_folder(tmp_path / "m")
    # by hand: .cache, README.md and optimizer.pt are left out; each file adds its name, then its bytes' SHA-256
    expected = hashlib.sha256(b"config.json" + hashlib.sha256(b'{"a": 1}').digest()
                              + b"sub/weights.bin" + hashlib.sha256(bytes(range(256)) * 3).digest()).hexdigest()
    assert fingerprint.folder_fingerprint(folder) == expected
    assert [p.relative_to(folder).as_posix() for p in fingerprint.model_files(folder)] == ["config.json",
                                                                                           "sub/weights.bin"]


def test_every_model_file_changes_the_fingerprint_and_nothing_else_does(tmp_path):
    folder = _model_folder(tmp_path / "m")
    first = fingerprint.folder_fingerprint(folder)
    (folder / "README.md").write_text("# another card")
    (folder / ".cache" / "note").write_text("other bookkeeping")
    assert fingerprint.folder_fingerprint(folder) == first
    (folder / "sub" / "weights.bin").write_bytes(bytes(range(256)) * 2 + bytes(range(255, -1, -1)))  # same size
    second = fingerprint.folder_fingerprint(folder)
    (folder / "tokenizer.json").write_text("{}")
    third = fingerprint.folder_fingerprint(folder)
    assert len({first, second, third}) == 3


def test_the_memo_spares_a_second_read_and_a_changed_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv(fingerprint.MEMO_VARIABLE, str(tmp_path / "memo" / "digests.json"))
    monkeypatch.setattr(fingerprint, "SETTLED_SECONDS", 0.0)  # files written just now are remembered too
    folder = _model_folder(tmp_path / "m")
    hashed = []
    real = hashlib.file_digest
    monkeypatch.setattr(fingerprint.hashlib, "file_digest", lambda f, name: hashed.append(f.name) or real(f, name))
    first = fingerprint.folder_fingerprint(folder)
    assert sorted(os.path.basename(p) for p in hashed) == ["config.json", "weights.bin"]
    memo = json.loads((tmp_path / "memo" / "digests.json").read_text())
    weights = os.path.realpath(folder / "sub" / "weights.bin")
    stat = os.stat(weights)
    assert memo[weights] == [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns,
                             hashlib.sha256(bytes(range(256)) * 3).hexdigest()]
    hashed.clear()
    assert fingerprint.folder_fingerprint(folder) == first
    assert hashed == []  # the second run reads no file
    (folder / "config.json").write_bytes(b'{"a": 2}')
    assert fingerprint.folder_fingerprint(folder) != first
    assert [os.path.basename(p) for p in hashed] == ["config.json"]


def test_a_file_changed_a_moment_ago_is_not_remembered(tmp_path, monkeypatch):
    memo = tmp_path / "digests.json"
    monkeypatch.setenv(fingerprint.MEMO_VARIABLE, str(memo))
    folder = _model_folder(tmp_path / "m")
    monkeypatch.setattr(fingerprint, "SETTLED_SECONDS", 3600.0)  # every file is younger than an hour
    fingerprint.folder_fingerprint(folder)
    assert not memo.exists()


@pytest.mark.parametrize("garbled", [b'{"a": 1, ', b"[1, 2]", b"[" * 100_000, b"\xff\xfe", b'{"x": [1, 2, 3, 4]}'])
def test_a_garbled_memo_is_computed_again(tmp_path, monkeypatch, garbled):
    memo = tmp_path / "digests.json"
    monkeypatch.setenv(fingerprint.MEMO_VARIABLE, str(memo))
    monkeypatch.setattr(fingerprint, "SETTLED_SECONDS", 0.0)
    folder = _model_folder(tmp_path / "m")
    first = fingerprint.folder_fingerprint(folder)
    memo.write_bytes(garbled)
    assert fingerprint.folder_fingerprint(folder) == first
    assert len(json.loads(memo.read_text())) >= 2  # rewritten with the two files' entries


def test_a_memo_that_cannot_be_written_changes_nothing(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv(fingerprint.MEMO_VARIABLE, str(tmp_path / "file" / "digests.json"))
    folder = _model_folder(tmp_path / "m")
    assert fingerprint.folder_fingerprint(folder) == fingerprint.folder_fingerprint(folder)


def test_the_memo_defaults_to_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(fingerprint.MEMO_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fingerprint.memo_path() == tmp_path / "sova_lib" / "file-digests.json"


def test_concurrent_writers_keep_every_entry(tmp_path, monkeypatch):
    """Four processes fingerprint four folders at once into one memo: each one's entries are all there after."""
    import subprocess
    import sys
    from pathlib import Path

    memo = tmp_path / "digests.json"
    folders = []
    for n in range(4):
        folder = tmp_path / f"m{n}"
        folder.mkdir()
        for k in range(20):
            (folder / f"part-{k}.bin").write_bytes(bytes([n, k]) * 1000)
        folders.append(folder)
    child = ("import sys; from sova_lib import fingerprint; fingerprint.SETTLED_SECONDS = 0.0; "
             "print(fingerprint.folder_fingerprint(sys.argv[1]))")
    env = {**os.environ, fingerprint.MEMO_VARIABLE: str(memo)}
    root = str(Path(__file__).resolve().parents[1])
    procs = [subprocess.Popen([sys.executable, "-c", child, str(f)], env=env, cwd=root, stdout=subprocess.PIPE,
                              text=True) for f in folders]
    printed = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    entries = json.loads(memo.read_text())  # read before this process adds anything
    assert {os.path.realpath(p) for f in folders for p in f.iterdir()} <= set(entries)
    monkeypatch.setenv(fingerprint.MEMO_VARIABLE, str(memo))
    assert printed == [fingerprint.folder_fingerprint(f) for f in folders]


def test_content_fingerprint_and_vectors_identity_name_content_not_place(tmp_path, monkeypatch):
    folder = _model_folder(tmp_path / "m")
    assert fingerprint.content_fingerprint(folder / "config.json") == {
        "method": "file-digest", "sha256": hashlib.sha256(b'{"a": 1}').hexdigest()}
    assert fingerprint.content_fingerprint(folder) == {"method": "folder-digest",
                                                       "sha256": fingerprint.folder_fingerprint(folder)}
    from sova_lib.item_vectors import vectors_identity

    monkeypatch.chdir(folder)
    spelled = [vectors_identity(p) for p in (folder, "../m", "../m/", ".", f"{folder}/")]
    assert spelled == [{"cache": "m", "fingerprint": fingerprint.content_fingerprint(folder)}] * 5
    assert vectors_identity("config.json") == vectors_identity(folder / "config.json") == {
        "cache": "config.json", "fingerprint": fingerprint.content_fingerprint(folder / "config.json")}
