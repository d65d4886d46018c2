"""A backend's options are declared once, in its options class: an option added there is a flag of the command line
with its help and default, a key of ``--backend-option``, a line of the backends' help, and part of what a Ray actor
is sent to build its describer (the payload is built here without starting Ray)."""
import pickle
from dataclasses import dataclass

import pytest

from sova_lib.cli import build_parser
from sova_lib.cli import describe as cli
from sova_lib.describe.backends.openai import OpenAIDescriber, OpenAIOptions
from sova_lib.describe.contract import make_describer, option
from sova_lib.describe.ray_engine import RayEngine
from sova_lib.describe.ray_options import RayOptions


@dataclass(frozen=True, kw_only=True)
class WiderOptions(OpenAIOptions):
    """The openai backend's options and two more, one a flag."""

    top_p: float = option(0.5, "the probability mass nucleus sampling keeps", flag="P")
    min_p: float = option(0.0, "the least probability a token keeps, relative to the likeliest")


def _args(*extra):
    return build_parser("describe").parse_args(["describe", "--backend", "openai", "--model", "m", "--protocol",
                                                "quickstart-direction", *extra])


def _help(capsys) -> str:
    with pytest.raises(SystemExit):
        build_parser("describe").parse_args(["describe", "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_an_option_added_to_a_backends_class_is_a_flag_a_key_and_part_of_the_ray_payload(monkeypatch, capsys):
    monkeypatch.setattr(OpenAIDescriber, "Options", WiderOptions)
    shown = _help(capsys)
    assert "--top-p P openai: the probability mass nucleus sampling keeps (default 0.5)" in shown
    epilog = shown.split("other options of each backend")[1]
    assert "top_p (" not in epilog  # a flag: listed once, as the flag
    assert "min_p (a number; default 0.0): the least probability a token keeps, relative to the likeliest" in epilog
    assert "--min-p" not in shown
    for given in (["--top-p", "0.25"], ["--backend-option", "top_p=0.25"]):
        options = cli.describer_options(_args(*given))
        assert options == {"model": "m", "top_p": 0.25}
        engine = RayEngine("openai", options, RayOptions())  # what describe_items_ray hands the actors
        assert engine.options == WiderOptions(model="m", top_p=0.25)
        sent = pickle.loads(pickle.dumps(engine.options))  # as a Ray actor receives it
        assert make_describer("openai", sent).options.top_p == 0.25


def test_without_the_option_in_the_class_the_command_line_has_none(capsys):
    assert "--top-p" not in _help(capsys)
    with pytest.raises(SystemExit):
        _args("--top-p", "0.25")
    assert "unrecognized arguments: --top-p 0.25" in capsys.readouterr().err
    with pytest.raises(ValueError, match="the openai backend has no such option"):
        cli.describer_options(_args("--backend-option", "top_p=0.25"))


def test_the_flags_are_the_classes_declarations():
    """Every flag a backend's class marks is offered, with its metavar; none is offered that no class declares."""
    from sova_lib.describe.contract import backend_flags

    flags = backend_flags()
    assert sorted(flags) == ["api_key_env", "base_url", "batch_size", "concurrency", "connect_timeout", "device_map",
                             "first_token_timeout", "max_new_tokens", "model", "model_tag", "read_timeout"]
    assert {key: [backend for backend, _ in owners] for key, owners in flags.items() if len(owners) > 1} == {
        "model": ["openai", "transformers"], "max_new_tokens": ["openai", "transformers"]}
    describe = build_parser("describe")._subparsers._group_actions[0].choices["describe"].filled()
    offered = {a.dest: a.metavar for a in describe._actions if a.option_strings}
    assert {key: offered[key] for key in flags} == {key: owners[0][1].flag for key, owners in flags.items()}
