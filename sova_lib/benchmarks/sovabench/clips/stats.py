"""Statistics of a clip manifest: durations, crop sizes, counts (Figure 3(b), 3(c)).

A manifest (``sova_lib.benchmarks.sovabench.clips.plan``) becomes a pandas DataFrame with
``manifest_frame``; the other functions take that frame.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import pandas as pd

from sova_lib.benchmarks.sovabench.clips.plan import (
    DEFAULT_FPS,
    INT_COLUMNS,
    MANIFEST_COLUMNS,
    STATUSES,
    ManifestRow,
)
from sova_lib.benchmarks.sovabench.splits import Clip, load_split, source_dataset_of

__all__ = ["class_counts", "clip_durations", "crop_sizes", "dataset_counts", "manifest_frame", "status_counts"]


def manifest_frame(rows: Sequence[ManifestRow]):
    """A manifest's rows (``plan.read_manifest``) as a pandas DataFrame.

    Columns: ``MANIFEST_COLUMNS`` plus ``source_dataset`` (``MEVA``/``VIRAT``).
    Region and window columns are pandas nullable integers.
    """
    df = pd.DataFrame([{c: getattr(r, c) for c in MANIFEST_COLUMNS} for r in rows], columns=list(MANIFEST_COLUMNS))
    for c in INT_COLUMNS:
        df[c] = df[c].astype("Int64")
    df["reversed"] = df["reversed"].astype(bool)
    df["source_dataset"] = [source_dataset_of(v) for v in df["source_video"]]
    return df


def _per_clip(ok, **columns):
    """A table of the ``ok`` rows: ``index, video, source_dataset``, then ``columns``."""
    return pd.DataFrame({"index": ok["index"].astype("int64"), "video": ok["video"],
                         "source_dataset": ok["source_dataset"], **columns}).reset_index(drop=True)


def clip_durations(df, fps: float | Mapping[str, float] = DEFAULT_FPS):
    """Duration of every ``ok`` clip (Figure 3(b)).

    ``df`` is a :func:`manifest_frame`; ``fps`` a frame rate, or one per
    source dataset. Returns a DataFrame with ``index, video,
    source_dataset, frames, duration_s`` where ``frames = end_frame -
    start_frame + 1`` (the planned window, before any clamping to the
    video's length) and ``duration_s = frames / fps``.
    """
    ok = df[df["status"] == "ok"]
    rates = ok["source_dataset"].map(fps) if isinstance(fps, Mapping) else pd.Series(float(fps), index=ok.index)
    if rates.isna().any():
        missing = sorted(set(ok["source_dataset"][rates.isna()]))
        raise ValueError(f"no frame rate for source dataset(s) {missing}; pass fps for each")
    frames = (ok["end_frame"] - ok["start_frame"] + 1).astype("int64")
    return _per_clip(ok, frames=frames, duration_s=frames / rates.astype(float))


def crop_sizes(df):
    """Width and height in pixels of every ``ok`` clip's crop, as annotated (Figure 3(c)).

    ``width = x2 - x1``, ``height = y2 - y1``. Returns ``index, video, source_dataset, width, height``.
    """
    ok = df[df["status"] == "ok"]
    return _per_clip(ok, width=(ok["x2"] - ok["x1"]).astype("int64"), height=(ok["y2"] - ok["y1"]).astype("int64"))


def class_counts(df, clips: Iterable[Clip] | None = None):
    """Rows and ``ok`` clips per class.

    The class of a row is the SOVABench label of its ``index``, looked up in
    ``clips`` (default: the packaged interpair and intrapair splits, where an
    index names the same clip everywhere); an index found nowhere counts as
    ``unknown``. Returns ``label, rows, ok`` sorted by label.
    """
    if clips is None:
        clips = [*load_split("interpair"), *load_split("intrapair")]
    label_of = {c.index: c.label for c in clips}
    labels = df["index"].map(lambda i: label_of.get(int(i), "unknown"))
    out = pd.DataFrame({"label": labels, "ok": df["status"] == "ok"})
    return out.groupby("label").agg(rows=("ok", "size"), ok=("ok", "sum")).reset_index()  # groupby sorts by label


def dataset_counts(df):
    """Rows and ``ok`` clips per source dataset: ``source_dataset, rows, ok``."""
    g = df.assign(ok=df["status"] == "ok").groupby("source_dataset")
    return g.agg(rows=("ok", "size"), ok=("ok", "sum")).reset_index()


def status_counts(df):
    """Rows per status and source dataset: ``status, MEVA, VIRAT, total`` (statuses in ``STATUSES`` order)."""
    t = pd.crosstab(df["status"], df["source_dataset"])
    t = t.reindex(columns=[*DEFAULT_FPS, *[c for c in t.columns if c not in DEFAULT_FPS]], fill_value=0)
    t["total"] = t.sum(axis=1)
    return t.loc[[s for s in STATUSES if s in t.index]].reset_index().rename_axis(None, axis=1)
