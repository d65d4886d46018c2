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

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    verbs = add_benchmark(subparsers, "sovabench", "SOVABench: clips, describe, embed, evaluate", __doc__)
    # each verb's options are added when it is parsed, so that a command line imports its own verb's modules alone

    d = verbs.add_parser("describe", help="describe a protocol's clips (or a manifest's) into a resumable cache",
                         description="Describe SOVABench clips into CACHE_DIR/descriptions/<name>__<hash>/ (run the "
                                     "same command again\nto resume). Example:\n"
                                     "  sova sovabench describe --protocol inter-pair --video-root clips/ --backend "
                                     "openai --model M \\\n      --base-url http://localhost:8000/v1 --prompt "
                                     "task-aware",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    d.fill_later("sova_lib.cli.describe:add_sovabench_describe")

    e = verbs.add_parser("embed", help="embed sampled frames with a contrastive model (CLIP, SigLIP, X-CLIP)",
                         description="Embed the sampled frames of SOVABench clips into CACHE_DIR/frame-embeddings/ "
                                     "(run the same command again to resume). Example: sova sovabench embed "
                                     "--protocol inter-pair --video-root clips/ --model openai/clip-vit-large-patch14 "
                                     "--out v.npz")
    e.fill_later("sova_lib.cli.embed:add_sovabench_embed")

    v = verbs.add_parser("evaluate", help="score descriptions, vectors or a baseline under a retrieval protocol",
                         description="Score descriptions (JSON Lines, the authors' JSON, or a describe cache folder), "
                                     "an .npz of vectors, or a built-in baseline under a retrieval protocol.")
    v.fill_later("sova_lib.cli.evaluate:add_sovabench_evaluate")

    c = verbs.add_parser("clips", help="build SOVABench clips from MEVA/VIRAT: sources, fetch, plan, extract, stats",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    c.fill_later("sova_lib.cli.clips:add_steps")

