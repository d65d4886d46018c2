"""Match answers to ground-truth ids across the two id layouts a file may use.

The leaderboard's files use the ids of ``ids.submission_id``
(``vtest_lawn_0600-0659__q_000000``); earlier versions of this library wrote
the TSV's ``index`` (``0``) in submissions and answer keys alike, and the
answer cache names answers by that index. ``align_answers`` maps each answer
to the ground truth's own id through the public items, in either direction,
and says when it read an earlier layout.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from sova_lib.benchmarks.vantage.ids import submission_id
from sova_lib.benchmarks.vantage.inputs import VantageItem

__all__ = ["align_answers", "expected_ids"]


def expected_ids(items: Iterable[VantageItem]) -> list[str]:
    """The leaderboard ids of ``items``, in item order: the ids a complete submission answers."""
    return [submission_id(it) for it in items]


def align_answers(gt_ids: Iterable[str], answers: Mapping[str, str],
                  items: Iterable[VantageItem] | None = None) -> tuple[dict[str, str], list[str]]:
    """``(answers keyed by ground-truth id, notes)``.

    An answer whose id is a ground-truth id is kept; otherwise, with
    ``items``, an item index is replaced by its leaderboard id (or a
    leaderboard id by the item index) when that one is a ground-truth id,
    with a note. ``ValueError`` when answers are given and none of them can
    be matched to the ground truth (one line naming an id of each side).
    """
    gt = list(gt_ids)
    gt_set = set(gt)
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for it in items or ():
        lid = submission_id(it)
        forward[it.id], backward[lid] = lid, it.id
    out: dict[str, str] = {}
    moved = {"to leaderboard ids": 0, "to item indexes": 0}
    for key, text in answers.items():
        if key in gt_set:
            target = key
        elif forward.get(key) in gt_set:
            target = forward[key]
            moved["to leaderboard ids"] += 1
        elif backward.get(key) in gt_set:
            target = backward[key]
            moved["to item indexes"] += 1
        else:
            target = key
        if target in out:
            raise ValueError(f"two answers are for ground-truth id {target} (one by its item index, one by its "
                             "leaderboard id)")
        out[target] = text
    if answers and gt and not gt_set & set(out):
        hint = "" if items is not None else "; answers keyed by the TSV index (an earlier layout) need --items"
        raise ValueError(f"none of the {len(answers)} answer ids is a ground-truth id (answer id "
                         f"{next(iter(answers))!r}, ground-truth id {gt[0]!r}){hint}")
    notes = []
    if moved["to leaderboard ids"]:
        notes.append(f"{moved['to leaderboard ids']} answers keyed by the items' index (an earlier layout) were "
                     "matched to leaderboard ids through the items")
    if moved["to item indexes"]:
        notes.append(f"the ground truth is keyed by the items' index (an earlier layout); "
                     f"{moved['to item indexes']} answers were matched to it through the items")
    return out, notes
