"""The spec's hand-computed cases as data, scored through the library, for teaching (notebook 06).

``hand_case_rows()`` scores each case of the spec's section 5 from raw
answer texts (parser, metric) in both modes and returns one row per case
with the value expected by hand; the tests assert the same values.
``published_comparison(computed)`` puts the paper's numbers beside the ones
a user computed, and says "not computed here" for the rest.
"""
from __future__ import annotations

from sova_lib.benchmarks.vantage.files import GroundTruth
from sova_lib.benchmarks.vantage.metrics_captions import exact_match_similarity
from sova_lib.benchmarks.vantage.published import published_numbers
from sova_lib.benchmarks.vantage.scoring import score_answers

__all__ = ["HAND_CASES", "STREET_CACHE", "STREET_SOURCE", "hand_case_rows", "published_comparison", "street_run",
           "street_table"]


def _gt(task, values, **extra):
    return [GroundTruth(str(k), task, v, media=f"video{k}", extra=dict(extra)) for k, v in enumerate(values)]


_SOT_GT = {1: [100, 100, 200, 200], 2: None, 3: [300, 300, 400, 400]}
_SHIFTED = {k: [10 * k, 0, 100 + 10 * k, 100] for k in range(1, 5)}
_OL = ('[{"bbox_2d": [0, 0, 100, 100], "label": "person"}, {"bbox_2d": [200, 200, 288, 300], "label": "person"}, '
       '{"bbox_2d": [500, 500, 600, 600], "label": "person"}]')

#: (task, case, ground truth, raw answers, by hand: parity, strict)
HAND_CASES = [
    ("event_verification", "truth y,y,n,n; 'Yes.', 'No', 'no', 'I cannot tell'",
     _gt("event_verification", ["yes", "yes", "no", "no"]),
     ["Yes.", "No", "no", "I cannot tell"], 2 / 3, 7 / 12),
    ("vqa", "'Answer: C', 'I pick b.', 'The forklift is a machine' vs C, B, A",
     _gt("vqa", ["C", "B", "A"]), ["Answer: C", "I pick b.", "The forklift is a machine"], 1.0, 1 / 3),
    ("pointing", "'The answer is (C).', 'No idea', 'none' vs C, D, A",
     _gt("pointing", ["C", "D", "A"]), ["The answer is (C).", "No idea", "none"], 2 / 3, 1 / 3),
    # Temporal, GT [10, 14] s, d = 30. The harness reads a temporal answer as JSON only (vantage_temporal.py:390-431):
    # plain text gets a "}" appended, fails json.loads and has no quoted "start"/"end", so it is the whole video
    # [0, 30], IoU 4/30, in parity; strict reads its m:s times ([8, 12]: I = 2, U = 6, IoU 1/3). JSON strings are
    # read by both: {"start": "00:08", "end": "00:12"} scores 1/3 in both modes.
    ("temporal", "GT 00:10-00:14, d=30; answer 00:08-00:12 (text)", _gt("temporal", [(10, 14)], duration=30),
     ["00:08-00:12"], 4 / 30, 1 / 3),
    ("temporal", "same GT; 'I don't know'", _gt("temporal", [(10, 14)], duration=30), ["I don't know"], 4 / 30, 0.0),
    ("temporal", 'same GT; {"start":8,"end":12}', _gt("temporal", [(10, 14)], duration=30),
     ['{"start":8,"end":12}'], 4 / 30, 1 / 3),
    # Read back as "<14.0> <10.0>", the pair is sorted (:433-439): [10, 14], IoU 1; [25, 40] is clamped to
    # [25, 30], no overlap. The same times as text are the whole video in parity.
    ("temporal", 'same GT; {"start": "00:14", "end": "00:10"} (sorted)', _gt("temporal", [(10, 14)], duration=30),
     ['{"start": "00:14", "end": "00:10"}'], 1.0, 1.0),
    ("temporal", 'same GT; {"start": "00:25", "end": "00:40"} (clamped)', _gt("temporal", [(10, 14)], duration=30),
     ['{"start": "00:25", "end": "00:40"}'], 0.0, 0.0),
    ("dvc", "identity, 2 events (similarity: exact match)",
     _gt("dvc", [[(0, 10, "a"), (10, 20, "b")]]),
     ['[{"start": 0, "end": 10, "caption": "a"}, {"start": 10, "end": 20, "caption": "b"}]'], 1.0, 1.0),
    ("dvc", "GT [0,10] x, [10,20] y; answers [0,20] y, [0,20] x",
     _gt("dvc", [[(0, 10, "x"), (10, 20, "y")]]),
     ['[{"start": 0, "end": 20, "caption": "y"}, {"start": 0, "end": 20, "caption": "x"}]'], 0.25, 0.25),
    ("dvc", "two videos: identity and unreadable", _gt("dvc", [[(0, 10, "a")], [(0, 10, "a")]]),
     ['[{"start": 0, "end": 10, "caption": "a"}]', "no events"], 1.0, 0.5),
    ("refex", "W=2000, H=1000, GT [200,100,400,300]; [[100,100,200,300]]",
     _gt("refex", [[[200, 100, 400, 300]]], width=2000, height=1000), ["[[100,100,200,300]]"], 1.0, 1.0),
    ("refex", "same GT; [[100,100,150,300],[600,600,700,700]]",
     _gt("refex", [[[200, 100, 400, 300]]], width=2000, height=1000),
     ["[[100,100,150,300],[600,600,700,700]]"], 0.5, 0.5),
    ("astro", "two images; 2 hits (IoU 1, 0.88), 1 false box, 1 missed person (F1@0.5)",
     _gt("astro", [[[0, 0, 100, 100], [200, 200, 300, 300]], [[0, 0, 50, 50]]], width=1000, height=1000),
     [_OL, "no answer"], 2 / 3, 2 / 3),
    ("sot", "GT {1: box, 2: absent, 3: box}; IoU .5, box on absent, null on present",
     [GroundTruth("0", "sot", _SOT_GT, extra={"n_frames": 4})],
     ['{"frame_1": [100,100,200,150], "frame_2": [10,10,20,20], "frame_3": null}'], 13 / 63, 13 / 63),
    ("sot", "initial box repeated, GT shifted 10..40 px",
     [GroundTruth("0", "sot", _SHIFTED, extra={"n_frames": 5})],
     ['{"frame_1": [0,0,100,100], "frame_2": [0,0,100,100], "frame_3": [0,0,100,100], "frame_4": [0,0,100,100]}'],
     51 / 84, 51 / 84),
    ("sot", "no answer (every present frame IoU 0)", [GroundTruth("0", "sot", _SOT_GT, extra={"n_frames": 4})],
     ["I lost the target"], 1 / 21, 1 / 21),
]


def hand_case_rows() -> list[dict]:
    """One row per hand case: task, case, metric, parity and strict values (x100) computed and by hand."""
    rows = []
    for task, case, gts, texts, parity, strict in HAND_CASES:
        answers = {g.id: t for g, t in zip(gts, texts)}
        got = {mode: score_answers(task, gts, answers, mode=mode, similarity=exact_match_similarity)
               for mode in ("parity", "strict")}
        rows.append({"task": task, "case": case, "metric": got["parity"].metric,
                     "parity": round(got["parity"].value, 4), "parity by hand": round(100 * parity, 4),
                     "strict": round(got["strict"].value, 4), "strict by hand": round(100 * strict, 4),
                     "parse rate": got["parity"].parse_rate})
    return rows


def published_comparison(computed: dict | None = None) -> list[dict]:
    """The paper's numbers with a ``computed here`` column: the user's value for that task, or "not computed here".

    ``computed`` maps a task to a ``VantageResult`` of the user's own model on
    the real ground truth; its value stands beside every published row of
    that task and metric (the model differs: compare with care).
    """
    computed = computed or {}
    rows = []
    for row in published_numbers():
        mine = computed.get(row["task"])
        value = round(mine.value, 2) if mine is not None and mine.metric == row["metric"] else "not computed here"
        rows.append({**row, "computed here": value})
    return rows


#: The ``source`` and ``cache`` of the street run's records (``street_run``).
STREET_SOURCE = "rule-based stand-in (synthetic questions)"
STREET_CACHE = "vantage-street-stand-in"


def street_run(describer, tsvs: dict, work_dir, answers_dir, *, media_root, n_frames: int, mode: str, rng,
               n_resamples: int) -> tuple[dict, dict]:
    """Describe, read back and score each task of the synthetic street set (``synthetic.write_street_benchmark``).

    For each ``task -> items file`` of ``tsvs``: the items are described
    into ``answers_dir`` (resumable), the cached answers read back by
    leaderboard id, and scored against ``work_dir/<task>_gt.jsonl`` in
    ``mode`` with ``n_resamples`` resamples from ``rng`` (dense captioning
    with the token-F1 caption similarity). Returns ``({task: VantageResult},
    {task: one raw answer})``.
    """
    from pathlib import Path

    from sova_lib.benchmarks.vantage.files import read_ground_truth
    from sova_lib.benchmarks.vantage.inputs import read_items
    from sova_lib.benchmarks.vantage.metrics_captions import token_f1_similarity
    from sova_lib.benchmarks.vantage.run import cached_answers, describe_task
    from sova_lib.benchmarks.vantage.tasks import submission_answers

    results, shown = {}, {}
    for task, tsv in tsvs.items():
        items = read_items(task, tsv)
        run = describe_task(describer, task, items, answers_dir, media_root=media_root, n_frames=n_frames,
                            show_progress=False, verbose=False)
        answers = submission_answers(items, cached_answers(run.folder, items, n_frames))
        shown[task] = next(iter(answers.values()))
        truth = read_ground_truth(Path(work_dir) / f"{task}_gt.jsonl", task)
        results[task] = score_answers(task, truth, answers, mode=mode, rng=rng, n_resamples=n_resamples,
                                      similarity=token_f1_similarity)
    return results, shown


def street_table(frame, tasks, *, mode: str, n_resamples: int, seed: int):
    """The street run's table from collected records (``sova_lib.records``): one row per task of ``tasks``.

    Columns ``task, describer, metric, value, ci_low, ci_high, mode,
    parse_rate, n_items``; the parse rate is read from the record's note
    (``parsed N/M answers``).
    """
    import re

    import pandas as pd

    from sova_lib.benchmarks.vantage.tasks import CANONICAL_TASKS

    rows = []
    keep = (frame["cache"] == STREET_CACHE) & (frame["bootstrap"] == n_resamples) & (frame["seed"] == seed)
    for task in tasks:
        found = frame[keep & (frame["protocol"] == f"{CANONICAL_TASKS[task]} ({mode})")]
        if len(found) != 1:
            raise ValueError(f"{len(found)} street-run records of task {task!r} in the table; expected one")
        r = found.iloc[0]
        parsed, total = map(int, re.match(r"parsed (\d+)/(\d+)", r["note"]).groups())
        rows.append({"task": task, "describer": r["source"], "metric": r["metric"], "value": r["value"],
                     "ci_low": r["ci_low"], "ci_high": r["ci_high"], "mode": mode, "parse_rate": parsed / total,
                     "n_items": int(r["n_queries"])})
    return pd.DataFrame(rows)
