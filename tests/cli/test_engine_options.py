"""A ray option implies the ray engine; beside an explicit --engine local it is the one usage error left."""
import pytest

from sova_lib.cli import CliError, build_parser
from sova_lib.cli.engine import engine_options, run_options
from sova_lib.describe.ray_engine import RayOptions
from sova_lib.describe.run_cache import RunOptions

VIDEOS = ["describe", "--backend", "motion", "--videos", "x/"]


def _args(*extra):
    return build_parser().parse_args([*VIDEOS, *extra])


def test_no_engine_option_is_the_local_engine(capsys):
    args = _args()
    assert engine_options(args) is None and args.engine == "local" and capsys.readouterr().err == ""


def test_a_ray_option_implies_the_ray_engine_with_a_note(capsys):
    args = _args("--workers", "4", "--gpus-per-worker", "1")
    # the defaults of the options not given (cpus 1, batch 8, no address, local instance sized by Ray)
    assert engine_options(args) == RayOptions(workers=4, gpus_per_worker=1.0, cpus_per_worker=1.0, batch_size=8,
                                              address=None, num_cpus=None, num_gpus=None, load_workers=None)
    assert args.engine == "ray"
    assert capsys.readouterr().err == "sova: note: --engine ray, implied by --workers, --gpus-per-worker\n"


def test_explicit_ray_engine_prints_no_note(capsys):
    args = _args("--engine", "ray", "--batch-size", "2")
    assert engine_options(args).batch_size == 2 and capsys.readouterr().err == ""


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
    assert ray.startswith("  any of these implies --engine ray") and "\n  --workers N " in ray


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--workers", "0", "--workers must be at least 1, got 0"),
    ("--batch-size", "-2", "--batch-size must be at least 1, got -2"),
    ("--gpus-per-worker", "-1", "--gpus-per-worker must not be negative, got -1.0")])
def test_a_ray_option_out_of_range_is_a_usage_error(option, value, message):
    with pytest.raises(CliError, match=f"^{message}$"):
        engine_options(_args(option, value))
