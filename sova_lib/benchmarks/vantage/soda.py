"""SODA_c for dense video captioning (spec section 2; harness ``vantage_dvc.py:257-303``).

Per video, the GT events (file order) and the answer's events (sorted by
start) give an ``(M, N)`` score matrix ``C = IoU x sim``, where ``sim`` is
the caption similarity, injected as a function (``captions.py`` holds
BERTScore, METEOR and plain-text ones). ``soda_alignment`` finds the best
order-preserving one-to-one matching by dynamic programming::

    D[i, j] = max(D[i-1, j], D[i, j-1], D[i-1, j-1] + C[i, j])

where an out-of-range ``D`` is -1 in the first two terms and 0 in the third;
``S = D[M-1, N-1]`` and ``SODA_c(video) = 2 S / (M + N)``. No tIoU threshold.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sova_lib.benchmarks.vantage.boxes import interval_iou_matrix
from sova_lib.benchmarks.vantage.parse_text import check_mode
from sova_lib.benchmarks.vantage.result import Score

__all__ = ["Similarity", "soda_alignment", "soda_c", "soda_video"]

#: ``sim(gt_captions, answer_captions) -> (M, N)`` array, GT rows and answer columns (answers are the candidates).
Similarity = Callable[[Sequence[str], Sequence[str]], np.ndarray]


def soda_alignment(scores) -> tuple[float, list[tuple[int, int]]]:
    """Best order-preserving matching of an ``(M, N)`` score matrix: ``(S, pairs)``.

    ``S`` is the DP optimum above. ``pairs`` are ``(gt, answer)`` indices
    read back as the harness does: each DP cell records which term won, ties
    going to up, then left, then diagonal; from ``(M-1, N-1)``, take the last
    diagonal cell of the row at or left of the current column, step to the row
    above and the column before it, and stop at row 0 or column 0 (a row-0
    pair is always kept); a row with no diagonal cell moves up one row.
    Example: ``[[0, .5], [.5, 0]]`` gives ``S = 0.5`` and pairs ``[(1, 0)]``.
    """
    c = np.asarray(scores, dtype=np.float64)
    m, n = c.shape
    if m == 0 or n == 0:
        return 0.0, []
    dp = np.empty((m, n))
    move = np.empty((m, n), dtype=int)  # 0 up, 1 left, 2 diagonal
    for i in range(m):
        for j in range(n):
            up = dp[i - 1, j] if i > 0 else -1.0
            left = dp[i, j - 1] if j > 0 else -1.0
            diag = (dp[i - 1, j - 1] if i > 0 and j > 0 else 0.0) + c[i, j]
            options = (up, left, diag)
            move[i, j] = int(np.argmax(options))
            dp[i, j] = options[move[i, j]]
    pairs: list[tuple[int, int]] = []
    i, j = m - 1, n - 1
    while i >= 0 and j >= 0:
        cols = np.flatnonzero(move[i, :j + 1] == 2)
        if cols.size == 0:
            i -= 1
            continue
        pairs.append((i, int(cols[-1])))
        if i == 0 or cols[-1] == 0:
            break
        i, j = i - 1, int(cols[-1]) - 1
    return float(dp[m - 1, n - 1]), pairs[::-1]


def _harmonic(total: float, m: int, n: int) -> float:
    """``2 (total / n) (total / m) / (total / n + total / m)`` when ``total > 0``, else 0: the harness's
    F1 of a matched sum over ``m`` GT and ``n`` answer events (``vantage_dvc.py:315-317``), which equals
    ``2 total / (m + n)`` up to rounding."""
    if not total > 0:
        return 0.0
    p, r = total / n, total / m
    return float(2 * p * r / (p + r))


def soda_video(truth: Sequence[tuple[float, float, str]], answer: Sequence[tuple[float, float, str]],
               similarity: Similarity) -> dict:
    """SODA_c of one video and its secondary values (harness ``vantage_dvc.py:289-322``).

    ``truth``: GT events ``(start, end, caption)`` in file order; ``answer``:
    parsed events sorted by start. Returns ``soda_c`` = 2S/(M+N), ``S``, the
    matched ``pairs``, their ``pair_ious``, ``iou_f1`` = 2 * sum of matched
    IoU / (M+N), ``caption_f1`` = 2 * sum of matched similarity / (M+N) (the
    harness's BertScore_F1) and ``pair_miou`` (mean IoU over this video's
    pairs, ``nan`` with none); the three F1s as ``_harmonic`` computes them.
    """
    m, n = len(truth), len(answer)
    iou = interval_iou_matrix([e[:2] for e in truth], [e[:2] for e in answer])
    sim = np.asarray(similarity([e[2] for e in truth], [e[2] for e in answer]), dtype=np.float64)
    if sim.shape != (m, n):
        raise ValueError(f"similarity returned shape {sim.shape}, expected {(m, n)}")
    s, pairs = soda_alignment(iou * sim)
    matched_iou = [float(iou[i, j]) for i, j in pairs]
    rows, cols = [i for i, _ in pairs], [j for _, j in pairs]
    return {"soda_c": _harmonic(s, m, n), "S": s, "pairs": pairs, "pair_ious": matched_iou,
            "iou_f1": _harmonic(float(np.sum(iou[rows, cols])) if pairs else 0.0, m, n),
            "caption_f1": _harmonic(float(np.sum(sim[rows, cols])) if pairs else 0.0, m, n),
            "pair_miou": float(np.mean(matched_iou)) if pairs else float("nan")}


def soda_c(truth: Sequence[Sequence[tuple[float, float, str]]], answers: Sequence[Sequence | None],
           similarity: Similarity, mode: str = "parity") -> Score:
    """SODA_c over videos: the mean of per-video SODA_c (resampling unit: the video).

    ``truth``: per video its GT events; ``answers``: per video the parsed
    events or ``None``. ``parity`` averages over videos with a GT event and a
    parsed event (harness ``vantage_dvc.py:257``); ``strict`` scores a video
    without a parsed event 0 and averages over every video with a GT event.
    Secondary: the means over those videos of ``iou_f1`` and ``caption_f1``,
    and ``pair_miou``, the mean IoU over the matched pairs of all videos
    pooled (harness ``vantage_dvc.py:312,328``; 0 with no pair, as there).
    """
    check_mode(mode)
    values, extra = [], {"iou_f1": [], "caption_f1": []}
    pooled: list[float] = []
    no_gt = dropped = 0
    for gt, ans in zip(truth, answers):
        if not gt:
            no_gt += 1
            continue
        if not ans:
            if mode == "parity":
                dropped += 1
            else:
                values.append(0.0)
                extra["iou_f1"].append(0.0)
                extra["caption_f1"].append(0.0)
            continue
        video = soda_video(gt, ans, similarity)
        values.append(video["soda_c"])
        pooled.extend(video["pair_ious"])
        for key, column in extra.items():
            column.append(video[key])
    values = np.asarray(values, dtype=np.float64)
    secondary = {k: float(np.mean(v)) if v else float("nan") for k, v in extra.items()}
    secondary["pair_miou"] = float(np.mean(pooled)) if pooled else 0.0
    secondary["n_pairs"] = len(pooled)
    notes = []
    if no_gt:
        notes.append(f"{no_gt} videos without a GT event left out")
    if dropped:
        notes.append(f"{dropped} videos without a readable event dropped (harness behaviour)")
    return Score(float(values.mean()) if values.size else float("nan"), secondary, n_units=values.size,
                 unit_values=values, notes=notes)
