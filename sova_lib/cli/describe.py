"""``sova describe`` and ``sova import``, and the describing options every benchmark's ``describe`` shares.

Every describing command goes through the one runner
(``sova_lib.describe.runner.describe_items``) into
``CACHE_DIR/descriptions/<name>__<config hash>/``::

    sova describe --backend motion --fps 2 --protocol quickstart-direction --cache-dir cache
    sova describe --backend openai --model M --base-url http://localhost:8000/v1 --prompt general --videos DIR
    sova sovabench describe --backend B --model M --prompt task-aware --protocol inter-pair --video-root clips/
    sova image-tasks describe --backend B --model M --prompt task-aware-vsr --images coco/

Sources of items:

* ``sova describe --videos GLOB_OR_DIR``: every video or image file in a
  folder (not its sub-folders), or the files a glob matches (``**``
  recurses). Ids are file stems, which must be unique.
* ``sova describe --protocol quickstart-direction``: the bundled excerpts and
  their time-reversed copies (ids ``<stem>`` and ``<stem>-reversed``), the
  six clips the quickstart scores.
* ``sova image-tasks describe --images GLOB_OR_DIR``: image files; ids are
  file stems, digit-only stems as integers (``000000017697.jpg`` is 17697),
  the keys the image tasks look descriptions up by
  (``sova_lib.benchmarks.image_tasks``). Use the paper's task-aware image
  prompts (Appendix B): ``task-aware-vsr`` and ``task-aware-whatsup`` ("List
  all pairwise spatial relations between objects in the image."),
  ``task-aware-countbench`` and ``task-aware-visual7w-count`` (a short caption
  stating the number of main objects in words), ``task-aware-spatialbench``;
  ``general`` sends "Describe the image.".
* ``sova sovabench describe --protocol P --video-root DIR``: the protocol's
  clips (inter-pair and two-class: all 9,882 inter-pair rows;
  inter-pair-constrained: the 1,423 queries; intra-pair: 2,300 rows). Ids are
  the benchmark indices. A clip is read from ``DIR/<clip name>.mp4``, or else
  from ``DIR/<prefix>/<clip name>.mp4`` where ``<prefix>`` is the TSV's prefix
  column or any tail of it (``DIR/2018-03-05/<clip name>.mp4`` for a prefix
  ending in ``videos/2018-03-05``). A clip found nowhere is recorded as that
  item's error and the run goes on; when the first ``FIRST_ITEMS`` clips are
  all missing, ``--video-root`` is wrong and the run stops before it starts.
* ``sova sovabench describe --manifest MANIFEST.tsv --video-root DIR``: the
  clips of a clip manifest (``sova sovabench clips plan``), read straight from
  the source videos found anywhere under ``DIR``, with no clip files written
  (``sova_lib.benchmarks.sovabench.clips.items.manifest_items``): each ``ok``
  row's frames are those of the clip ``sova sovabench clips extract`` would
  cut. Ids are the benchmark indices. A row whose status is not ``ok``, or
  whose source video is not found, is recorded as that item's error. The
  cache key's crop source is ``manifest:<SHA-256 of the ok rows>``, so such a
  run never shares a folder with a run on clip files. Plan one manifest per
  protocol's TSV.

``sova describe --prompts FILE.jsonl`` asks each item exactly the messages
of its record in a prompts file (``sova_lib.describe.prompt_file``; records
keyed by item id, every id once) instead of ``--prompt``; the file's SHA-256
enters the cache key.

Frames: ``--fps`` (default 1, the paper's sampler), ``--frames N`` (N
evenly spaced frames instead) or ``--max-frames N`` (a cap on ``--fps``),
as ``sova_lib.video.Sampling`` says; the last two enter the cache key only
when given. ``--fps`` above every video's own frame rate is lowered to the
highest of their rates (``sova_lib.describe.item.effective_rate``), in the
frames and in the cache key, with a warning (``sova_lib.describe.runner.plan_run``). ``--prompt`` defaults to
``general`` for every backend (``sova_lib.describe.prompts``: a single word
is a preset name). ``--limit N`` describes only the first N items, in the
order of the full run, into the same folder; the same command without it
continues there. Engines: ``--engine local`` (the default)
describes in this process (``sova_lib.describe.runner``); ``--engine ray``
runs the describer in a pool of ``--workers`` Ray actors
(``--gpus-per-worker``, ``--cpus-per-worker``, ``--ray-items-per-call`` items
per call), on the cluster at ``--address`` (``auto``: the one ``ray start`` made on
this machine; its token is found as ``sova_lib.describe.ray_options.cluster_token`` says) or on a
local Ray instance (``--num-cpus``, ``--num-gpus``), into the same cache
folder (``sova_lib.describe.ray_engine``). ``--base-url`` takes several URLs
(replicas of one model) in either engine, and ``--batch-size`` is the model's
batch in either engine (not part of the cache key: a run resumes with another).

The exit code is 0 when at least one item has a description (failures are
listed in ``errors.jsonl``, and the first reasons in the summary;
``--retry-errors`` retries them), 1 when none has or when the run stopped on
an environment error (the model cannot load, the server is down, fails every
request or does not serve the model, another run holds the cache folder, the
disk is full, ...: one line on stderr names the cause and the fix, and no
item is marked as failed), 2 for a usage error or a broken input file, 130 on
Ctrl-C (every finished item is saved; the process ends at once).

``sova import`` turns the SOVABench authors' output, one JSON object
``{"<index>": "<text>", ...}``, into the same cache format::

    sova import --authors-json minicpm_general.json --cache-dir cache --backend transformers \\
        --model openbmb/MiniCPM-V-4_5 --prompt general --fps 1

It writes ``<cache-dir>/descriptions/imported-<backend>-<model>-<prompt>-<fps>fps__<hash>/``
(``descriptions.jsonl`` with integer ids, ``manifest.json`` with
``"source": "import"`` and the source file's name and SHA-256 in ``source_details``). The key records
``sampler_version = "authors"`` and ``crop_source = "authors-clips"``, so an
import never shares a folder with a run of this library. Importing the same
file again adds nothing; an id that is already there with another text is an
error.
"""
# Import lists of the same shape as describe/__init__.py's re-exports, deliberately: names, one per line (a scan for
# repeated code pairs them; they share no logic).
from __future__ import annotations

import argparse
import json
import sys
import textwrap

from sova_lib.benchmarks import sovabench
from sova_lib.benchmarks.excerpts import DIRECTION_PROTOCOL
from sova_lib.benchmarks.inputs import run_items
from sova_lib.cli import CliError, end_interrupted
from sova_lib.cli.engine import add_engine_options, engine_options, run_options
from sova_lib.cli.options import (
    add_cache_options,
    add_describer_options,
    add_frame_options,
    add_output_options,
    existing_file,
    existing_folder,
    note,
    positive_rate,
    release_notes,
)
from sova_lib.describe import contract
from sova_lib.describe.item import Item
from sova_lib.describe.prompts import DEFAULT_PROMPT, resolve_prompt
from sova_lib.describe.runner import describe_items
from sova_lib.hub import offline_unless_reachable

__all__ = ["add_commands", "add_describe_options", "add_sovabench_sources", "add_sovabench_describe",
           "add_image_sources", "items_from_args", "frame_options", "describer_options", "make_describer",
           "EXIT_STATUS_HELP", "IMAGE_RATE"]

#: The rate a still-image run records in its cache key: images have no frame rate, so the image commands take no
#: ``--fps``; their keys keep the 1 frame per second of the former default, so their cache folders stay the same.
IMAGE_RATE = 1.0


class _WithBackendOptions(str):
    """A help epilog that ends with ``backend_options_help()``, made only when the help is shown (argparse's raw
    formatters read an epilog through ``splitlines``), so that building a parser imports no backend."""

    def splitlines(self, keepends: bool = False) -> list[str]:
        return f"{self}\n\n{backend_options_help()}".splitlines(keepends)


#: The exit codes of a describe command, shown at the end of its --help, before each backend's options.
EXIT_STATUS_HELP = _WithBackendOptions("""\
exit code: 0 when some item has a description, 1 when none has or the run stopped on an
environment error (model cannot load, server down or failing every request, the cache folder busy
or not writable, a full disk; nothing is marked failed), 2 for a usage error or a broken input
file (every first item missing its file included), 130 on Ctrl-C (finished items are saved)""")

_IMPORT = """\
Turn the SOVABench authors' output, one JSON object {"<index>": "<text>", ...}, into
CACHE_DIR/descriptions/imported-<backend>-<model>-<prompt>-<fps>fps__<hash>/ (descriptions.jsonl
with integer ids, manifest.json with "source": "import" and the source file's SHA-256). An import
never shares a folder with a run of this library; importing the same file again adds nothing."""

def add_commands(subparsers) -> None:
    """``sova describe`` (any folder of videos or images, or the bundled examples) and ``sova import``."""
    d = subparsers.add_parser(
        "describe", help="describe any videos or images (or the bundled examples) into a resumable cache",
        description="Describe videos or images with a describer backend into\n"
                    "CACHE_DIR/descriptions/<name>__<config hash>/, one folder per configuration; run the same\n"
                    "command again to resume. Example:\n"
                    "  sova describe --backend motion --fps 2 --protocol quickstart-direction\n"
                    "A benchmark's items: sova sovabench|image-tasks|muvr|vantage describe.",
        epilog=EXIT_STATUS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = d.add_argument_group("items").add_mutually_exclusive_group(required=True)
    src.add_argument("--videos", metavar="GLOB_OR_DIR",
                     help="the video and image files of a folder (not its sub-folders) or of a glob ('**' "
                          "recurses); ids are file stems")
    src.add_argument("--protocol", choices=(DIRECTION_PROTOCOL,),
                     help=f"{DIRECTION_PROTOCOL}: the bundled excerpts and their time-reversed copies (ids "
                          "<stem> and <stem>-reversed)")
    add_describe_options(d)
    d.add_argument("--prompts", type=existing_file, metavar="FILE.jsonl",
                   help="a prompts file: each item (by id) asked exactly its record's messages instead of --prompt "
                        "(sova_lib.describe.prompt_file); its SHA-256 enters the cache key")
    d.set_defaults(func=run_describe)

    i = subparsers.add_parser(
        "import", help="turn the SOVABench authors' output JSON into a description cache",
        description=_IMPORT, formatter_class=argparse.RawDescriptionHelpFormatter)
    i.add_argument("--authors-json", required=True, type=existing_file, metavar="FILE",
                   help='the authors\' output: one JSON object {"<index>": "<text>", ...}')
    add_cache_options(i, what="the texts go to DIR/descriptions/", retry=False)
    i.add_argument("--backend", required=True, metavar="NAME",
                   help="the backend that made the texts (e.g. transformers), recorded in the key")
    i.add_argument("--model", required=True, metavar="NAME",
                   help="the model that made the texts (e.g. openbmb/MiniCPM-V-4_5), recorded in the key")
    i.add_argument("--revision", metavar="REV", help="the model's revision, if known")
    i.add_argument("--prompt", required=True, metavar="PRESET_OR_TEXT",
                   help="the prompt the authors used: a preset (general, task-aware, ...) or its free text")
    i.add_argument("--system-prompt", metavar="TEXT", help="system prompt the authors used, if any")
    i.add_argument("--fps", type=positive_rate, default=None, metavar="F",
                   help="frames per second the authors sampled, recorded in the key (default 1, with a note)")
    i.set_defaults(func=run_import)


def add_describe_options(d, *, engine: bool = True, fps: bool = True) -> None:
    """The options every describing command shares: describer, frame rate, cache, engine, progress.

    ``fps=False``: the items are still images (``add_image_sources``), which have no frame rate.
    """
    add_describer_options(d)
    if fps:
        add_frame_options(d)
    add_cache_options(d, what="results go to DIR/descriptions/")
    if engine:
        add_engine_options(d)
    add_output_options(d, progress=True)


def describer_options(args) -> dict:
    """The describer keywords of the options given (``--model``, ``--base-url``, ..., ``--backend-option``), checked
    and converted to their declared types (``contract.backend_keywords``)."""
    # the flags the backends declare, which every describing command offers (options.add_describer_options)
    given = {key: getattr(args, key) for key in contract.backend_flags()}
    options = contract.backend_keywords(args.backend, given, args.backend_option)
    if given.get("model") is not None and "model" not in options:
        note(f"the {args.backend} backend has no model; --model is ignored")
    return options


def backend_options_help() -> str:
    """Each backend's ``--backend-option`` keys that are not flags of their own (``contract.backend_flags``), with
    their defaults and help, for the end of a command's help."""
    lines = ["other options of each backend (--backend-option KEY=VALUE):"]
    for backend in sorted(contract.DESCRIBERS):
        try:
            declared = contract.backend_options(backend)
        except (ImportError, AttributeError) as err:
            lines.append(f"  {backend}: cannot be loaded ({err})")
            continue
        if declared is None:
            lines.append(f"  {backend}: any keyword its factory takes")
            continue
        lines.append(f"  {backend}:")
        for key, option in ((k, o) for k, o in declared.items() if not o.flag):
            default = "required" if option.required else f"default {json.dumps(option.default)}"
            lines += textwrap.wrap(f"{key} ({contract.type_words(option)}; {default}): {option.help}", 100,
                                   initial_indent="    ", subsequent_indent="      ", break_on_hyphens=False)
    return "\n".join(lines)


def add_sovabench_sources(parser) -> None:
    """SOVABench's items: ``--protocol P`` (clip files) or ``--manifest M`` (source videos), under ``--video-root``."""
    g = parser.add_argument_group("items")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--protocol", metavar="P", choices=sovabench.SOVABENCH_PROTOCOLS,
                     help=f"a protocol's clip files: {', '.join(sovabench.SOVABENCH_PROTOCOLS)}; ids are benchmark indices")
    src.add_argument("--manifest", type=existing_file, metavar="MANIFEST.tsv",
                     help="a clip manifest (sova sovabench clips plan): clips read straight from the source videos")
    g.add_argument("--video-root", required=True, type=existing_folder, metavar="DIR",
                   help="with --protocol: the folder of the clip files, DIR/<clip name>.mp4 or DIR/<tail of the "
                        "TSV prefix>/<clip name>.mp4; with --manifest: the folder of the source videos, searched at "
                        "any depth")


def add_sovabench_describe(d) -> None:
    """The options of ``sova sovabench describe``: SOVABench's items and every describing command's options."""
    d.epilog = EXIT_STATUS_HELP
    add_sovabench_sources(d)
    add_describe_options(d)
    d.set_defaults(func=run_describe)


def add_image_sources(parser) -> None:
    """The image tasks' items: ``--images GLOB_OR_DIR``, ids the file stems (digit-only stems as integers)."""
    parser.add_argument_group("items").add_argument(
        "--images", required=True, metavar="GLOB_OR_DIR",
        help="the image files of a folder or of a glob; ids are file stems, digit-only ones as integers "
             "(000000017697.jpg is 17697), the keys the image tasks look descriptions up by")
    parser.set_defaults(fps=IMAGE_RATE)


def items_from_args(args) -> tuple[list[Item], dict]:
    """``(items, source)`` of the source given (``--videos``, ``--images``, ``--protocol``, ``--manifest``), as
    ``sova_lib.benchmarks.inputs.run_items`` reads it."""
    return run_items(**{key: getattr(args, key, None) for key in ("videos", "images", "protocol", "video_root",
                                                                  "manifest")})


def frame_options(args) -> dict:
    """``fps``, ``frames`` and ``max_frames`` of a run (keywords of ``describe_items``, ``embed_items`` and the
    benchmarks' ``describe``, which lower an ``fps`` above every video's own rate) from ``--fps`` (default 1),
    ``--frames`` and ``--max-frames``."""
    frames, max_frames = getattr(args, "frames", None), getattr(args, "max_frames", None)
    if frames is not None:
        if args.fps is not None or max_frames is not None:
            raise CliError(f"--frames sets the frame count itself; drop {'--fps' if args.fps is not None else '--max-frames'}")
        return {"fps": None, "frames": frames, "max_frames": None}
    return {"fps": 1.0 if args.fps is None else args.fps, "frames": None, "max_frames": max_frames}


def make_describer(args, options: dict | None = None):
    """The describer the describer options name (``options``: ``describer_options(args)``)."""
    options = describer_options(args) if options is None else options
    if args.backend == "transformers":  # it loads its model in this process (from the hub or its local cache)
        offline_unless_reachable(options.get("model"))
    try:
        return contract.make_describer(args.backend, **options)
    except (TypeError, ValueError) as err:
        raise CliError(f"cannot build the {args.backend} backend: {err}") from None


def run_describe(args) -> int:
    """Read the command line once into a describer, its items and the run's options; the library does the rest
    (``describe_items``: the prompt, the rate rule and the key)."""
    prompts = getattr(args, "prompts", None)
    if prompts is not None and args.prompt != DEFAULT_PROMPT:
        raise CliError("give --prompt or --prompts, not both")
    options, ray, sampling = describer_options(args), engine_options(args), frame_options(args)
    if ray is not None and prompts is not None:
        raise CliError("--prompts runs on the local engine; leave out --engine ray")
    if ray is not None:
        from sova_lib.describe.ray_engine import RayEngine, check_ray_data

        check_ray_data()
    items, source = items_from_args(args)
    describer, prompt = make_describer(args, options), resolve_prompt(args.prompt, args.system_prompt)
    if prompts is not None:
        from sova_lib.describe.prompt_file import read_prompt_file

        describer, prompt = read_prompt_file(prompts).asked(describer, items)
    # with Ray, the describer above names the cache; each actor builds its own, once
    engine = None if ray is None else RayEngine(args.backend, options, ray)
    release_notes()  # the inputs are checked: the notes come before the run
    try:
        summary = describe_items(describer, items, args.cache_dir, prompt=prompt, **sampling, **source,
                                 run=run_options(args), engine=engine)
    except KeyboardInterrupt as interrupt:
        return end_interrupted("sova: interrupted; every finished item is saved: run the same command again to resume",
                               interrupt)
    for line in summary.failure_lines():
        print(line, file=sys.stderr)
    return 0 if summary.total_done > 0 or not items else 1


def run_import(args) -> int:
    folder, added, texts, notes = sovabench.import_authors(
        args.authors_json, args.cache_dir, backend=args.backend, model=args.model, revision=args.revision,
        prompt=resolve_prompt(args.prompt, args.system_prompt), fps=args.fps)
    for line in notes:
        note(line)
    print(f"imported {added} descriptions ({len(texts) - added} already there) into {folder}")
    return 0
