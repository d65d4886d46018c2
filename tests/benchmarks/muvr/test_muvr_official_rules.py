"""The official loader's and evaluator's rules on one hand-worked partition (``fixtures.write_rules_case``).

Scores are exact by construction (``RULES_SCORES``; query ``text``: description vs. frame). The same values
came out of the official ``CuVR.evaluate`` / ``evaluate_tag`` (datasets/cuvr.py) run on these files with
these scores, ``topics="news"`` as evaluate_all_vlm_mul.py:206-212 calls them.
"""
from __future__ import annotations

import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.muvr import retrieval
from sova_lib.benchmarks.muvr.annotations import load_partition, parse_prompt
from sova_lib.benchmarks.muvr.features import npz_vectors

from .fixtures import write_partition, write_rules_case


@pytest.fixture
def case(tmp_path):
    npz = write_rules_case(tmp_path)
    return load_partition(tmp_path, "news"), npz_vectors(npz)


def test_queries_are_is_query_records_and_other_entries_are_skipped(case):
    """cuvr.py:100-101 (is_query == 1 and a queries_en record), 113-116 and 132-135 (entries of others skipped).

    q4 has is_query 0: not a query; its pos_all [x] and the entry of id 99999 (listing d) are skipped unread,
    so the gallery is what q1 and q2 list: {q1, a, q2} | {b, c}, in videos.json order.
    """
    part, _ = case
    assert [q.id for q in part.queries] == ["q1", "q2", "q3"]
    assert part.gallery == ("a", "b", "c", "q1", "q2")
    assert part.query("q3").positives is None
    notes = " | ".join(part.notes)
    assert "1 query of queries_en.json has no videos.json record with is_query 1" in notes
    assert "3 entries of query_rel_lists.json and query_tag_lists.json name no kept query (2 and 1)" in notes
    assert "1 query has no pos_all list" in notes


def test_split_filter(tmp_path):
    """cuvr.py:68-73: a queries_en record is kept when its split field equals the split ('all' keeps all)."""
    write_partition(tmp_path, videos=["a", "q1", "q2"], queries={"q1": "one", "q2": "two"},
                    positives={"q1": ["a"], "q2": ["a"]}, splits={"q1": "train", "q2": "test"})
    assert [q.id for q in load_partition(tmp_path, "news").queries] == ["q1", "q2"]
    part = load_partition(tmp_path, "news", split="test")
    assert [q.id for q in part.queries] == ["q2"]
    assert any("1 query of queries_en.json left out by the split filter 'test'" in n for n in part.notes)


def test_base_own_video_is_a_miss_other_query_videos_rank_and_uap_ranks_queries_without_pos_all(case):
    """calculate_mAP / calculate_uAP, cuvr.py:243-275 with all_db = get_database('news') (cuvr.py:171-174).

    q1: pos {q1, a, q2}, all in the gallery, so |G| = 3; ranked (own q1 left out): a .5 P, b .4, c .3, q2 .2 P
        -> AP = (1/1 + 2/4) / 3 = 1/2; R@k = 2/3.
    q2: pos {b, c}; b .6 P, c .45 P, a .1, q1 .05 -> AP 1, R@k 1. q3 (no pos_all) is not averaged:
        mAP = (1/2 + 1) / 2 = 3/4; R@k = (2/3 + 1) / 2 = 5/6.
    uAP: the 13 pairs of q1, q2 and q3 (q3's all negative) in one ranking:
        .7 N, .6 P, .5 P, .45 P, .4, .35, .3, .25, .2 P, .15, .1, .05, .05; 5 positives (q1's 3, q2's 2):
        (1/2 + 2/3 + 3/4 + 4/9) / 5 = (85/36) / 5 = 17/36.
    """
    part, vectors = case
    r = retrieval.evaluate_vectors([part], vectors, query="text")
    assert r.per_row == pytest.approx({"news/q1": 1 / 2, "news/q2": 1.0}, abs=1e-12)
    assert r.metrics["mAP"] == pytest.approx(75.0, abs=1e-12)
    assert r.metrics["uAP"] == pytest.approx(100 * 17 / 36, abs=1e-12)
    assert r.metrics["R@200"] == pytest.approx(100 * 5 / 6, abs=1e-12)
    # random ranking: q1 ranks 2 of its 3 positives among 4 videos, so E[AP] = (2/3) E[AP | 2 of 4]
    # = (2/3) (H_4 + (2-1)(4-H_4)/3) / 4 with H_4 = 25/12 -> (2/3)(25/12 + 23/36)/4 = (2/3)(98/144) = 49/108;
    # q2: 2 of 4 -> 49/72; mAP = (49/108 + 49/72)/2 = 245/432.
    rr = muvr.random_ranking([part])
    assert rr.metrics["mAP"] == pytest.approx(100 * 245 / 432, abs=1e-12)


@pytest.mark.parametrize("weight, expected", [
    # p = 0 (mode 0: base + 0 * T): q1 +blue [b, c] on a .5, b .4, c .3, q2 .2 -> (1/2 + 2/3)/2 = 7/12;
    #   -red [q2, x, q1]: x not in the gallery, q1 its own video (a miss), |G| = 2, q2 rank 4 -> (1/4)/2 = 1/8;
    #   +red -blue [a]: a first -> 1; q3 +blue [c] on a .7, c .35, b .25 -> 1/2. Mean (14+3+24+12)/96 = 53/96.
    (0.0, 53 / 96),
    # p = .3: +blue: b .4+.15 = .55 > a .53 > c .45 -> (1 + 2/3)/2 = 5/6; -red: a .41, b .34, c .27, q2 .02 -> 1/8;
    #   +red -blue: a .5+.3(.3-.1) = .56 first -> 1; q3 +blue: a .73, c .50, b .40 -> 1/2. (20+3+24+12)/96 = 59/96.
    (0.3, 59 / 96),
    # p = 1: +blue: b .9, c .8, a .6 -> 1; -red: a .2, b .2, c .2, q2 -.4 -> 1/8; +red -blue: a .7 vs b .1,
    #   c -.1, q2 .5 -> 1; q3: a .8, c .85, b .75 -> c first -> 1. (24+3+24+24)/96 = 75/96.
    (1.0, 75 / 96),
    # p = 2 (top-K, K = 2, cuvr.py:293-341): q1's two best base scores (a .5, b .4; own q1 at 0 not among them)
    #   get T alone, the rest base - 2. +blue: b .5, a .1, c -1.7, q2 -1.8 -> (1 + 2/3)/2 = 5/6; -red: b -.2,
    #   a -.3, c, q2 -> 1/8; +red -blue: a .2 first -> 1; q3 (a .7, c .35 top): c .5 > a .1 -> 1. 71/96.
    (2.0, 71 / 96),
])
def test_filter_follows_get_final_similarities(case, weight, expected):
    """evaluate_tag and get_final_similarities, cuvr.py:293-345,347-405 (positives intersected with the gallery).

    The query without pos_all (q3) is scored: evaluate_tag reads only tag_lists. R@k: +blue 1, -red 1/2
    (q1 is a miss), +red -blue 1, q3 1 -> 7/8 at every p.
    """
    part, vectors = case
    r = retrieval.evaluate_vectors([part], vectors, version="filter", query="text", tag_weight=weight)
    assert r.n_rows == 4
    assert r.metrics["mAP"] == pytest.approx(100 * expected, abs=1e-9)
    assert r.metrics["R@200"] == pytest.approx(100 * 7 / 8, abs=1e-12)
    assert any("1 listed positive is in no query_rel_lists.json list" in n for n in r.notes)


def test_prompts_parse_as_the_official_parse_expression():
    """cuvr.py:277-291: a leading AND/OR is a combination; otherwise ' +' / ' -' start conditions."""
    assert parse_prompt("AND +a +b") is None and parse_prompt("OR +a") is None
    assert parse_prompt("+a b") == ((1, "a b"),)
    assert parse_prompt("+a -b") == ((1, "a"), (-1, "b"))
    assert parse_prompt("+a-b c") == ((1, "a-b c"),)
    assert parse_prompt("+a AND +b") == ((1, "a AND"), (1, "b"))  # not skipped: 'AND' does not lead
    assert parse_prompt("no sign") == ()


def test_negative_tag_weight_is_refused(case):
    """The official get_final_similarities asserts mode >= 0 (cuvr.py:314)."""
    part, vectors = case
    with pytest.raises(ValueError, match="at least 0"):
        retrieval.evaluate_vectors([part], vectors, version="filter", query="text", tag_weight=-0.1)


def test_qa_no_tag_leaves_out_instance_under_the_official_parse(tmp_path):
    """InternVL/multi_image_comparison.py:221-240: No Tag reads the Tag-less lines of the files named by
    ['news', 'instane', 'others', 'region', 'dance']; 'instane' names no file and is skipped, so the instance
    partition's Tag-less pairs never enter; accuracy and the pair score (:262-328) are computed over the rest."""
    from sova_lib.benchmarks.muvr import qa
    from sova_lib.storage import json_line

    folder = tmp_path / "annotations" / "QA" / "annotations"
    folder.mkdir(parents=True)
    for partition, tags in (("news", ["", "+car"]), ("instance", [""])):
        rows = [{"Query": f"q{k}", "Target": f"t{k}{label}", "Tag": tag, "Label": label, "prompt_en": "d"}
                for k, tag in enumerate(tags) for label in (1, 0)]
        (folder / f"{partition}.jsonl").write_text("".join(json_line(r) for r in rows), encoding="utf-8")
    questions = qa.load_qa(tmp_path, ["news", "instance"])
    # news: Tag-less pair answered Yes/No (right, pair +1), tagged pair Yes/Yes (pair 0); instance: No/Yes (-2)
    answers = dict(zip([q.id for q in questions], ["Yes", "No", "Yes", "Yes", "No", "Yes"]))
    official = qa.score_answers(questions, answers, parse="official")
    # No Tag, official: the news Tag-less pair only: accuracy 2/2 = 100, Reranking Score +1
    assert official.n_questions == {"all": 6, "no_tag": 2}
    assert official.accuracy["no_tag"] == 100.0 and official.reranking_score["no_tag"] == 1.0
    assert "'instane'" in official.notes[0] and "2 Tag-less questions of the instance partition" in official.notes[0]
    # strict: both Tag-less pairs: accuracy 2/4 = 50, Reranking Score (1 - 2) / 2 = -0.5; All is the same in both
    strict = qa.score_answers(questions, answers, parse="strict")
    assert strict.n_questions == {"all": 6, "no_tag": 4} and strict.notes == []
    assert strict.accuracy["no_tag"] == 50.0 and strict.reranking_score["no_tag"] == -0.5
    # All: 6 answers, right on news/0, news/1, news/2, wrong on news/3, instance/0, instance/1: 3/6;
    # pairs +1, 0, -2: (1 + 0 - 2) / 3
    assert official.accuracy["all"] == strict.accuracy["all"] == 50.0
    assert official.reranking_score["all"] == pytest.approx(-1 / 3)
    assert "instane" in official.to_record(kind="t", source="s", bootstrap=0, seed=0)["note"]
