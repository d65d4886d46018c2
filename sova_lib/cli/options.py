"""Option groups and value types shared by every ``sova`` command, defined once.

Every command builds its parser from these pieces, so one concept has one
spelling, one help text and one default everywhere (the table of spellings is
``sova_lib.cli.vocabulary``):

* ``add_describer_options``: ``--backend``, ``--model``, ``--prompt`` and the
  backend's keywords;
* ``add_cache_options``: ``--cache-dir`` (the cache root, default
  ``$SOVA_CACHE`` or ``./cache``) and ``--retry-errors``;
* ``add_output_options``: ``--out``, ``--json``, ``--no-progress``;
* ``add_encoder_options``: ``--embedder`` and ``--no-split``, the sentence
  encoder that embeds descriptions;
* ``add_bootstrap_options``: ``--bootstrap N`` (default ``DEFAULT_BOOTSTRAP``)
  and ``--seed``;
* ``add_scoring_options``: the bootstrap, cache and output options of every
  scoring command;
* ``report``: what every scoring command prints and writes (``--out``,
  ``--json``, its notes).

Value types (``positive_rate``, ``count``, ...) reject bad values while the
command line is parsed; ``SovaParser`` turns every parse error into one line
on stderr naming the option, and exit status 2.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from sova_lib.encoder import default_cache_dir

__all__ = ["SovaParser", "fill_later", "DEFAULT_BOOTSTRAP", "add_answer_limit", "add_describer_options", "add_cache_options",
           "add_output_options", "add_bootstrap_options", "add_scoring_options", "add_encoder_options",
           "add_fps_option", "positive_rate", "count", "positive_count", "positive_number", "nonnegative_number",
           "existing_file", "existing_folder", "note", "report"]

#: Bootstrap resamples of every command that reports an interval (0: no interval).
DEFAULT_BOOTSTRAP = 1000


def note(text: str) -> None:
    """One ``sova: note:`` line on stderr."""
    print(f"sova: note: {text}", file=sys.stderr)


def report(args, result, text: str | None, payload: dict | None = None, notes=(), remarks=()) -> int:
    """What a scoring command ends with: with ``--out``, ``result.to_record()`` written there (its path on
    stderr); ``payload`` (default ``result.to_json()``) as one JSON line with ``--json``, else ``text``; then the
    lines of ``remarks`` and each of ``notes`` on stderr. Returns the exit status, 0."""
    import json

    if args.out:
        from sova_lib.records import write_record

        print(f"wrote {write_record(result.to_record(), args.out)}", file=sys.stderr)
    print(json.dumps(result.to_json() if payload is None else payload) if args.json else text)
    for line in [*remarks, *(f"  note: {line}" for line in notes)]:
        print(line, file=sys.stderr)
    return 0


#: Namespace attribute naming the deepest command that was left arguments it does not know.
_UNKNOWN_TO = "_sova_unknown_to"


class SovaParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line: ``sova: error: <command>: <what>; see <command> --help``.

    An argument no command knows is reported by the command it was given to (``sova image-tasks describe:
    unrecognized arguments: --fps 2``), not by ``sova`` itself, where argparse would report it.

    A verb's options can be added when the verb is first parsed (``fill_later``), so that a command line imports
    the modules of its own verb alone; ``filled`` adds every verb's, for a caller that reads the whole tree.
    """

    _fill = None  # what adds this parser's arguments, not run yet (fill_later)

    def filled(self) -> "SovaParser":
        """This parser with its own arguments and those of every sub-command below it added; returns it."""
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)
        for action in self._actions:
            for child in (action.choices or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
                child.filled()
        return self

    def error(self, message: str):  # noqa: D401 - argparse's hook
        self.exit(2, f"sova: error: {self.prog}: {message}; see '{self.prog} --help'\n")

    def parse_known_args(self, args=None, namespace=None):
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(namespace, _UNKNOWN_TO):  # a sub-command finishes first: the deepest one names it
            setattr(namespace, _UNKNOWN_TO, self.prog)
        return namespace, extras

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        command = vars(namespace).pop(_UNKNOWN_TO, self.prog)
        if extras:
            self.exit(2, f"sova: error: {command}: unrecognized arguments: {' '.join(extras)}; "
                         f"see '{command} --help'\n")
        return namespace


def fill_later(parser: argparse.ArgumentParser, fill) -> None:
    """``fill(parser)`` adds ``parser``'s arguments: just before a ``SovaParser`` first parses (so that a command
    line imports the modules of its own verb alone), at once for any other parser."""
    if isinstance(parser, SovaParser):
        parser._fill = fill
    else:
        fill(parser)


# --------------------------------------------------------------------------- value types

def _checked(convert, ok, bad: str, hint: str = ""):
    """An argparse type: ``convert(text)`` where ``ok`` holds of it; otherwise one line, ``bad`` (formatted with
    ``text`` and ``value``) followed by ``hint``."""
    def check(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if convert is int else ''}number{hint}") \
                from None
        if not ok(value):
            raise argparse.ArgumentTypeError(bad.format(text=text, value=value) + hint)
        return value
    return check


#: A finite number above 0 (frames per second).
positive_rate = _checked(float, lambda v: math.isfinite(v) and v > 0, "{text} is not a finite number above 0",
                         "; give frames per second, e.g. 1")
#: A finite number above 0 (seconds).
positive_number = _checked(float, lambda v: math.isfinite(v) and v > 0, "{text} is not a finite number above 0")
#: A finite number, 0 or more.
nonnegative_number = _checked(float, lambda v: math.isfinite(v) and v >= 0, "{text} is not a finite number of 0 or more")
#: A whole number, 0 or more.
count = _checked(int, lambda v: v >= 0, "{value} is negative; give 0 or more")
#: A whole number, 1 or more.
positive_count = _checked(int, lambda v: v >= 1, "{value} is below 1; give 1 or more")


def existing_file(text: str) -> Path:
    """A path naming a regular, non-empty file (``/dev/null`` and folders are refused)."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a regular file")
    if path.stat().st_size == 0:
        raise argparse.ArgumentTypeError(f"{text} is empty")
    return path


def existing_folder(text: str) -> Path:
    """A path naming an existing folder."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such folder")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder")
    return path


def cache_root(text: str) -> Path:
    """A cache root: a folder, or a path not yet made; an existing file is refused."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a folder; give a folder for the cache")
    return path


# --------------------------------------------------------------------------- shared groups

def add_describer_options(parser, *, prompt: bool = True) -> None:
    """The describer: backend, model, prompt and the backend's keywords (``sova_lib.describe``)."""
    from sova_lib.describe.contract import DESCRIBERS

    g = parser.add_argument_group("describer")
    g.add_argument("--backend", required=True, choices=sorted(DESCRIBERS),
                   help="what describes each item: motion (a classical motion detector, no model), openai (a model "
                        "behind an OpenAI-compatible server, --base-url), transformers (a Hugging Face model run in "
                        "this process)")
    g.add_argument("--model", metavar="NAME",
                   help="model id (Hugging Face id, or the name a server serves); not used by motion")
    if prompt:
        g.add_argument("--prompt", metavar="PRESET_OR_TEXT",
                       help="a preset (general, task-aware, task-aware-<dataset>; see sova_lib.describe.prompts) "
                            "or free text (default: general; not used by motion)")
        g.add_argument("--system-prompt", metavar="TEXT", help="system prompt (replaces a preset's; '' for none)")
    g.add_argument("--base-url", metavar="URL", nargs="+", action="extend",
                   help="OpenAI-compatible server, e.g. http://localhost:8000/v1; several URLs (replicas) share "
                        "the requests, --concurrency each")
    g.add_argument("--api-key-env", metavar="NAME",
                   help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--concurrency", type=positive_count, metavar="N",
                   help="requests in flight per server (openai backend)")
    g.add_argument("--max-new-tokens", type=positive_count, metavar="N",
                   help="answer length limit in tokens (default 1024)")
    add_answer_limit(g, "a longer one is cut to it, flagged \"cut\" in descriptions.jsonl, counted in the summary "
                        "and recorded in the manifest")
    g.add_argument("--connect-timeout", type=positive_number, metavar="S",
                   help="openai backend: seconds to wait for a connection to the server (default 10)")
    g.add_argument("--read-timeout", type=positive_number, metavar="S",
                   help="openai backend: seconds to wait for one whole answer (default 120)")
    g.add_argument("--device-map", metavar="MAP",
                   help="transformers backend: 'auto' splits a model too large for one GPU over every visible GPU "
                        "(accelerate)")
    g.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other describer keyword; VALUE is parsed as JSON when it can be (repeatable)")


def add_answer_limit(group, what: str) -> None:
    """``--max-answer-chars N``: the longest answer kept (``item_vectors.MAX_TEXT_CHARS``); ``what`` ends its help."""
    from sova_lib.item_vectors import MAX_TEXT_CHARS

    group.add_argument("--max-answer-chars", type=positive_count, default=MAX_TEXT_CHARS, metavar="N",
                       help=f"longest answer kept, in characters (default {MAX_TEXT_CHARS}); {what}")


#: ``--aggregate``'s help, the same in every command that has it.
AGGREGATE_HELP = ("how two items' sets of sentence (or frame) vectors make one similarity: the max (default, as the "
                  "paper), mean or median of their pairwise cosines")

#: ``--ties``'s help for SOVABench's protocols, the same in every command that has it.
TIES_HELP = ("tie rule of average precision (default: expected, the mean over every order of tied items); optimistic "
             "and pessimistic bound it; stable keeps tied clips in the benchmark file's order, which SOVABench sorts "
             "by class, so it leaks the labels to a scorer that ties")

#: ``--no-split``'s help where a command does not say more.
SPLIT_HELP = "embed each description whole (default: one vector per sentence)"


def add_encoder_options(parser, *, split: str = SPLIT_HELP) -> None:
    """The sentence encoder that embeds descriptions: ``--embedder`` and ``--no-split`` (``split`` its help, where
    it applies to part of the texts)."""
    g = parser.add_argument_group("sentence encoder", "how descriptions become vectors (unused when the input is "
                                                      "already vectors)")
    g.add_argument("--embedder", metavar="NAME_OR_PATH", default=None,
                   help="sentence encoder: a Hugging Face id or a local folder (default: all-MiniLM-L6-v2, which "
                        "ships with the package and needs no network)")
    g.add_argument("--no-split", action="store_true", help=split)


def add_fps_option(parser) -> None:
    """``--fps``: frames sampled per second of video (capped at a video's own frame rate)."""
    parser.add_argument_group("frames").add_argument(
        "--fps", type=positive_rate, default=1.0, metavar="F",
        help="frames sampled per second of video (default 1; above a video's own frame rate it is capped at that "
             "rate)")


def add_cache_options(parser, *, what: str, retry: bool = True) -> None:
    """``--cache-dir`` (the cache root) and, for resumable runs, ``--retry-errors``."""
    g = parser.add_argument_group("cache")
    g.add_argument("--cache-dir", type=cache_root, default=default_cache_dir(), metavar="DIR",
                   help=f"cache root; {what} (default: $SOVA_CACHE or ./cache)")
    if retry:
        g.add_argument("--retry-errors", action="store_true",
                       help="try again the items that failed in earlier runs (errors.jsonl); by default they are "
                            "skipped")


def add_output_options(parser, *, out: tuple[str, str] | None = None, json: bool = False,
                       progress: bool = False, required: bool = False, record: str | None = None) -> None:
    """``--out`` (``(metavar, help)``; ``record``: a folder for the record of what the command scores, named so),
    ``--json`` and ``--no-progress``, as the command has them."""
    if record is not None:
        out = ("DIR", f"also write the {record} as one record JSON into DIR (the tables of sova_lib.records collect them)")
    g = parser.add_argument_group("output")
    if out is not None:
        g.add_argument("--out", type=Path, metavar=out[0], help=out[1], required=required)
    if json:
        g.add_argument("--json", action="store_true", help="print the result as one JSON object instead of text")
    if progress:
        g.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_bootstrap_options(parser) -> None:
    """``--bootstrap N`` resamples for a 95% interval (one default everywhere) and its ``--seed``."""
    g = parser.add_argument_group("bootstrap")
    g.add_argument("--bootstrap", type=count, default=DEFAULT_BOOTSTRAP, metavar="N",
                   help=f"bootstrap resamples for a 95%% confidence interval (default {DEFAULT_BOOTSTRAP}; "
                        "0: no interval)")
    g.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")


def add_scoring_options(parser, *, record: str = "result") -> None:
    """What every scoring command ends with: ``--bootstrap`` and ``--seed``, ``--cache-dir`` (the sentence
    encoder's vectors), ``--out`` (a folder for the ``record``, as ``add_output_options`` names it) and ``--json``."""
    add_bootstrap_options(parser)
    add_cache_options(parser, what="the sentence encoder's vectors are cached under it", retry=False)
    add_output_options(parser, record=record, json=True)
