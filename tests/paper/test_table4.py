"""SOVABench paper Table 4 and Figure 2(b) (``sova_lib.paper.table4``)."""
import pandas as pd

from sova_lib.paper import table4
from sova_lib.paper.results import NOT_COMPUTED


def _computed() -> pd.DataFrame:
    # the prevalence baseline (the paper's Random row), one description cache matched to a paper row, one not
    return pd.DataFrame([
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "inter-pair",
         "value": 3.42, "ci_low": 3.3, "ci_high": 3.5, "note": ""},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "intra-pair",
         "value": 50.29, "ci_low": 50.1, "ci_high": 50.47, "note": ""},
        {"kind": "description cache", "source": "MiniCPM-V 4.5 (task-aware)", "model": "openbmb/MiniCPM-V-4_5",
         "prompt": "task-aware", "cache": "c1", "encoder": "all-MiniLM-L6-v2", "protocol": "inter-pair",
         "value": 37.0, "ci_low": 36.0, "ci_high": 38.0, "note": ""},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "two-class",
         "value": 51.0, "ci_low": 50.0, "ci_high": 52.0, "note": ""},  # not a Table 4 column: left out
    ])


def test_table4_has_the_papers_21_rows_with_the_computed_ones_beside_them():
    table = table4.table4_frame(_computed())
    assert len(table) == 21  # the paper's rows; nothing computed here is outside the paper
    assert list(table.columns) == ["group", "model", "prompt",
                                   "inter-pair paper", "inter-pair here", "inter-pair CI low", "inter-pair CI high",
                                   "intra-pair paper", "intra-pair here", "intra-pair CI low", "intra-pair CI high",
                                   "computed as"]
    rows = table.set_index(["model", "prompt"])
    assert rows.loc[("Random", "-"), ["inter-pair paper", "inter-pair here", "intra-pair here"]].tolist() == \
        [3.4, 3.42, 50.29]
    assert rows.loc[("MiniCPM-V 4.5", "task-aware"), "inter-pair here"] == 37.0
    assert (table["computed as"] == NOT_COMPUTED).sum() == 19  # 21 rows, Random and MiniCPM-V computed
    shown = table4.readable(table).set_index(["model", "prompt"])
    assert shown.loc[("Random", "-"), "intra-pair (here, 95% CI)"] == "50.3 [50.1, 50.5]"
    assert shown.loc[("MiniCPM-V 4.5", "task-aware"), "inter-pair (paper)"] == "38.3"


def test_the_papers_random_row_and_figure_2b_drawn_on_it():
    assert table4.paper_random() == (3.4, 50.3)  # Table 4's Random row, as printed
    fig = table4.figure2b(table4.table4_frame(_computed()))
    (ax,) = fig.axes
    dashed = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == "--" and
              line.get_xdata()[0] == line.get_xdata()[1]]
    assert dashed == [3.4]
    assert [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--" and
            line.get_ydata()[0] == line.get_ydata()[1] and line.get_xdata()[0] != line.get_xdata()[1]] == [50.3]
    labels = sorted(t.get_text() for t in ax.texts if t.get_text())
    # one circle per paper row (Random included); MiniCPM-V was computed on inter-pair alone, so it has no star
    assert len(labels) == 21 and "Random" in labels and not any(label.endswith("[here]") for label in labels)
