"""Table 3 (image tasks): Random row from the choice lists, the paper's averages check, cache scoring."""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.benchmarks import image_tasks as it
from sova_lib.describe.cache import cache_key, new_manifest
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.report.cache_scan import FoundCache

from paper import table3
from paper.results import paper_results


class ConstantEncoder:
    name = "constant"

    def encode(self, texts):
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


def test_random_records_from_vendored_vsr_and_given_files(tmp_path, monkeypatch):
    monkeypatch.delenv("SOVA_IMAGE_TASKS", raising=False)
    (tmp_path / "CountBench.json").write_text(json.dumps([{"image_url": "u", "text": "two cats", "number": 2}]))
    made = table3.random_records(tmp_path, bootstrap=0, seed=0)
    assert [r["protocol"] for r in made] == ["vsr-zeroshot", "whatsup-a", "whatsup-b", "countbench", "visual7w-count"]
    assert all(r["benchmark"] == "image-tasks" and r["baseline"] == "random" for r in made)
    # VSR has 1222 items of 2 choices (50.0); the one CountBench item has the nine choices "two".."ten"
    # (100/9 = 11.11 at the records' 2 decimals); no What's Up file was given
    rows = table3.random_table(made).set_index("column")
    assert rows.loc["VSR", "value"] == 50.0 and rows.loc["VSR", "items"] == 1222 and rows.loc["VSR", "note"] == ""
    assert rows.loc["CountBench", "value"] == 11.11 and rows.loc["CountBench", "items"] == 1
    assert np.isnan(rows.loc["What's Up A", "value"]) and rows.loc["What's Up A", "items"] == 0
    assert "controlled_images_dataset.json" in rows.loc["What's Up A", "note"]
    assert np.isnan(rows.loc["SpatialBench InD.", "value"]) and "SpatialBench" in rows.loc["SpatialBench InD.", "note"]
    assert rows.loc["SpatialBench OutD.", "note"].startswith("not computed here") and len(rows) == 7


def _caches():
    items = it.load("vsr-zeroshot")
    manifest = new_manifest(cache_key("transformers", {"model": "org/some-vlm"}, resolve_prompt("task-aware-vsr"),
                                      None), source="run")
    full = FoundCache(Path("full__abc"), {i.image_key: "A photo." for i in items}, manifest)
    part = FoundCache(Path("part__abc"), {items[0].image_key: "A photo."}, manifest)
    return full, part


def test_description_records_score_complete_caches_only():
    full, part = _caches()
    made = table3.description_records([full, part], ConstantEncoder(), bootstrap=0, seed=0)
    assert [r["cache"] for r in made] == ["full__abc", "part__abc"]
    assert made[0]["source"].startswith("org/some-vlm (task-aware-vsr") and made[0]["model"] == "org/some-vlm"
    assert made[0]["value"] == 50.0  # every choice ties: the expected accuracy is chance
    assert made[0]["n_queries"] == 1222 and made[0]["encoder"] == "constant"
    assert made[1]["value"] is None and "714 of 715 images not described" in made[1]["note"]


def test_table3_rows_are_named_by_source_and_folder():
    """Random, oracle and caches, each a row; two caches of one source are told apart by folder."""
    full, part = _caches()
    encoder = ConstantEncoder()
    run = {"bootstrap": 0, "seed": 0}
    made = pd.DataFrame([*table3.random_records(**run), *table3.oracle_records(encoder, limit=4, **run),
                         *table3.description_records([part, full], encoder, **run)])
    made.insert(0, "column", made["protocol"].map(table3.COLUMN_OF))
    rows = table3.computed_rows(made)
    # the two caches share a model and prompt, so their rows are told apart by folder, in folder-name order
    label, partial = (f"{full.label} [here: {c}]" for c in ("full__abc", "part__abc"))
    assert list(rows) == ["Random (recomputed from the choice lists)", "oracle (first 4 items; an upper bound)", label,
                          partial]
    # four VSR items, two tied choices each (constant vectors): 50.0; the oracle too, since every choice ties
    assert rows["oracle (first 4 items; an upper bound)"] == {"VSR": 50.0}
    assert rows["Random (recomputed from the choice lists)"]["VSR"] == 50.0
    assert rows[label] == {"VSR": 50.0} and np.isnan(rows[partial]["VSR"])  # never scored on a subset
    one = table3.computed_rows(made[made["cache"] != "part__abc"])
    assert list(one)[-1] == f"{full.label} [here]"  # a source of one cache names its row alone
    frame = table3.table3_frame(paper_results("Table 3"), rows).set_index("row")
    assert frame.loc[label, "VSR"] == 50.0 and frame.loc[label, "source"] == "computed here"


def test_table3_frame_keeps_prompts_apart_and_averages_complete_rows():
    frame = table3.table3_frame(paper_results("Table 3"), {"toy": {"VSR": 50.0, "CountBench": 20.0,
                                                                   "Visual7W-Count": 30.0}})
    rows = frame.set_index("row")
    assert rows.loc["InternVL3.5 8B (general)", "Avg."] == 45.3
    assert rows.loc["InternVL3.5 8B (task-aware)", "Avg."] == 54.3
    assert rows.loc["toy", "Count Avg."] == 25.0 and np.isnan(rows.loc["toy", "Spatial Avg."])
    assert isinstance(frame, pd.DataFrame)
