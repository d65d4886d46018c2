"""Run locks in a folder that belongs to their user alone, removed when the run ends.

A run's lock (``runner.configuration_lock``) must stop a second run of the same user and never another user's:
so it lives in a folder only its user can write, never in one every user shares. :func:`user_lock_folder` is the
first of these that is, or can be made, a real folder (not a link) owned by this user with mode 0700:

1. ``$XDG_RUNTIME_DIR/sova-run-locks`` when that runtime folder is set and is this user's (0700 by the XDG
   Base Directory specification);
2. ``<tmp>/sova-run-locks-<uid>`` (``tempfile.gettempdir()``; the user's name on a system without uids): another
   user's folder has another name, so it cannot block a run, and a folder of this name that another user made
   first (or a link) is passed over;
3. ``<user cache>/sova_lib/run-locks`` (``$XDG_CACHE_HOME`` or ``~/.cache``).

:func:`held` takes a lock file there (mode 0600) without waiting and removes it before releasing it.
"""
from __future__ import annotations

import contextlib
import getpass
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["LockHeld", "held", "user_lock_folder"]


class LockHeld(Exception):
    """The lock is held by another run."""


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def _private(folder: Path) -> bool:
    """True when ``folder`` is (made, if missing) a real folder owned by this user that only this user can enter."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # parents (the user's cache folder) as umask says
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):  # a file or a link, whoever made it
        return False
    uid = _uid()
    if uid is None:  # no uids (Windows): the per-user name is the guard
        return True
    if info.st_uid != uid:
        return False
    if stat.S_IMODE(info.st_mode) & 0o077:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            return False
    return True


def user_lock_folder() -> Path:
    """This user's folder for run locks (module docstring); ``OSError`` when none of the three can be made."""
    uid = _uid()
    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    with contextlib.suppress(OSError):
        if runtime and Path(runtime).is_dir() and (uid is None or os.stat(runtime).st_uid == uid):
            candidates.append(Path(runtime) / "sova-run-locks")
    candidates.append(Path(tempfile.gettempdir()) / f"sova-run-locks-{uid if uid is not None else getpass.getuser()}")
    candidates.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sova_lib" / "run-locks")
    for folder in candidates:
        if _private(folder):
            return folder
    raise PermissionError(f"no folder for run locks that only this user can write: tried "
                          f"{', '.join(str(f) for f in candidates)}")


@contextlib.contextmanager
def held(path: Path):
    """Hold the lock file ``path`` (mode 0600) while the block runs; ``LockHeld`` at once when another run holds
    it. The file is removed while still held, then released (a run that opened it meanwhile finds it gone and
    takes a new one: filelock refuses a lock whose file has no name left)."""
    from filelock import FileLock, Timeout

    lock = FileLock(path, mode=0o600, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise LockHeld(str(path)) from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        lock.release()
