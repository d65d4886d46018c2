import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from sova_lib.benchmarks.sovabench.splits import load_split
from sova_lib.evaluation import CoverageError, baseline, evaluate, oracle_texts
from sova_lib.item_vectors import embed_descriptions
from sova_lib.protocols import PROTOCOLS, get_protocol
from sova_lib.similarity import ItemVectors, l2_normalize
from tests.helpers_ranking import OneHotEncoder, expected_ap_by_groups

PAPER_RANDOM = {"inter-pair": 3.4, "inter-pair-constrained": 23.7, "intra-pair": 50.3}
# Exact values; 24.06 for the constrained protocol (confirmed by simulation) rounds to 24.1.
EXPECTED_RANDOM = {"inter-pair": 3.50, "inter-pair-constrained": 24.06, "intra-pair": 51.20}


@pytest.mark.parametrize("protocol", sorted(PAPER_RANDOM))
def test_prevalence_is_the_papers_random_row(protocol):
    assert round(baseline(protocol, "prevalence").value, 1) == PAPER_RANDOM[protocol]


@pytest.mark.parametrize("protocol", sorted(EXPECTED_RANDOM))
def test_random_ranking_expected_ap(protocol):
    assert round(baseline(protocol, "random-ranking").value, 2) == EXPECTED_RANDOM[protocol]


def _random_items(ids, rng, dim=8):
    counts = rng.integers(1, 4, len(ids))
    owner = np.repeat(np.arange(len(ids)), counts)
    return ItemVectors(np.asarray(ids), owner, l2_normalize(rng.normal(size=(owner.size, dim))))


def _padded_max_similarity(items):
    """Independent max-similarity: items padded to (n, L, D), padding masked with -inf."""
    n, dim = len(items.ids), items.vectors.shape[1]
    width = int(np.bincount(items.owner).max())
    padded = np.zeros((n, width, dim))
    mask = np.zeros((n, width), bool)
    for k in range(n):
        rows = items.vectors[items.owner == k]
        padded[k, :len(rows)] = rows
        mask[k, :len(rows)] = True
    sims = np.einsum("iad,jbd->ijab", padded, padded)
    sims[~np.broadcast_to(mask[:, None, :, None] & mask[None, :, None, :], sims.shape)] = -np.inf
    return sims.max(axis=(2, 3))


def test_constant_scorer_with_tie_aware_ap_equals_random_ranking():
    ids = get_protocol("intra-pair").ids()
    same = ItemVectors(ids, np.arange(len(ids)), np.ones((len(ids), 4), np.float32) / 2)
    tied = evaluate("intra-pair", same, ties="expected")
    assert tied.value == pytest.approx(baseline("intra-pair", "random-ranking").value, abs=1e-9)
    assert tied.per_pair == pytest.approx(baseline("intra-pair", "random-ranking").per_pair, abs=1e-9)


@pytest.mark.parametrize("protocol", sorted(EXPECTED_RANDOM))
def test_constant_describer_scores_exactly_a_random_ranking_by_default(protocol):
    """One sentence for every clip: the default rule gives the random-ranking value, not the gallery order's."""
    texts = {i: "A car is parked." for i in get_protocol(protocol).ids().tolist()}
    result = evaluate(protocol, embed_descriptions(texts, OneHotEncoder()))
    random = baseline(protocol, "random-ranking")
    assert result.ties == "expected"
    assert result.value == pytest.approx(random.value, abs=1e-9)
    assert round(result.value, 2) == EXPECTED_RANDOM[protocol]
    assert result.per_class == pytest.approx(random.per_class, abs=1e-9)
    # every item ties: the spread runs from all relevant first (AP 1) to all relevant last (i / (N - R + i))
    task_means = []
    for task in get_protocol(protocol).tasks():
        rel, n = (task.relevance() & task.valid()).sum(axis=1), task.valid().sum(axis=1)
        task_means.append(np.mean([np.mean(np.arange(1, r + 1) / (m - r + np.arange(1, r + 1)))
                                   for r, m in zip(rel, n)]))
    assert result.tie_spread == pytest.approx(100 - 100 * np.mean(task_means), abs=1e-9)
    assert result.to_json()["tie_spread"] == result.tie_spread


def test_constant_describer_leaks_labels_only_under_the_gallery_order_rule():
    texts = {i: "A car is parked." for i in get_protocol("inter-pair").ids().tolist()}
    items = embed_descriptions(texts, OneHotEncoder())
    stable = evaluate("inter-pair", items, ties="stable")
    assert stable.ties == "stable" and round(stable.value, 2) == 23.95  # the benchmark order, sorted by class
    assert round(evaluate("inter-pair", items).value, 2) == 3.50


def test_describer_that_ties_within_half_the_classes_gets_its_exact_expected_ap():
    """Clips of three of the six pairs all say the same sentence; the others name their pair."""
    protocol = get_protocol("inter-pair-constrained")
    clips = protocol.clips()
    pairs = sorted({c.pair for c in clips})
    vague = set(pairs[::2])
    texts = {c.index: "A vehicle moves." if c.pair in vague else f"The action is {c.pair}." for c in clips}
    encoder = OneHotEncoder()
    result = evaluate(protocol, embed_descriptions(texts, encoder))
    # Independent: scores are 1 for the same sentence and 0 otherwise; rank by hand, group by group.
    sentence = np.array([texts[c.index] for c in clips])
    label = np.array([c.pair for c in clips])
    per_query = []
    for q in range(len(clips)):
        keep = np.arange(len(clips)) != q
        scores = (sentence[keep] == sentence[q]).astype(float)
        per_query.append(expected_ap_by_groups(scores, label[keep] == label[q]))
    assert result.value == pytest.approx(100 * np.mean(per_query), abs=1e-9)
    assert 100 * np.mean(per_query) > baseline(protocol, "random-ranking").value + 10
    assert result.per_query == pytest.approx(dict(zip([c.index for c in clips], per_query)), abs=1e-12)
    assert result.tie_spread > 1


def test_prevalence_cross_check_by_counting():
    clips = load_split("interpair_queries")
    pairs = [c.pair for c in clips]
    expected = 100 * np.mean([pairs.count(p) / len(pairs) for p in pairs])
    assert baseline("inter-pair-constrained", "prevalence").value == pytest.approx(expected, abs=1e-9)


def test_inter_pair_constrained_against_naive_sklearn():
    rng = np.random.default_rng(11)
    clips = load_split("interpair_queries")
    items = _random_items([c.index for c in clips], rng)
    result = evaluate("inter-pair-constrained", items)
    sim = _padded_max_similarity(items)[::7]
    pairs = np.array([c.pair for c in clips])
    aps = []
    for row, i in enumerate(range(0, len(clips), 7)):
        keep = np.arange(len(clips)) != i
        aps.append(average_precision_score(pairs[keep] == pairs[i], sim[row][keep]))
        # float32 products may swap scores closer than ~1e-7: a swap moves AP by < 1e-5 here
        assert result.per_query[clips[i].index] == pytest.approx(aps[-1], abs=1e-5)
    assert result.n_queries == 1423


def test_intra_pair_against_naive_per_pair():
    rng = np.random.default_rng(2)
    clips = load_split("intrapair")
    items = _random_items([c.index for c in clips], rng)
    result = evaluate("intra-pair", items)
    pair_maps = []
    for pair in sorted({c.pair for c in clips}):
        members = [k for k, c in enumerate(clips) if c.pair == pair]
        sim = _padded_max_similarity(items.select(np.array(members)))
        lab = np.array([clips[k].label for k in members])
        aps = [average_precision_score(np.delete(lab, a) == lab[a], np.delete(sim[a], a))
               for a in range(len(members))]
        pair_maps.append(np.mean(aps))
        assert result.per_pair[pair] == pytest.approx(100 * np.mean(aps), abs=1e-4)
    assert result.value == pytest.approx(100 * np.mean(pair_maps), abs=1e-4)
    assert result.metric == "Pair-mAP" and result.n_queries == 2300


def test_oracle_is_perfect_on_every_protocol(encoder):
    for protocol in PROTOCOLS:
        result = baseline(protocol, "oracle", encoder=encoder)
        assert result.value == pytest.approx(100.0, abs=1e-9), protocol
        assert all(v == pytest.approx(100.0) for v in result.per_class.values())
    texts = oracle_texts("intra-pair")
    assert texts[next(c.index for c in load_split("intrapair") if c.label == "opening trunk")] == "opening trunk"


def test_coverage_errors_and_notes():
    rng = np.random.default_rng(0)
    ids = get_protocol("inter-pair-constrained").ids()
    items = _random_items(ids[3:], rng)
    counted = evaluate("inter-pair-constrained", items)  # the default: the 3 missing clips count as failures
    assert counted.n_queries == 1423 and counted.n_missing == 3 and counted.missing_rule == "failures"
    assert any("3 of the 1423 clips of protocol 'inter-pair-constrained' are missing" in n and "failure" in n
               for n in counted.notes)
    partial = evaluate("inter-pair-constrained", items, allow_missing=True)
    assert partial.n_queries == 1420 and partial.n_missing == 3 and partial.missing_rule == "left out"
    assert any("left out" in n for n in partial.notes)
    assert counted.value_without_missing == partial.value_without_missing == partial.value > counted.value
    assert "3 clip(s) missing from the input, counted as failures; with them left out: mAP = " in counted.text(False)
    intra_only = sorted(set(get_protocol("intra-pair").ids()) - set(ids))[:4]
    extra = np.concatenate([ids, intra_only, [99999999]])
    result = evaluate("inter-pair-constrained", _random_items(extra, rng))
    assert "4 input id(s) are clips of SOVABench outside protocol 'inter-pair-constrained' and were ignored" in \
        result.notes
    assert any("1 input id(s) are not SOVABench clips" in n and "99999999" in n for n in result.notes)


def test_input_of_other_ids_is_explained():
    rng = np.random.default_rng(1)
    items = ItemVectors(np.array(["clip_a", "clip_b"], dtype=object), np.arange(2), l2_normalize(rng.normal(size=(2, 4))))
    with pytest.raises(CoverageError, match=r"2 input id\(s\) are not SOVABench clip ids at all \(e.g. \['clip_a', 'clip_b'\]\)"):
        evaluate("intra-pair", items)
    ids = get_protocol("inter-pair-constrained").ids()
    result = evaluate("inter-pair-constrained", _random_items(np.concatenate([ids, [99999999]]), rng))
    assert not any("outside protocol" in n for n in result.notes)


def test_bootstrap_interval_is_reproducible():
    rng = np.random.default_rng(4)
    items = _random_items(get_protocol("intra-pair").ids(), rng)
    a = evaluate("intra-pair", items, bootstrap=200, seed=1)
    b = evaluate("intra-pair", items, bootstrap=200, seed=1)
    assert a.ci == b.ci and a.ci[0] < a.value < a.ci[1]


def _direction_items(ids):
    """The quickstart clips' vectors: every forward clip on one axis, every reversed clip on another."""
    vectors = np.array([[0.0, 1.0] if str(i).endswith("reversed") else [1.0, 0.0] for i in ids])
    return ItemVectors(np.asarray(ids), np.arange(len(ids)), vectors)


def test_missing_clips_count_as_failures_by_hand():
    """Labels F R F R F R; a forward clip scores 1 with forward clips and 0 with reversed ones."""
    ids = get_protocol("quickstart-direction").ids()
    # Clip 5 (R) missing. Queries 0, 2, 4 (F): both other F first, AP 1. Queries 1, 3 (R): the other R scored
    # first, the missing R last of 5: (1 + 2/5) / 2 = 0.7. Query 5: missing, AP 0. mAP = (3 + 1.4) / 6.
    one = evaluate("quickstart-direction", _direction_items(ids[:5]), dtype=np.float64)
    assert one.value == pytest.approx(100 * 4.4 / 6, abs=1e-12) and one.n_missing == 1 and one.n_queries == 6
    assert one.per_class == pytest.approx({"forward": 100.0, "reversed": 100 * 1.4 / 3}, abs=1e-12)
    assert one.value_without_missing == pytest.approx(100.0) and one.per_query[ids[5]] == 0.0
    # Clips 4 (F) and 5 (R) missing: every present query has one relevant item scored first of three and one in the
    # missing block of two, 4th or 5th: (1 + (2/4 + 2/5) / 2) / 2 = 0.725 (optimistic 0.75, pessimistic 0.7).
    two = evaluate("quickstart-direction", _direction_items(ids[:4]), dtype=np.float64)
    assert two.value == pytest.approx(100 * 4 * 0.725 / 6, abs=1e-12) and two.n_missing == 2
    assert two.tie_spread == pytest.approx(100 * 4 * (0.75 - 0.7) / 6, abs=1e-12)
    for ties, ap in (("optimistic", 0.75), ("pessimistic", 0.7), ("stable", 0.725)):
        assert evaluate("quickstart-direction", _direction_items(ids[:4]), ties=ties,
                        dtype=np.float64).value == pytest.approx(100 * 4 * ap / 6, abs=1e-12), ties
    left_out = evaluate("quickstart-direction", _direction_items(ids[:4]), allow_missing=True, dtype=np.float64)
    assert left_out.value == left_out.value_without_missing == two.value_without_missing == pytest.approx(100.0)
    assert left_out.n_queries == 4 and left_out.missing_rule == "left out" and two.missing_rule == "failures"


def test_missing_clips_against_a_full_ranking_with_the_missing_last():
    """Cross-check: the missing clips given one shared vector that scores below every present clip (present
    vectors have no negative entry, the shared one only negative ones) score, query by query, what counting
    them as failures scores."""
    rng = np.random.default_rng(3)
    protocol = get_protocol("intra-pair")
    ids = protocol.ids()
    keep = rng.random(ids.size) > 0.02
    counts = rng.integers(1, 4, int(keep.sum()))
    owner = np.repeat(np.arange(counts.size), counts)
    vectors = l2_normalize(np.abs(rng.normal(size=(owner.size, 6))))
    counted = evaluate(protocol, ItemVectors(ids[keep], owner, vectors), dtype=np.float64)
    missing_ids = ids[~keep]
    full = ItemVectors(np.concatenate([ids[keep], missing_ids]),
                       np.concatenate([owner, counts.size + np.arange(missing_ids.size)]),
                       np.vstack([vectors, np.full((missing_ids.size, 6), -1 / np.sqrt(6))]))
    ranked = evaluate(protocol, full, dtype=np.float64)
    assert counted.n_missing == missing_ids.size > 0 and ranked.n_missing == 0
    lost = set(missing_ids.tolist())
    for key, value in counted.per_query.items():
        assert value == (0.0 if key in lost else pytest.approx(ranked.per_query[key], abs=1e-12)), key


@pytest.mark.parametrize("protocol", sorted(EXPECTED_RANDOM) + ["two-class", "quickstart-direction"])
@pytest.mark.parametrize("allow_missing", [False, True])
def test_a_constant_describer_on_a_subset_scores_exactly_its_chance_line(protocol, allow_missing):
    """The chance line printed beside a score is for the same clips and the same missing rule: a describer that
    says the same of every clip it covers scores exactly it (and, with the clips left out, its second value)."""
    ids = get_protocol(protocol).ids()
    rng = np.random.default_rng(3)
    keep = np.sort(rng.choice(ids.size, size=max(3, int(0.6 * ids.size)), replace=False))
    texts = {i: "A car is there." for i in ids[keep].tolist()}
    result = evaluate(protocol, embed_descriptions(texts, OneHotEncoder()), allow_missing=allow_missing)
    assert result.n_missing == ids.size - keep.size > 0
    assert result.value == pytest.approx(result.chance, abs=1e-9)
    assert result.value_without_missing == pytest.approx(result.chance_without_missing, abs=1e-9)
    full = baseline(protocol, "random-ranking").value
    assert result.chance != pytest.approx(full, abs=1e-6)  # the protocol's own chance line is for other clips
    line = result.text().splitlines()[-1]
    assert line.startswith(f"  a random ranking of the same clips scores {result.value:.2f} ")
    assert result.to_json()["chance"] == result.chance
    record = result.to_record(kind="description cache", source="constant")
    assert record["chance"] == round(result.value, 2)


@pytest.mark.parametrize("protocol", sorted(EXPECTED_RANDOM) + ["two-class", "quickstart-direction"])
def test_the_chance_of_every_clip_is_the_random_ranking_baseline(protocol):
    from sova_lib.evaluation import chance

    assert chance(protocol) == pytest.approx(baseline(protocol, "random-ranking").value, abs=1e-9)
    assert chance(protocol, allow_missing=True) == pytest.approx(chance(protocol), abs=1e-12)


def test_chance_of_a_subset_by_hand():
    # quickstart-direction: 6 clips, 3 forward, 3 reversed; each query's gallery is the 5 others (2 relevant).
    # Drop one forward clip (the first). Left out: a forward query ranks 4 clips with 1 relevant: AP (1/4)(1 + 1/2 +
    # 1/3 + 1/4) = 25/48; a reversed query ranks 4 with 2 relevant: (1/4) sum_k (1 + (k-1)/3)/k = 0.6458333.
    from sova_lib.evaluation import chance

    protocol = get_protocol("quickstart-direction")
    clips = protocol.clips()
    present = np.ones(len(clips), bool)
    first_forward = next(k for k, c in enumerate(clips) if protocol.query_class(c) == "forward")
    present[first_forward] = False
    reversed_ap = sum((1 + (k - 1) / 3) / k for k in range(1, 5)) / 4
    left_out = (2 * 25 / 48 + 3 * reversed_ap) / 5
    assert chance(protocol, present, allow_missing=True) == pytest.approx(100 * left_out, abs=1e-9)
    # as failures: the missing query scores 0; a forward query's missing relevant clip ranks 5th, after the 4
    # present ones in random order (1 relevant among them): E[1/pos] + 2/5 over 2 relevant
    forward_ap = (25 / 48 + 2 / 5) / 2
    failures = (0 + 2 * forward_ap + 3 * reversed_ap) / 6
    assert chance(protocol, present) == pytest.approx(100 * failures, abs=1e-9)


def test_a_query_left_without_a_relevant_clip_is_counted_in_words_that_agree():
    """quickstart-direction with two of its three forward clips left out: the remaining forward query has no
    relevant clip, and the note counts it as one query, not "1 quer(ies)"."""
    protocol = get_protocol("quickstart-direction")
    forward = [i for i, c in zip(protocol.ids().tolist(), protocol.clips()) if protocol.query_class(c) == "forward"]
    texts = {i: f"clip {i}" for i in protocol.ids().tolist() if i not in forward[1:]}
    result = evaluate(protocol.name, embed_descriptions(texts, OneHotEncoder()), allow_missing=True)
    skipped = [n for n in result.notes if "no relevant item" in n]
    assert len(skipped) == 1 and skipped[0].startswith("1 query of task ") and \
        skipped[0].endswith(" has no relevant item and was skipped"), result.notes


def test_a_tie_spread_above_one_point_is_warned_of_naming_the_rule():
    from sova_lib.evaluation import TIE_WARNING_POINTS, Result

    def warned(spread):
        return Result("intra-pair", "Pair-mAP", 50.0, {}, 4, ties="expected", tie_spread=spread).tie_warning()

    assert TIE_WARNING_POINTS == 1.0 and warned(None) is None and warned(1.0) is None
    assert warned(1.25) == ("ties between clip scores move Pair-mAP by up to 1.25 points (optimistic minus "
                            "pessimistic); the score uses the 'expected' tie rule")
