"""``sova sovabench describe | embed | evaluate | clips``: SOVABench from the downloads to a score.

::

    sova sovabench clips sources --tsv inter-pair --annotations ANN --out sources.tsv
    sova sovabench clips fetch   --tsv inter-pair --video-root VID
    sova sovabench clips plan    --tsv inter-pair --annotations ANN --out manifest.tsv
    sova sovabench clips extract --manifest manifest.tsv --video-root VID --out clips/
    sova sovabench describe --protocol inter-pair --video-root clips/ --backend B --model M --prompt task-aware
    sova sovabench embed    --protocol inter-pair --video-root clips/ --model openai/clip-vit-large-patch14 --out v.npz
    sova sovabench evaluate --protocol inter-pair --descriptions cache/descriptions/<folder>

Items are a protocol's clip files (``--protocol P --video-root DIR``: a clip is
read from ``DIR/<clip name>.mp4``, or else from ``DIR/<prefix>/<clip
name>.mp4`` where ``<prefix>`` is the TSV's prefix column or any tail of it)
or a clip manifest's rows read straight from the source videos
(``--manifest M --video-root DIR``; the cache key's crop source is
``manifest:<SHA-256 of the ok rows>``, so such a run never shares a folder
with a run on clip files). Ids are the benchmark indices.
"""
from __future__ import annotations

import argparse

from sova_lib.cli import add_benchmark
from sova_lib.cli.options import fill_later

__all__ = ["add_commands"]


# Each verb's options are added when it is parsed, so that a command line imports its own verb's modules alone.

def _describe_options(d) -> None:
    from sova_lib.cli import describe

    d.epilog = describe.EXIT_STATUS_HELP
    describe.add_sovabench_sources(d)
    describe.add_describe_options(d)
    d.set_defaults(func=describe.run_describe)


def _embed_options(e) -> None:
    from sova_lib.cli import describe, embed

    describe.add_sovabench_sources(e)
    embed.add_embed_options(e)


def _evaluate_options(v) -> None:
    from sova_lib.cli import evaluate

    evaluate.add_sovabench_evaluate(v)


def add_commands(subparsers) -> None:
    verbs = add_benchmark(subparsers, "sovabench", "SOVABench: clips, describe, embed, evaluate", __doc__)

    d = verbs.add_parser("describe", help="describe a protocol's clips (or a manifest's) into a resumable cache",
                         description="Describe SOVABench clips into CACHE_DIR/descriptions/<name>__<hash>/ (run the "
                                     "same command again\nto resume). Example:\n"
                                     "  sova sovabench describe --protocol inter-pair --video-root clips/ --backend "
                                     "openai --model M \\\n      --base-url http://localhost:8000/v1 --prompt "
                                     "task-aware",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    fill_later(d, _describe_options)

    e = verbs.add_parser("embed", help="embed sampled frames with a contrastive model (CLIP, SigLIP, X-CLIP)",
                         description="Embed the sampled frames of SOVABench clips into CACHE_DIR/frame-embeddings/ "
                                     "(run the same command again to resume). Example: sova sovabench embed "
                                     "--protocol inter-pair --video-root clips/ --model openai/clip-vit-large-patch14 "
                                     "--out v.npz")
    fill_later(e, _embed_options)

    v = verbs.add_parser("evaluate", help="score descriptions, vectors or a baseline under a retrieval protocol",
                         description="Score descriptions (JSON Lines, the authors' JSON, or a describe cache folder), "
                                     "an .npz of vectors, or a built-in baseline under a retrieval protocol.")
    fill_later(v, _evaluate_options)

    c = verbs.add_parser("clips", help="build SOVABench clips from MEVA/VIRAT: sources, fetch, plan, extract, stats",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    fill_later(c, _clips_steps)  # the clips commands' module only when one of them is parsed


def _clips_steps(parser) -> None:
    from sova_lib.cli import clips

    clips.add_steps(parser)
