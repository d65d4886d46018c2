"""The contrastive model's options are declared once, in ``ContrastiveOptions``: an option added there is a flag of
``sova embed`` with its help and default, and part of what a Ray actor is sent to build its model (the payload is
caught here without starting Ray or loading a model)."""
import pickle
from dataclasses import dataclass

import pytest

from sova_lib.cli import build_parser
from sova_lib.cli.embed import model_options
from sova_lib.describe.contract import option
from sova_lib.describe.contrastive import ContrastiveModel, ContrastiveOptions
from sova_lib.describe.contrastive import ray_engine as contrastive_ray
from sova_lib.describe.item import Item
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import RunOptions


@dataclass(frozen=True, kw_only=True)
class WiderOptions(ContrastiveOptions):
    """The contrastive model's options and one more."""

    side: int = option(224, "the side frames are resized to", flag="PX")


def _args(*extra):
    return build_parser("embed").parse_args(["embed", "--videos", "clips", "--model", "m", *extra])


def _help(capsys) -> str:
    with pytest.raises(SystemExit):
        build_parser("embed").parse_args(["embed", "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_an_option_added_to_the_class_is_a_flag_and_part_of_the_ray_payload(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(ContrastiveModel, "Options", WiderOptions)
    assert "--side PX the side frames are resized to (default 224)" in _help(capsys)
    options = model_options(_args("--side", "112"))
    assert options == WiderOptions(model="m", side=112)
    sent = []  # what embed_items_ray hands the actors, caught where Ray would start
    monkeypatch.setattr(contrastive_ray, "planned_config", lambda *args, **kwargs: ({"model": "m"}, object, None))
    monkeypatch.setattr(contrastive_ray, "check_pool", lambda *args: None)

    def run_on_actors(todo, **kwargs):  # no outcome: the driver writes an empty cache
        sent.append(kwargs["start"])
        yield from ()

    monkeypatch.setattr(contrastive_ray, "run_on_actors", run_on_actors)
    contrastive_ray.embed_items_ray(options, [Item("a", tmp_path / "a.png")], tmp_path / "cache", ray=RayOptions(),
                                    run=RunOptions(show_progress=False))
    (start,) = sent
    assert start.func is contrastive_ray._load_model and start.args[1] == {"model": "m"}
    received = pickle.loads(pickle.dumps(start.args[0]))  # as a Ray actor receives it
    assert received == WiderOptions(model="m", side=112, device="cpu")  # the device fixed on the driver


def test_without_the_option_in_the_class_the_command_line_has_none(capsys):
    assert "--side" not in _help(capsys)
    with pytest.raises(SystemExit):
        _args("--side", "112")
    assert "unrecognized arguments: --side 112" in capsys.readouterr().err


def test_the_flags_are_the_classes_declarations_with_its_defaults(capsys):
    shown = _help(capsys)
    for line in ("--model ID_OR_PATH the contrastive model (CLIP, SigLIP, X-CLIP, ...): a Hugging Face id or a local "
                 "folder --revision REV the model's hub revision: a branch, tag or commit --pool {mean,none,video}",
                 "--batch-frames N frames per forward pass (default 64) --device DEV torch device (default: cuda when "
                 "available, else cpu) --dtype {bfloat16,float16,float32} weights' precision (default: bfloat16 on a "
                 "GPU, float32 on a CPU)"):
        assert line in shown
    assert model_options(_args()) == ContrastiveOptions(model="m", revision=None, batch_frames=64, device=None,
                                                        dtype=None)
    given = model_options(_args("--revision", "v2", "--batch-frames", "8", "--device", "cpu", "--dtype", "float16"))
    assert given == ContrastiveOptions(model="m", revision="v2", batch_frames=8, device="cpu", dtype="float16")
    with pytest.raises(SystemExit):
        _args("--batch-frames", "0")
    assert "--batch-frames: 0 is below 1; give 1 or more" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _args("--dtype", "int8")
    assert "invalid choice: 'int8'" in capsys.readouterr().err


def test_the_model_takes_its_options_whole_or_as_keywords_not_both():
    with pytest.raises(TypeError, match="its options or their keywords, not both"):
        ContrastiveModel(ContrastiveOptions(model="m"), batch_frames=4)
    with pytest.raises(TypeError, match="ContrastiveModel takes ContrastiveOptions, not str"):
        ContrastiveModel("m")
    with pytest.raises(ValueError, match="batch_frames must be at least 1, got 0"):
        ContrastiveOptions(model="m", batch_frames=0)
