"""Scoring item vectors, descriptions or built-in baselines under a protocol.

``evaluate(protocol, items)`` is the whole evaluation, in the paper's
sequence: check that the input covers the protocol's clips; for each task,
the similarity of each query to the gallery (``similarity.set_similarity``,
the queried rows only) and the AP of each query under the tie rule
(``metrics.average_precision_rows``); then the summary (mAP or Pair-mAP, and
a bootstrap interval), and the tie spread (the optimistic minus the
pessimistic score); the clips the input lacks are then counted as failures
(``missing_as_failures``). Results are in percent (0-100), as the paper reports
them.

Built-in baselines (``baseline``):

``prevalence``
    the mean over queries of the query class's prevalence ``n_c / N``, the
    query counted in both: the paper's "Random" row (3.4 / 23.7 / 50.3).
``random-ranking``
    the exact expected AP of a uniformly random ranking, query excluded
    (3.5 / 24.0 / 51.2): what a scorer without information actually gets.
``oracle``
    every clip described by the text of its own class under the protocol,
    run through splitting, the sentence encoder, similarity and AP: an upper
    bound (100) that exercises the whole path.

``sova <benchmark> evaluate`` (``sova_lib.cli.evaluate``) parses and prints; this module does the work.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from sova_lib import metrics
from sova_lib.item_vectors import embed_descriptions
from sova_lib.protocols import Protocol, Task, get_protocol
from sova_lib.similarity import ItemVectors, set_similarity

__all__ = ["BASELINES", "TIE_WARNING_POINTS", "CoverageError", "Result", "baseline", "chance", "check_bootstrap",
           "evaluate", "missing_as_failures", "oracle_texts"]

BASELINES = ("prevalence", "random-ranking", "oracle")


#: Tie spread (points) above which ``Result.tie_warning`` says that the ties decide part of the score.
TIE_WARNING_POINTS = 1.0


class CoverageError(ValueError):
    """The input lacks clips that the protocol needs."""


# Field lists of the same shape, deliberately: Result and describe.backends.motion.MovingObject are each a plain
# record of their own numbers (a scan for repeated code pairs them; they share no logic).
@dataclass
class Result:
    """One protocol's score. ``value``, ``per_class``, ``per_pair``, ``ci`` and ``tie_spread`` are percentages.

    ``ties`` is the tie rule the score was computed under (``metrics.TIE_RULES``;
    ``"n/a"`` for a baseline that ranks nothing). ``tie_spread`` is the score
    with relevant items first in every tie minus the score with them last
    (optimistic minus pessimistic): how far ties alone could move it.
    ``n_missing`` is the number of the protocol's clips the input lacks, and
    ``value_without_missing`` the score with them left out of every ranking
    (``value`` itself when none is missing); ``missing_rule`` says what
    ``value`` made of them: ``"failures"`` (``missing_as_failures``) or
    ``"left out"`` (``evaluate``'s ``allow_missing``); ``None`` when none is
    missing. ``chance`` is what a uniformly random ranking scores on the same
    clips under the same missing rule (``chance``): the level a describer
    that tells no clip from another reaches; ``chance_without_missing`` the
    same with the missing clips left out, beside ``value_without_missing``;
    ``None`` for a baseline. ``missing`` holds the ids of the clips the
    input lacks.
    """

    protocol: str
    metric: str
    value: float
    per_class: dict
    n_queries: int
    per_pair: dict | None = None
    ci: tuple | None = None
    ties: str = "expected"
    tie_spread: float | None = None
    aggregate: str = "max"
    n_missing: int = 0
    missing_rule: str | None = None
    value_without_missing: float | None = None
    chance: float | None = None
    chance_without_missing: float | None = None
    missing: tuple = field(default=(), repr=False)  # the ids of the clips the input lacks
    notes: list = field(default_factory=list)
    per_query: dict = field(default_factory=dict, repr=False)  # id -> AP (0-1)
    context: dict = field(default_factory=dict, repr=False)  # record fields: what was scored and how

    def text(self, chance: bool = True) -> str:
        """The score as ``sova sovabench evaluate`` prints it: the value and interval, then each pair's mAP (Pair-mAP)
        or each class's mean AP, then (``chance``) what a random ranking of the same clips scores under the same
        missing rule (``Result.chance``; the protocol's ``random-ranking`` baseline when not set)."""
        ci = f"  (95% CI {self.ci[0]:.1f}-{self.ci[1]:.1f})" if self.ci else ""
        lines = [f"{self.protocol}: {self.metric} = {self.value:.2f}{ci}  over {self.n_queries} queries  "
                 f"(ties: {self.ties})"]
        if self.n_missing and self.missing_rule == "left out":
            lines.append(f"  {self.n_missing} clip(s) missing from the input, left out of every ranking")
        elif self.n_missing:
            without = "" if self.value_without_missing is None else \
                f"; with them left out: {self.metric} = {self.value_without_missing:.2f}" + (
                    "" if self.chance_without_missing is None else
                    f" (a random ranking: {self.chance_without_missing:.2f})")
            lines.append(f"  {self.n_missing} clip(s) missing from the input, counted as failures{without}")
        if self.per_pair:
            title, table = "per pair (mAP over the pair's queries)", self.per_pair
        else:  # what the protocol groups queries by: an opposite-action pair, an action, a group
            title, table = f"per {get_protocol(self.protocol).class_name} (mean AP of its queries)", self.per_class
        lines += [f"  {title}:", *(f"    {key:<24} {value:6.2f}" for key, value in table.items())]
        if chance and self.n_missing and self.chance is not None:
            rule = "left out" if self.missing_rule == "left out" else "counted as failures"
            lines.append(f"  a random ranking of the same clips scores {self.chance:.2f} {self.metric} (the "
                         f"{self.n_missing} missing {rule})")
        elif chance:
            random = baseline(self.protocol, "random-ranking")
            lines.append(f"  a random ranking scores {random.value:.2f} {random.metric} (--baseline random-ranking)")
        return "\n".join(lines)

    def tie_warning(self) -> str | None:
        """The warning ``sova sovabench evaluate`` gives when ties alone move the score by more than
        ``TIE_WARNING_POINTS`` (``tie_spread``), naming the tie rule used; ``None`` below that."""
        if self.tie_spread is None or self.tie_spread <= TIE_WARNING_POINTS:
            return None
        return (f"ties between clip scores move {self.metric} by up to {self.tie_spread:.2f} points (optimistic "
                f"minus pessimistic); the score uses the {self.ties!r} tie rule")

    def to_json(self) -> dict:
        """A JSON-ready dict (per-query values left out)."""
        out = asdict(self)
        for key in ("per_query", "context", "missing", *(["per_pair"] if self.per_pair is None else [])):
            del out[key]
        return out

    def to_record(self, **fields) -> dict:
        """This score as one ``sova_lib.records`` record.

        The record takes ``protocol``, ``metric``, ``value``, the interval,
        ``n_queries``, ``per_class`` (``per_pair`` for Pair-mAP), ``ties``,
        ``tie_spread`` and ``aggregate`` from the result; ``context`` and then
        ``fields`` (``kind`` and ``source``, which are required, ``benchmark``,
        ``cache``, ``encoder``, ``text_split``, ``bootstrap``, ``seed``, ...:
        what was scored and how) add the rest.
        """
        from sova_lib.records import make_record

        return make_record(self, **{**self.context, **fields})


def _coverage(protocol: Protocol, item_ids, allow_missing: bool) -> tuple[np.ndarray, list]:
    """Position of each protocol clip in ``item_ids`` (-1 when missing), and notes."""
    where = {i: pos for pos, i in enumerate(np.asarray(item_ids).tolist())}
    wanted = protocol.ids()
    pos = np.array([where.get(i, -1) for i in wanted.tolist()], dtype=np.int64)
    notes = []
    extra = set(where) - set(wanted.tolist())
    known = protocol.known_ids() if protocol.known_ids is not None else frozenset(where)
    outside = extra - known if extra else set()
    missing = wanted[pos < 0]
    if missing.size:
        message = (f"{missing.size} of the {wanted.size} clips of protocol {protocol.name!r} are missing "
                   f"from the input (e.g. ids {missing[:5].tolist()})")
        hint = (f"; {len(outside)} input id(s) are not {protocol.benchmark} clip ids at all "
                f"(e.g. {sorted(outside, key=str)[:3]})" if outside else "")
        if missing.size == wanted.size:
            raise CoverageError(f"the input covers none of the {wanted.size} clips of protocol {protocol.name!r} "
                                f"(e.g. ids {wanted[:3].tolist()}){hint}; nothing to score")
        notes.append(message + hint + ("; they were left out of every ranking" if allow_missing else
                                       "; each counts as a failure (a missing query scores AP 0, a missing gallery "
                                       "clip ranks below every scored one)"))
    if len(extra) > len(outside):
        notes.append(f"{len(extra) - len(outside)} input id(s) are clips of {protocol.benchmark} outside protocol "
                     f"{protocol.name!r} and were ignored")
    if outside:
        shown = sorted(outside, key=str)[:5]
        notes.append(f"{len(outside)} input id(s) are not {protocol.benchmark} clips at all and were ignored "
                     f"(e.g. {shown})")
    return pos, notes


def check_bootstrap(bootstrap: int) -> None:
    """Refuse a negative number of bootstrap resamples (``ValueError``); 0 means no interval."""
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be a number of resamples, 0 (no interval) or more, got {bootstrap}")


def _summary(protocol, tasks, per_query_ap) -> float:
    """The protocol's score (percent) from each task's per-query AP: mAP, or Pair-mAP over the tasks."""
    kept = [ap[~np.isnan(ap)] for ap in per_query_ap]
    if protocol.metric == "Pair-mAP":
        return 100 * metrics.pair_map({t.name: a for t, a in zip(tasks, kept) if a.size})
    return 100 * metrics.mean_ap(np.concatenate(kept))


def _score_tasks(protocol, tasks, per_query_ap, notes, *, ties, aggregate, bootstrap, seed):
    """The protocol's ``Result`` from each task's per-query AP: the summary (mean, bootstrap interval), per class,
    per pair and per query."""
    clips, keys = protocol.clips(), protocol.ids().tolist()
    all_ap, groups, per_class, per_pair, per_query = [], [], {}, {}, {}
    for t, (task, ap) in enumerate(zip(tasks, per_query_ap)):
        keep = ~np.isnan(ap)
        if (~keep).any():
            from sova_lib.wording import counted  # here: a warm evaluation that skips nothing imports no more

            notes.append(counted(int((~keep).sum()), f"query of task {task.name!r} has no relevant item and was skipped",
                                 f"queries of task {task.name!r} have no relevant item and were skipped"))
        if not keep.any():
            continue
        all_ap.append(ap[keep])
        groups.append(np.full(int(keep.sum()), t))
        for q, value in zip(task.queries[keep], ap[keep]):
            per_class.setdefault(protocol.query_class(clips[q]), []).append(value)
            per_query[keys[q]] = float(value)
        if protocol.metric == "Pair-mAP":
            per_pair[task.name] = 100 * metrics.mean_ap(ap[keep])
    if not all_ap:
        raise CoverageError(f"no query of protocol {protocol.name!r} has a relevant item in the input")
    values = np.concatenate(all_ap)
    value = _summary(protocol, tasks, per_query_ap)
    ci = None
    if bootstrap:
        rng = np.random.default_rng(seed)
        g = np.concatenate(groups) if protocol.metric == "Pair-mAP" else None
        low, high = metrics.bootstrap_ci(values, rng, groups=g, n_resamples=bootstrap)
        ci = (100 * low, 100 * high)
    return Result(
        protocol=protocol.name, metric=protocol.metric, value=value,
        per_class={k: 100 * float(np.mean(v)) for k, v in sorted(per_class.items())},
        n_queries=int(values.size), per_pair=per_pair or None, ci=ci, ties=ties,
        aggregate=aggregate, value_without_missing=value, notes=notes, per_query=per_query,
    )


def missing_as_failures(task: Task, present: np.ndarray, ap: np.ndarray, *, ties: str = "expected") -> np.ndarray:
    """AP of every query of ``task`` with the clips the input lacks counted as failures.

    ``present`` ``(n,)`` bool marks the protocol's clips the input holds;
    ``ap`` is the AP of ``task``'s present queries ranked against its present
    gallery (in the order of ``task.queries[present[task.queries]]``).
    A missing query scores 0; a missing gallery clip ranks below every
    scored clip, tied with the other missing ones
    (``metrics.average_precision_with_missing`` under ``ties``). Returns
    ``(Q,)`` over all of ``task.queries``; ``nan`` for a query with no
    relevant clip even among the missing.
    """
    relevance, valid = task.relevance(), task.valid()
    relevance &= valid
    scored = present[task.gallery][None, :]
    found = np.full(task.queries.size, np.nan)
    rows = present[task.queries]
    found[rows] = metrics.average_precision_with_missing(
        ap, (valid & scored)[rows].sum(axis=1), (relevance & scored)[rows].sum(axis=1),
        (valid & ~scored)[rows].sum(axis=1), (relevance & ~scored)[rows].sum(axis=1), ties=ties)
    found[~rows & relevance.any(axis=1)] = 0.0
    return found


def evaluate(protocol: str | Protocol, items: ItemVectors, *, aggregate: str = "max", ties: str = "expected",
             allow_missing: bool = False, bootstrap: int = 0, seed: int = 0, dtype=np.float32) -> Result:
    """Score ``items`` (vectors of clips, keyed by benchmark id) under ``protocol``.

    ``ties`` is the AP tie rule (``metrics.TIE_RULES``; default the tie-aware
    ``"expected"``); the optimistic and pessimistic scores are computed too,
    and their difference is ``Result.tie_spread``. Clips of the protocol
    missing from ``items`` count as failures (``missing_as_failures``: a
    missing query scores AP 0, a missing gallery clip ranks below every scored
    one); ``allow_missing`` leaves them out of every ranking instead. Either
    way ``Result.n_missing`` counts them, ``Result.value_without_missing`` is
    the score with them left out, and a note says how many; an input with
    none of the protocol's clips raises ``CoverageError``. Items the protocol does not use
    are ignored and counted in ``notes``. ``bootstrap > 0`` adds a 95%
    percentile interval from that many resamples of the queries (within each
    pair for Pair-mAP), drawn from ``numpy.random.default_rng(seed)``;
    ``bootstrap`` must not be negative. ``dtype`` is the precision of the
    similarity products (float64 for exact comparisons).
    """
    if ties not in metrics.TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; choose one of {metrics.TIE_RULES}")
    check_bootstrap(bootstrap)
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    pos, notes = _coverage(protocol, items.ids, allow_missing)
    present = pos >= 0
    tasks = _present_tasks(protocol, present, notes, allow_missing)
    # each task's per-query AP under the tie rule and under both bounds (relevant items first / last in every tie)
    per_query_ap, bounds = [], {"optimistic": [], "pessimistic": []}
    for task in tasks:
        relevant, valid = task.relevance(), task.valid()
        sims = set_similarity(items.select(pos[task.queries]), items.select(pos[task.gallery]),
                              aggregate=aggregate, dtype=dtype)  # (queries, gallery)
        per_query_ap.append(metrics.average_precision_rows(sims, relevant, valid, ties=ties))
        for rule, ap in metrics.average_precision_rules(sims, relevant, valid, rules=tuple(bounds)).items():
            bounds[rule].append(ap)
    # with clips missing, the score with them left out (None when nothing was scored)
    without = _summary(protocol, tasks, per_query_ap) if any(np.isfinite(ap).any() for ap in per_query_ap) else None
    if not present.all() and not allow_missing:  # every task whole again, the missing clips counted as failures
        per_query_ap = _as_failures(protocol, present, tasks, per_query_ap, ties)
        bounds = {rule: _as_failures(protocol, present, tasks, aps, rule) for rule, aps in bounds.items()}
        tasks = list(protocol.tasks())
    result = _score_tasks(protocol, tasks, per_query_ap, notes, ties=ties, aggregate=aggregate,
                          bootstrap=bootstrap, seed=seed)
    # how far ties alone could move the score: relevant items first in every tie minus last
    result.tie_spread = (_summary(protocol, tasks, bounds["optimistic"])
                         - _summary(protocol, tasks, bounds["pessimistic"]))
    if not present.all():
        result.n_missing, result.value_without_missing = int((~present).sum()), without
        result.missing = tuple(protocol.ids()[~present].tolist())
        result.missing_rule = "left out" if allow_missing else "failures"
    result.chance = chance(protocol, present, allow_missing=allow_missing)
    result.chance_without_missing = result.chance if allow_missing or present.all() else \
        chance(protocol, present, allow_missing=True)
    return result


def _as_failures(protocol: Protocol, present: np.ndarray, tasks: list, per_query_ap: list, ties: str) -> list:
    """Each task of the whole protocol's per-query AP with the clips the input lacks counted as failures
    (``missing_as_failures`` under ``ties``), from the AP of ``tasks``, the tasks restricted to the clips
    ``present`` (a task left with no query: every query of it scores 0)."""
    by_task = {task.name: ap for task, ap in zip(tasks, per_query_ap)}
    return [missing_as_failures(task, present, by_task.get(task.name, np.zeros(0)), ties=ties)
            for task in protocol.tasks()]


def _random_ranking_rows(task: Task) -> np.ndarray:
    """``(Q,)`` the exact expected AP of a uniformly random ranking of ``task``'s gallery for each of its queries
    (``metrics.random_ranking_ap``); ``nan`` for a query with no relevant item."""
    relevant, valid = (task.relevance() & task.valid()).sum(axis=1), task.valid().sum(axis=1)
    ap = np.full(task.queries.size, np.nan)
    some = relevant > 0
    ap[some] = metrics.random_ranking_ap(relevant[some], valid[some]) if some.any() else []
    return ap


def chance(protocol: str | Protocol, present: np.ndarray | None = None, *, allow_missing: bool = False) -> float:
    """What a uniformly random ranking scores (percent) on the clips ``present`` under the same missing rule.

    ``present`` ``(n,)`` bool marks the protocol's clips an input holds (default: all). Each task is restricted to
    them, as ``evaluate`` restricts it, and each query's AP is the exact expected AP of a random ranking of what
    is left (``metrics.random_ranking_ap``); the missing clips then count as failures (``missing_as_failures``
    under the ``expected`` rule: a missing query scores 0, a missing gallery clip ranks below every scored one)
    or, with ``allow_missing``, stay left out. A describer that gives every clip the same text scores exactly
    this under the ``expected`` tie rule, whatever clips it covers. With every clip present it is the
    ``random-ranking`` baseline.
    """
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    present = np.ones(protocol.ids().size, dtype=bool) if present is None else np.asarray(present, dtype=bool)
    tasks = _present_tasks(protocol, present, [], allow_missing)
    per_query = [_random_ranking_rows(task) for task in tasks]
    if not allow_missing and not present.all():
        per_query = _as_failures(protocol, present, tasks, per_query, "expected")
        tasks = list(protocol.tasks())
    return _summary(protocol, tasks, per_query)


def _present_tasks(protocol: Protocol, present: np.ndarray, notes: list, allow_missing: bool) -> list:
    """The protocol's tasks restricted to the clips ``present`` (a bool per protocol clip); a task left with no
    query is dropped, with a note (its queries score 0 unless ``allow_missing``)."""
    tasks = []
    for task in protocol.tasks():
        task = Task(task.name, task.queries[present[task.queries]], task.gallery[present[task.gallery]], task.labels)
        if task.queries.size:
            tasks.append(task)
        else:
            notes.append(f"task {task.name!r} has no clip in the input and was " +
                         ("left out" if allow_missing else "scored 0"))
    return tasks


def oracle_texts(protocol: str | Protocol) -> dict:
    """id -> the oracle's text for each clip of ``protocol`` (its class; see ``Protocol.oracle_text``)."""
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    if protocol.oracle_text is None:
        raise ValueError(f"protocol {protocol.name!r} defines no oracle text")
    return {c.index: protocol.oracle_text(c) for c in protocol.clips()}


def baseline(protocol: str | Protocol, name: str, *, encoder=None, bootstrap: int = 0, seed: int = 0,
             ties: str = "expected") -> Result:
    """Score a built-in baseline (one of ``BASELINES``) under ``protocol``.

    ``oracle`` needs a sentence ``encoder`` (e.g. ``SentenceEncoder()``) and
    ranks under the tie rule ``ties``; the other two rank nothing (``ties``
    ``"n/a"``).
    """
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    check_bootstrap(bootstrap)
    if name == "oracle":
        if encoder is None:
            raise ValueError("the oracle baseline needs a sentence encoder")
        result = evaluate(protocol, embed_descriptions(oracle_texts(protocol), encoder), ties=ties,
                          bootstrap=bootstrap, seed=seed)
        result.chance = result.chance_without_missing = None  # a baseline, not a scorer beside its chance
        result.notes.append("oracle: every clip described by its own class text (an upper bound, not a model)")
        return result
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; choose one of {BASELINES}")
    tasks = list(protocol.tasks())
    if name == "prevalence":
        per_query = [metrics.prevalence(t.labels[t.queries], t.labels[t.gallery]) for t in tasks]
    else:
        per_query = [_random_ranking_rows(t) for t in tasks]
    result = _score_tasks(protocol, tasks, per_query, [], ties="n/a", aggregate="n/a", bootstrap=bootstrap, seed=seed)
    result.notes.append(
        "prevalence: mean class prevalence n_c/N, query counted in both (the paper's Random row)"
        if name == "prevalence" else
        "random-ranking: exact expected AP of a uniformly random ranking, query excluded")
    return result
