"""Only what says Ray starts Ray (--engine ray, --ray-items-per-call); another ray option needs --engine ray; the
model's --batch-size is the describer's, on every engine, and does not import Ray; the ray options are declared once,
in ``RayOptions``: a field added there with a flag is a flag of the command line, with its help and default, and
reaches the Ray engine."""
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from sova_lib.cli import CliError, build_parser, main
from sova_lib.cli import engine as cli_engine
from sova_lib.cli.engine import engine_options, run_options
from sova_lib.describe import ray_engine
from sova_lib.describe.contract import option
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import RunOptions

VIDEOS = ["describe", "--backend", "motion", "--videos", "x/"]


def _args(*extra):
    return build_parser().parse_args([*VIDEOS, *extra])


def test_no_engine_option_is_the_local_engine(capsys):
    args = _args()
    assert engine_options(args) is None and args.engine == "local" and capsys.readouterr().err == ""


def test_only_an_option_that_says_ray_implies_the_ray_engine(capsys):
    args = _args("--ray-items-per-call", "4")
    # the defaults of the options not given (1 worker, cpus 1, no address, local instance sized by Ray)
    assert engine_options(args) == RayOptions(workers=1, gpus_per_worker=0.0, cpus_per_worker=1.0, items_per_call=4,
                                              address=None, num_cpus=None, num_gpus=None, load_workers=None)
    assert args.engine == "ray"
    assert capsys.readouterr().err == "sova: note: --engine ray, implied by --ray-items-per-call\n"
    with pytest.raises(CliError, match=r"^--workers is an option of the Ray engine; add --engine ray to run on Ray, "
                                       r"or drop it$"):
        engine_options(_args("--workers", "4", "--gpus-per-worker", "1"))


def test_explicit_ray_engine_prints_no_note(capsys):
    args = _args("--engine", "ray", "--workers", "4", "--ray-items-per-call", "2")
    assert engine_options(args) == RayOptions(workers=4, items_per_call=2) and capsys.readouterr().err == ""


def test_batch_size_is_the_models_batch_on_the_local_engine():
    args = build_parser().parse_args(["describe", "--backend", "transformers", "--model", "m", "--videos", "x/",
                                      "--batch-size", "3"])
    assert engine_options(args) is None and args.engine == "local" and args.batch_size == 3


def test_batch_size_on_the_local_engine_does_not_import_ray(tmp_path):
    """A whole ``sova describe --batch-size 2`` run in a fresh process, which never imports Ray."""
    child = (
        "import json, sys\n"
        "from sova_lib.cli import main\n"
        "from sova_lib.describe import contract\n"
        "contract.DESCRIBERS['batched'] = 'tests.cli.test_engine_options:Batched'\n"
        f"code = main(['describe', '--backend', 'batched', '--prompt', 'general', '--batch-size', '2', '--videos', "
        f"{str(tmp_path / 'in')!r}, '--cache-dir', {str(tmp_path / 'cache')!r}, '--no-progress'])\n"
        "print(json.dumps([code, sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))]))\n")
    (tmp_path / "in").mkdir()
    from PIL import Image

    for name in ("a", "b", "c"):
        Image.new("RGB", (8, 8), "gray").save(tmp_path / "in" / f"{name}.png")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300,
                          cwd=str(Path(__file__).resolve().parents[2]))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [0, []]
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["run"]["batch_size"] == 2 and [r["batch_size"] for r in manifest["runs"]] == [2]
    assert "batch_size" not in manifest["describer"]


class Batched:
    """A describer whose batch is its ``batch_size`` keyword: each answer names the size of its call."""

    name = "batched"
    max_concurrency = 1

    def __init__(self, batch_size: int = 1):
        self.max_batch_size = batch_size

    def config(self) -> dict:
        return {}

    def describe(self, requests):
        return [f"one of {len(requests)}" for _ in requests]


def test_retry_and_progress_flags_are_the_run_options():
    assert run_options(_args()) == RunOptions(retry_errors=False, show_progress=True)
    assert run_options(_args("--retry-errors", "--no-progress")) == RunOptions(retry_errors=True, show_progress=False)


def test_a_ray_option_beside_engine_local_is_a_usage_error():
    with pytest.raises(CliError, match=r"^--num-cpus applies to --engine ray, not --engine local; drop one of them$"):
        engine_options(_args("--engine", "local", "--num-cpus", "2"))


@pytest.mark.parametrize("command", [["describe"], ["embed"], ["sovabench", "describe"], ["sovabench", "embed"],
                                     ["image-tasks", "describe"], ["image-tasks", "embed"]])
def test_the_help_groups_the_ray_options(command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    text = capsys.readouterr().out
    engine, ray = text.split("\nengine:\n", 1)[1].split("\nray engine:\n", 1)
    assert "--engine {local,ray}" in engine and "--workers" not in engine
    assert ray.startswith("  options of --engine ray") and "\n  --workers N " in ray


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--workers", "0", "argument --workers: 0 is below 1; give 1 or more"),
    ("--ray-items-per-call", "-2", "argument --ray-items-per-call: -2 is below 1; give 1 or more"),
    ("--gpus-per-worker", "-1", "argument --gpus-per-worker: -1 is not a finite number of 0 or more"),
    ("--cpus-per-worker", "inf", "argument --cpus-per-worker: inf is not a finite number of 0 or more")])
def test_a_ray_option_out_of_range_is_refused_while_parsing(option, value, message, capsys):
    assert main(["describe", "--videos", ".", "--backend", "motion", "--engine", "ray", option, value]) == 2
    assert capsys.readouterr().err == f"sova: error: sova describe: {message}; see 'sova describe --help'\n"


@dataclass(frozen=True)
class WiderRayOptions(RayOptions):
    """``RayOptions`` and two more fields, one a flag."""

    spill_gb: float = option(2.0, help="object store each actor may spill, in GB (default {default:g})", flag="GB")
    quiet_actors: bool = option(False, help="silence the actors' logs")


def test_a_field_added_to_ray_options_is_a_flag_with_its_help_and_reaches_the_ray_engine(monkeypatch, capsys,
                                                                                          tmp_path):
    monkeypatch.setattr(cli_engine, "RayOptions", WiderRayOptions)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["describe", "--help"])
    ray_group = " ".join(capsys.readouterr().out.split("\nray engine:\n", 1)[1].split())
    assert "--spill-gb GB object store each actor may spill, in GB (default 2)" in ray_group
    assert "--quiet-actors" not in ray_group  # no flag declared: not offered
    seen = []

    def fake_actors(todo, *, start, work, ray):  # what the Ray engine hands its pool, with no Ray started
        seen.append(ray)
        return (ray_engine.Outcome(item.id, value=f"spill {ray.spill_gb:g}") for item in todo)

    monkeypatch.setattr(ray_engine, "run_on_actors", fake_actors)
    assert main(["describe", "--backend", "motion", "--protocol", "quickstart-direction", "--cache-dir",
                 str(tmp_path), "--no-progress", "--engine", "ray", "--spill-gb", "3"]) == 0
    assert seen == [WiderRayOptions(spill_gb=3.0)]
    (described,) = (tmp_path / "descriptions").glob("*/descriptions.jsonl")
    assert [json.loads(line)["text"] for line in described.read_text().splitlines()] == ["spill 3"] * 6
    with pytest.raises(CliError, match=r"^--spill-gb is an option of the Ray engine; add --engine ray"):
        engine_options(_args("--spill-gb", "3"))
