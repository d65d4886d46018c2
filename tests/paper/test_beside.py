"""The paper's numbers beside the computed ones."""
import pandas as pd

from paper.beside import paper_beside_computed


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
