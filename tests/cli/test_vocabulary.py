"""One word per concept: every option every sova command shows is in the vocabulary table, every hidden
one is a former spelling that still works with a note; shared options have one default everywhere."""
import argparse
import subprocess
import sys

import pytest

from sova_lib.cli import build_parser, main
from sova_lib.cli.options import DEFAULT_BOOTSTRAP
from sova_lib.cli.vocabulary import OLD_COMMANDS, OLD_SPELLINGS, VOCABULARY
from tests.paths import ROOT


def _leaves(parser, path=()):
    """(command path, parser) of every parser, the leaves and the groups above them."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaves(sub, (*path, name))


LEAVES = list(_leaves(build_parser()))


def test_the_walk_reaches_every_command():
    names = {" ".join(p) for p, _ in LEAVES}
    for command in ("sovabench describe", "sovabench embed", "sovabench evaluate", "sovabench clips plan",
                    "sovabench clips extract", "sovabench clips stats", "image-tasks describe", "image-tasks embed",
                    "image-tasks evaluate", "muvr describe", "muvr evaluate", "vantage describe", "vantage evaluate",
                    "vantage submit", "describe", "embed", "import", "reproduce"):
        assert command in names, command


@pytest.mark.parametrize("path, parser", LEAVES, ids=[" ".join(p) or "sova" for p, _ in LEAVES])
def test_every_option_is_a_word_of_the_vocabulary(path, parser):
    for action in parser._actions:
        for flag in action.option_strings:
            if action.help == argparse.SUPPRESS:
                assert flag in OLD_SPELLINGS, f"sova {' '.join(path)}: hidden {flag} is not a former spelling"
                assert OLD_SPELLINGS[flag] in VOCABULARY
            else:
                assert flag in VOCABULARY, f"sova {' '.join(path)}: {flag} is not in sova_lib.cli.vocabulary"


def test_a_spelling_outside_the_vocabulary_is_caught():
    """The check above can fail: a parser with a stray spelling does not pass it."""
    stray = argparse.ArgumentParser()
    stray.add_argument("--quiet", action="store_true", help="no progress bar")
    with pytest.raises(AssertionError, match="--quiet is not in"):
        test_every_option_is_a_word_of_the_vocabulary(("stray",), stray)


def test_bootstrap_has_one_default_everywhere():
    defaults = {" ".join(p): a.default for p, parser in LEAVES for a in parser._actions if a.dest == "bootstrap"}
    assert len(defaults) >= 6 and set(defaults.values()) == {DEFAULT_BOOTSTRAP} == {1000}, defaults


def test_old_spellings_still_work_with_a_note(capsys, tmp_path):
    code = main(["evaluate", "--protocol", "intra-pair", "--baseline", "prevalence", "--bootstrap", "0",
                 "--results-dir", str(tmp_path), "--json"])
    err = capsys.readouterr().err
    assert code == 0 and len(list(tmp_path.glob("*.json"))) == 1
    assert "sova: note: 'sova evaluate' is the old spelling; it is now 'sova sovabench evaluate'" in err
    assert "sova: note: --results-dir is the old spelling of --out" in err


def test_help_shows_only_the_commands_options(capsys):
    assert main(["muvr", "evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--tag-weight" in text and "--protocol" not in text and "--aggregate" not in text
    assert main(["sovabench", "evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--aggregate" in text and "--tag-weight" not in text and "--results-dir" not in text


@pytest.mark.parametrize("argv", [["--help"], ["sovabench", "evaluate", "--protocol", "intra-pair", "--baseline",
                                                "prevalence", "--bootstrap", "0"]])
def test_a_closed_pipe_is_not_an_error(argv):
    """`sova ... | head` : the reader goes away before sova writes; sova exits 0 without a traceback."""
    command = " ".join([sys.executable, "-m", "sova_lib", *argv]) + " | head -c0"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_the_architecture_page_prints_the_vocabulary_as_it_is():
    from pathlib import Path

    from sova_lib.cli.vocabulary import table

    page = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    assert table() in page


def test_the_command_table_names_the_module_that_adds_each_command():
    import argparse
    import importlib

    from sova_lib.cli import COMMAND_MODULES, COMMANDS

    added = {}
    for module in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).add_commands(sub)
        added.update({command: module for command in sub.choices})
    assert COMMANDS == added
    # a named command builds its module alone, with the same sub-commands as the full parser
    for command in COMMANDS:
        alone = build_parser(command)._subparsers._group_actions[0].choices
        assert command in alone and set(alone) <= set(COMMANDS)


#: One command line of each former command of OLD_COMMANDS.
_FORMER = {
    "sova evaluate --protocol P": ["evaluate", "--protocol", "intra-pair", "--baseline", "prevalence"],
    "sova evaluate --protocol <image task>": ["evaluate", "--protocol", "vsr-zeroshot", "--baseline", "random"],
    "sova evaluate --benchmark muvr": ["evaluate", "--benchmark", "muvr", "--data", "R"],
    "sova describe --benchmark sovabench (or --manifest)": ["describe", "--manifest", "m.tsv", "--video-root", "v"],
    "sova describe --benchmark muvr": ["describe", "--benchmark", "muvr", "--data", "R"],
    "sova describe --images": ["describe", "--images", "imgs/", "--backend", "motion"],
    "sova embed --benchmark sovabench (or --manifest)": ["embed", "--benchmark", "sovabench", "--protocol", "P"],
    "sova embed --images": ["embed", "--images", "imgs/", "--model", "m"],
    "sova clips plan/extract/stats": ["clips", "stats", "--manifest", "m.tsv"],
    "sova vantage score": ["vantage", "score", "--task", "vqa"],
}


@pytest.mark.parametrize("former", list(_FORMER))
def test_every_former_command_is_rewritten_with_one_note(former, capsys):
    from sova_lib.cli import old_command

    new = old_command(list(_FORMER[former]))
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("sova: note: ") and err[0].endswith(f"it is now 'sova {new[0]} "
                                                                                   f"{new[1]}'"), err
    assert OLD_COMMANDS[former].startswith(f"sova {new[0]} {new[1]}")


def test_every_former_command_has_an_example_above():
    assert set(_FORMER) == set(OLD_COMMANDS)


def test_the_architecture_page_prints_the_former_spellings_as_they_are():
    from sova_lib.cli.vocabulary import former_tables

    page = (ROOT / "docs" / "architecture.md").read_text()
    options, commands = former_tables()
    assert options in page and commands in page
    assert "| `sova vantage score` | `sova vantage evaluate` |" in commands  # the tables hold the rows they list


def test_every_commands_help_into_a_closed_pipe_exits_0():
    """`sova --help | head` and `sova <any command> --help | head`: each exits 0 with no traceback, even when
    the reader has gone.

    The pipe's read end is closed before the command starts, so its first write fails as it does after
    `head -1` has left (a race in a real shell pipeline, certain here).
    """
    import os

    commands = [[], *(path for path, _ in LEAVES if path)]  # the top level first
    assert len(commands) > 20
    for path in commands:
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            done = subprocess.run([sys.executable, "-m", "sova_lib", *path, "--help"], cwd=ROOT, stdout=write_end,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        finally:
            os.close(write_end)
        assert done.returncode == 0, (path, done.stderr)
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, (path, done.stderr)
