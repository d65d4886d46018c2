"""Tables for readers: the paper's numbers beside the computed ones, a table as CSV and Markdown."""
import pandas as pd

from sova_lib.report.tables import markdown_table, paper_beside_computed, write_outputs


def test_paper_beside_computed_keeps_the_papers_order_and_says_once_what_is_missing():
    long = pd.DataFrame([
        {"group": "text", "model": "A", "column": "R@200", "paper": 58.3, "computed": 58.1},
        {"group": "text", "model": "A", "column": "R@500", "paper": 70.6, "computed": "not computed here"},
        {"group": "text", "model": "A", "column": "R@2000", "paper": 85.6, "computed": 85.0},
        {"group": "text", "model": "B", "column": "R@200", "paper": 61.9, "computed": "not computed here"},
        {"group": "text", "model": "B", "column": "R@500", "paper": 73.3, "computed": "not computed here"},
        {"group": "text", "model": "B", "column": "R@2000", "paper": 86.9, "computed": "not computed here"},
    ])
    wide = paper_beside_computed(long)
    assert wide.columns.tolist() == ["group", "model", "numbers", "R@200", "R@500", "R@2000"]  # not R@2000 first
    assert wide.values.tolist() == [
        ["text", "A", "paper", 58.3, 70.6, 85.6],
        ["text", "A", "computed here", 58.1, "not computed here", 85.0],
        ["text", "B", "paper; not computed here", 61.9, 73.3, 86.9],
    ]


def test_markdown_table_shows_an_absent_value_as_a_dash():
    import numpy as np

    frame = pd.DataFrame({"a": [1.5, np.nan], "b": [None, "x"], "c": [pd.NA, np.float32("nan")], "d": [0, 2]})
    assert markdown_table(frame) == "| a | b | c | d |\n|---|---|---|---|\n| 1.5 | - | - | 0 |\n| - | x | - | 2 |\n"


def test_write_outputs_numbers_as_csv_readable_as_markdown(tmp_path):
    numbers = pd.DataFrame({"v": [1.23456]})
    shown = pd.DataFrame({"v": ["1.2"]})
    csv, md = write_outputs(numbers, shown, tmp_path / "t")
    assert pd.read_csv(csv)["v"].tolist() == [1.23456]
    assert md.read_text().splitlines() == ["| v |", "|---|", "| 1.2 |"]
