"""Run locks per user (sova_lib.describe.run_lock): a folder only its user can write, another user's folder never
in the way, lock files gone when a run ends."""
import os
import stat
import tempfile

import pytest

from sova_lib.describe import run_lock
from sova_lib.describe.contract import make_describer
from sova_lib.describe.runner import configuration_lock, plan_run
from sova_lib.storage import CacheLockedError

OTHER = 54321  # another user's uid
needs_root = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                                reason="making a folder another uid owns needs root")


@pytest.fixture
def tmp(tmp_path, monkeypatch):
    """A temporary folder of the test's own as tempfile's, no runtime folder, the user cache under it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    return tmp_path


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_lock_folder_is_the_users_own_with_mode_0700(tmp, monkeypatch):
    folder = run_lock.user_lock_folder()
    assert folder == tmp / "tmp" / f"sova-run-locks-{os.getuid()}" and _mode(folder) == 0o700
    folder.chmod(0o755)  # opened up by hand: closed again
    assert run_lock.user_lock_folder() == folder and _mode(folder) == 0o700
    runtime = tmp / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert run_lock.user_lock_folder() == runtime / "sova-run-locks" and _mode(runtime / "sova-run-locks") == 0o700


def test_a_link_in_the_way_is_passed_over(tmp):
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    (tmp / "tmp" / f"sova-run-locks-{os.getuid()}").symlink_to(elsewhere)
    assert run_lock.user_lock_folder() == tmp / "cache-home" / "sova_lib" / "run-locks"
    assert _mode(tmp / "cache-home" / "sova_lib" / "run-locks") == 0o700


@needs_root
def test_a_folder_of_this_users_name_that_another_user_made_is_passed_over(tmp):
    squatted = tmp / "tmp" / f"sova-run-locks-{os.getuid()}"
    squatted.mkdir(mode=0o777)
    os.chown(squatted, OTHER, OTHER)
    assert run_lock.user_lock_folder() == tmp / "cache-home" / "sova_lib" / "run-locks"


def test_a_held_lock_refuses_a_second_holder_and_is_removed_at_the_end(tmp):
    path = run_lock.user_lock_folder() / "x.lock"
    with run_lock.held(path):
        assert _mode(path) == 0o600
        with pytest.raises(run_lock.LockHeld), run_lock.held(path):
            pass
    assert not path.exists()
    with run_lock.held(path):  # taken again after
        assert path.exists()
    assert list(path.parent.iterdir()) == []


@needs_root
def test_another_users_locks_never_block_a_run(tmp, server_factory):
    server = server_factory(models=["m"])
    key = plan_run(make_describer("openai", model="m", base_url=server.url), []).key
    mine = run_lock.user_lock_folder()
    # the other user: the former shared folder, and the other user's own, each holding this run's lock name
    with configuration_lock(tmp / "cache", key):
        (name,) = [p.name for p in mine.iterdir()]
    from filelock import FileLock

    theirs = []
    for folder in (tmp / "tmp" / "sova-run-locks", tmp / "tmp" / f"sova-run-locks-{OTHER}"):
        folder.mkdir(mode=0o755)
        (folder / name).write_text("")
        os.chown(folder / name, OTHER, OTHER)
        os.chown(folder, OTHER, OTHER)
        theirs.append(FileLock(str(folder / name), thread_local=False))
        theirs[-1].acquire(timeout=0)  # held by the other user's run
    try:
        with configuration_lock(tmp / "cache", key):
            assert [p.name for p in mine.iterdir()] == [name]
            with pytest.raises(CacheLockedError), configuration_lock(tmp / "cache", key):
                pass  # this user's second run is stopped
    finally:
        for lock in theirs:
            lock.release()
    assert list(mine.iterdir()) == []  # removed when the run ended
