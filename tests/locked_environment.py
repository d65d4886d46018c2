"""Whether the environment in use is the committed lock: ``python -m tests.locked_environment``.

``requirements-lock.txt`` is ``uv.lock`` exported for pip: one ``name==version ; marker`` line per distribution,
with its hashes. The lock for this interpreter and platform is every line whose marker holds here; the environment
equals it when the same distributions are installed at the same versions (sova_lib itself aside). ``make test`` runs
this first, and a figure test whose bytes differ names its result before anything else, so that a drifted package is
named as one before anyone looks at the drawing code.
"""
from __future__ import annotations

import re
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import canonicalize_name

LOCK = Path(__file__).resolve().parents[1] / "requirements-lock.txt"
_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def locked(lock: Path = LOCK) -> dict[str, str]:
    """Distribution name (canonical) -> locked version, for this interpreter and platform."""
    pins = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        if not line or line[0] in " #-":
            continue
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"{lock}: a line that is no pin: {line!r}")
        name, version, marker = match.groups()
        if marker is None or Marker(marker).evaluate():
            pins[canonicalize_name(name)] = version
    return pins


def installed() -> dict[str, str]:
    """Distribution name (canonical) -> installed version, sova_lib itself left out; where two folders of the path
    hold one distribution, the first, which is the one imported.

    A folder of the path that lies inside site-packages is a package's own vendored copies, not installed ones:
    ``import setuptools`` appends ``setuptools/_vendor`` (wheel, tomli, zipp, ...) and ``import ray`` prepends
    ``ray/thirdparty_files`` (colorama), each with its metadata; those folders are left out.
    """
    sites = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    folders = [entry for entry in sys.path if not any(site in Path(entry or ".").resolve().parents for site in sites)]
    found = {}
    for distribution in metadata.distributions(path=folders):
        found.setdefault(canonicalize_name(distribution.metadata["Name"]), distribution.version)
    found.pop("sova-lib", None)
    return found


def drift(lock: Path = LOCK) -> list[str]:
    """One line per distribution whose installed version is not the locked one (empty when they are equal)."""
    want, have = locked(lock), installed()
    lines = []
    for name in sorted(want.keys() | have.keys()):
        if name not in have:
            lines.append(f"{name}: locked {want[name]}, not installed")
        elif name not in want:
            lines.append(f"{name}: installed {have[name]}, not in the lock")
        elif have[name] != want[name]:
            lines.append(f"{name}: installed {have[name]}, locked {want[name]}")
    return lines


def verdict(lock: Path = LOCK) -> str:
    """One sentence: the environment equals the lock, or which distributions differ."""
    lines = drift(lock)
    if not lines:
        return f"the environment equals the lock ({len(locked(lock))} distributions of {lock.name})"
    return f"the environment differs from the lock ({lock.name}): " + "; ".join(lines)


def main() -> int:
    lines = drift()
    print(verdict() if not lines else "\n  ".join([f"the environment differs from the lock ({LOCK.name}):", *lines]))
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
