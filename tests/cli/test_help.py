"""Every command's --help reads on its own: each leaf command says what it does (a description), each option and
argument it shows has a help text, and no group title appears twice."""
import argparse

import pytest

from sova_lib.cli import build_parser


def _commands(parser, path=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    yield path, parser, bool(subs)
    for sub in subs:
        for name, child in sub.choices.items():
            if child.prog.split()[-1] == name:  # an alias ('vantage score') shares its parser; visit it once
                yield from _commands(child, (*path, name))


COMMANDS = list(_commands(build_parser()))
LEAVES = [(p, parser) for p, parser, has_subs in COMMANDS if not has_subs]


def test_the_walk_finds_every_leaf():
    # sovabench: describe, embed, evaluate, clips plan/extract/stats; image-tasks: 3; muvr: 2; vantage: 4;
    # describe, import, embed, compare, reproduce: 5 -> 6 + 3 + 2 + 4 + 5 = 20
    assert len(LEAVES) == 20, [" ".join(p) for p, _ in LEAVES]


@pytest.mark.parametrize("path, parser", LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_every_command_describes_itself_and_every_option(path, parser):
    assert parser.description, f"sova {' '.join(path)} --help has no description"
    silent = [a.option_strings[0] if a.option_strings else a.dest for a in parser._actions
              if a.help != argparse.SUPPRESS and not a.help]
    assert silent == [], f"sova {' '.join(path)} --help: no help text for {silent}"
    titles = [g.title for g in parser._action_groups if g._group_actions]
    assert len(titles) == len(set(titles)), f"sova {' '.join(path)} --help repeats a group: {titles}"


def test_vantage_lists_evaluate_not_its_former_name_score(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["vantage", "--help"])
    listing = capsys.readouterr().out.split("VERB\n", 1)[1]
    assert "    evaluate  score a submission" in listing and "score)" not in listing and "(score" not in listing
    assert build_parser().parse_args(["vantage", "score", "--task", "vqa", "--ground-truth", __file__,
                                      "--submission", __file__]).func.__name__ == "run_score"
