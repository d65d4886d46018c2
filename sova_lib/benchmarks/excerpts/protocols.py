"""``quickstart-direction``: a built-in protocol on the bundled example excerpts and their reversed copies.

The package ships three short excerpts of a fixed street camera
(``sova_lib/data/video``, from OpenCV's ``vtest.avi``). Each excerpt also
appears played backwards, with id ``<stem>-reversed``: six clips in all.
Every clip is a query ranked against the other five; a clip is relevant when
it plays in the same direction (forward or reversed), so each query has two
relevant clips. This is the question SOVABench's intra-pair protocol asks of
opposite actions ("driving forward" clips are "reversing" clips played
backwards; SOVABench paper, Section 3.2), at the size of a quickstart: it
scores a describer on whether its text tells the direction of time. Metric:
mAP; a random ranking scores ``random_ranking_ap(2, 5)`` = 59.25.

The clips are not SOVABench clips and nothing scored here is a SOVABench
result. Importing this module registers the protocol; it is one of the
registry's providers (``sova_lib.protocols.PROTOCOL_PROVIDERS``), and like
every provider it is a benchmark's ``protocols`` module.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sova_lib.protocols import Protocol, Task, get_protocol, register_protocol

__all__ = ["DIRECTION_PROTOCOL", "QUICKSTART_INPUT", "REVERSED_SUFFIX", "ExampleClip", "direction_protocol", "example_clips"]

#: Name of the protocol this module registers.
DIRECTION_PROTOCOL = "quickstart-direction"

#: The input's name in a description cache's key and folder name (``sova_lib.describe.cache.cache_key``): the
#: excerpts, whether ``sova describe --protocol quickstart-direction`` or the quickstart notebook describes them.
QUICKSTART_INPUT = "quickstart"

#: Appended to a video's id for its time-reversed copy.
REVERSED_SUFFIX = "-reversed"


@dataclass(frozen=True)
class ExampleClip:
    """One example clip: ``index`` (its id: the file stem, plus ``-reversed``), the file, and its direction."""

    index: str
    path: Path
    reverse: bool = False

    @property
    def direction(self) -> str:
        return "reversed" if self.reverse else "forward"

    def item(self):
        """The runner ``Item`` (``sova_lib.describe.item``) that describes this clip."""
        from sova_lib.describe.item import Item

        return Item(self.index, self.path, reverse=self.reverse)


def example_clips(videos=(), *, with_reversed: bool = True) -> tuple[ExampleClip, ...]:
    """Each of ``videos`` (default: the bundled excerpts), then (``with_reversed``) it played backwards."""
    from sova_lib.video.frames import example_videos

    clips = []
    for path in [Path(v) for v in videos] or example_videos():
        clips.append(ExampleClip(path.stem, path))
        if with_reversed:
            clips.append(ExampleClip(path.stem + REVERSED_SUFFIX, path, reverse=True))
    return tuple(clips)


def _tasks(clips) -> list[Task]:
    every = np.arange(len(clips), dtype=np.int64)
    return [Task(DIRECTION_PROTOCOL, every, every, np.array([c.direction for c in clips]))]


register_protocol(Protocol(
    DIRECTION_PROTOCOL, "mAP", "the bundled example excerpts and their reversed copies, each against the other "
    "five; relevant = same playing direction", example_clips, lambda: _tasks(example_clips()), lambda c: c.direction,
    benchmark="the bundled examples", oracle_text=lambda c: f"The clip plays {c.direction}.",
    class_name="direction",
))


def direction_protocol(videos=(), *, with_reversed: bool = True) -> Protocol:
    """The protocol that asks the quickstart's question of ``videos``: does a clip find those of its playing direction?

    No ``videos``: the registered ``quickstart-direction`` (the bundled
    excerpts and their reversed copies). Other videos: a protocol of the
    same rule on their clips (``example_clips(videos, with_reversed)``),
    named ``quickstart-direction (your videos)``: every clip a query against
    the others, relevant when it plays in the same direction. Without
    reversed copies every clip plays forward, so every other clip is
    relevant and every AP is 1; a clip alone has nothing to rank.
    """
    if not list(videos) and with_reversed:
        return get_protocol(DIRECTION_PROTOCOL)
    clips = example_clips(videos, with_reversed=with_reversed)
    return Protocol(f"{DIRECTION_PROTOCOL} (your videos)", "mAP", "the given videos (and their reversed copies), "
                    "each against the others; relevant = same playing direction", lambda: clips,
                    lambda: _tasks(clips), lambda c: c.direction, benchmark="your videos", class_name="direction")
