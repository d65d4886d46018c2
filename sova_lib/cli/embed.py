"""The ``sova embed`` command: frame vectors of a contrastive model into a resumable cache.

``sova embed`` samples each item's frames with the paper's sampler (as
``sova describe`` does), embeds them with any transformers checkpoint whose
``AutoModel`` has ``get_image_features`` (``sova_lib.describe.contrastive``),
and appends them to ``CACHE_DIR/frame-embeddings/<model>-<pool>-<fps>fps__<hash>/``::

    sova sovabench embed --model openai/clip-vit-large-patch14 --fps 1 --pool mean \\
        --protocol inter-pair --video-root clips/ --cache-dir cache --out clip-l14.npz
    sova sovabench evaluate --protocol inter-pair --embeddings clip-l14.npz --ties expected

``--frames N`` (N evenly spaced frames) and ``--max-frames N`` (a cap on
``--fps``) choose the frames as for ``sova describe``, and ``--limit N``
embeds only the first N items into the same folder. ``--pool mean`` keeps the mean of the frame vectors (one vector per clip),
``--pool none`` every frame vector (a clip is a set; scoring takes its best
pair of frames), ``--pool video`` the model's own clip vector
(``get_video_features``, X-CLIP). ``--engine ray`` (with ``--workers``,
``--gpus-per-worker``, ``--batch-size``, ``--address``, as for ``sova
describe``) spreads the work over Ray actors that each load the model once
(``sova_lib.describe.contrastive.ray_engine``). ``--out FILE.npz`` writes the vectors of
the items of this run in the format ``sova sovabench evaluate --embeddings`` reads.

Exit code: 0 when some item has vectors, 1 when none has, 2 for a usage
error or a model that cannot be loaded.
"""
from __future__ import annotations

import sys

from sova_lib.cli import CliError, end_interrupted
from sova_lib.cli.describe import add_sovabench_sources, frame_options, items_from_args
from sova_lib.cli.engine import add_engine_options, engine_options, run_options
from sova_lib.cli.options import add_cache_options, add_frame_options, add_option_flag, add_output_options
from sova_lib.describe.contract import declared_options
from sova_lib.describe.contrastive import POOLS, ContrastiveModel, embed_items, export, read_cache
from sova_lib.describe.contrastive.ray_engine import embed_items_ray
from sova_lib.hub import offline_unless_reachable

__all__ = ["add_commands", "add_embed_options", "add_sovabench_embed", "model_options", "run_embed"]

def add_commands(subparsers) -> None:
    """``sova embed``: any folder of videos or images (a benchmark's items: ``sova <benchmark> embed``)."""
    e = subparsers.add_parser(
        "embed", help="embed sampled frames of any videos or images with a contrastive model into a resumable cache",
        description="Embed the sampled frames of videos or images with a contrastive model into "
                    "CACHE_DIR/frame-embeddings/<model>-<pool>-<fps>fps__<hash>/ (resumable). A benchmark's items: "
                    "sova sovabench|image-tasks embed.",
        epilog="exit code: 0 when some item has vectors, 1 when none has, 2 for a usage error")
    e.add_argument_group("items").add_argument(
        "--videos", required=True, metavar="GLOB_OR_DIR",
        help="the video/image files of a folder (not its sub-folders) or of a glob; ids are file stems")
    add_embed_options(e)


def add_embed_options(e, *, fps: bool = True) -> None:
    """The options every embedding command shares: model, frame rate, pooling, cache, engine, output.

    ``fps=False``: the items are still images (``sova_lib.cli.describe.add_image_sources``), which have no frame
    rate.
    """
    g = e.add_argument_group("contrastive model")
    for name, option in declared_options(ContrastiveModel.Options).items():  # a flag of each, as it declares it
        default = "" if option.default is None or option.required else f" (default {option.default})"
        add_option_flag(g, option, option.help + default, required=option.required,
                        **({} if option.required else {"default": option.default}))
        if name == "revision":
            g.add_argument("--pool", choices=POOLS, default="mean",
                           help="what an item's frame vectors become: mean (default: their mean, one vector), none "
                                "(every frame vector; two items then score by their best pair of frames), video (the "
                                "model's own video vector, get_video_features, e.g. X-CLIP)")
    if fps:
        add_frame_options(e)
    add_cache_options(e, what="vectors go to DIR/frame-embeddings/")
    add_engine_options(e)
    add_output_options(e, out=("FILE.npz", "also write the vectors of this run's items into FILE.npz, which "
                                           "'evaluate --embeddings' reads"), progress=True)
    e.set_defaults(func=run_embed)


def add_sovabench_embed(e) -> None:
    """The options of ``sova sovabench embed``: SOVABench's items and every embedding command's options."""
    add_sovabench_sources(e)
    add_embed_options(e)


def model_options(args):
    """The contrastive model's options (``ContrastiveModel.Options``) of the command line's flags of their names."""
    return ContrastiveModel.Options(**{name: getattr(args, name) for name in declared_options(ContrastiveModel.Options)})


def run_embed(args) -> int:
    engine = engine_options(args)
    items, source = items_from_args(args)
    options = model_options(args)  # the model is made of them here, or in each Ray actor
    offline_unless_reachable(options.model)
    common = dict(**frame_options(args), pool=args.pool, crop_source=source["crop_source"], run=run_options(args))
    try:
        if engine is not None:
            summary = embed_items_ray(options, items, args.cache_dir, ray=engine, **common)
        else:  # a model without --pool's head: ValueError
            summary = embed_items(ContrastiveModel(options), items, args.cache_dir, **common)
    except RuntimeError as err:  # no model, a busy folder (duplicate ids and a wrong pool are ValueErrors)
        raise CliError(str(err)) from None
    except KeyboardInterrupt as interrupt:
        return end_interrupted("sova: interrupted; finished shards are saved: run the same command again to resume",
                               interrupt)
    print(summary.line())
    for item_id, error in list(summary.failures.items())[:10]:
        print(f"  failed {item_id!r}: {error}", file=sys.stderr)
    found = read_cache(summary.folder)
    have = [i.id for i in items if i.id in found]
    if args.out is not None and have:
        print(f"exported {len(have)} items to {export(summary.folder, args.out, ids=have)}")
    return 0 if have else 1
