"""The harness's spreadsheet round trip of the answers, which official scoring reproduces before parsing.

Every adapter of the harness puts a task's answers in a ``prediction``
column, writes it to an ``.xlsx`` and reads it back before its evaluator
parses a single answer (``adapter_*.py``, ``dump(pred_df, tmp_pred_path)``
then ``ds.evaluate(tmp_pred_path)``; ``vlmeval/smp/file.py:154``
``data.to_excel(f, index=False, engine='xlsxwriter')`` and ``:252``
``pd.read_excel(f)``, which reads through openpyxl). The harness installs
these libraries unpinned; the rules below are those of pandas 3.1.1,
XlsxWriter 3.3.1 and openpyxl 3.1.5 (the registry's current releases), and
are checked there against the libraries themselves on thousands of strings.
Applied to one answer in the order they act (``read_back``):

1. An empty answer is written as a blank cell, read back as missing
   (XlsxWriter ``Worksheet._write_token_as_string``).
2. A formula: an answer starting with ``=``, or starting with ``{=`` and
   ending with ``}``, is written as a formula whose cached value is 0, and
   read back as the number 0 (``strings_to_formulas`` is on by default;
   ``Worksheet._write_formula``, ``value=0``; openpyxl reads the cached
   value, ``load_workbook(data_only=True)``).
3. A link: an answer holding ``:`` that starts with ``http://``,
   ``https://``, ``ftp://``, ``ftps://``, ``mailto:``, ``internal:``,
   ``external:`` or ``file://`` is written as a hyperlink whose text is
   what the cell keeps (``strings_to_urls``; ``Worksheet._write_url``,
   ``xlsxwriter.url.Url._parse_url``): ``mailto:`` and ``internal:`` lose
   that prefix; ``file://`` and ``external:`` become the file path with
   ``/`` written ``\\``; other links stay as written. A link whose part
   before the first ``#`` or after it is longer than 2,079 UTF-16 units,
   and every link after the 65,530th of the file, are not written at all
   (missing on reading).
4. Text longer than 32,767 UTF-16 units is cut there, never inside a
   character above U+FFFF (``Worksheet._write_string``, ``_utf16_truncate``).
5. Escapes (XlsxWriter ``XMLwriter._escape_control_characters``): a text
   ``_xHHHH_`` (four hex digits) is written ``_x005F_xHHHH_``; each control
   character U+0000-U+0008 and U+000B-U+001F becomes ``_xHHHH_`` (``\\r``
   is ``_x000D_``; tab and line feed stay); U+FFFE and U+FFFF become
   ``_xFFFE_`` and ``_xFFFF_``.
6. openpyxl reads the text without undoing those escapes, but deletes every
   ``x005F_`` in it (``openpyxl/reader/strings.py``, ``read_string_table``).
7. pandas reads a cell whose whole text is one of its default missing-value
   strings (``MISSING_TEXTS``: "", "None", "N/A", "NA", "null", "nan",
   "<NA>", "#N/A", ...) as missing (``read_excel``, ``na_values``).

A read-back value is a string, ``None`` (missing) or 0 (a formula). pandas
also turns a column whose every value is a number or ``True``/``False``
into numbers or booleans (``_infer_types``); no evaluator reads an answer
from such a value other than it reads the written text (where one does not
stop, as the temporal and dense-captioning evaluators do on any non-text
value), so that column-wide rule is left out. The evaluators read a missing
answer as no answer (``pd.isna``, or ``str`` -> ``"nan"``, which no parser
reads) and the formula's 0 through ``str`` (``"0"``), as ``round_trip``
gives them. Answers that make the spreadsheet step itself fail (a lone surrogate,
a link or formula holding a control character, a ``file://`` link without a
path) stop the harness's whole task and have no official value; the rules
are applied to them all the same.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["MISSING_TEXTS", "read_back", "round_trip"]

#: The texts pandas reads as a missing value (its default ``na_values``, ``pandas._libs.parsers.STR_NA_VALUES``).
MISSING_TEXTS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
    "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})

_LINK = re.compile(r"(?:ftp|http)s?://|mailto:|(?:in|ex)ternal:|file://")
_MAX_LINK = 2079  # Workbook(max_url_length=2079)
_MAX_LINKS = 65530  # hyperlinks per worksheet
_MAX_TEXT = 32767  # characters (UTF-16 units) per cell
_ESCAPE_LIKE = re.compile(r"(_x[0-9a-fA-F]{4}_)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


def _utf16_length(text: str) -> int:
    return len(text) + sum(ord(c) > 0xFFFF for c in text)


def _cut(text: str, limit: int = _MAX_TEXT) -> str:
    """``text`` cut to at most ``limit`` UTF-16 units, never inside a character (rule 4)."""
    units = 0
    for k, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return text[:k]
    return text


def _link_text(text: str) -> str:
    """The text a hyperlink cell keeps (rule 3)."""
    if text.startswith(("mailto:", "internal:")):
        return text.partition(":")[2]
    if text.startswith(("file://", "external:")):
        path = text.replace("external:", "file:///", 1).replace("file:///", "", 1).replace("file://", "", 1)
        return path.replace("/", "\\")
    return text


def _formula(text: str) -> bool:
    return text.startswith("=") or (text.startswith("{=") and text.endswith("}"))


def _link(text: str) -> bool:
    """Whether the answer goes to the hyperlink writer (rule 3)."""
    return not _formula(text) and ":" in text and _LINK.match(text) is not None


def _too_long(link: str) -> bool:
    before, _, after = link.partition("#")
    return _utf16_length(before) > _MAX_LINK or _utf16_length(after) > _MAX_LINK


def read_back(text: str, links_before: int = 0) -> str | int | None:
    """What the harness's spreadsheet gives back for the answer ``text`` (rules 1-7 of the module text).

    ``links_before``: hyperlinks already written above it in the file.
    Examples: ``"B\\r\\n"`` -> ``"B_x000D_\\n"``; ``"N/A"`` -> ``None``;
    ``"=B"`` -> ``0``; ``"mailto:a@b"`` -> ``"a@b"``.
    """
    if _formula(text):
        return 0
    if _link(text):
        if _too_long(text) or links_before >= _MAX_LINKS:
            return None
        text = _link_text(text)
    text = _ESCAPE_LIKE.sub(r"_x005F\1", _cut(text))
    text = _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", text)
    text = text.replace("\ufffe", "_xFFFE_").replace("\uffff", "_xFFFF_").replace("x005F_", "")
    return None if text in MISSING_TEXTS else text  # "" among them: an empty answer is a blank cell (rule 1)


def round_trip(answers: Mapping[str, str]) -> dict[str, str | None]:
    """Answer id -> the text each evaluator parses after the round trip: ``None`` where ``read_back`` gives a
    missing value, else ``str`` of what it gives (a formula's 0 is ``"0"``).

    ``answers`` in the submission's order (the order the spreadsheet's rows
    are written, which only the hyperlink limit depends on). A value that is
    not text (no harness answer is) is passed through unchanged.
    """
    out: dict[str, str | None] = {}
    links = 0
    for key, text in answers.items():
        if not isinstance(text, str):
            out[key] = text
            continue
        value = read_back(text, links)
        out[key] = None if value is None else str(value)
        links += _link(text) and not _too_long(text)  # a link past the limit still counts (Worksheet.hlink_count)
    return out
