"""Every command's --help reads on its own: each leaf command says what it does (a description), each option and
argument it shows has a help text, and no group title appears twice."""
import argparse
import re

import pytest

from sova_lib.cli import build_parser, main


def _commands(parser, path=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    yield path, parser, bool(subs)
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _commands(child, (*path, name))


COMMANDS = list(_commands(build_parser()))
LEAVES = [(p, parser) for p, parser, has_subs in COMMANDS if not has_subs]


def test_the_walk_finds_every_leaf():
    # sovabench: describe, embed, evaluate, clips sources/fetch/plan/extract/stats; image-tasks: 3; muvr: 3;
    # vantage: describe, evaluate, submit, validate, harness-prompts, synthetic; describe, import, embed, compare,
    # results, reproduce: 6 -> 8 + 3 + 3 + 6 + 6 = 26
    assert len(LEAVES) == 26, [" ".join(p) for p, _ in LEAVES]


@pytest.mark.parametrize("path, parser", LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_every_command_describes_itself_and_every_option(path, parser):
    assert parser.description, f"sova {' '.join(path)} --help has no description"
    silent = [a.option_strings[0] if a.option_strings else a.dest for a in parser._actions
              if a.help != argparse.SUPPRESS and not a.help]
    assert silent == [], f"sova {' '.join(path)} --help: no help text for {silent}"
    titles = [g.title for g in parser._action_groups if g._group_actions]
    assert len(titles) == len(set(titles)), f"sova {' '.join(path)} --help repeats a group: {titles}"


def test_vantage_lists_evaluate_and_has_no_score(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["vantage", "--help"])
    listing = capsys.readouterr().out.split("VERB\n", 1)[1]
    assert re.search(r"\n    evaluate +score a submission", listing) and "score)" not in listing and "(score" not in listing
    walked = {" ".join(path) for path, _, _ in COMMANDS}
    assert "vantage evaluate" in walked and "vantage score" not in walked
    assert main(["vantage", "score", "--help"]) == 2
    assert "argument VERB: invalid choice: 'score'" in capsys.readouterr().err


def test_the_sentence_encoder_options_have_one_group_everywhere():
    """--embedder, --embedder-option and --no-split sit in the group 'sentence encoder' in every command that has
    them (not 'input')."""
    where = {}
    for path, parser in LEAVES:
        for group in parser._action_groups:
            for action in group._group_actions:
                if {"--embedder", "--embedder-option", "--no-split"} & set(action.option_strings):
                    where[(" ".join(path), action.option_strings[0])] = group.title
    # compare and the sovabench, image-tasks and muvr evaluate have all three
    assert sorted(where) == [(c, f) for c in ("compare", "image-tasks evaluate", "muvr evaluate", "sovabench evaluate")
                             for f in ("--embedder", "--embedder-option", "--no-split")]
    assert set(where.values()) == {"sentence encoder"}, where


def _stated_default(text):
    """The number a help text gives as its default ('(default 8)', '(default: 1000; ...', 'default 0.3'), or None."""
    import re

    found = re.search(r"\(default:? (-?[0-9][0-9.]*)(?=[;,) ])", text)
    return None if found is None else float(found.group(1).rstrip("."))


def test_a_default_the_help_states_is_the_default():
    """Where an option has a numeric default, the number its help gives as the default is that one."""
    checked = []
    for path, parser in LEAVES:
        for a in parser._actions:
            if a.help and a.help != argparse.SUPPRESS and isinstance(a.default, (int, float)) \
                    and not isinstance(a.default, bool):
                stated = _stated_default(a.help)
                if stated is not None:
                    assert stated == a.default, f"sova {' '.join(path)} {a.option_strings[0]}: help says {stated}, " \
                                                f"default is {a.default}"
                    checked.append((path, a.dest))
    # --bootstrap, --seed, --fps, --frames, --batch-frames, --top, --tag-weight, --window-seconds, ... (31 of them)
    assert len(checked) >= 20, checked
    assert _stated_default("answer length (default 1024)") == 1024 and _stated_default("(default: 0.3; 0: off)") == 0.3
