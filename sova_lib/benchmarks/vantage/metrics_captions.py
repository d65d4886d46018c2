"""Dense video captioning: SODA_c and the caption similarities it takes.

SODA_c for dense video captioning (spec section 2; harness ``vantage_dvc.py:257-303``).

Per video, the GT events (file order) and the answer's events (sorted by
start) give an ``(M, N)`` score matrix ``C = IoU x sim``, where ``sim`` is
the caption similarity, injected as a function (below: BERTScore, METEOR and
plain-text ones). ``soda_alignment`` finds the best
order-preserving one-to-one matching by dynamic programming::

    D[i, j] = max(D[i-1, j], D[i, j-1], D[i-1, j-1] + C[i, j])

where an out-of-range ``D`` is -1 in the first two terms and 0 in the third;
``S = D[M-1, N-1]`` and ``SODA_c(video) = 2 S / (M + N)``. No tIoU threshold.

Caption similarities, ``sim(gt_captions, answer_captions) -> (M, N)`` arrays:

* ``BertScoreSimilarity``: BERTScore F1 (package ``bert-score``) with
  ``roberta-large`` and the library's defaults (layer 17, no idf, no
  baseline rescaling); the answer caption is the candidate, the GT caption
  the reference. This is what the leaderboard uses (harness
  ``vantage_dvc.py:262-303``). The weights are never downloaded at run time:
  without them the constructor raises ``CaptionModelUnavailable`` saying
  what to fetch and where to put it.
* ``MeteorSimilarity``: METEOR 1.5 through ``pycocoevalcap`` (needs Java),
  the metric of the original SODA.
* ``exact_match_similarity`` and ``token_f1_similarity``: plain-text
  similarities for tests and teaching (not the leaderboard's).
"""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from sova_lib.benchmarks.vantage.metrics import Score, iou_matrix
from sova_lib.benchmarks.vantage.parsing import check_mode

__all__ = ["BERTSCORE_MODEL", "SIMILARITIES", "BertScoreSimilarity", "CaptionModelUnavailable", "MeteorSimilarity",
           "Similarity", "caption_text", "exact_match_similarity", "make_similarity", "soda_alignment", "soda_c", "soda_video",
           "token_f1_similarity"]

#: The leaderboard's BERTScore model (Hugging Face id) and the layer bert-score uses for it by default.
BERTSCORE_MODEL = "roberta-large"
_BERTSCORE_LAYER = 17


class CaptionModelUnavailable(RuntimeError, ValueError):
    """The caption similarity asked for cannot run here (weights or Java missing); the message says what to install
    or which other similarity to ask for. Also a ``ValueError``: the command reports it as a bad choice, exit
    status 2."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", str(text).lower())


def _pairwise(gt: Sequence[str], answer: Sequence[str], score: Callable[[list, list], Sequence[float]]) -> np.ndarray:
    """``score(answer_captions, gt_captions)`` over every (GT, answer) pair, GT-major, as an ``(M, N)`` array;
    zeros when either side is empty (``score`` is not called)."""
    m, n = len(gt), len(answer)
    if m == 0 or n == 0:
        return np.zeros((m, n))
    scores = score([answer[j] for _ in range(m) for j in range(n)], [gt[i] for i in range(m) for _ in range(n)])
    return np.asarray(scores, dtype=np.float64).reshape(m, n)


def exact_match_similarity(gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
    """1 where the captions have the same words (case and punctuation ignored), else 0: ``(M, N)``."""
    return _pairwise(gt, answer, lambda cands, refs: [float(_words(c) == _words(r)) for c, r in zip(cands, refs)])


def _token_f1(a: str, b: str) -> float:
    x, y = Counter(_words(a)), Counter(_words(b))
    common = sum((x & y).values())
    return 2 * common / (sum(x.values()) + sum(y.values())) if common else 0.0


def token_f1_similarity(gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
    """Unigram F1 of each (GT, answer) caption pair, words lower-cased and counted with multiplicity: ``(M, N)``."""
    return _pairwise(gt, answer, lambda cands, refs: [_token_f1(c, r) for c, r in zip(cands, refs)])


def _cached_model_dir(model: str, cache_dir: str | Path | None) -> str | None:
    """A folder holding ``model``'s config: the path itself, or its Hugging Face cache snapshot."""
    if Path(model).is_dir():
        return str(model) if (Path(model) / "config.json").is_file() else None
    from huggingface_hub import try_to_load_from_cache

    for repo in (model, f"FacebookAI/{model}"):
        found = try_to_load_from_cache(repo, "config.json", cache_dir=cache_dir)
        if isinstance(found, str):
            return str(Path(found).parent)
    return None


class BertScoreSimilarity:
    """BERTScore F1 between every GT caption and every answer caption.

    ``model``: ``"roberta-large"`` (looked up in the Hugging Face cache,
    ``cache_dir`` or the default) or a local folder holding that model.
    ``num_layers`` defaults to bert-score's own choice for roberta-large (17).
    Raises ``CaptionModelUnavailable`` at once when the weights are not on disk.
    """

    def __init__(self, model: str = BERTSCORE_MODEL, *, num_layers: int | None = None, device: str | None = None,
                 cache_dir: str | Path | None = None):
        folder = _cached_model_dir(model, cache_dir)
        if folder is None:
            raise CaptionModelUnavailable(
                f"BERTScore needs the weights of {model!r} (Hugging Face FacebookAI/roberta-large, about 1.4 GB), "
                "which are not on this machine and are never downloaded at run time. On a connected machine run "
                "`huggingface-cli download FacebookAI/roberta-large --local-dir roberta-large` and pass that folder "
                "as the model, or fill the Hugging Face cache; or score with METEOR (MeteorSimilarity).")
        self.folder = folder
        self.num_layers = num_layers or _BERTSCORE_LAYER
        self.device = device

    def __call__(self, gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
        return _pairwise(gt, answer, lambda cands, refs: self._scorer.score(cands, refs)[2])

    @cached_property
    def _scorer(self):
        """The BERTScore scorer, loaded on the first pair to score."""
        from bert_score import BERTScorer

        return BERTScorer(model_type=self.folder, num_layers=self.num_layers, batch_size=64, device=self.device,
                          idf=False, rescale_with_baseline=False)


class MeteorSimilarity:
    """METEOR 1.5 (``pycocoevalcap``) of every answer caption against every GT caption.

    Needs ``java`` on the PATH; raises ``CaptionModelUnavailable`` otherwise.
    One Java process serves all calls of this object; ``close()`` ends it.
    """

    def __init__(self):
        if shutil.which("java") is None:
            raise CaptionModelUnavailable("METEOR needs Java (e.g. OpenJDK 17: apt-get install openjdk-17-jre-headless)")

    def __call__(self, gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
        return _pairwise(gt, answer, lambda cands, refs: self._meteor.compute_score(
            {k: [r] for k, r in enumerate(refs)}, {k: [c] for k, c in enumerate(cands)})[1])

    @cached_property
    def _meteor(self):
        """The METEOR scorer and its Java process, started on the first pair to score."""
        from pycocoevalcap.meteor.meteor import Meteor

        return Meteor()

    def close(self) -> None:
        if "_meteor" in self.__dict__:  # started
            self._meteor.__del__()  # ends the Java process
            del self._meteor


#: Caption similarities by name (``make_similarity``); ``bertscore`` is the leaderboard's.
SIMILARITIES = ("bertscore", "meteor", "token-f1", "exact")


def make_similarity(name: str, model: str | None = None):
    """The caption similarity called ``name`` (one of ``SIMILARITIES``); ``model``: BERTScore's model or folder."""
    makers = {"bertscore": lambda: BertScoreSimilarity(model or BERTSCORE_MODEL), "meteor": MeteorSimilarity,
              "token-f1": lambda: token_f1_similarity, "exact": lambda: exact_match_similarity}
    if name not in makers:
        raise ValueError(f"unknown caption similarity {name!r}; choose one of {SIMILARITIES}")
    return makers[name]()


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


def caption_text(caption) -> str:
    """The text a caption is scored by: text as it is; any other JSON value as its JSON text.

    The harness keeps a caption of any JSON type that is not empty (``vantage_dvc.py:236-238``: ``["a box
    falls"]``, ``7``, ``{"what": "a box"}``, ``true``) and puts it unchanged into the sentence list it scores
    (``:291``); its remote BERTScore request carries that list as JSON (``:280-284``,
    ``requests.post(..., json={"candidates": cands, ...})``), so a caption similarity service reads the
    value's JSON text. ``caption_text(["a box falls"])`` is ``'["a box falls"]'``, whose words
    (``exact_match_similarity``) are those of ``"a box falls"``. Non-ASCII characters are kept as they
    are; a value nested too deep to write reads as no text.
    """
    if isinstance(caption, str):
        return caption
    try:
        return json.dumps(caption, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return ""


def soda_video(truth: Sequence[tuple[float, float, object]], answer: Sequence[tuple[float, float, object]],
               similarity: Similarity) -> dict:
    """SODA_c of one video and its secondary values (harness ``vantage_dvc.py:288-322``).

    ``truth``: GT events ``(start, end, caption)`` in file order; ``answer``:
    parsed events sorted by start (``:239``). Every event takes part, whatever
    its caption's type: the IoU matrix spans all of them (``:290``), and the
    similarity scores each answer caption against each GT caption
    (``:291-296``, one request per GT caption), a caption that is not text
    through its JSON text (``caption_text``), which is what the harness's
    remote BERTScore request carries (``official`` keeps such captions,
    ``parsing.parse_dvc``; ``strict`` leaves them out before this point).
    The product is aligned (``:304-307``); a time that is not finite gives
    IoU 0 (``metrics.iou_matrix``, as ``_iou`` at ``:26-29``). Returns
    ``soda_c`` = 2S/(M+N), ``S``, the matched ``pairs``, their
    ``pair_ious``, ``iou_f1`` = 2 * sum of matched IoU / (M+N),
    ``caption_f1`` = 2 * sum of matched similarity / (M+N) (the harness's
    BertScore_F1, ``:309-317``) and ``pair_miou`` (mean IoU over this
    video's pairs, ``nan`` with none); the three F1s as ``_harmonic``
    computes them.
    """
    m, n = len(truth), len(answer)
    iou = iou_matrix([e[:2] for e in truth], [e[:2] for e in answer])
    sim = np.zeros((m, n))
    if m and n:
        sim = np.asarray(similarity([caption_text(e[2]) for e in truth], [caption_text(e[2]) for e in answer]),
                         dtype=np.float64)
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
           similarity: Similarity, mode: str = "official") -> Score:
    """SODA_c over videos: the mean of per-video SODA_c (resampling unit: the video).

    ``truth``: per video its GT events; ``answers``: per video the parsed
    events or ``None``. ``official`` averages over videos with a GT event and a
    parsed event (harness ``vantage_dvc.py:257``), and is 0 when there is none
    (``:258-260``); ``strict`` scores a video
    without a parsed event 0 and averages over every video with a GT event.
    Secondary: the means over those videos of ``iou_f1`` and ``caption_f1``,
    and ``pair_miou``, the mean IoU over the matched pairs of all videos
    pooled (harness ``vantage_dvc.py:312,328``; 0 with no pair, as there).
    ``ValueError`` without a ``similarity``.
    """
    mode = check_mode(mode)
    if similarity is None:
        raise ValueError("SODA_c needs a caption similarity (metrics_captions.BertScoreSimilarity for the leaderboard's)")
    videos, no_gt, dropped = [], 0, 0
    for gt, ans in zip(truth, answers):
        if not gt:
            no_gt += 1
        elif not ans and mode == "official":
            dropped += 1
        else:  # strict: a video without an event scores 0 throughout
            videos.append(soda_video(gt, ans or [], similarity))
    values = np.array([v["soda_c"] for v in videos], dtype=np.float64)
    pooled = [iou for v in videos for iou in v["pair_ious"]]
    secondary = {k: float(np.mean([v[k] for v in videos])) if videos else float("nan") for k in ("iou_f1", "caption_f1")}
    secondary["pair_miou"] = float(np.mean(pooled)) if pooled else 0.0
    secondary["n_pairs"] = len(pooled)
    notes = []
    if no_gt:
        notes.append(f"{no_gt} videos without a GT event left out")
    if dropped:
        notes.append(f"{dropped} videos without a readable event dropped (harness behaviour)")
    if values.size:
        value = float(values.mean())
    else:  # official: the harness reports 0 when no video has a GT and a parsed event (vantage_dvc.py:258-260)
        value = 0.0 if mode == "official" and truth else float("nan")
    return Score(value, secondary, n_units=values.size, unit_values=values, notes=notes)

