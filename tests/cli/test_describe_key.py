"""One request, one key: the command line, the library and the quickstart notebook's describing cell name one cache
folder; the describer is built once in each place it runs."""
from pathlib import Path

import pytest

from sova_lib.benchmarks.excerpts import QUICKSTART_INPUT, example_clips
from sova_lib.cli import main
from sova_lib.describe import contract, ray_engine
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import describe_items
from sova_lib.item_vectors import read_descriptions
from sova_lib.video import example_videos, probe
from tests.figure_helpers import holding, run_cells


def test_one_request_is_one_key_from_the_cli_the_library_and_the_notebook(tmp_path, capsys):
    """Asking 1000 fps of the 10 fps excerpts: each route lowers the rate the same way, in the library, and finds
    the folder the first one wrote (nothing described again)."""
    assert {probe(path).fps for path in example_videos()} == {10.0}
    cache = tmp_path / "cache"
    assert main(["describe", "--backend", "motion", "--protocol", "quickstart-direction", "--fps", "1000",
                 "--cache-dir", str(cache), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "--fps 1000 is above every video's own frame rate; sampling (and the cache key) use 10 fps" in err
    (folder,) = (cache / "descriptions").iterdir()
    assert folder.name.split("__")[0] == "quickstart-motion-classical-motion-general-10fps"
    written = (folder / "descriptions.jsonl").read_bytes()
    items = [clip.item() for clip in example_clips()]
    library = describe_items(contract.make_describer("motion"), items, cache, prompt="general", fps=1000,
                             input_name=QUICKSTART_INPUT, run=RunOptions(show_progress=False, verbose=False))
    # the notebook's cells: its items, its describer (motion, the default) and its describe_items call, at 1000 fps
    notebook, _ = run_cells("00_quickstart", holding("example_clips(videos", "make_describer(backend",
                                                     "describe_items(describer"),
                            parameters={"figures_dir": str(tmp_path / "figures"), "cache_dir": str(cache),
                                        "fps": 1000, "prompt": "general"})
    assert [it.id for it in notebook["items"]] == [it.id for it in items]
    assert library.folder == notebook["folder"] == folder and (library.done, library.skipped_cached) == (0, len(items)) == (0, 6)
    assert (folder / "descriptions.jsonl").read_bytes() == written and len(read_descriptions(folder)) == 6


class _Pool:
    """``ray_engine.run_on_actors`` in this process: ``workers`` actors, each started once, sharing the items."""

    def __init__(self):
        self.started = 0

    def __call__(self, todo, *, start, work, ray):
        states = [start() for _ in range(ray.workers)]
        self.started += len(states)
        for k, state in enumerate(states):
            yield from work(state, todo[k::ray.workers], load_workers=1)


@pytest.mark.parametrize("engine, built", [([], 1), (["--engine", "ray", "--workers", "2"], 1 + 2)])
def test_the_describer_is_built_once_in_each_place_it_runs(tmp_path, monkeypatch, engine, built):
    """Local: once, here. Ray: once on the driver, which names the cache, and once in each actor."""
    made = []

    def counted(backend, *options, **fields):
        made.append(backend)
        return real(backend, *options, **fields)

    real, pool = contract.make_describer, _Pool()
    monkeypatch.setattr(contract, "make_describer", counted)
    monkeypatch.setattr(ray_engine, "make_describer", counted)
    monkeypatch.setattr(ray_engine, "run_on_actors", pool)
    videos = Path(example_videos()[0]).parent
    assert main(["describe", "--backend", "motion", "--videos", str(videos), "--cache-dir", str(tmp_path),
                 "--no-progress", *engine]) == 0
    assert made == ["motion"] * built and pool.started == built - 1
    (folder,) = (tmp_path / "descriptions").iterdir()
    assert len(read_descriptions(folder)) == len(example_videos())
