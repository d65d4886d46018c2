"""SOVABench paper Table C.1 (``sova_lib.paper.table_c1``)."""
import math

import pandas as pd

from sova_lib.paper import table_c1
from sova_lib.paper.results import NOT_COMPUTED


def _computed() -> pd.DataFrame:
    # the prevalence baseline (the paper's Random row), one description cache matched to a paper row, and a
    # Table 4 row (inter-pair, not constrained) that Table C.1 leaves out
    return pd.DataFrame([
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "inter-pair-constrained",
         "value": 23.71, "ci_low": 22.9, "ci_high": 24.46, "note": ""},
        {"kind": "description cache", "source": "MiniCPM-V 4.5 (task-aware)", "model": "openbmb/MiniCPM-V-4_5",
         "prompt": "task-aware", "cache": "c1", "encoder": "all-MiniLM-L6-v2", "protocol": "inter-pair-constrained",
         "value": 44.0, "ci_low": 43.0, "ci_high": 45.0, "note": ""},
        {"kind": "baseline", "baseline": "prevalence", "source": "prevalence", "protocol": "inter-pair",
         "value": 3.42, "ci_low": 3.3, "ci_high": 3.5, "note": ""},
    ])


def test_table_c1_has_the_papers_21_rows_with_efficiency_as_reported():
    table = table_c1.table_c1_frame(_computed())
    # the paper's rows: Random, 6 contrastive models, 4 general and 6 video MLLM rows, 4 API rows
    assert len(table) == 21
    assert list(table.columns) == ["group", "model", "prompt", "efficiency paper",
                                   "inter-pair-constrained paper", "inter-pair-constrained here",
                                   "inter-pair-constrained CI low", "inter-pair-constrained CI high", "computed as"]
    rows = table.set_index(["model", "prompt"])
    assert rows.loc[("Random", "-"), ["inter-pair-constrained paper", "inter-pair-constrained here"]].tolist() == \
        [23.7, 23.71]
    assert math.isnan(rows.loc[("Random", "-"), "efficiency paper"])  # the paper gives Random no efficiency
    minicpm = rows.loc[("MiniCPM-V 4.5", "task-aware")]
    assert (minicpm["efficiency paper"], minicpm["inter-pair-constrained paper"],
            minicpm["inter-pair-constrained here"]) == (0.26, 44.8, 44.0)
    assert (table["computed as"] == NOT_COMPUTED).sum() == 19  # 21 rows, Random and MiniCPM-V computed
    shown = table_c1.readable(table).set_index(["model", "prompt"])
    assert list(shown.columns) == ["group", "efficiency (paper)", "inter-pair-constrained (paper)",
                                   "inter-pair-constrained (here, 95% CI)", "computed as"]
    assert shown.loc[("Random", "-"), "efficiency (paper)"] == "-"
    assert shown.loc[("Random", "-"), "inter-pair-constrained (here, 95% CI)"] == "23.7 [22.9, 24.5]"
    assert shown.loc[("VideoChat-R1 7B", "general"), "efficiency (paper)"] == "0.06"
    assert shown.loc[("VideoChat-R1 7B", "general"), "inter-pair-constrained (here, 95% CI)"] == NOT_COMPUTED
