"""Paths the tests share: the repository root and the test data folder."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
