"""A synthetic VANTAGE-style run on the bundled street footage, for teaching and tests.

Nothing here is VANTAGE-Bench data or a model. ``write_street_benchmark``
writes an LMUData folder as the harness's ``scripts/run_lmudata.py`` lays
it out (each task's TSV with its ``videos/``) and ground-truth JSONLs in the
harness's layout (leaderboard ids, canonical task strings, answers as JSON
text; see ``ground_truth``) for the four video tasks over the three
``vtest`` excerpts shipped with the package; the questions and answer keys
are synthetic, written for this library. ``RuleBasedStandIn`` is
a rule-based stand-in describer (not an MLLM): it measures frame-to-frame
change and answers each task's format from it, so the whole chain (prompt,
frames, runner, cache, parser, metric, bootstrap) runs on a CPU in seconds.
``street_run`` describes and scores the street set with any describer.

``synthetic`` is one named module in each benchmark that ships synthetic data
(``sova_lib.benchmarks.muvr.synthetic``, ``sova_lib.benchmarks.vantage.synthetic``): made-up data written in
the benchmark's released layout, so that its loaders, metrics and notebook run end to end without the real
data; no number it gives is a result.
"""
from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.vantage.api import describe
from sova_lib.benchmarks.vantage.ground_truth import read_ground_truth
from sova_lib.benchmarks.vantage.inputs import LMU_DATASETS, TSV_COLUMNS, read_items
from sova_lib.benchmarks.vantage.metrics_captions import token_f1_similarity
from sova_lib.benchmarks.vantage.scoring import score_answers
from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS, make_id
from sova_lib.describe.contract import DescribeRequest
from sova_lib.describe.run_cache import RunOptions
from sova_lib.storage import write_text
from sova_lib.video.frames import example_videos, probe

__all__ = ["STREET_CACHE", "STREET_SOURCE", "RuleBasedStandIn", "street_dry_run_summary", "street_run",
           "write_street_benchmark", "write_street_dry_run"]

_VQA = [("What moves through the scene?", ["pedestrians", "a forklift", "a train", "nothing"], "A"),
        ("Where is the camera?", ["inside a car", "fixed above a public space", "hand-held", "on a drone"], "B")]
_EV = [("Does a person walk through the scene?", "Yes"), ("Does a vehicle drive through the scene?", "No")]
_EV_SYSTEM = "You verify whether an event happens in a fixed-camera video. Answer Yes or No."


def _add(rows: dict, gt: dict, task: str, media: str, cells: list, value: str, extra: dict | None = None) -> None:
    """Append the next item of ``task`` to its TSV ``rows`` (``index``, ``media``, then ``cells``) and its answer
    ``value`` to ``gt`` as the harness's adapters read a record: leaderboard id, canonical task, text answer."""
    index = len(rows[task])
    rows[task].append([index, media, *cells])
    rec = {"id": make_id(task, media, index), "task": CANONICAL_TASKS[task], "media": media, "category": "street",
           "conversations": [{"from": "human", "value": "<question>"}, {"from": "gpt", "value": value}],
           "metadata": {"extra": extra or {}}}
    gt[task].append(json.dumps(rec))


def _mmss(t: float) -> str:
    return f"{int(t // 60):02d}:{t % 60:05.2f}"


def write_street_benchmark(folder, videos: Sequence[Path], durations: Sequence[float]) -> dict[str, Path]:
    """Write the synthetic street benchmark of vqa, event_verification, temporal and dvc under ``folder``.

    ``folder`` becomes an LMUData root as ``scripts/run_lmudata.py`` writes
    one (lines 16-19): ``datasets/<name>/<name>.tsv`` and a copy of the clips
    in ``datasets/<name>/videos/`` for each task (``inputs.LMU_DATASETS``),
    the TSVs with the columns, the video names and the line ends that script
    writes (``_write_tsv``, lines 469-481): VQA, event verification and dense
    captioning name the clip's file (lines 611, 761, 840), temporal
    localization its bare stem (lines 908-909); VQA's ``options`` a JSON list
    of bare texts (line 632) and its ``question`` led by ``Question:``, which
    the loader's prompt reads (``vantage_vqa.py:362``). Beside them, each
    task's answer key ``<task>_gt.jsonl``. ``videos`` are the clip files,
    ``durations`` their lengths in seconds. The synthetic temporal key is the
    middle half of each clip; the dense captions key is two events, first and
    second half. Each TSV's ``index`` runs 0, 1, ... . Returns task -> TSV
    path; the folder of a task's videos is ``harness_prompts.harness_data_root``
    of it (``<TSV folder>/videos``).
    """
    folder = Path(folder)
    rows = {"vqa": [], "event_verification": [], "temporal": [], "dvc": []}
    gt = {task: [] for task in rows}
    for video, d in zip(videos, durations):
        name = Path(video).name
        for question, options, answer in _VQA:
            _add(rows, gt, "vqa", name, [f"Question: {question}", json.dumps(options)], answer)
        for question, answer in _EV:
            _add(rows, gt, "event_verification", name, [_EV_SYSTEM, question], answer)
        span = {"start": _mmss(d / 4), "end": _mmss(3 * d / 4)}
        # temporal: the bare stem, to which the loader appends .mp4 (run_lmudata.py:908-909, vantage_temporal.py:313)
        _add(rows, gt, "temporal", Path(video).stem, ["When do the people in the scene move the most?"],
             json.dumps(span), {"duration": d})
        events = [{"start": 0, "end": round(d / 2, 2), "caption": "people walk across the scene"},
                  {"start": round(d / 2, 2), "end": d, "caption": "people keep walking through the scene"}]
        _add(rows, gt, "dvc", name, ["Describe the events of the video."], json.dumps(events))
    out = {}
    for task, table in rows.items():
        dataset = folder / "datasets" / LMU_DATASETS[task]
        (dataset / "videos").mkdir(parents=True, exist_ok=True)
        for video in videos:
            shutil.copyfile(video, dataset / "videos" / Path(video).name)
        text = io.StringIO()
        csv.writer(text, delimiter="\t", lineterminator="\n").writerows([TSV_COLUMNS[task], *table])
        out[task] = write_text(dataset / f"{LMU_DATASETS[task]}.tsv", text.getvalue())
        write_text(folder / f"{task}_gt.jsonl", "\n".join(gt[task]) + "\n")
    return out


def write_street_dry_run(folder) -> dict[str, Path]:
    """``write_street_benchmark`` over the package's three street excerpts (``example_videos``), each clip's
    duration its frame count over its frame rate; returns task -> TSV path (its videos in ``<TSV folder>/videos``,
    its answer key ``folder/<task>_gt.jsonl``)."""
    videos = example_videos()
    return write_street_benchmark(folder, videos, [p.num_frames / p.fps for p in map(probe, videos)])


def street_dry_run_summary(folder, tsvs: dict[str, Path]) -> str:
    """What ``sova vantage synthetic`` prints of ``write_street_dry_run(folder)``'s answer ``tsvs``: one line per
    task (its TSV, item count, videos folder and answer key), then the describe command to run next."""
    folder, vqa = Path(folder), tsvs["vqa"]
    return "\n".join([*(f"{task}: {tsv} ({len(read_items(task, tsv))} items; videos in {tsv.parent / 'videos'}; "
                         f"answer key {folder / f'{task}_gt.jsonl'})" for task, tsv in tsvs.items()),
                      f"next: sova vantage describe --task vqa --items {vqa} --media-root {vqa.parent / 'videos'} "
                      f"--ground-truth {folder / 'vqa_gt.jsonl'} --backend motion --cache-dir CACHE"])


class RuleBasedStandIn:
    """A rule-based stand-in describer (not an MLLM) that answers VANTAGE video-task prompts from frame change.

    Motion per step = mean absolute grey-level change between consecutive
    frames. It answers multiple choice with A when the mean motion exceeds
    ``threshold`` (else D), yes/no with Yes when it does, a temporal interval
    from the first to the last step at or above the median motion, and two
    dense-caption events (first and second half). Anything else: "I cannot tell".
    """

    name = "rule-based-stand-in"
    max_batch_size = 1
    max_concurrency = 1

    def __init__(self, threshold: float = 2.0):
        self.threshold = float(threshold)

    def config(self) -> dict:
        return {"model": "rule-based-stand-in", "threshold": self.threshold}

    def describe(self, requests: Sequence[DescribeRequest]) -> list[str]:
        return [self._answer(r) for r in requests]

    def _answer(self, request: DescribeRequest) -> str:
        grey = [np.asarray(f.convert("L"), dtype=np.float64) for f in request.frames]
        motion = np.array([np.abs(b - a).mean() for a, b in zip(grey, grey[1:])]) if len(grey) > 1 else np.zeros(1)
        moving = bool(motion.mean() > self.threshold)
        times = list(request.timestamps) or list(range(len(grey)))
        text = request.prompt
        if "option's letter" in text:
            return "Answer: A" if moving else "Answer: D"
        if "Answer Yes or No" in text:
            return "Yes." if moving else "No."
        if '"start": "mm:ss.ss"' in text:
            busy = np.flatnonzero(motion >= np.median(motion))
            start, end = times[busy[0]], times[min(busy[-1] + 1, len(times) - 1)]
            return json.dumps({"start": _mmss(start), "end": _mmss(end)})
        if '"caption"' in text:
            mid = times[len(times) // 2]
            caption = "people walk across the scene" if moving else "the scene is still"
            return json.dumps([{"start": times[0], "end": mid, "caption": caption},
                               {"start": mid, "end": times[-1], "caption": caption}])
        return "I cannot tell"


#: The ``source`` and ``cache`` of the street run's records (``street_run``).
STREET_SOURCE = "rule-based stand-in (synthetic questions)"
STREET_CACHE = "vantage-street-stand-in"


def street_run(describer, tsvs: dict, work_dir, answers_dir, *, n_frames: int, mode: str, rng,
               n_resamples: int) -> tuple[dict, dict]:
    """Describe, read back and score each task of the synthetic street set (``write_street_benchmark``).

    For each ``task -> items file`` of ``tsvs``: the items are described
    into ``answers_dir`` (resumable; the videos in ``videos/`` beside the
    TSV), the cached answers read back by
    leaderboard id, and scored against ``work_dir/<task>_gt.jsonl`` in
    ``mode`` with ``n_resamples`` resamples from ``rng`` (dense captioning
    with the token-F1 caption similarity). Returns ``({task: VantageResult},
    {task: one raw answer})``.
    """
    results, shown = {}, {}
    for task, tsv in tsvs.items():
        answers = describe(describer, task, tsv, answers_dir, media_root=Path(tsv).parent / "videos", frames=n_frames,
                           run=RunOptions(show_progress=False, verbose=False)).answers
        shown[task] = next(iter(answers.values()))
        truth = read_ground_truth(Path(work_dir) / f"{task}_gt.jsonl", task)
        results[task] = score_answers(task, truth, answers, mode=mode, rng=rng, n_resamples=n_resamples,
                                      similarity=token_f1_similarity)
    return results, shown
