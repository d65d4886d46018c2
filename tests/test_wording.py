"""Counts in words agree with the count."""
import re

import numpy as np
import pytest

from sova_lib.benchmarks.muvr.fusion import _positions
from sova_lib.similarity import ItemVectors
from sova_lib.wording import counted, kinds_line


def test_one_takes_the_singular_and_every_other_count_the_plural():
    assert counted(1, "query has", "queries have") == "1 query has"
    assert [counted(n, "query has", "queries have") for n in (0, 2, 11)] == [
        "0 queries have", "2 queries have", "11 queries have"]


def test_failures_by_kind_keep_their_order_and_show_the_first_ids_of_each():
    assert kinds_line({"decode": [4, 7, 9, 12], "refused": [5]}) == "4 decode (4, 7, 9, ...); 1 refused (5)"
    assert kinds_line({"size mismatch": [3, 1, 2]}, examples=3) == "3 size mismatch (3, 1, 2)"
    assert kinds_line({"b": ["x", "y"], "a": ["z"]}, examples=1) == "2 b (x, ...); 1 a (z)"
    assert kinds_line({}) == ""


@pytest.mark.parametrize("asked, message", [(["a", "x"], "1 query has no text vectors (e.g. ['x'])"),
                                            (["x", "y"], "2 queries have no text vectors (e.g. ['x', 'y'])")])
def test_a_muvr_error_counts_in_words_that_agree(asked, message):
    items = ItemVectors(ids=np.array(["a"]), owner=np.array([0]), vectors=np.ones((1, 2), dtype=np.float32))
    with pytest.raises(ValueError, match=re.escape(message)):
        _positions(items, asked, "text")
