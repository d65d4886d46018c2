"""Check an installed sova_lib the way a user meets it: ``python tests/install_check.py VENV``.

``make check-install`` builds ``VENV`` fresh, installs the package from the checkout with ``pip install .`` (not
editable; its declared dependencies, with the lock's versions as constraints), then runs this script with that
environment's Python. In an empty folder outside the checkout it runs the README's command blocks (the quickstart
and the comparison), as written but with ``VENV/bin/sova``, and checks that each prints the lines the README shows
after it; then that ``sova reproduce`` outside a checkout asks for ``--notebooks``. Exit status 0 when all hold.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_blocks() -> list[tuple[str, str]]:
    """The README's fenced blocks in order, as (language, text)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)]


def check(venv: Path) -> list[str]:
    """What does not hold, as lines (empty when the installed package runs the README)."""
    problems = []
    venv = venv.resolve()
    sova = str(venv / "bin" / "sova")
    with tempfile.TemporaryDirectory() as folder:
        where = subprocess.run([str(venv / "bin" / "python"), "-c", "import sova_lib; print(sova_lib.__file__)"],
                               capture_output=True, text=True, cwd=folder)
        if not where.stdout.startswith(str(venv)):
            problems.append(f"sova_lib is not imported from {venv}: {where.stdout.strip() or where.stderr[-500:]}")
        blocks = readme_blocks()
        ran = 0
        for k, (language, text) in enumerate(blocks):
            if language != "bash" or ".venv/bin/sova" not in text:
                continue
            script = text.replace(".venv/bin/sova", sova).replace("/tmp/sova", f"{folder}/sova")
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                                  cwd=folder, timeout=1800)
            ran += 1
            if done.returncode:
                problems.append(f"README block {k} exited {done.returncode}:\n{done.stderr[-2000:]}")
                continue
            printed = [line.rstrip() for line in done.stdout.splitlines()]
            if k + 1 < len(blocks) and blocks[k + 1][0] == "text":
                problems += [f"README block {k}: {line!r} not printed" for line in blocks[k + 1][1].splitlines()
                             if line.rstrip() not in printed]
        if ran < 2:
            problems.append(f"the README has {ran} command blocks with .venv/bin/sova; expected the quickstart and "
                            "the comparison")
        done = subprocess.run([sova, "reproduce"], capture_output=True, text=True, cwd=folder, timeout=600)
        if done.returncode != 2 or "pass --notebooks DIR" not in done.stderr:
            problems.append(f"sova reproduce outside a checkout: exit {done.returncode}, {done.stderr[-500:]!r}")
    return problems


if __name__ == "__main__":
    problems = check(Path(sys.argv[1]))
    print("\n".join(problems) or "the installed sova_lib runs the README's commands as written")
    sys.exit(1 if problems else 0)
