"""``sova image-tasks describe | embed | evaluate``: the image tasks of Table 3.

::

    sova image-tasks describe --images coco/ --backend B --model M --prompt task-aware-vsr
    sova image-tasks embed    --images coco/ --model openai/clip-vit-base-patch32 --out coco.npz
    sova image-tasks evaluate --task vsr-zeroshot --descriptions cache/descriptions/<folder>
    sova image-tasks evaluate --task vsr-zeroshot --embeddings coco.npz --text-model openai/clip-vit-base-patch32

Ids are image file stems (digit-only stems as integers: ``000000017697.jpg``
is 17697), the keys the tasks look descriptions up by. The paper's
task-aware image prompts (Appendix B): ``task-aware-vsr``,
``task-aware-whatsup``, ``task-aware-countbench``,
``task-aware-visual7w-count``, ``task-aware-spatialbench``.
"""
from __future__ import annotations

import argparse

from sova_lib.cli import add_benchmark

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    verbs = add_benchmark(subparsers, "image-tasks", "the image tasks of Table 3: describe, embed, evaluate", __doc__)
    # each verb's options are added when it is parsed, so that a command line imports its own verb's modules alone

    d = verbs.add_parser("describe", help="describe images with a task-aware prompt into a resumable cache",
                         description="Describe images into CACHE_DIR/descriptions/<name>__<hash>/ (run the same "
                                     "command again to\nresume). Example:\n"
                                     "  sova image-tasks describe --images coco/ --backend B --model M "
                                     "--prompt task-aware-vsr",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    d.fill_later(_describe_options)

    e = verbs.add_parser("embed", help="embed images with a contrastive model (the CLIP zero-shot row)",
                         description="Embed images with a contrastive model into CACHE_DIR/frame-embeddings/ (run "
                                     "the same command again to resume). Example: sova image-tasks embed --images "
                                     "coco/ --model openai/clip-vit-base-patch32 --out coco.npz")
    e.fill_later(_embed_options)

    v = verbs.add_parser("evaluate", help="score descriptions, vectors or a baseline on one image task",
                         description="Accuracy of descriptions, vectors or a baseline on one image task of "
                                     "Table 3. Example: sova image-tasks evaluate --task vsr-zeroshot "
                                     "--descriptions cache/descriptions/<folder>")
    v.fill_later("sova_lib.cli.evaluate:add_image_task_evaluate")


def _describe_options(d) -> None:
    from sova_lib.cli import describe

    d.epilog = describe.EXIT_STATUS_HELP
    describe.add_image_sources(d)
    describe.add_describe_options(d, fps=False)
    d.set_defaults(func=describe.run_describe)


def _embed_options(e) -> None:
    from sova_lib.cli import describe, embed

    describe.add_image_sources(e)
    embed.add_embed_options(e, fps=False)
