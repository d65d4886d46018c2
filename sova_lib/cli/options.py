"""Option groups and value types shared by every ``sova`` command, defined once.

Every command builds its parser from these pieces, so one concept has one
spelling, one help text and one default everywhere (the table of spellings is
in docs/architecture.md):

* ``add_describer_options``: ``--backend``, ``--model``, ``--prompt`` and the
  backend's keywords;
* ``add_cache_options``: ``--cache-dir`` (the cache root, default
  ``$SOVA_CACHE`` or ``./cache``) and ``--retry-errors``;
* ``add_output_options``: ``--out``, ``--json``, ``--no-progress``;
* ``add_encoder_options``: ``--embedder``, ``--embedder-option`` and
  ``--no-split``, the sentence encoder that embeds descriptions
  (``encoder_options`` turns the given settings into ``SentenceEncoder``'s
  keywords);
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
import json
import math
import pkgutil
import sys
from pathlib import Path

from sova_lib import storage
from sova_lib.encoder import DEFAULT_ENCODER, SentenceEncoder, encoder_setting

__all__ = ["SovaParser", "DEFAULT_BOOTSTRAP", "add_answer_limit", "add_describer_options",
           "add_cache_options", "add_output_options", "add_bootstrap_options", "add_scoring_options",
           "add_encoder_options", "encoder_options", "encoder_of", "add_ranking_options", "add_frame_options",
           "positive_rate", "count", "positive_count", "positive_number", "nonnegative_number", "value_type",
           "path_type", "existing_file", "existing_folder", "note", "warning", "hold_notes", "release_notes",
           "release_warnings", "report"]

#: Bootstrap resamples of every command that reports an interval (0: no interval).
DEFAULT_BOOTSTRAP = 1000


class _Lines:
    """Lines on stderr, each after ``prefix``: printed at once, or, while ``held`` is a list, kept there."""

    def __init__(self, prefix: str):
        self.prefix, self.held = prefix, None

    def say(self, text: str) -> None:
        line = f"{self.prefix}{text}"
        if self.held is not None:
            self.held.append(line)
        else:
            print(line, file=sys.stderr)

    def release(self, show: bool) -> None:
        held, self.held = self.held or [], None
        if show and held:
            print(*held, sep="\n", file=sys.stderr)


#: Notes held until the command has checked its inputs (``hold_notes``), and the library's logged warnings held
#: until the command has a result (``release_warnings``); otherwise printed at once.
_notes, _warnings = _Lines("sova: note: "), _Lines("sova: warning: ")


def note(text: str) -> None:
    """One ``sova: note:`` line on stderr: at once, or, while notes are held, when they are let go."""
    _notes.say(text)


def warning(text: str) -> None:
    """One ``sova: warning:`` line on stderr: at once, or, while warnings are held (``hold_notes``), once the
    command has a result (``release_warnings``), since what it warns of may come before a refusal of its input,
    a full disk or a cache another run holds, which alone is printed then."""
    _warnings.say(text)


def hold_notes() -> None:
    """Hold every note until ``release_notes``, and every ``warning`` until ``release_warnings``
    (``sova_lib.cli.main`` holds them while a command runs, so that a refused input is one line on stderr)."""
    _notes.held, _warnings.held = [], []


def release_notes(show: bool = True) -> None:
    """Print the notes held so far (``show=False``: drop them, and the held warnings too: the command failed),
    then print notes at once."""
    _notes.release(show)
    if not show:
        release_warnings(show=False)


def release_warnings(show: bool = True) -> None:
    """Print the warnings held so far (``show=False``: drop them), then print warnings at once."""
    _warnings.release(show)


def report(args, result, text: str | None, payload: dict | None = None, notes=(), remarks=()) -> int:
    """What a scoring command ends with: with ``--out``, ``result.to_record()`` written there (its path on
    stderr); ``payload`` (default ``result.to_json()``) as one JSON line with ``--json``, else ``text``; then the
    lines of ``remarks`` and each of ``notes`` on stderr. Returns the exit status, 0. The notes held while the
    command checked its input come first (the result is made: its input was good)."""
    release_notes()
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

    A long option is taken only as spelled: argparse's abbreviations are off (``allow_abbrev=False``), so that
    ``--device cpu`` is refused where only ``--device-map`` exists instead of being read as it. Every sub-command's
    parser is a ``SovaParser`` too (``add_subparsers`` makes its parsers of the parent's class).
    """

    _fill = None  # what adds this parser's arguments, not run yet (fill_later)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def fill_later(self, fill) -> None:
        """``fill(self)`` adds this parser's arguments just before it first parses (so that a command line imports the
        modules of its own verb alone); ``fill`` is a function, or ``"module:function"``, imported only then."""
        self._fill = fill

    def _add_own(self) -> None:
        """Add this parser's own arguments (``fill_later``), once."""
        fill, self._fill = self._fill, None
        if isinstance(fill, str):
            fill = pkgutil.resolve_name(fill)
        if fill is not None:
            fill(self)

    def filled(self) -> "SovaParser":
        """This parser with its own arguments and those of every sub-command below it added; returns it."""
        self._add_own()
        for action in self._actions:
            for child in (action.choices or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
                child.filled()
        return self

    def error(self, message: str):  # noqa: D401 - argparse's hook
        self.exit(2, f"sova: error: {self.prog}: {message}; see '{self.prog} --help'\n")

    def parse_known_args(self, args=None, namespace=None):
        self._add_own()
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


def value_type(read):
    """An argparse type that is ``read(text)``, whose ValueError is the one-line refusal of the value."""
    def check(text: str):
        try:
            return read(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return check


def path_type(*rules):
    """An argparse type of a path, refused by the first of ``rules``, ``(bad, refusal)``, where ``bad(path)`` holds:
    one line, the path as given followed by ``refusal``."""
    def check(text: str) -> Path:
        path = Path(text)
        for bad, refusal in rules:
            if bad(path):
                raise argparse.ArgumentTypeError(text + refusal)
        return path
    return check


#: A path naming a regular, non-empty file (``/dev/null`` and folders are refused).
existing_file = path_type((lambda p: not p.exists(), ": no such file"), (lambda p: not p.is_file(), " is not a regular file"),
                          (lambda p: p.stat().st_size == 0, " is empty"))
#: A path naming an existing folder.
existing_folder = path_type((lambda p: not p.exists(), ": no such folder"), (lambda p: not p.is_dir(), " is not a folder"))
#: A cache root: a folder, or a path not yet made; an existing file is refused.
cache_root = path_type((lambda p: p.exists() and not p.is_dir(), " is a file, not a folder; give a folder for the cache"))


# --------------------------------------------------------------------------- shared groups

def add_describer_options(parser, *, prompt: bool = True) -> None:
    """The describer: backend, model, prompt and the backend's keywords (``sova_lib.describe``)."""
    from sova_lib.describe.contract import DESCRIBERS, backend_flags

    g = parser.add_argument_group("describer")
    g.add_argument("--backend", required=True, choices=sorted(DESCRIBERS),
                   help="what describes each item: motion (a classical motion detector, no model), openai (a model "
                        "behind an OpenAI-compatible server, --base-url), transformers (a Hugging Face model run in "
                        "this process)")
    if prompt:
        from sova_lib.describe.prompts import DEFAULT_PROMPT, PROMPTS

        g.add_argument("--prompt", metavar="PRESET_OR_TEXT", default=DEFAULT_PROMPT,
                       help=f"a preset ({', '.join(PROMPTS)}; see sova_lib.describe.prompts), or an instruction "
                            f"of your own as a sentence (a single word is taken for a preset name) (default: "
                            f"{DEFAULT_PROMPT}; not used by motion)")
        g.add_argument("--system-prompt", metavar="TEXT", help="system prompt (replaces a preset's; '' for none)")
    flags = backend_flags()
    for key in sorted(flags, key=lambda key: key != "model"):  # --model first, then in the backends' order
        _add_backend_flag(g, flags[key])
    add_answer_limit(g, "a longer one is cut to it, flagged \"cut\" in descriptions.jsonl, counted in the summary "
                        "and recorded in the manifest")
    g.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other option of the backend, read as its declared type (repeatable; 'sova describe "
                        "--help' lists each backend's)")


def _add_backend_flag(group, owners: list) -> None:
    """The flag of the option the backends ``owners`` declare (``add_option_flag``): its help theirs, ``backend: help
    (default D)``, backends that say the same thing together; not given: None."""
    said: dict[str, list[str]] = {}
    for backend, option in owners:
        default = "required" if option.required else f"default {json.dumps(option.default)}"
        said.setdefault(f"{option.help} ({default})", []).append(backend)
    add_option_flag(group, owners[0][1], "; ".join(f"{', '.join(b)}: {h}" for h, b in said.items()), default=None)


def add_option_flag(group, option, help: str, **given) -> None:  # noqa: A002
    """``--NAME`` of ``option`` (a ``sova_lib.describe.contract.BackendOption``) with ``help``: its metavar and
    choices the option's, its type its declared one (a whole number 1 or more, a number above 0, or as
    ``--backend-option`` reads it; a sequence takes several values); ``given``: argparse's other keywords."""
    from sova_lib.describe.contract import option_value

    many = "Sequence[str]" in option.kinds()
    read = value_type(lambda text: option_value(option, text))
    kind = {("int",): positive_count, ("float",): positive_number}.get(tuple(option.kinds()),
                                                                       str if many or option.choices else read)
    group.add_argument(f"--{option.name.replace('_', '-')}", metavar=option.flag, type=kind, choices=option.choices,
                       **({"nargs": "+", "action": "extend"} if many else {}), help=help.replace("%", "%%"), **given)


def add_answer_limit(group, what: str) -> None:
    """``--max-answer-chars N``: the longest answer kept (``item_vectors.MAX_TEXT_CHARS``); ``what`` ends its help."""
    from sova_lib.item_vectors import MAX_TEXT_CHARS

    group.add_argument("--max-answer-chars", type=positive_count, default=MAX_TEXT_CHARS, metavar="N",
                       help=f"longest answer kept, in characters (default {MAX_TEXT_CHARS}); {what}")


def add_ranking_options(parser) -> None:
    """``--aggregate`` (how two items' vector sets make one similarity) and ``--ties`` (the tie rule of average
    precision), the same in every command that ranks SOVABench's clips."""
    from sova_lib.metrics import TIE_RULES
    from sova_lib.similarity import AGGREGATES

    parser.add_argument("--aggregate", choices=AGGREGATES, default="max",
                        help="how two items' sets of sentence (or frame) vectors make one similarity: the max "
                             "(default, as the paper), mean or median of their pairwise cosines")
    parser.add_argument("--ties", choices=TIE_RULES, default="expected",
                        help="tie rule of average precision (default: expected, the mean over every order of tied "
                             "items); optimistic and pessimistic bound it; stable keeps tied clips in the benchmark "
                             "file's order, which SOVABench sorts by class, so it leaks the labels to a scorer that "
                             "ties")


#: ``--no-split``'s help where a command does not say more.
SPLIT_HELP = "embed each description whole (default: one vector per sentence)"


def encoder_options(args) -> dict:
    """``SentenceEncoder``'s keywords of the ``--embedder-option`` settings given (a later one of a key wins)."""
    return dict(args.embedder_option)


def encoder_of(args, show_progress: bool = True):
    """A function that makes the sentence encoder of ``--embedder``, ``--embedder-option`` and ``--cache-dir``
    (made only when a text needs vectors), its progress bar shown with ``show_progress`` unless ``--json``."""
    return lambda: SentenceEncoder(args.embedder or DEFAULT_ENCODER, cache_dir=args.cache_dir,
                                   show_progress=show_progress and not args.json, **encoder_options(args))


def add_encoder_options(parser, *, split: str = SPLIT_HELP) -> None:
    """The sentence encoder that embeds descriptions: ``--embedder``, its ``--embedder-option`` settings and
    ``--no-split`` (``split`` its help, where it applies to part of the texts)."""
    g = parser.add_argument_group("sentence encoder", "how descriptions become vectors (unused when the input is "
                                                      "already vectors)")
    g.add_argument("--embedder", metavar="NAME_OR_PATH", default=None,
                   help="sentence encoder: a Hugging Face id or a local folder (default: all-MiniLM-L6-v2, which "
                        "ships with the package and needs no network)")
    g.add_argument("--embedder-option", type=value_type(encoder_setting), action="append", default=[], metavar="KEY=VALUE",
                   help="a setting of the sentence encoder (repeatable): trust_remote_code=true runs modeling code "
                        "the encoder ships (Alibaba-NLP/gte-large-en-v1.5 needs it; default false); prompt_name=NAME "
                        "puts the encoder's own prompt NAME before every sentence (e.g. STS for "
                        "google/embeddinggemma-300m); prompt=TEXT puts TEXT there; dtype=bfloat16 loads the weights "
                        "in bfloat16 (about 3x faster on a CPU with AMX, cosine to float32 above 0.9999; default "
                        "float32). A prompt and the dtype are part of the key of the cached vectors (default: the "
                        "encoder's own prompt, mostly none; docs/sovabench.md gives the settings of the paper's "
                        "encoders)")
    g.add_argument("--no-split", action="store_true", help=split)


def add_frame_options(parser) -> None:
    """Which frames of each clip: ``--fps`` (the paper's sampler), ``--frames`` (a fixed count) and ``--max-frames``
    (a cap on ``--fps``); ``sova_lib.video.Sampling`` is the rule, ``sova_lib.cli.describe.frame_options`` reads
    them."""
    g = parser.add_argument_group("frames", "the paper's default: 1 frame per second of video, no cap")
    g.add_argument("--fps", type=positive_rate, default=None, metavar="F",
                   help="frames sampled per second of video, the paper's sampler (default 1; above a video's own "
                        "frame rate it is capped at that rate)")
    g.add_argument("--frames", type=positive_count, default=None, metavar="N",
                   help="instead of --fps: N frames per clip, evenly spaced from its first frame to its last "
                        "(the paper's sampler rule for a fixed count)")
    g.add_argument("--max-frames", type=positive_count, default=None, metavar="N",
                   help="a cap on --fps: a clip that the rate gives more than N frames gets N frames, evenly spaced "
                        "over the whole clip (default: no cap)")


def add_cache_options(parser, *, what: str, retry: bool = True) -> None:
    """``--cache-dir`` (the cache root) and, for resumable runs, ``--retry-errors``."""
    g = parser.add_argument_group("cache")
    g.add_argument("--cache-dir", type=cache_root, default=storage.cache_root(), metavar="DIR",
                   help=f"cache root; {what} (default: $SOVA_CACHE or ./cache)")
    if retry:
        g.add_argument("--retry-errors", action="store_true",
                       help="try again the items that failed in earlier runs (errors.jsonl); by default they are "
                            "skipped")
        g.add_argument("--limit", type=positive_count, default=None, metavar="N",
                       help="a small test run: only the first N items, in the order a full run takes them, into "
                            "the same cache folder, so the same command without --limit continues from there")


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
        g.add_argument("--no-progress", action="store_true",
                       help="no progress bar (neither sova's nor those of transformers and huggingface_hub)")


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
