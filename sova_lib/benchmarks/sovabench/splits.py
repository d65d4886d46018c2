"""The SOVABench metadata, shipped as package data, as typed records.

The three TSVs under ``sova_lib/benchmarks/sovabench/data`` are the published SOVABench
metadata (CC-BY-4.0, Rabasseda et al., WACV Workshops 2026; see the README in
that folder). One row is one clip; its ``index`` is the clip's stable id and
is the same in every file that holds the clip.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sova_lib.benchmarks.sovabench import labels

#: The packaged benchmark metadata (the three TSVs, CC-BY-4.0) and the MEVA annotation sample.
DATA_DIR = Path(__file__).resolve().parent / "data"

__all__ = ["SPLITS", "Clip", "load_split", "parse_clip_name", "read_tsv", "source_dataset_of", "split_path"]

#: Split name -> file name of the packaged TSV.
SPLITS = {
    "interpair": "sovabench_interpair.tsv",
    "interpair_queries": "sovabench_interpair_queries.tsv",
    "intrapair": "sovabench_intrapair.tsv",
}

_COLUMNS = ("subdim", "prefix", "video", "suffix", "dim", "task_type", "negative", "positive", "index")
REVERSED_ACTIVITY = "vehicle_drives_forward"


@dataclass(frozen=True)
class Clip:
    """One SOVABench clip.

    ``start_frame``/``end_frame`` are the annotated frames of the activity in
    its source video (0-based, end inclusive, before any buffer). A
    ``vehicle_drives_forward`` clip is a ``vehicle_reverses`` activity played
    backwards: its name lists the frames swapped, ``reversed`` is true, and
    ``start_frame < end_frame`` still holds here.
    """

    index: int
    name: str
    source_dataset: str  # "MEVA" or "VIRAT"
    source_video: str
    activity: str  # MEVA activity name as written in the clip name
    start_frame: int
    end_frame: int
    label: str  # one of labels.ACTIONS or labels.DISTRACTOR
    prefix: str  # where the authors wrote the clip (a hint, relative to a data root)

    @property
    def reversed(self) -> bool:
        return self.activity == REVERSED_ACTIVITY

    @property
    def pair(self) -> str:
        return labels.pair_of(self.label)

    @property
    def dim(self) -> str:
        return labels.dim_of(self.label)

    @property
    def is_distractor(self) -> bool:
        return self.label == labels.DISTRACTOR


def source_dataset_of(source_video: str) -> str:
    """``"VIRAT"`` for a ``VIRAT_S_...`` source video, else ``"MEVA"``."""
    return "VIRAT" if source_video.startswith("VIRAT_") else "MEVA"


def parse_clip_name(name: str) -> tuple[str, str, int, int]:
    """Split ``{source video}.{activity}.{a}.{b}`` into its parts.

    Returns ``(source_video, activity, start_frame, end_frame)`` with the
    annotated start and end; for ``vehicle_drives_forward`` the name lists
    them swapped, and they are swapped back here.
    """
    parts = name.rsplit(".", 3)
    if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
        raise ValueError(f"clip name {name!r} is not '<video>.<activity>.<start>.<end>'")
    video, activity, a, b = parts[0], parts[1], int(parts[2]), int(parts[3])
    if activity == REVERSED_ACTIVITY:
        a, b = b, a
    return video, activity, a, b


def split_path(split: str) -> Path:
    """Path of the packaged TSV of ``split`` (one of ``SPLITS``)."""
    if split not in SPLITS:
        raise ValueError(f"unknown SOVABench split {split!r}; choose one of {sorted(SPLITS)}")
    return DATA_DIR / SPLITS[split]


@lru_cache(maxsize=None)
def load_split(split: str) -> tuple[Clip, ...]:
    """The clips of the packaged ``split``, in file order (rows are never deduplicated)."""
    return read_tsv(split_path(split))


def read_tsv(path: str | Path) -> tuple[Clip, ...]:
    """The clips of a SOVABench-format TSV at ``path``, in file order.

    Raises ``ValueError`` naming the file and line of a malformed row.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        if tuple(reader.fieldnames or ()) != _COLUMNS:
            raise ValueError(f"{path}: expected columns {_COLUMNS}, found {reader.fieldnames}")
        clips = []
        for line, row in enumerate(reader, start=2):
            try:
                video, activity, start, end = parse_clip_name(row["video"])
                label = labels.validate_action(row["subdim"])
                clips.append(
                    Clip(
                        index=int(row["index"]),
                        name=row["video"],
                        source_dataset=source_dataset_of(video),
                        source_video=video,
                        activity=activity,
                        start_frame=start,
                        end_frame=end,
                        label=label,
                        prefix=row["prefix"],
                    )
                )
            except ValueError as err:
                raise ValueError(f"{path}, line {line}: {err}") from None
    return tuple(clips)
