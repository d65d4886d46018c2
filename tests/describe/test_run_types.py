"""One summary type for describing and embedding, and one run and one Ray options type for both engines."""
import inspect
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest

from sova_lib.describe.contrastive.ray_engine import embed_items_ray
from sova_lib.describe.contrastive.runner import embed_items
from sova_lib.describe.ray_engine import describe_items_ray
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import RunOptions, RunSummary
from sova_lib.describe.runner import LocalEngine, describe_items


def test_one_summary_reads_the_same_for_both_engines():
    folder = Path("/c/f")
    embed = RunSummary(folder, verb="embedded", done=3, failed=1, frames=12, skipped_cached=1, skipped_failed=1,
                       total_done=4, total_failed=1, seconds=2.0, failures={"x": "bad"})
    # by hand: 3 items in 2.0 s = 1.50 items/s; skipped = 1 cached + 1 failed before
    assert embed.line() == "3 embedded, 2 already cached, 1 failed; 12 frames in 2.0 s (1.50 items/s) -> /c/f"
    assert (embed.done, embed.skipped, embed.failures, embed.items_per_s) == (3, 2, {"x": "bad"}, 1.5)
    assert str(embed).splitlines() == [
        "embedded 3, skipped 1 (already cached), failed 1 in 2.0 s (1.50 items/s)",
        "  skipped 1 items that failed before: --retry-errors (retry_errors=True) tries them again",
        "  vectors: /c/f (4 items)",
        "  errors: /c/f/errors.jsonl (1 items without a vector)",
        "  manifest: /c/f/manifest.json"]
    describe = RunSummary(folder, done=4, cut=1, max_answer_chars=500, seconds=0.0, total_done=4)
    assert describe.done == 4 and describe.items_per_s == 0.0
    assert str(describe).splitlines() == [
        "described 4, skipped 0 (already cached), failed 0 in 0.0 s (0.00 items/s)",
        "  descriptions: /c/f/descriptions.jsonl (4 items)",
        '  1 of the 4 answers were longer than 500 characters and were cut to that length (flagged "cut": '
        "<length> in descriptions.jsonl; --max-answer-chars keeps more)",
        "  manifest: /c/f/manifest.json"]


def test_ray_options_describe_the_pool():
    options = replace(RayOptions(workers=2, gpus_per_worker=1.0, items_per_call=4), items_per_call=16)
    assert (options.workers, options.gpus_per_worker, options.items_per_call, options.address) == (2, 1.0, 16, None)
    assert options.engine() == {"name": "ray", "workers": 2, "gpus_per_worker": 1.0, "cpus_per_worker": 1.0,
                                "items_per_call": 16}
    assert options.device() == "ray: 2 x (1 GPU, 1 CPU)"
    assert RayOptions(cpus_per_worker=3.0, load_workers=None).threads() == 3  # the actor's CPUs (rule below)
    assert RayOptions(load_workers=5).threads() == 5
    with pytest.raises(ValueError, match="workers and items_per_call must be at least 1, got 0 and 8"):
        replace(options, workers=0, items_per_call=8)


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"items_per_call": 0}])
def test_bad_ray_options_stop_before_anything_starts(tmp_path, kwargs):
    with pytest.raises(ValueError, match="workers and items_per_call must be at least 1"):
        describe_items_ray("motion", {}, [], tmp_path, prompt="Describe.", ray=RayOptions(**kwargs))
    assert not (tmp_path / "descriptions").exists()


@pytest.mark.parametrize("function", [describe_items, describe_items_ray, embed_items, embed_items_ray])
def test_run_and_ray_options_are_taken_only_as_one_object_each(function):
    # each field of RunOptions (and, for a Ray engine, RayOptions) reaches a run only through ``run`` (``ray``)
    parameters = set(inspect.signature(function).parameters)
    by_name = {f.name for f in fields(RunOptions)} | {f.name for f in fields(RayOptions)} - {"load_workers"}
    assert parameters & by_name == set() and "progress" not in parameters
    assert "run" in parameters and ("ray" in parameters) == function.__name__.endswith("_ray")


class _FailsOnce:
    """Fails item "b" on its first call, then describes everything as its id."""

    name, max_batch_size, max_concurrency = "fails-once", 1, 1

    def __init__(self):
        self.calls = []

    def config(self):
        return {"model": "fails-once"}

    def describe(self, requests):
        self.calls += [r.id for r in requests]
        if requests[0].id == "b" and self.calls.count("b") == 1:
            raise RuntimeError("first try")
        return [r.id for r in requests]


def _still(item, fps):
    return [None], (0.0,), False


def test_run_options_drive_the_run(tmp_path, capsys):
    from sova_lib.describe.item import Item

    items = [Item(i, tmp_path / f"{i}.png") for i in "abc"]
    describer = _FailsOnce()
    quiet = RunOptions(show_progress=False, verbose=False, stop_after_same_failures=0)
    first = describe_items(describer, items, tmp_path / "c", prompt="Say the id.", engine=LocalEngine(_still), run=quiet)
    assert (first.done, first.failed, first.failures) == (2, 1, {"b": "RuntimeError: first try"})
    # again without retrying: "b" is skipped; with retry_errors: "b" is described
    again = describe_items(describer, items, tmp_path / "c", prompt="Say the id.", engine=LocalEngine(_still), run=quiet)
    assert (again.done, again.skipped_failed) == (0, 1)
    retried = describe_items(describer, items, tmp_path / "c", prompt="Say the id.", engine=LocalEngine(_still),
                             run=replace(quiet, retry_errors=True))
    # "b" now described: the cache holds 3 descriptions and no item without one
    assert (retried.done, retried.failed, retried.total_done, retried.total_failed) == (1, 0, 3, 0)
    # the first run calls each item once, in whatever order its threads reach them; the retry calls "b" alone
    assert sorted(describer.calls[:3]) == ["a", "b", "c"] and describer.calls[3:] == ["b"]
    assert capsys.readouterr().out == ""  # verbose=False: nothing printed
    loud = describe_items(describer, items, tmp_path / "c", prompt="Say the id.", engine=LocalEngine(_still),
                          run=replace(quiet, verbose=True))
    assert capsys.readouterr().out == str(loud) + "\n"


@pytest.mark.parametrize("cpus_per_worker, cores, load_workers, expected", [
    # by hand: load_workers when given, else min(8, int(cpus_per_worker) or 1), at least 1; the planning
    # machine's core count ("cores") plays no part, since the actors may run on other nodes
    (1.0, 16, None, 1),
    (4.0, 16, None, 4),
    (4.0, 2, None, 4),      # a 2-core driver plans 4-CPU actors for a bigger node
    (64.0, 16, None, 8),    # capped at 8
    (2.5, 16, None, 2),     # rounded down
    (0.5, 16, None, 1),     # a fraction of a CPU still decodes on one thread
    (4.0, None, None, 4),   # os.cpu_count() unknown: no matter
    (64.0, 2, 5, 5),        # load_workers is taken as given
])
def test_decoding_threads_rule(monkeypatch, cpus_per_worker, cores, load_workers, expected):
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    assert RayOptions(cpus_per_worker=cpus_per_worker, load_workers=load_workers).threads() == expected


def test_both_ray_engines_give_their_actors_the_one_threads_rule(monkeypatch, tmp_path):
    """The describe and the embedding Ray engines hand each actor ``RayOptions.threads()`` (no Ray started)."""
    pytest.importorskip("transformers")
    from sova_lib.describe import ray_engine
    from sova_lib.describe.contrastive import ContrastiveOptions
    from sova_lib.describe.item import Item
    from tests.tiny_contrastive import build_tiny_clip

    monkeypatch.setattr("os.cpu_count", lambda: 3)
    options = RayOptions(cpus_per_worker=6.0)  # the rule: min(8, 6) = 6 threads, whatever this machine's 3 cores
    assert options.threads() == 6
    seen = []
    monkeypatch.setattr(ray_engine, "map_on_actors",  # no Ray started
                        lambda items, worker, kwargs, pool: seen.append(kwargs["load_workers"]) or iter(()))
    quiet = RunOptions(show_progress=False, verbose=False)
    describe_items_ray("motion", {}, [Item("a", tmp_path / "a.mp4")], tmp_path / "cache", prompt="Describe.",
                       ray=options, run=quiet)
    model = build_tiny_clip(tmp_path / "clip")
    embed_items_ray(ContrastiveOptions(model=str(model), device="cpu"), [Item("a", tmp_path / "a.mp4")], tmp_path / "cache",
                    pool="none", ray=options, run=quiet)
    assert seen == [6, 6]


def test_failures_are_counted_by_kind_with_the_first_ids_of_each(tmp_path, capsys):
    """The kinds of items that could not be loaded, read from the runner's own reasons, beside the describer's."""
    from sova_lib.describe.item import Item
    from sova_lib.describe.run_cache import Outcome, failure_kind

    assert [failure_kind(Outcome(1, error=reason, loaded=False)) for reason in (
        "manifest status annotation_missing: no activities or geom file for the source video under the annotation root",
        "source video 2018-03-07.mp4 (mp4/avi) not found under /data/videos",
        "ValueError: the region (200, 0, 300, 10) is empty inside the 96x64 frame",
        "VideoError: cannot open video a.mp4 with decord")] == [
        "annotation missing", "video missing", "region empty", "decode"]
    assert failure_kind(Outcome(1, error="RuntimeError: boom")) == "describer"
    assert failure_kind(Outcome(1, error="HTTP 400", kind="refused")) == "refused"

    class Half:  # describes the even ids, fails the odd ones
        name, max_batch_size, max_concurrency = "half", 1, 1

        def config(self):
            return {}

        def describe(self, requests):
            if requests[0].id % 2:
                raise RuntimeError("odd")
            return ["a text"]

    items = [Item(i, tmp_path / f"{i}.png") for i in range(8)] + [
        Item(8 + i, tmp_path / "x.mp4", error="manifest status annotation_missing: no annotations") for i in range(5)]
    summary = describe_items(Half(), items, tmp_path, prompt="Describe.", engine=LocalEngine(lambda item, fps: ([], (), False)),
                             run=RunOptions(show_progress=False, verbose=False, stop_after_same_failures=0))
    assert {k: sorted(v) for k, v in summary.by_kind.items()} == {  # in the order the outcomes came
        "describer": [1, 3, 5, 7], "annotation missing": [8, 9, 10, 11, 12]}
    line = next(x for x in str(summary).splitlines() if x.startswith("  failed by kind: "))
    parts = dict(re.fullmatch(r"(\d+ [a-z ]+) \(([\d, ]+), \.\.\.\)", part).groups()
                 for part in line.removeprefix("  failed by kind: ").split("; "))
    assert sorted(parts) == ["4 describer", "5 annotation missing"]
    assert [int(i) for i in parts["4 describer"].split(", ")] == summary.by_kind["describer"][:3]
