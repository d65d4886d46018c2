"""The MUVR paper's numbers (notebooks/paper/data/muvr_tables): spot values (spec Sec. 5) and the spec's consistency checks.

The notebook 05_muvr reads the CSV as it is here (``pandas.read_csv``) and sets
the numbers computed from the released features beside its Tables 7 and 8
(tests/test_notebooks.py).
"""
import csv
import itertools

import numpy as np
import pytest

from tests.paths import ROOT

PARTS = ("news", "others", "instance", "region", "dance")
CSV = ROOT / "notebooks" / "paper" / "data" / "muvr_tables" / "muvr_tables.csv"


def paper_rows(table: str) -> list[dict]:
    """Rows ``{table, group, model, column, value}`` of the CSV for one table, the value a float."""
    rows = csv.DictReader(CSV.read_text(encoding="utf-8").splitlines())
    return [{**r, "value": float(r["value"])} for r in rows if r["table"] == table]


def _row(table, group, model):
    return {r["column"]: r["value"] for r in paper_rows(table) if r["group"] == group and r["model"] == model}


def test_spot_values_from_the_spec():
    both = _row("Table 7", "text+video", "EVA-CLIP")
    assert [both[c] for c in ("mAP", "uAP", "R@200", "R@500", "R@2000", *PARTS)] == [
        58.0, 44.6, 73.0, 82.5, 92.3, 63.1, 66.1, 68.2, 63.8, 28.7]
    assert _row("Table 8", "p=0.3", "OpenCLIP (ViT-H-14)")["mAP"] == 31.7
    gpt = _row("Table 9", "multi-image", "GPT-4o, 6 frames")
    assert (gpt["accuracy all"], gpt["reranking score all"]) == (65.0, 0.19)
    assert len(paper_rows("Table 7")) == 230 and len(paper_rows("Table 9")) == 105


@pytest.mark.parametrize("table, group", [("Table 7", g) for g in ("text", "video", "text+video")] +
                         [("Table 8", g) for g in ("p=0", "p=0.3")])
def test_released_feature_rows_average_their_partitions(table, group):
    for model in ("EVA-CLIP", "OpenCLIP (ViT-H-14)"):
        row = _row(table, group, model)
        assert abs(row["mAP"] - np.mean([row[p] for p in PARTS])) <= 0.06 + 1e-9


def test_every_qa_all_cell_fits_integer_counts_over_100_pairs():
    """Acc = 50 + (a - b)/2 and RS = (2a - b - 100)/100 for a kept positives and b kept negatives (spec Sec. 4)."""
    rows = {}
    for r in paper_rows("Table 9"):
        rows.setdefault((r["group"], r["model"]), {})[r["column"]] = r["value"]
    for values in rows.values():
        fits = [(a, b) for a, b in itertools.product(range(101), repeat=2)
                if abs(50 + (a - b) / 2 - values["accuracy all"]) < 0.051
                and abs((2 * a - b - 100) / 100 - values["reranking score all"]) < 0.0051]
        assert fits
    assert len(rows) == 21

