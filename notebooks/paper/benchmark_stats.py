"""Statistics of the benchmark itself: Table 2, Figure 3 and Figure A.1 of the SOVABench paper.

Everything here is computed from the packaged metadata (``sovabench``), the
protocols (``protocols``) and clip manifests (``clips``):

* ``table2``: samples and queries of each protocol, beside the paper's Table 2;
* ``query_counts``: queries per action and source dataset (Figure 3(a));
* ``metadata_durations``: every clip's duration from its annotated frames
  in the metadata, with the start/stop buffers of the clip planner (Figure
  3(b)); the end is not clamped to the video's length, which the metadata
  does not give;
* ``sample_manifest``: a clip manifest planned from the MEVA annotation
  sample shipped with the package (4 source videos), for crop sizes (Figure
  3(c)) when no full manifest is at hand;
* ``pair_counts``: clips per action within each pair of the intra-pair
  protocol (Figure A.1).
"""
from __future__ import annotations

import pandas as pd

from sova_lib.benchmarks.sovabench import labels
from sova_lib.benchmarks.sovabench.clips.kpf import find_annotation_files
from sova_lib.benchmarks.sovabench.clips.plan import DEFAULT_FPS, plan_clip, plan_clips
from sova_lib.benchmarks.sovabench.clips.stats import manifest_frame
from sova_lib.benchmarks.sovabench.splits import DATA_DIR, load_split
from sova_lib.protocols import get_protocol

from paper.results import NOT_COMPUTED, paper_results

__all__ = ["table2", "query_counts", "metadata_durations", "SAMPLE_ANNOTATIONS", "sample_manifest", "pair_counts"]


def table2():
    """Table 2: the paper's rows, and the SOVABench rows computed from the metadata and protocols.

    Columns: ``benchmark, task (metric), samples (paper), samples (here),
    queries (paper), queries (here)``. The paper prints rounded sample
    counts (9.9k); other benchmarks are not computed here.
    """
    paper = paper_results("Table 2")
    here = {}
    for name, label in (("inter-pair", "SOVABench (Inter-pair)"), ("intra-pair", "SOVABench (Intra-pair)"),
                        ("inter-pair-constrained", "SOVABench (Inter-pair, constrained; Table C.1)")):
        p = get_protocol(name)
        here[label] = (len(p.clips()), sum(len(t.queries) for t in p.tasks()), p.metric)
    rows = []
    for model, part in paper.groupby("model", sort=False):
        values = dict(zip(part["column"], part["value"]))
        computed = here.pop(model, None)
        rows.append({"benchmark": model, "task (metric)": part["group"].iloc[0],
                     "samples (paper)": int(values["samples"]),
                     "samples (here)": computed[0] if computed else NOT_COMPUTED,
                     "queries (paper)": int(values["queries"]),
                     "queries (here)": computed[1] if computed else NOT_COMPUTED})
    for label, (samples, queries, metric) in here.items():
        rows.append({"benchmark": label, "task (metric)": f"Action Retrieval ({metric})", "samples (paper)": "-",
                     "samples (here)": samples, "queries (paper)": "-", "queries (here)": queries})
    return pd.DataFrame(rows)


def query_counts(split: str = "interpair"):
    """Queries (non-distractor clips) per action and source dataset: a DataFrame indexed by action.

    Columns ``MEVA``, ``VIRAT``; actions in the order of ``labels.ACTIONS``
    (pair by pair), those absent from ``split`` left out.
    """
    clips = [c for c in load_split(split) if not c.is_distractor]
    frame = pd.crosstab(pd.Series([c.label for c in clips], name="action"),
                        pd.Series([c.source_dataset for c in clips], name="source"))
    order = [a for a in labels.ACTIONS if a in frame.index]
    return frame.reindex(index=order, columns=["MEVA", "VIRAT"], fill_value=0).rename_axis(columns=None)


def metadata_durations(split: str = "interpair", fps=DEFAULT_FPS):
    """Every clip's duration in seconds, from its annotated frames (Figure 3(b)).

    The window is the clip planner's (``clips.plan_clip``): annotated start
    to end, both included, with 90 frames before ``vehicle_starts`` and after
    ``vehicle_stops``. ``fps`` is one rate or one per source dataset
    (default ``clips.DEFAULT_FPS``: 30). Columns ``index, label,
    source_dataset, distractor, frames, duration_s``.
    """
    rows = []
    for clip in load_split(split):
        window = plan_clip(clip, None)
        frames = window.end_frame - window.start_frame + 1
        rate = fps[clip.source_dataset] if isinstance(fps, dict) else float(fps)
        rows.append({"index": clip.index, "label": clip.label, "source_dataset": clip.source_dataset,
                     "distractor": clip.is_distractor, "frames": frames, "duration_s": frames / rate})
    return pd.DataFrame(rows)


#: Root of the MEVA annotation sample shipped with the package (KPF YAML of 4 source videos).
SAMPLE_ANNOTATIONS = DATA_DIR / "meva-annotations-sample"


def sample_manifest(cache_dir=None):
    """A clip manifest of the benchmark's clips found in the shipped annotation sample.

    Every clip of the inter-pair and intra-pair files (each index once) is
    planned against ``SAMPLE_ANNOTATIONS``; the rows of source videos
    outside the sample (status ``annotation_missing``) are dropped. Returns
    ``(frame, videos)``: the manifest as ``clip_stats.manifest_frame`` gives it,
    and the sample's annotated source videos.
    """

    videos = sorted(find_annotation_files(SAMPLE_ANNOTATIONS))
    clips = {c.index: c for split in ("interpair", "intrapair") for c in load_split(split)}
    rows = plan_clips(list(clips.values()), SAMPLE_ANNOTATIONS, cache_dir=cache_dir)
    frame = manifest_frame([r for r in rows if r.status != "annotation_missing"])
    return frame, videos


def pair_counts():
    """Figure A.1: clips per action within each opposite pair of the intra-pair protocol.

    Columns ``pair, action, clips``, two rows per pair in the order of ``labels.PAIRS``.
    """
    clips = load_split("intrapair")
    rows = [{"pair": p.name, "action": a, "clips": sum(c.label == a for c in clips)}
            for p in labels.PAIRS for a in p.actions]
    return pd.DataFrame(rows)
