"""No command takes an abbreviation of a long option: ``--device cpu`` is not ``--device-map cpu``, ``--descr`` is
not ``--descriptions``; every parser of the tree, walked, refuses a prefix of each of its options."""
import argparse

import pytest

from sova_lib.cli import build_parser, main

#: The spellings a user types for an option they half remember.
PREFIXES = ("--device", "--descr")


def _parsers(parser, path=()):
    """(command path, parser) of every parser of the tree, the groups and the leaves."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


PARSERS = list(_parsers(build_parser()))
IDS = [" ".join(p) or "sova" for p, _ in PARSERS]


def _left_over(parser, argv, monkeypatch) -> list[str]:
    """What ``parser`` leaves unparsed of ``argv``, with its required arguments made optional (so that a missing
    ``--cache`` is not the error that ends the parse)."""
    for action in parser._actions:
        monkeypatch.setattr(action, "required", False)
    for group in parser._mutually_exclusive_groups:
        monkeypatch.setattr(group, "required", False)
    return parser.parse_known_args(argv, argparse.Namespace())[1]


def _prefixes(parser) -> list[tuple[str, str]]:
    """(prefix, option) for each long option of ``parser`` and each of ``PREFIXES`` that is a strict prefix of one
    of its options: every long option cut by one letter, and the spellings above."""
    flags = {f for action in parser._actions for f in action.option_strings if f.startswith("--")}
    cut = {(flag[:-1], flag) for flag in flags if len(flag) > 3}
    typed = {(prefix, flag) for prefix in PREFIXES for flag in flags if flag.startswith(prefix) and flag != prefix}
    return sorted((prefix, flag) for prefix, flag in cut | typed if prefix not in flags)


def test_every_parser_is_made_without_abbreviations():
    assert len(PARSERS) > 25
    assert [" ".join(p) for p, parser in PARSERS if parser.allow_abbrev] == []


@pytest.mark.parametrize("path, parser", PARSERS, ids=IDS)
def test_a_prefix_of_an_option_is_left_unparsed(path, parser, monkeypatch):
    """A prefix stays unparsed, and its value with it (or the value is read as a positional argument, which is why
    the value is ``.``, a folder that exists, as ``sova results`` checks; a group's prefix is given alone: its next
    word would be read as its verb)."""
    group = any(isinstance(action, argparse._SubParsersAction) for action in parser._actions)
    for prefix, flag in _prefixes(parser):
        argv = [prefix] if group else [prefix, "."]
        assert _left_over(parser, argv, monkeypatch)[:1] == [prefix], (path, prefix, flag)


def test_the_typed_prefixes_are_walked_where_they_are_prefixes():
    """``--device`` is a prefix of ``--device-map`` in the describers' commands, ``--descr`` of ``--descriptions``
    in the scoring and embedding ones: the walk above meets both, in many commands."""
    met = {prefix: {" ".join(path) for path, parser in PARSERS for p, _ in _prefixes(parser) if p == prefix}
           for prefix in PREFIXES}
    assert {"describe", "sovabench describe", "muvr describe", "vantage describe"} <= met["--device"], met
    assert {"sovabench evaluate", "muvr evaluate"} <= met["--descr"], met


def test_an_abbreviating_parser_fails_the_check(monkeypatch):
    """The check can fail: argparse's default parser reads ``--device cpu`` as ``--device-map cpu``."""
    stray = argparse.ArgumentParser()
    stray.add_argument("--device-map", required=True)
    assert _left_over(stray, ["--device", "cpu"], monkeypatch) == []
    with pytest.raises(AssertionError):
        test_a_prefix_of_an_option_is_left_unparsed(("stray",), stray, monkeypatch)


@pytest.mark.parametrize("argv, refused", [
    (["describe", "--backend", "motion", "--videos", ".", "--device", "cpu"],
     "sova describe: unrecognized arguments: --device cpu"),
    (["sovabench", "evaluate", "--protocol", "intra-pair", "--baseline", "prevalence", "--descr", "d"],
     "sova sovabench evaluate: unrecognized arguments: --descr d"),
    (["vantage", "describe", "--task", "vqa", "--items", __file__, "--backend", "motion", "--device", "cpu"],
     "sova vantage describe: unrecognized arguments: --device cpu"),
])
def test_a_prefix_is_refused_in_one_line(capsys, argv, refused):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"sova: error: {refused}; see '{refused.split(':')[0]} --help'\n"
