"""Choice sentences of the image tasks (SOVABench paper, Section 5.1, Table 3).

Every image-task item is a multiple choice between declarative sentences; the
answer is the sentence closest to the image's description. The datasets do
not all ship such sentences, so they are built here:

``vsr_choices(caption, relation)``
    VSR gives one caption and a true/false label. The two choices are the
    caption and its negation, made by negating the caption's verb: "is X" /
    "are X" becomes "is not X" / "are not X"; "contains", "consists of" and
    "has as a part" become "does not contain", "does not consist of" and
    "does not have as a part". The negation is true exactly when the caption
    is false, so a true caption's answer is choice 0 and a false caption's is
    choice 1 (an opposite relation, "left of" -> "right of", is not used: a
    false "left of" caption does not make "right of" true). The paper does not
    say how it built VSR's two sentences; this is this package's construction.
``number_choices(caption, number, numbers)``
    CountBench: the caption's number word replaced by every number word of
    ``numbers`` (two .. ten by default), capitalisation kept.
``visual7w_count_sentence(question, option)``
    Visual7W-Count: a fixed template, "How many dogs are on the bed?" with
    option "Two." gives "Two dogs are on the bed.". These template sentences
    are not the paper's ChatGPT-written sentences, which were not published;
    like those, the four sentences of an item differ only in their number.
"""
from __future__ import annotations

import re

__all__ = ["NUMBER_WORDS", "negate_caption", "number_choices", "visual7w_count_sentence", "vsr_choices"]

#: Number words one .. ten, by value.
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
                9: "nine", 10: "ten"}

#: Verbs of VSR relations that are not introduced by "is"/"are", and their negation.
_VERB_NEGATIONS = {"contains": "does not contain", "consists of": "does not consist of",
                   "has as a part": "does not have as a part"}


def negate_caption(caption: str, relation: str) -> str:
    """The negation of a VSR caption "The <subj> is <relation> the <obj>." (see the module docstring).

    Raises ``ValueError`` when the caption holds neither "is/are <relation>"
    nor one of the verbs "contains", "consists of", "has as a part".
    """
    match = re.search(r"\b(is|are)\s+" + re.escape(relation) + r"\b", caption)
    if match:
        verb = match.group(1)
        return caption[:match.start()] + f"{verb} not {relation}" + caption[match.end():]
    for verb, negated in _VERB_NEGATIONS.items():
        match = re.search(r"\b" + re.escape(verb) + r"\b", caption)
        if match:
            return caption[:match.start()] + negated + caption[match.end():]
    raise ValueError(f"caption {caption!r} holds no 'is/are {relation}' and no verb to negate")


def vsr_choices(caption: str, relation: str, label: int) -> tuple[tuple[str, str], int]:
    """``((caption, its negation), answer)``: answer 0 when ``label`` is 1 (true caption), else 1."""
    if label not in (0, 1):
        raise ValueError(f"label must be 0 or 1, got {label!r}")
    return (caption, negate_caption(caption, relation)), 0 if label == 1 else 1


def _with_case(word: str, like: str) -> str:
    if like.isupper():
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word


def number_choices(caption: str, number: int, numbers=range(2, 11)) -> tuple[tuple[str, ...], int]:
    """``(choices, answer)``: ``caption`` with its number word replaced by each of ``numbers``.

    Every whole-word occurrence of the number word (any case) is replaced,
    keeping its capitalisation. ``answer`` is the position of ``number`` in
    ``numbers``. Raises ``ValueError`` when the word is absent or ``number``
    is not among ``numbers``.
    """
    numbers = [int(n) for n in numbers]
    if number not in numbers:
        raise ValueError(f"number {number} is not among the candidates {numbers}")
    unknown = [n for n in numbers if n not in NUMBER_WORDS]
    if unknown:
        raise ValueError(f"no number word for {unknown}; candidates must lie in 1..10")
    pattern = re.compile(r"\b" + NUMBER_WORDS[number] + r"\b", re.IGNORECASE)
    if not pattern.search(caption):
        raise ValueError(f"caption {caption!r} does not hold the number word {NUMBER_WORDS[number]!r}")
    choices = tuple(pattern.sub(lambda m, n=n: _with_case(NUMBER_WORDS[n], m.group(0)), caption) for n in numbers)
    return choices, numbers.index(number)


def visual7w_count_sentence(question: str, option: str) -> str:
    """The template sentence of one option of a "how many" question (see the module docstring).

    "How many X?" becomes "<Option> X." (the option's final full stop dropped,
    its first letter capitalised). Raises ``ValueError`` for a question that
    does not start with "how many" or an empty option.
    """
    match = re.match(r"\s*how\s+many\s+(.*?)\s*[?.]?\s*$", question, re.IGNORECASE | re.DOTALL)
    if not match or not match.group(1):
        raise ValueError(f"question {question!r} is not a 'how many ...?' question")
    value = option.strip().rstrip(".").strip()
    if not value:
        raise ValueError(f"empty option for question {question!r}")
    return f"{value[:1].upper()}{value[1:]} {match.group(1)}."
