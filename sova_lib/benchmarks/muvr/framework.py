"""The MLLM-to-Embedding framework on MUVR's untrimmed videos (spec muvr-spec.md Sec. 7).

Frames become sentences; the score stays the maximum cosine.

* Gallery: each video is described in fixed windows (default 12 s,
  non-overlapping from the start, at most 10 per video); every window is one
  item ``"<video id>@<k>"`` of a description cache, whose key holds the
  window length and count (``window_spec``, passed as the runner's
  ``crop_source``: the part of the video the frames come from). The
  sentences of all windows are pooled under the video, so the maximum keeps
  "any segment matches".
* Query: ``V_q`` the query video's windows, pooled the same way; ``T_q`` the
  description with ``[<region>]`` / ``<mask...>`` removed (they mean nothing
  to a sentence encoder, spec Sec. 8.6), split into sentences (lines, then
  Punkt); a tag phrase is one sentence. ``S_v``, ``S_t``, ``S_tv`` and the tag
  term are then those of ``fusion``. ``split_query=False`` is the ablation
  that embeds the description whole.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sova_lib.benchmarks.muvr.annotations import Partition, clean_description
from sova_lib.benchmarks.muvr.fusion import QueryVectors
from sova_lib.benchmarks.muvr.qa import find_video
from sova_lib.item_vectors import embed_descriptions

__all__ = ["MAX_WINDOWS", "WINDOWS_INPUT", "WINDOW_SECONDS", "describe_windows", "framework_vectors",
           "pool_windows", "window_spec", "windows"]

WINDOW_SECONDS = 12.0
MAX_WINDOWS = 10

#: The input's name in a description cache's key and folder name (``sova_lib.describe.cache.cache_key``).
WINDOWS_INPUT = "muvr-windows"


def window_spec(seconds: float = WINDOW_SECONDS, max_windows: int = MAX_WINDOWS) -> str:
    """The cache-key text of a window layout, e.g. ``"muvr-windows:12s:max10"``."""
    return f"muvr-windows:{seconds:g}s:max{max_windows}"


def windows(num_frames: int, fps: float, *, seconds: float = WINDOW_SECONDS,
            max_windows: int = MAX_WINDOWS) -> list[tuple[int, int]]:
    """Inclusive ``(first, last)`` frames of the non-overlapping windows of a video, from frame 0.

    A last, shorter window is kept when it lasts at least one second.
    Example: 30 s at 10 fps, 12 s windows -> (0, 119), (120, 239), (240, 299).
    """
    length = max(1, round(seconds * fps))
    out = []
    for start in range(0, num_frames, length):
        end = min(start + length, num_frames) - 1
        if len(out) == max_windows or (end - start + 1 < fps and out):
            break
        out.append((start, end))
    return out


def describe_windows(describer, video_ids, video_root: str | Path, cache_dir: str | Path, *, prompt, fps: float = 1.0,
                     seconds: float = WINDOW_SECONDS, max_windows: int = MAX_WINDOWS, **options):
    """Describe every window of ``video_ids`` into a description cache; returns the runner's ``RunSummary``.

    Each window is one runner ``Item``; a video not found or unreadable gives one item with its error, which
    the runner records in the cache's ``errors.jsonl``.
    """
    from sova_lib.describe.item import Item  # describing code, here: scoring windows' texts never loads it
    from sova_lib.describe.runner import describe_items
    from sova_lib.video import probe

    items = []
    for vid in video_ids:
        try:
            path = find_video(Path(video_root), vid)
            if path.is_dir():
                raise ValueError(f"{path} is a frame folder; window description needs a video file")
            info = probe(path)
        except Exception as err:  # noqa: BLE001 - recorded in the cache's errors.jsonl by the runner
            items.append(Item(f"{vid}@0", Path(video_root) / vid, is_video=True, error=f"{type(err).__name__}: {err}"))
            continue
        for k, window in enumerate(windows(info.num_frames, info.fps, seconds=seconds, max_windows=max_windows)):
            items.append(Item(f"{vid}@{k}", path, window=window, is_video=True))
    return describe_items(describer, items, cache_dir, prompt=prompt, fps=fps, input_name=WINDOWS_INPUT,
                          crop_source=window_spec(seconds, max_windows), **options)


def pool_windows(texts: dict) -> dict:
    """``"<video>@<k>"`` -> text, to video -> the windows' texts joined by line ends in window order."""
    pooled: dict = {}
    for key, text in texts.items():
        vid, sep, k = str(key).rpartition("@")
        if not sep or not k.isdigit():
            raise ValueError(f"description id {key!r} is not '<video id>@<window>'")
        pooled.setdefault(vid, []).append((int(k), text))
    return {vid: "\n".join(t for _, t in sorted(parts)) for vid, parts in pooled.items()}


def framework_vectors(window_texts: dict, encoder, *, split_query: bool = True):
    """A ``vectors(partition) -> (gallery, QueryVectors)`` function over described windows.

    ``window_texts`` maps ``"<video>@<k>"`` to a window's description (a
    cache's ``descriptions.jsonl``, read with ``read_descriptions``);
    ``encoder`` has ``encode(list[str]) -> unit rows`` (e.g. ``SentenceEncoder``).
    Gallery videos without any described window are left unscored.
    """
    pooled = pool_windows(window_texts)

    def vectors(partition: Partition):
        gallery_texts = {v: pooled[v] for v in partition.gallery if v in pooled}
        if not gallery_texts:
            raise ValueError(f"no gallery video of partition {partition.name!r} has a described window")
        gallery = embed_descriptions(gallery_texts, encoder)
        described = {q.id: pooled[q.id] for q in partition.queries if q.id in pooled}
        frames = embed_descriptions(described, encoder) if described else None
        text = embed_descriptions({q.id: clean_description(q.text) for q in partition.queries}, encoder,
                                  sentences=split_query)
        phrases = sorted({phrase for p in partition.prompts for _, phrase in p.conditions})
        tags = dict(zip(phrases, np.asarray(encoder.encode(phrases), dtype=np.float32))) if phrases else {}
        return gallery, QueryVectors(frames, text, tags)

    return vectors

