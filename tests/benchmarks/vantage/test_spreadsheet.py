"""The harness's spreadsheet round trip, rule by rule (``spreadsheet.py``; each value by hand from the rule named).

The same rules were checked against pandas 3.1.1, XlsxWriter 3.3.1 and
openpyxl 3.1.5 themselves (``to_excel(engine='xlsxwriter')`` then
``read_excel``, as ``vlmeval/smp/file.py:154,252`` do) on these strings and
on 15,000 random ones.
"""
import pytest

from sova_lib.benchmarks.vantage.spreadsheet import MISSING_TEXTS, read_back, round_trip


@pytest.mark.parametrize("text", ["", "N/A", "n/a", "NA", "None", "nan", "NaN", "null", "NULL", "<NA>", "#N/A"])
def test_missing_value_texts(text):
    # rule 1 (a blank cell) and rule 7 (pandas' default na_values): read back as missing
    assert read_back(text) is None and text in MISSING_TEXTS and round_trip({"a": text}) == {"a": None}


@pytest.mark.parametrize("text", ["none", " NA", "N/A.", "Null", "-"])
def test_near_missing_texts_stay(text):
    assert read_back(text) == text  # only the whole cell equal to one of the strings is missing


@pytest.mark.parametrize("text", ["=B", "=", "{=1+2}", "=[100,100,300,300]"])
def test_formulas_read_back_as_zero(text):
    # rule 2: a formula's cached value is 0; the evaluators read it with str() -> "0"
    assert read_back(text) == 0 and round_trip({"a": text}) == {"a": "0"}


def test_control_characters():
    # rule 5: \r and the other C0 controls but tab and line feed become _xHHHH_; U+FFFE / U+FFFF likewise
    assert read_back("B\r\n") == "B_x000D_\n"
    assert read_back("\x0bB") == "_x000B_B"
    assert read_back("\x00Yes") == "_x0000_Yes"
    assert read_back("a\tb\nc\x1f") == "a\tb\nc_x001F_"
    assert read_back("\ufffe\uffff\x85\u2028") == "_xFFFE__xFFFF_\x85\u2028"
    assert read_back("{=1+2") == "{=1+2"  # no closing brace: no formula


def test_escape_like_text_and_x005f():
    # rule 5 writes "_x0041_" as "_x005F_x0041_"; rule 6 deletes "x005F_": back to "_x0041_"
    assert read_back("_x0041_") == "_x0041_"
    # a literal x005F_ is deleted outright; "_x005F_" is escaped to "_x005F_x005F_" and both go
    assert read_back("x005F_abc") == "abc"
    assert read_back("_x005F_") == "_"
    assert read_back("x005F_") is None  # nothing left: a blank text, missing (rule 7)


def test_length_limit_in_utf16_units():
    # rule 4: 32,767 UTF-16 units; a character above U+FFFF counts 2 and is never split
    assert read_back("a" * 40000) == "a" * 32767
    assert read_back("\U0001F600" * 20000) == "\U0001F600" * 16383
    assert read_back("a" * 32766 + "\U0001F600") == "a" * 32766


def test_links():
    # rule 3: the cell keeps the link's text
    assert read_back("mailto:a@b") == "a@b"
    assert read_back("internal:Sheet1!A1") == "Sheet1!A1"
    assert read_back("external:c:/foo") == "c:\\foo"
    assert read_back("file:///c:/x/y") == "c:\\x\\y"
    assert read_back("http://x.com/a b#c") == "http://x.com/a b#c"
    assert read_back("HTTP://x") == "HTTP://x" and read_back("see http://x") == "see http://x"  # not a link
    assert read_back("http://" + "a" * 2073) is None  # 2,080 units, over 2,079: not written
    assert read_back("http://" + "a" * 2072) == "http://" + "a" * 2072  # 2,079 units: written
    assert read_back("http://a#" + "b" * 2080) is None  # the anchor is too long: the link is not written


def test_link_limit_per_file():
    # rule 3: at most 65,530 links a worksheet; a too-long link is not counted, every other one is
    answers = {f"{k}": f"http://x/{k}" for k in range(65529)}
    answers.update({"long": "http://" + "a" * 3000, "last": "mailto:a", "over": "mailto:b", "text": "plain"})
    back = round_trip(answers)
    assert back["65528"] == "http://x/65528" and back["long"] is None
    assert back["last"] == "a" and back["over"] is None and back["text"] == "plain"
