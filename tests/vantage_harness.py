"""The module paths a stand-in VANTAGE-Bench harness needs: ``vlmeval``, ``vlmeval.dataset`` and ``vlmeval.smp``
with its ``load`` (the harness reads a TSV with ``vlmeval.smp.load``); each test writes its dataset modules."""
from __future__ import annotations

from pathlib import Path


def harness_packages(folder: Path) -> Path:
    """``folder`` with the harness's packages, empty but for ``vlmeval.smp.load``; returns ``folder``."""
    for package in ("vlmeval", "vlmeval/smp", "vlmeval/dataset"):
        (folder / package).mkdir(parents=True)
        (folder / package / "__init__.py").write_text("")
    (folder / "vlmeval/smp/__init__.py").write_text(
        "import pandas as pd\n\ndef load(path):\n    return pd.read_csv(path, sep='\\t')\n")
    return folder
