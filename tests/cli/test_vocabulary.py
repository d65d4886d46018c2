"""One word per concept: every option of every sova command is in the vocabulary table of docs/architecture.md
(the one place it is written) and is stored under its own name; every word of the table is an option of some
command; no other spelling is taken; shared options have one default everywhere."""
import argparse
import re
import subprocess
import sys

import pytest

from sova_lib.cli import build_parser, main
from sova_lib.cli.options import DEFAULT_BOOTSTRAP
from tests.paths import ROOT

#: The table of docs/architecture.md under its header ``| option | concept |``: one row ``| `--flag` | concept |``
#: per option, in order.
ROWS = re.findall(r"^\| `(--[a-z-]+)` \| (.+) \|$",
                  (ROOT / "docs" / "architecture.md").read_text().split("| option | concept |\n| --- | --- |\n", 1)[1]
                  .split("\n\n", 1)[0], flags=re.M)

#: Option -> the concept it names (the same in every command that has it).
VOCABULARY = dict(ROWS)


def _leaves(parser, path=()):
    """(command path, parser) of every parser, the leaves and the groups above them."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaves(sub, (*path, name))


LEAVES = list(_leaves(build_parser()))

#: A regular, non-empty file, for the options that check their file exists.
FILE = __file__


def test_the_walk_reaches_every_command():
    names = {" ".join(p) for p, _ in LEAVES}
    for command in ("sovabench describe", "sovabench embed", "sovabench evaluate", "sovabench clips sources",
                    "sovabench clips fetch", "sovabench clips plan", "sovabench clips extract", "sovabench clips stats", "image-tasks describe", "image-tasks embed",
                    "image-tasks evaluate", "muvr describe", "muvr evaluate", "muvr synthetic", "vantage describe",
                    "vantage evaluate", "vantage synthetic",
                    "vantage submit", "describe", "embed", "import", "reproduce"):
        assert command in names, command


@pytest.mark.parametrize("path, parser", LEAVES, ids=[" ".join(p) or "sova" for p, _ in LEAVES])
def test_every_option_is_a_word_of_the_vocabulary(path, parser):
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):  # argparse's own -h, --help
            continue
        for flag in action.option_strings:
            assert action.help != argparse.SUPPRESS, f"sova {' '.join(path)}: {flag} is hidden"
            assert flag in VOCABULARY, f"sova {' '.join(path)}: {flag} is not in the table of docs/architecture.md"


@pytest.mark.parametrize("path, parser", LEAVES, ids=[" ".join(p) or "sova" for p, _ in LEAVES])
def test_every_option_is_stored_under_its_own_name(path, parser):
    """``--out`` is ``args.out``, ``--scoring`` is ``args.scoring``: an option is one spelling, in the code too."""
    for action in parser._actions:
        if action.option_strings and action.dest not in ("help", "version"):
            (flag,) = action.option_strings
            assert action.dest == flag.lstrip("-").replace("-", "_"), f"sova {' '.join(path)}: {flag} -> {action.dest}"


def test_a_dest_of_another_name_is_caught():
    """The check above can fail: an option stored under another name does not pass it."""
    stray = argparse.ArgumentParser()
    stray.add_argument("--out", dest="results_dir")
    with pytest.raises(AssertionError, match="--out -> results_dir"):
        test_every_option_is_stored_under_its_own_name(("stray",), stray)


def test_a_spelling_outside_the_vocabulary_is_caught():
    """The check above can fail: a parser with a stray spelling does not pass it."""
    stray = argparse.ArgumentParser()
    stray.add_argument("--quiet", action="store_true", help="no progress bar")
    with pytest.raises(AssertionError, match="--quiet is not in"):
        test_every_option_is_a_word_of_the_vocabulary(("stray",), stray)


def test_bootstrap_has_one_default_everywhere():
    defaults = {" ".join(p): a.default for p, parser in LEAVES for a in parser._actions if a.dest == "bootstrap"}
    assert len(defaults) >= 6 and set(defaults.values()) == {DEFAULT_BOOTSTRAP} == {1000}, defaults


@pytest.mark.parametrize("argv, error", [
    (["evaluate", "--protocol", "intra-pair"], "argument COMMAND: invalid choice: 'evaluate'"),
    (["clips", "stats", "--manifest", "m.tsv"], "argument COMMAND: invalid choice: 'clips'"),
    (["vantage", "score", "--task", "vqa"], "argument VERB: invalid choice: 'score'"),
    (["describe", "--benchmark", "muvr", "--backend", "motion", "--videos", "."], "unrecognized arguments: --benchmark muvr"),
    (["sovabench", "evaluate", "--protocol", "intra-pair", "--baseline", "prevalence", "--results-dir", "r"],
     "unrecognized arguments: --results-dir r"),
    (["sovabench", "describe", "--protocol", "intra-pair", "--video-root", ".", "--backend", "motion", "--quiet"],
     "unrecognized arguments: --quiet"),
    (["vantage", "evaluate", "--task", "vqa", "--ground-truth", FILE, "--submission", FILE, "--mode", "strict"],
     "unrecognized arguments: --mode strict"),
    (["vantage", "evaluate", "--task", "vqa", "--ground-truth", FILE, "--submission", FILE, "--scoring", "parity"],
     "argument --scoring: invalid choice: 'parity'"),
    (["muvr", "evaluate", "--data", ".", "--baseline", "random-ranking", "--ties", "official"],
     "argument --ties: invalid choice: 'official'"),
    (["muvr", "describe", "--data", ".", "--video-root", ".", "--backend", "motion", "--muvr-task", "qa"],
     "unrecognized arguments: --muvr-task qa"),
    (["sovabench", "clips", "stats", "--manifest", FILE, "--fps", "30"], "unrecognized arguments: --fps 30"),
    (["reproduce", "--figures", "f"], "unrecognized arguments: --figures f"),
])
def test_a_former_spelling_gets_argparses_own_error(capsys, argv, error):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sova: error: ") and error in err, err


def test_help_shows_only_the_commands_options(capsys):
    assert main(["muvr", "evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--tag-weight" in text and "--protocol" not in text and "--aggregate" not in text
    assert main(["sovabench", "evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--aggregate" in text and "--tag-weight" not in text


@pytest.mark.parametrize("argv", [["--help"], ["sovabench", "evaluate", "--protocol", "intra-pair", "--baseline",
                                                "prevalence", "--bootstrap", "0"]])
def test_a_closed_pipe_is_not_an_error(argv):
    """`sova ... | head` : the reader goes away before sova writes; sova exits 0 without a traceback."""
    command = " ".join([sys.executable, "-m", "sova_lib", *argv]) + " | head -c0"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_the_table_names_each_option_once_and_only_options_some_command_has():
    flags = [flag for flag, _ in ROWS]
    assert len(flags) > 100 and flags[:2] == ["--protocol", "--task"] and flags[-1] == "--skip-notebooks", flags
    assert len(set(flags)) == len(flags), [f for f in flags if flags.count(f) > 1]
    used = {flag for _, parser in LEAVES for action in parser._actions for flag in action.option_strings}
    assert set(flags) - used == set()


def test_a_row_of_the_table_is_read_as_written():
    """The table is read row by row: a concept keeps its punctuation, and a row outside the table is not read."""
    assert VOCABULARY["--out"] == "output path: the file or folder the command writes"
    assert VOCABULARY["--bootstrap"] == "bootstrap resamples for a 95% interval (one default everywhere; 0: none)"
    assert "--help" not in VOCABULARY


def test_the_command_table_names_the_module_that_adds_each_command():
    import importlib

    from sova_lib.cli import COMMAND_MODULES, COMMANDS
    from sova_lib.cli.options import SovaParser

    added = {}
    for module in COMMAND_MODULES:
        sub = SovaParser().add_subparsers()
        importlib.import_module(module).add_commands(sub)
        added.update({command: module for command in sub.choices})
    assert COMMANDS == added
    # a named command builds its module alone, with the same sub-commands as the full parser
    for command in COMMANDS:
        alone = build_parser(command)._subparsers._group_actions[0].choices
        assert command in alone and set(alone) <= set(COMMANDS)


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
        assert done.returncode == 0 and done.stderr == "", (path, done.stderr)
