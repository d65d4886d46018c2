"""The items of a describing or embedding run, from what names them (``run_items``): video and image files of a folder
or a glob, the bundled excerpts of the quickstart, the image tasks' images, or SOVABench's clips (a protocol's clip
files or a clip manifest's rows read from the source videos), with what the run's cache key records of the source.
"""
from __future__ import annotations

import glob
from pathlib import Path

from sova_lib.describe.item import IMAGE_SUFFIXES, Item

__all__ = ["VIDEO_SUFFIXES", "media_items", "run_items"]

#: Suffixes taken as videos when a folder is listed (images: ``sova_lib.describe.item.IMAGE_SUFFIXES``).
VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg"})


def media_items(spec: str) -> list[Item]:
    """One item per video or image file of the folder ``spec`` (not its sub-folders; files of ``VIDEO_SUFFIXES`` and
    ``IMAGE_SUFFIXES``), or per file the glob ``spec`` matches (``**`` recurses), its id the file stem; ValueError,
    naming ``--videos``, for no file or two files of one id."""
    path = Path(spec)
    if path.is_dir():
        media = VIDEO_SUFFIXES | IMAGE_SUFFIXES
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in media)
    else:
        files = sorted(Path(p) for p in glob.glob(spec, recursive=True) if Path(p).is_file())
    if not files:
        raise ValueError(f"--videos {spec!r} matches no video or image file")
    owners: dict[str, Path] = {}
    for f in files:
        if f.stem in owners:
            raise ValueError(f"--videos: {owners[f.stem]} and {f} have the same id {f.stem!r}; ids are file stems")
        owners[f.stem] = f
    return [Item(f.stem, f) for f in files]


def run_items(*, videos: str | None = None, images: str | None = None, protocol: str | None = None,
              video_root=None, manifest=None) -> tuple[list[Item], dict]:
    """``(items, source)`` of the one source given: ``videos`` (``media_items``), ``images`` (``image_tasks.items``),
    ``protocol`` ``quickstart-direction`` (the bundled excerpts and their time-reversed copies), or a SOVABench
    ``protocol`` or clip ``manifest`` under ``video_root`` (``sovabench.items``). ``source`` holds the keywords of
    ``describe_items`` that name it in the cache key: ``crop_source``, ``details`` (for a manifest) and ``input_name``
    (none for files of a folder)."""
    from sova_lib.benchmarks import excerpts

    if videos is not None:
        return media_items(videos), {"crop_source": "none"}
    if images is not None:
        from sova_lib.benchmarks import image_tasks

        return image_tasks.items(images), {"crop_source": "none", "input_name": image_tasks.BENCHMARK}
    if protocol == excerpts.DIRECTION_PROTOCOL:
        return [clip.item() for clip in excerpts.example_clips()], {"crop_source": "none",
                                                                     "input_name": excerpts.QUICKSTART_INPUT}
    from sova_lib.benchmarks import sovabench

    items, crop_source, details = sovabench.items(video_root, protocol=protocol, manifest=manifest)
    return items, {"crop_source": crop_source, "details": details, "input_name": sovabench.INPUT_NAME}
