"""The synthetic demonstration's texts and cache; notebook 04_errors analyses them (tests/test_notebooks.py)."""
import numpy as np
import pytest

from sova_lib.benchmarks.sovabench import labels
from sova_lib.protocols import get_protocol
from tests.synthetic_cache import write_synthetic_cache

from paper import error_analysis as ea


def test_synthetic_texts_are_reproducible_and_do_what_they_say():
    a, made_a = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.1, rng=np.random.default_rng(7))
    b, _ = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.1, rng=np.random.default_rng(7))
    c, _ = ea.synthetic_texts("intra-pair", swap_fraction=0.3, generic_fraction=0.1, rng=np.random.default_rng(8))
    assert a == b and a != c
    assert len(a) == 2300 and set(a) == set(get_protocol("intra-pair").ids().tolist())
    for row in made_a.itertuples():
        expected = {"correct": row.action, "temporal misunderstanding": labels.opposite_of(row.action),
                    "under-description": ea.GENERIC_SENTENCE}[row.constructed_as]
        assert row.text == expected == a[row.id]
    share = made_a["constructed_as"].value_counts(normalize=True)
    assert share["temporal misunderstanding"] == pytest.approx(0.3, abs=0.03)
    assert share["under-description"] == pytest.approx(0.1, abs=0.02)


def test_synthetic_texts_reject_bad_fractions():
    with pytest.raises(ValueError, match="sum to at most 1"):
        ea.synthetic_texts(swap_fraction=0.8, generic_fraction=0.3, rng=np.random.default_rng(0))


def test_synthetic_cache_is_marked_and_content_addressed(tmp_path):
    from sova_lib.report.cache_scan import find_description_caches

    folder = write_synthetic_cache(tmp_path, {1: "a", 2: "b"}, description="two texts")
    again = write_synthetic_cache(tmp_path, {1: "a", 2: "b"}, description="two texts")
    other = write_synthetic_cache(tmp_path, {1: "a", 2: "c"}, description="two texts")
    assert folder == again != other and folder.name.startswith("synthetic-demo__")
    (cache,) = [c for c in find_description_caches(tmp_path) if c.path == folder]
    assert cache.texts == {1: "a", 2: "b"} and cache.label == "synthetic demonstration (two texts)"
