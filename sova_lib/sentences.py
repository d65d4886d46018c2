"""Sentence splitting, the MLLM-to-Embedding framework's split(t) (SOVABench paper, Section 4, Eq. 2).

An answer t becomes the set of its sentences, split(t) = {s | s in sentence_split(l), l in line_split(t)}, each
embedded on its own (Eq. 2): ``split(text)`` splits it into lines, then each line into sentences with NLTK's
English Punkt model, strips each piece and drops the empty ones. An answer with no sentence at all becomes one
empty sentence, so every item keeps at least one embedding. (The cache of splits is ``sova_lib.encoder.SplitCache``,
beside the cache of the sentences' vectors.)
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["NLTK_DATA", "PUNKT_ENGLISH", "SPLIT_RULES", "split"]


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
    pieces = [s.strip() for line in text.splitlines() for s in _tokenizer().tokenize(line)]
    return [p for p in pieces if p] or [""]


#: Version of the rules in ``split`` (lines first, strip, drop empty pieces, ``[""]`` for none): raise it whenever
#: they change, so that cached splits (``sova_lib.encoder.SplitCache``) are made again.
SPLIT_RULES = 1

#: The English ``punkt_tab`` parameters ship with the package and are the ones the splitter reads, so splitting
#: works offline and gives the same sentences on every machine. The folder is appended to ``nltk.data.path`` and
#: never replaces a user's own data for other NLTK uses.
NLTK_DATA = str(resources.files("sova_lib") / "data" / "nltk_data")
PUNKT_ENGLISH = Path(NLTK_DATA) / "tokenizers" / "punkt_tab" / "english"


@lru_cache(maxsize=1)
def _tokenizer():
    """NLTK's Punkt tokenizer with the vendored English parameters (importing NLTK takes seconds: once, here)."""
    import nltk
    from nltk.data import FileSystemPathPointer
    from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

    if NLTK_DATA not in nltk.data.path:
        nltk.data.path.append(NLTK_DATA)
    return PunktSentenceTokenizer(load_punkt_params(FileSystemPathPointer(str(PUNKT_ENGLISH))))
