"""Table 3 (image tasks): Random row from the choice lists, the paper's averages check, cache scoring."""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from sova_lib.benchmarks import image_tasks as it
from sova_lib.describe.cache import cache_key, new_manifest
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.paper import table3
from sova_lib.paper.cache_scan import FoundCache
from sova_lib.paper.results import paper_results


class ConstantEncoder:
    name = "constant"

    def encode(self, texts):
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


def test_random_rows_from_vendored_vsr_and_given_files(tmp_path, monkeypatch):
    monkeypatch.delenv("SOVA_IMAGE_TASKS", raising=False)
    (tmp_path / "CountBench.json").write_text(json.dumps([{"image_url": "u", "text": "two cats", "number": 2}]))
    rows = {r["column"]: r for r in table3.random_rows(tmp_path)}
    assert rows["VSR"]["value"] == 50.0 and rows["VSR"]["items"] == 1222
    assert rows["CountBench"]["value"] == 100 / 9
    assert np.isnan(rows["What's Up A"]["value"]) and "controlled_images_dataset.json" in rows["What's Up A"]["note"]
    assert np.isnan(rows["SpatialBench InD."]["value"])


def test_random_row_check_exposes_the_visual7w_entry():
    paper = paper_results("Table 3")
    random = paper[paper["model"] == "Random"]
    check = table3.random_row_check(dict(zip(random["column"], random["value"]))).set_index("averages")
    assert check.loc["printed in Table 3", "Avg."] == 24.7
    assert round(check.loc["recomputed from the printed columns", "Count Avg."], 2) == 10.0
    assert round(check.loc["recomputed from the printed columns", "Avg."], 2) == 20.96
    assert round(check.loc["recomputed with Visual7W-Count = 25.0 (4 options)", "Avg."], 2) == 24.71


def test_description_rows_score_complete_caches_only():
    items = it.load("vsr-zeroshot")
    manifest = new_manifest(cache_key("transformers", {"model": "org/some-vlm"}, resolve_prompt("task-aware-vsr"),
                                      None), source="run")
    full = FoundCache(Path("full__abc"), {i.image_key: "A photo." for i in items}, manifest)
    part = FoundCache(Path("part__abc"), {items[0].image_key: "A photo."}, manifest)
    rows = table3.description_rows([full, part], ConstantEncoder())
    assert [r["cache"] for r in rows] == ["full__abc", "part__abc"]
    assert rows[0]["source"].startswith("org/some-vlm (task-aware-vsr")
    assert rows[0]["value"] == 50.0  # every choice ties: the expected accuracy is chance
    assert np.isnan(rows[1]["value"]) and "714 of 715 images not described" in rows[1]["note"]


def test_table3_frame_keeps_prompts_apart_and_averages_complete_rows():
    frame = table3.table3_frame(paper_results("Table 3"), {"toy": {"VSR": 50.0, "CountBench": 20.0,
                                                                   "Visual7W-Count": 30.0}})
    rows = frame.set_index("row")
    assert rows.loc["InternVL3.5 8B (general)", "Avg."] == 45.3
    assert rows.loc["InternVL3.5 8B (task-aware)", "Avg."] == 54.3
    assert rows.loc["toy", "Count Avg."] == 25.0 and np.isnan(rows.loc["toy", "Spatial Avg."])
    shown = table3.readable(frame).set_index("row")
    assert shown.loc["toy", "What's Up A"] == "not computed here" and shown.loc["CLIP-ViT-H-14", "VSR"] == "54.5"
    assert shown.loc["CLIP-ViT-H-14", "CountBench"] == "-"
    assert isinstance(frame, pd.DataFrame)
