"""The ``sova`` command line.

One module per command (``COMMANDS``), each defining
``add_commands(subparsers)``, which adds its sub-commands with
``set_defaults(func=...)``; ``func(args)`` returns the process exit code. A
command module parses arguments, calls one function of a benchmark's
``__all__`` (``sova_lib.benchmarks.<name>``) or of the library, and prints.
``main`` answers what a command lets through in one line: a wrong invocation
or input (``CliError``, ``ValueError``, ``FileNotFoundError``; an error that
lists its ``problems``, such as an invalid submission, has them printed
first, one per line) with exit status 2, the environment (any other
``OSError``: a cache another run is writing, a full disk, a read-only folder,
a server) with 1, Ctrl-C with 130. A command's notes (``options.note``) are
held until it has checked its input (``options.release_notes``, which a long
run calls before it starts, or its end), and the library's logged warnings
(``options.warning``) until it has a result, so a refusal is one line. A
reader that has gone (``sova ... | head -1``) ends the command quietly, exit
status 0, whether output is buffered or not.
Heavy imports (torch, transformers, video decoders) stay inside the functions
that need them, so that ``sova --help`` stays fast.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys

from sova_lib._version import __version__

__all__ = ["main", "build_parser", "add_benchmark", "CliError", "end_interrupted"]

#: Command -> the module whose ``add_commands`` adds it, in help order: the benchmarks (``sova <benchmark>
#: <verb>``), then the commands that belong to no benchmark. A command line that names one of these builds the
#: parser from that module alone, so a run imports no other benchmark's code (``sova --help`` builds them all).
COMMANDS: dict[str, str] = {
    "sovabench": "sova_lib.cli.sovabench",
    "image-tasks": "sova_lib.cli.image_tasks",
    "muvr": "sova_lib.cli.muvr",
    "vantage": "sova_lib.cli.vantage",
    "describe": "sova_lib.cli.describe",
    "import": "sova_lib.cli.describe",
    "embed": "sova_lib.cli.embed",
    "compare": "sova_lib.cli.compare",
    "results": "sova_lib.cli.results",
    "reproduce": "sova_lib.cli.reproduce",
}

#: The modules of ``COMMANDS``, each once, in help order.
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))


#: Problems of an error listed one by one before the rest are only counted.
MAX_LISTED = 50


class CliError(Exception):
    """A wrong invocation: printed as ``sova: error: <message>`` with exit code 2."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``sova`` parser; with a known ``command``, only the module that adds it contributes sub-commands."""
    from sova_lib.cli.options import SovaParser

    parser = SovaParser(
        prog="sova",
        description="Describe videos and images with a multimodal LLM, embed the descriptions, and score them "
                    "as retrieval (the MLLM-to-Embedding framework) on SOVABench, its image tasks, MUVR and "
                    "VANTAGE-Bench. Each benchmark is a command with its own verbs: 'sova <benchmark> <verb>' "
                    "(e.g. sova sovabench evaluate --help). describe, import, embed, compare, results and reproduce "
                    "work on any input, outside the benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"sova_lib {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in ((COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES):
        importlib.import_module(name).add_commands(sub)
    return parser if command in COMMANDS else parser.filled()


def add_benchmark(subparsers, name: str, help: str, doc: str):
    """``sova <name>``, a benchmark's command, whose ``--help`` shows ``doc`` (its module's docstring, reST marks
    dropped, line breaks kept); returns the sub-parsers its verbs are added to."""
    parser = subparsers.add_parser(name, help=help, description=doc.replace("``", "").replace("::\n", ""),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser.add_subparsers(dest="verb", metavar="VERB", required=True)


#: Modules of the optional extras (pyproject.toml) -> the extra that installs them.
EXTRAS: dict[str, str] = {
    **dict.fromkeys(("matplotlib", "seaborn", "papermill", "jupytext", "nbformat", "nbclient", "ipykernel",
                     "IPython", "ipywidgets", "jupyter_client", "traitlets"), "notebooks"),
    **dict.fromkeys(("ray", "pyarrow"), "ray"),
    **dict.fromkeys(("sklearn", "bert_score", "pycocoevalcap", "pycocotools"), "vantage"),
}


def missing_module_message(error: ModuleNotFoundError, command: str) -> str:
    """One line saying which package ``command`` lacks and how to install it (the extra that has it)."""
    module = (error.name or "").split(".")[0] or str(error)
    if module in EXTRAS:
        extra = EXTRAS[module]
        return (f"sova: {command} needs {module}, from the '{extra}' extra of sova_lib, which is not installed: "
                f"pip install \"sova_lib[{extra}]\" (or make venv in a checkout)")
    return (f"sova: {command} needs {module}, a dependency of sova_lib, which is not installed: reinstall sova_lib "
            "(or make venv in a checkout)")


def end_interrupted(message: str = "sova: interrupted", interrupt: BaseException | None = None) -> int:
    """Ctrl-C: what the run finished (when ``interrupt`` is a run's ``RunInterrupted``), then ``message``, on
    stderr; then exit status 130 (returned, or the process ends here).

    When a describer call or a frame loader of a run is still going after the run has stopped and closed its
    cache (``sova_lib.describe.runner.work_running``), the process ends here with ``os._exit(130)`` once stdout
    and stderr are flushed: everything finished is already written and synced, and letting the interpreter exit
    normally would end that thread inside torch or a video decoder, which aborts the process (the reason is in
    ``sova_lib.describe.runner``'s docstring). Otherwise it returns 130 and the process exits as usual.
    """
    if callable(getattr(interrupt, "line", None)):  # a run's count (sova_lib.describe.run_cache.RunInterrupted)
        print(f"sova: {interrupt.line()}", file=sys.stderr)
    print(message, file=sys.stderr)
    runner = sys.modules.get("sova_lib.describe.runner")  # not imported: no run was started
    if runner is not None and runner.work_running():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return 130


class _WarningsAsNotes(logging.Handler):
    """The library's logged warnings as ``sova: warning:`` lines (``options.warning``), held until the command
    has a result: printed then, dropped when it is refused, so a refusal is one line."""

    def emit(self, record: logging.LogRecord) -> None:
        from sova_lib.cli.options import warning

        warning(" ".join(record.getMessage().split()))


def _one_line(err: BaseException) -> str:
    """``err``'s message on one line, with any ``Authorization`` or ``Bearer`` value redacted."""
    from sova_lib.storage import redact

    return redact(" ".join(str(err).split()))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _run(argv)
        sys.stdout.flush()  # here, not at exit, so that a reader that has gone is met by the handler below
        return code
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in ("", "sova_lib"):
            raise
        words = argv[:2] if argv and argv[0] in ("sovabench", "image-tasks", "muvr", "vantage") else argv[:1]
        print(missing_module_message(error, " ".join(words) or "sova"), file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader (e.g. `| head -1`) has gone: what it read is what it wanted; exit quietly. What is still
        # buffered goes to devnull at exit instead of failing there (the recipe of Python's signal documentation,
        # "Note on SIGPIPE"), so this holds whether output is buffered or not.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _run(argv: list[str]) -> int:
    parser = build_parser(argv[0] if argv else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error already printed in one line
        return done.code if isinstance(done.code, int) else 2
    from sova_lib.cli.options import hold_notes, release_notes, release_warnings

    quiet = getattr(args, "no_progress", False)
    if quiet:  # the libraries' own bars to silence (a command without --no-progress loads nothing for them)
        from sova_lib.progress import library_bars_off

    hold_notes()  # a note about an option comes out once the inputs are checked: never before a refusal
    # the library's logged warnings once there is a result (a server that names only its model, then a refused
    # cache: one line)
    warnings = _WarningsAsNotes(logging.WARNING)
    library = logging.getLogger("sova_lib")
    library.addHandler(warnings)
    try:
        with library_bars_off() if quiet else contextlib.nullcontext():
            code = int(args.func(args) or 0)
        release_notes()
        release_warnings()
        return code
    except (CliError, ValueError, FileNotFoundError) as err:  # the invocation or an input file
        problems = getattr(err, "problems", [])
        if len(problems) == 1 and problems[0] in str(err):  # the error line already says it: one line
            problems = []
        more = [f"... and {len(problems) - MAX_LISTED} more problems"] if len(problems) > MAX_LISTED else []
        print(*problems[:MAX_LISTED], *more, f"sova: error: {_one_line(err)}", sep="\n", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:
        release_warnings()
        release_notes(show=False)
        return end_interrupted(interrupt=interrupt)
    except BrokenPipeError:
        raise  # not the environment: main ends quietly
    except OSError as err:  # the environment, not the invocation: named in one line, exit status 1
        print(f"sova: error: {_one_line(err)}", file=sys.stderr)
        return 1
    finally:
        library.removeHandler(warnings)
        release_notes(show=False)  # whatever ended the command: what is still held is dropped, later notes are
        # printed at once
        sys.stdout.flush()
