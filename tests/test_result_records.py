"""Every result type turns itself into one record (``to_record``), and the command line builds none itself.

Each test builds a result by hand and compares its whole record, field for
field, with the record the command line wrote for such a result before the
result types built their own (the same rules, restated here as literal
values). Rounding is worked out by hand in the comments: values to 2
decimals, ``fps`` to 6.
"""
import ast

import pytest

from sova_lib._version import __version__
from sova_lib.benchmarks.image_tasks import ImageTaskResult
from sova_lib.benchmarks.muvr.qa import QAResult
from sova_lib.benchmarks.muvr.retrieval import MuvrResult, record_metrics
from sova_lib.benchmarks.vantage.scoring import VantageResult
from sova_lib.evaluation import Result
from sova_lib.records import RECORD_FIELDS, record_name
from sova_lib.report.compare import Comparison
from tests.paths import ROOT


def _record(**fields):
    """A full record: ``fields``, every other field empty, and this library's version."""
    assert set(fields) <= set(RECORD_FIELDS)
    return {**dict.fromkeys(RECORD_FIELDS), "library_version": __version__, **fields}


def test_sovabench_result():
    r = Result(protocol="intra-pair", metric="Pair-mAP", value=51.234, per_class={"door": 40.0}, n_queries=10,
               per_pair={"trunk": 60.5}, ci=(40.004, 62.996), ties="expected", tie_spread=1.25, aggregate="mean",
               notes=["left out"])
    record = r.to_record(kind="description cache", source="model (general)", cache="c__1", encoder="enc",
                         text_split="sentences", bootstrap=100, seed=3, benchmark="SOVABench")
    # 51.234 -> 51.23, 40.004 -> 40.0, 62.996 -> 63.0; per_pair (Pair-mAP) replaces per_class; notes stay out
    assert record == _record(kind="description cache", source="model (general)", benchmark="SOVABench",
                             protocol="intra-pair", metric="Pair-mAP", value=51.23, ci_low=40.0, ci_high=63.0,
                             n_queries=10, n_missing=0, per_class={"trunk": 60.5}, ties="expected", tie_spread=1.25,
                             bootstrap=100, seed=3, encoder="enc", aggregate="mean", text_split="sentences",
                             cache="c__1")


def test_image_task_result():
    r = ImageTaskResult("vsr-zeroshot", 500 / 9, 9, ci=(100 / 3, 700 / 9), notes=["first", "second"])
    record = r.to_record(kind="description cache", source="cache/x", bootstrap=10, seed=0, baseline=None,
                         encoder="enc")
    # 500/9 = 55.555... -> 55.56; 100/3 -> 33.33; 700/9 = 77.777... -> 77.78
    assert record == _record(kind="description cache", source="cache/x", benchmark="image-tasks",
                             protocol="vsr-zeroshot", metric="accuracy", value=55.56, ci_low=33.33, ci_high=77.78,
                             n_queries=9, ties="expected", bootstrap=10, seed=0, encoder="enc",
                             text_split="sentences+max", note="first; second")
    chance = ImageTaskResult("vsr-random", 50.0, 4, ties="n/a", text_split="n/a")
    assert chance.to_record(kind="baseline", source="random", baseline="random", bootstrap=0, seed=0)["note"] is None


def test_muvr_result_and_its_metrics_read_back():
    r = MuvrResult(version="filter", query="text+video", source="feats", ties="expected", tag_weight=0.3,
                   metrics={"mAP": 70.916, "R@200": 98.3333}, per_partition={"news": {"mAP": 70.724, "n_rows": 4}},
                   n_rows=36, ci={"mAP": (66.6624, 74.5244)}, notes=["a note"])
    record = r.to_record(kind="embeddings", source="feats", cache="feats", bootstrap=20, seed=0)
    assert record == _record(kind="embeddings", source="feats", benchmark="MUVR", protocol="filter text+video p=0.3",
                             metric="mAP", value=70.92, ci_low=66.66, ci_high=74.52, n_queries=36,
                             per_class={"news": 70.72}, ties="expected", bootstrap=20, seed=0, aggregate="max",
                             cache="feats", note="R@200 98.33; a note")
    assert record_metrics(record) == {"mAP": 70.92, "R@200": 98.33}
    base = MuvrResult(version="base", query="none", source="random-ranking", ties="n/a", tag_weight=0.3,
                      metrics={"mAP": 35.0, "uAP": 29.434}, per_partition={}, n_rows=45)
    record = base.to_record(kind="baseline", source="random-ranking", baseline="random-ranking", bootstrap=0, seed=0)
    assert record["protocol"] == "base none" and record["ci_low"] is None and record["note"] == "uAP 29.43"
    assert record_metrics(record) == {"mAP": 35.0, "uAP": 29.43}


def test_muvr_qa_result():
    r = QAResult("strict", {"all": 50.0, "no_tag": 25.0}, {"all": -1 / 3, "no_tag": -1.0},
                 {"all": 30, "no_tag": 20}, ["q7"])
    record = r.to_record(kind="description cache", source="answers.jsonl", cache="answers.jsonl", bootstrap=0, seed=0)
    # the Reranking Score signed with 2 decimals: -1/3 -> -0.33
    assert record == _record(kind="description cache", source="answers.jsonl", benchmark="MUVR",
                             protocol="qa (strict parse)", metric="accuracy", value=50.0, n_queries=30,
                             per_class={"all": 50.0, "no_tag": 25.0}, ties="n/a", bootstrap=0, seed=0,
                             cache="answers.jsonl",
                             note="reranking score all -0.33, no_tag -1.00; 1 unparseable answer(s)")


def test_vantage_result():
    r = VantageResult(task="temporal", metric="mIoU", value=20.0, mode="official", n_items=3, n_parsed=1, n_scored=3,
                      ci_unit="item", tie_rule="first interval", ci=(40 / 3, 100 / 3), n_resamples=20,
                      secondary={"R@0.5": 100 / 3, "n_videos": 3}, notes=["one note"])
    record = r.to_record(kind="submission", source="sub/temporal.jsonl", cache="sub-temporal", model="m", seed=5,
                         similarity=None)
    # 40/3 -> 13.33, 100/3 -> 33.33; a count stays an integer
    assert record == _record(kind="submission", source="sub/temporal.jsonl", benchmark="VANTAGE-Bench",
                             protocol="temporal_grounding (official)", metric="mIoU", value=20.0, ci_low=13.33,
                             ci_high=33.33, n_queries=3, per_class={"R@0.5": 33.33, "n_videos": 3},
                             ties="first interval", bootstrap=20, seed=5, cache="sub-temporal", model="m",
                             note="parsed 1/3 answers, 3 items scored; one note")
    r.ci = None  # no interval: no seed recorded
    assert r.to_record(kind="description cache", source="s", seed=5)["seed"] is None


def test_paired_comparison():
    c = Comparison(protocol="intra-pair", metric="Pair-mAP", name_a="A", name_b="B", value_a=60.0, value_b=55.5,
                   difference=4.5, ci=(1.234, 7.891), n_queries=100, bootstrap=1000, seed=0, ties="expected",
                   aggregate="max", per_query=None, per_class={"door": 10 / 3})
    record = c.to_record(encoder="enc", text_split="sentences", benchmark="SOVABench")
    assert record == _record(kind="paired comparison", source="A minus B", benchmark="SOVABench",
                             protocol="intra-pair", metric="Pair-mAP difference", value=4.5, ci_low=1.23,
                             ci_high=7.89, n_queries=100, per_class={"door": 3.33}, ties="expected", bootstrap=1000,
                             seed=0, encoder="enc", aggregate="max", text_split="sentences", cache="A vs B",
                             missing_rule="failures",
                             note="A: 60.00, B: 55.50; paired bootstrap over the same queries")
    assert record_name(record).startswith("A-vs-B__intra-pair__enc__max__sentences__")


def _builds_records(source: str) -> list[str]:
    """Where ``source`` names ``make_record`` (imports it, calls it, or reads it as an attribute)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.alias) and node.name.split(".")[-1] == "make_record":
            found.append(f"line {node.lineno}: imports make_record")
        elif isinstance(node, ast.Name) and node.id == "make_record":
            found.append(f"line {node.lineno}: uses make_record")
        elif isinstance(node, ast.Attribute) and node.attr == "make_record":
            found.append(f"line {node.lineno}: uses records.make_record")
    return found


@pytest.mark.parametrize("planted", ["from sova_lib.records import make_record, write_record\n",
                                     "from sova_lib import records\nrecords.make_record(kind='x', source='y')\n"])
def test_the_record_check_finds_a_planted_record_builder(planted):
    assert _builds_records(planted)


def test_no_command_module_builds_a_record():
    """The command line passes what was scored to ``to_record`` and writes the record; it builds none."""
    modules = sorted((ROOT / "sova_lib" / "cli").rglob("*.py"))
    assert len(modules) > 5
    found = {str(p.relative_to(ROOT)): _builds_records(p.read_text()) for p in modules}
    assert {k: v for k, v in found.items() if v} == {}
