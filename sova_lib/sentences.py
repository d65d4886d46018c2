"""Sentence splitting exactly as the MLLM-to-Embedding framework does it.

``split(text)`` first splits the text into lines, then each line into
sentences with NLTK's English Punkt model (``nltk.sent_tokenize``), strips
each piece and drops the empty ones (SOVABench paper, Section 4). An answer
with no sentence at all becomes one empty sentence, so every item keeps at
least one embedding.

The English ``punkt_tab`` parameters ship with the package
(``sova_lib/data/nltk_data``), so splitting works offline; the vendored folder
is appended to ``nltk.data.path`` and never replaces a user's own data.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

__all__ = ["split", "split_many", "NLTK_DATA"]

NLTK_DATA = str(resources.files("sova_lib") / "data" / "nltk_data")


@lru_cache(maxsize=1)
def _tokenizer():
    import nltk
    from nltk.tokenize.punkt import PunktTokenizer

    if NLTK_DATA not in nltk.data.path:
        nltk.data.path.append(NLTK_DATA)
    return PunktTokenizer("english")


def split(text: str, *, sentences: bool = True) -> list[str]:
    """Split one answer into its sentences.

    ``sentences=False`` is the whole-text mode of the ablations: the answer is
    kept as one piece (stripped). The result is never empty: an answer without
    any sentence gives ``[""]``.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected the answer as str, got {type(text).__name__}")
    if not sentences:
        return [text.strip()]
    tokenizer = _tokenizer()
    pieces = [
        s.strip()
        for line in text.splitlines()
        for s in tokenizer.tokenize(line)
    ]
    pieces = [p for p in pieces if p]
    return pieces or [""]


def split_many(texts, *, sentences: bool = True) -> list[list[str]]:
    """``split`` applied to each text of an iterable."""
    return [split(t, sentences=sentences) for t in texts]
