"""The paper's published VANTAGE-Bench numbers stay the paper's; a user's score is a row of its own."""
from sova_lib.benchmarks.vantage.published import published_comparison
from sova_lib.benchmarks.vantage.scoring import VantageResult


def test_the_papers_rows_alone_without_a_score():
    rows = published_comparison()
    assert len(rows) == 19 and all(set(r) == {"task", "model", "setting", "metric", "value", "source"} for r in rows)
    assert rows[1] == {"task": "vqa", "model": "GPT-5.6 Sol", "setting": "all", "metric": "accuracy", "value": 78.08,
                       "source": "arXiv:2609.09396 sec. 4 (Semantic Understanding)"}


def test_a_users_score_is_one_row_named_by_its_model_beside_unchanged_paper_rows():
    mine = VantageResult(task="vqa", metric="accuracy", value=100 / 3, mode="official", n_items=6, n_parsed=6,
                         n_scored=6, ci_unit="item", tie_rule="none",
                         context={"model": "my-vlm", "source": "subs/vqa.jsonl"})
    rows = published_comparison({"vqa": mine})
    assert rows[:19] == published_comparison()  # the paper's rows as the paper reports them
    assert rows[19:] == [{"task": "vqa", "model": "my-vlm", "setting": "your answer key (6 items)",
                          "metric": "accuracy", "value": 33.33, "source": "computed here from subs/vqa.jsonl"}]
    # no value of the user's lands in a row of the paper's (GPT-5.6 Sol, all; Cosmos3-Super per domain)
    assert all(r["value"] != 33.33 for r in rows[:19])
