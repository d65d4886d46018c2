"""The SOVABench label vocabulary: the only module that spells a label.

SOVABench has 14 vehicle actions grouped in 7 pairs of opposite actions
(SOVABench paper, Table 1). The benchmark TSVs spell an action in their
``subdim`` column; distractor rows carry ``subdim == dim == "distractor"``.

Groupings used by the protocols:

* ``pair_of(action)``: the opposite-action pair an action belongs to. The
  inter-pair protocol merges the two actions of a pair into one class.
* ``dim_of(action)``: the two-class split, ``"human_vehicle"`` (a person acts
  on a vehicle) or ``"vehicle"`` (the vehicle itself moves).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTIONS", "DIMS", "DISTRACTOR", "INTER_PAIRS", "PAIRS", "Pair", "dim_of", "opposite_of", "pair_of",
           "validate_action"]

DISTRACTOR = "distractor"


@dataclass(frozen=True)
class Pair:
    """One pair of opposite actions.

    ``name`` is the pair's short name, ``actions`` its two actions in the order
    the paper lists them, ``dim`` the two-class group of both actions, and
    ``inter_pair`` whether the inter-pair protocol uses the pair.
    """

    name: str
    actions: tuple[str, str]
    dim: str
    inter_pair: bool


PAIRS: tuple[Pair, ...] = (
    Pair("forward/reverse", ("driving forward", "reversing"), "vehicle", False),
    Pair("enter/exit", ("entering vehicle", "exiting vehicle"), "human_vehicle", True),
    Pair("load/unload", ("loading vehicle", "unloading vehicle"), "human_vehicle", True),
    Pair("trunk", ("opening trunk", "closing trunk"), "human_vehicle", True),
    Pair("door", ("opening vehicle door", "closing vehicle door"), "human_vehicle", True),
    Pair("start/stop", ("starting", "stopping"), "vehicle", True),
    Pair("turn", ("turning left", "turning right"), "vehicle", True),
)

ACTIONS: tuple[str, ...] = tuple(a for p in PAIRS for a in p.actions)
INTER_PAIRS: tuple[str, ...] = tuple(p.name for p in PAIRS if p.inter_pair)
DIMS: tuple[str, ...] = ("human_vehicle", "vehicle")

_PAIR_BY_ACTION = {a: p for p in PAIRS for a in p.actions}


def validate_action(action: str) -> str:
    """Return ``action`` if it is one of the 14 actions or the distractor label.

    Raises ``ValueError`` naming the unknown label and the known ones.
    """
    if action != DISTRACTOR and action not in _PAIR_BY_ACTION:
        raise ValueError(
            f"unknown SOVABench action {action!r}; known: {', '.join(ACTIONS)}, {DISTRACTOR}"
        )
    return action


def pair_of(action: str) -> str:
    """Name of the opposite-action pair of ``action`` (``"distractor"`` for distractors)."""
    if validate_action(action) == DISTRACTOR:
        return DISTRACTOR
    return _PAIR_BY_ACTION[action].name


def opposite_of(action: str) -> str:
    """The opposite action of ``action`` (e.g. ``"closing trunk"`` for ``"opening trunk"``)."""
    if validate_action(action) == DISTRACTOR:
        raise ValueError("a distractor has no opposite action")
    first, second = _PAIR_BY_ACTION[action].actions
    return second if action == first else first


def dim_of(action: str) -> str:
    """Two-class group of ``action``: ``"human_vehicle"``, ``"vehicle"`` or ``"distractor"``."""
    if validate_action(action) == DISTRACTOR:
        return DISTRACTOR
    return _PAIR_BY_ACTION[action].dim
