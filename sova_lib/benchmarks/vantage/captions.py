"""Caption similarities for SODA_c: ``sim(gt_captions, answer_captions) -> (M, N)`` arrays.

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

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "BERTSCORE_MODEL", "SIMILARITIES", "make_similarity", "BertScoreSimilarity", "CaptionModelUnavailable", "MeteorSimilarity",
    "exact_match_similarity", "token_f1_similarity",
]

#: The leaderboard's BERTScore model (Hugging Face id) and the layer bert-score uses for it by default.
BERTSCORE_MODEL = "roberta-large"
_BERTSCORE_LAYER = 17


class CaptionModelUnavailable(RuntimeError):
    """The caption similarity cannot run here (weights or Java missing); the message says what to install."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", str(text).lower())


def exact_match_similarity(gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
    """1 where the captions have the same words (case and punctuation ignored), else 0: ``(M, N)``."""
    a = [" ".join(_words(t)) for t in gt]
    b = [" ".join(_words(t)) for t in answer]
    return np.array([[float(x == y) for y in b] for x in a]).reshape(len(a), len(b))


def token_f1_similarity(gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
    """Unigram F1 of each (GT, answer) caption pair, words lower-cased and counted with multiplicity: ``(M, N)``."""
    from collections import Counter

    ga, gb = [Counter(_words(t)) for t in gt], [Counter(_words(t)) for t in answer]
    out = np.zeros((len(ga), len(gb)))
    for i, x in enumerate(ga):
        for j, y in enumerate(gb):
            common = sum((x & y).values())
            if common:
                out[i, j] = 2 * common / (sum(x.values()) + sum(y.values()))
    return out


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

    def __init__(self, model: str = BERTSCORE_MODEL, *, num_layers: int | None = None, batch_size: int = 64,
                 device: str | None = None, cache_dir: str | Path | None = None):
        folder = _cached_model_dir(model, cache_dir)
        if folder is None:
            raise CaptionModelUnavailable(
                f"BERTScore needs the weights of {model!r} (Hugging Face FacebookAI/roberta-large, about 1.4 GB), "
                "which are not on this machine and are never downloaded at run time. On a connected machine run "
                "`huggingface-cli download FacebookAI/roberta-large --local-dir roberta-large` and pass that folder "
                "as the model, or fill the Hugging Face cache; or score with METEOR (MeteorSimilarity).")
        self.model = model
        self.folder = folder
        self.num_layers = num_layers or _BERTSCORE_LAYER
        self.batch_size = batch_size
        self.device = device
        self._scorer = None

    def config(self) -> dict:
        """The settings that change a score."""
        return {"similarity": "bertscore-f1", "model": self.model, "num_layers": self.num_layers,
                "idf": False, "rescale_with_baseline": False}

    def __call__(self, gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
        m, n = len(gt), len(answer)
        if m == 0 or n == 0:
            return np.zeros((m, n))
        if self._scorer is None:
            from bert_score import BERTScorer

            self._scorer = BERTScorer(model_type=self.folder, num_layers=self.num_layers, batch_size=self.batch_size,
                                      device=self.device, idf=False, rescale_with_baseline=False)
        cands = [answer[j] for i in range(m) for j in range(n)]
        refs = [gt[i] for i in range(m) for j in range(n)]
        _, _, f1 = self._scorer.score(cands, refs)
        return np.asarray(f1, dtype=np.float64).reshape(m, n)


class MeteorSimilarity:
    """METEOR 1.5 (``pycocoevalcap``) of every answer caption against every GT caption.

    Needs ``java`` on the PATH; raises ``CaptionModelUnavailable`` otherwise.
    One Java process serves all calls of this object; ``close()`` ends it.
    """

    def __init__(self):
        if shutil.which("java") is None:
            raise CaptionModelUnavailable("METEOR needs Java (e.g. OpenJDK 17: apt-get install openjdk-17-jre-headless)")
        self._meteor = None

    def config(self) -> dict:
        return {"similarity": "meteor-1.5", "package": "pycocoevalcap"}

    def __call__(self, gt: Sequence[str], answer: Sequence[str]) -> np.ndarray:
        m, n = len(gt), len(answer)
        if m == 0 or n == 0:
            return np.zeros((m, n))
        if self._meteor is None:
            from pycocoevalcap.meteor.meteor import Meteor

            self._meteor = Meteor()
        refs = {k: [gt[k // n]] for k in range(m * n)}
        cands = {k: [answer[k % n]] for k in range(m * n)}
        _, scores = self._meteor.compute_score(refs, cands)
        return np.asarray(scores, dtype=np.float64).reshape(m, n)

    def close(self) -> None:
        if self._meteor is not None:
            self._meteor.__del__()  # ends the Java process
            self._meteor = None


#: Caption similarities by name (``make_similarity``); ``bertscore`` is the leaderboard's.
SIMILARITIES = ("bertscore", "meteor", "token-f1", "exact")


def make_similarity(name: str, model: str | None = None):
    """The caption similarity called ``name`` (one of ``SIMILARITIES``); ``model``: BERTScore's model or folder."""
    if name == "bertscore":
        return BertScoreSimilarity(model or BERTSCORE_MODEL)
    if name == "meteor":
        return MeteorSimilarity()
    if name == "token-f1":
        return token_f1_similarity
    if name == "exact":
        return exact_match_similarity
    raise ValueError(f"unknown caption similarity {name!r}; choose one of {SIMILARITIES}")
