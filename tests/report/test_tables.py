"""Tables for readers: a DataFrame as Markdown, a table as CSV and Markdown."""
import pandas as pd

from sova_lib.report.tables import markdown_table, write_outputs


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
