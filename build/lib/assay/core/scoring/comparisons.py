"""Reading a run's pairwise comparisons: the list, and the summary per target pair and
judge with the judges' position bias and Bradley-Terry ratings of the targets (DESIGN §6).

A judgement whose two orders disagree has no winner; the ratings count it as a tie, like
a judge that declared one (it preferred neither output once the order was swapped).
Failed judgements count nowhere but in `errors`.

Without a base run, only comparisons of two targets of the run are read; with one, only
those of a target of the run against a target of the base run (their labels then name
their runs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, aliased

from assay.core.pagination import Page, paginate
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Comparison, ScorerConfig, ScorerVersion
from assay.core.stats import Proportion, bradley_terry, position_bias_rate

NO_WINNER = "none"  # the list's winner filter: disagreements and failures


@dataclass(frozen=True)
class ComparisonFilters:
    scorer_id: int | None = None
    scorer_version_id: int | None = None
    judge: str | None = None
    target_id: int | None = None  # either side
    case_id: int | None = None
    winner: str | None = None  # a | b | tie | none
    position_bias: bool | None = None
    failed: bool | None = None
    base_run_id: int | None = None  # target B's run; None: this run


@dataclass(frozen=True)
class PairSummary:
    scorer_id: int
    scorer_name: str
    scorer_version_id: int
    version: int
    judge: str
    target_a_id: int  # the earlier of the two in the run's order
    target_a_label: str
    target_b_id: int
    target_b_label: str
    comparisons: int
    a_wins: int
    b_wins: int
    ties: int
    disagreements: int  # the two orders disagreed: position bias, no winner
    errors: int
    position_bias: Proportion


@dataclass(frozen=True)
class TargetRating:
    target_id: int
    label: str
    rating: float | None
    low: float | None
    high: float | None
    games: int
    wins: int
    ties: int
    losses: int
    flags: tuple[str, ...]


@dataclass(frozen=True)
class Ratings:
    available: bool
    message: str | None  # why there are no ratings
    n_comparisons: int
    confidence: float
    items: tuple[TargetRating, ...]


@dataclass(frozen=True)
class ComparisonSummary:
    run_id: int
    base_run_id: int | None
    pairs: tuple[PairSummary, ...]
    ratings: Ratings


def _filtered(stmt: Select[*tuple[Any, ...]], run: Run, f: ComparisonFilters, a: Any,
              b: Any) -> Select[*tuple[Any, ...]]:
    stmt = stmt.join(a, a.id == Comparison.output_a_id).join(b, b.id == Comparison.output_b_id)
    stmt = stmt.where(Comparison.run_id == run.id, b.run_id == (f.base_run_id or run.id))
    if f.scorer_id is not None:
        stmt = stmt.where(Comparison.scorer_version_id.in_(
            select(ScorerVersion.id).where(ScorerVersion.scorer_id == f.scorer_id)))
    if f.scorer_version_id is not None:
        stmt = stmt.where(Comparison.scorer_version_id == f.scorer_version_id)
    if f.judge is not None:
        stmt = stmt.where(Comparison.judge_model == f.judge)
    if f.target_id is not None:
        stmt = stmt.where((a.target_id == f.target_id) | (b.target_id == f.target_id))
    if f.case_id is not None:
        stmt = stmt.where(Comparison.case_id == f.case_id)
    if f.winner is not None:
        stmt = stmt.where(Comparison.winner.is_(None) if f.winner == NO_WINNER
                          else Comparison.winner == f.winner)
    if f.position_bias is not None:
        stmt = stmt.where(Comparison.position_bias.is_(f.position_bias))
    if f.failed is not None:
        stmt = stmt.where(Comparison.error.is_not(None) if f.failed
                          else Comparison.error.is_(None))
    return stmt


def list_comparisons(session: Session, run: Run, page: int, page_size: int,
                     filters: ComparisonFilters) -> Page[Any]:
    """(comparison, target of output A, target of output B), by case, then as written."""
    a, b = aliased(Output), aliased(Output)
    stmt = _filtered(select(Comparison, a.target_id, b.target_id), run, filters, a, b)
    return paginate(session, stmt.order_by(Comparison.case_id, Comparison.id), page,
                    page_size, scalars=False)


def _labels(session: Session, run: Run,
            base: Run | None = None) -> tuple[dict[int, str], dict[int, int]]:
    """Each target's display name (unique among the runs read) and its place in the run's
    order (the base run's targets after the run's); names carry their run's name when two
    runs are read."""
    runs = [run] if base is None or base.id == run.id else [run, base]
    alike = len({one.name for one in runs}) < len(runs)  # e.g. two "Demo run"s
    rows = []
    for one in runs:
        run_name = f"{one.name} #{one.id}" if alike else one.name
        rows += [(target_id, f"{run_name} · {label or f'Target {target_id}'}"
                  if len(runs) > 1 else label or f"Target {target_id}")
                 for target_id, label in session.execute(
                     select(RunTarget.id, RunTarget.label).where(RunTarget.run_id == one.id)
                     .order_by(RunTarget.position, RunTarget.id))]
    names = dict(rows)
    seen = Counter(names.values())
    names = {i: f"{name} #{i}" if seen[name] > 1 else name for i, name in names.items()}
    return names, {target_id: place for place, (target_id, _) in enumerate(rows)}


@dataclass(frozen=True)
class _Tally:
    version_id: int
    judge: str
    target_a: int
    target_b: int
    winner: str | None
    position_bias: bool
    failed: bool
    count: int


def _tallies(session: Session, run: Run, f: ComparisonFilters,
             order: dict[int, int]) -> Iterator[_Tally]:
    """Counts of alike comparisons, each turned so that target A comes first in the run."""
    a, b = aliased(Output), aliased(Output)
    failed = Comparison.error.is_not(None)
    keys = (Comparison.scorer_version_id, Comparison.judge_model, a.target_id, b.target_id,
            Comparison.winner, Comparison.position_bias, failed)
    stmt = _filtered(select(*keys, func.count()), run, f, a, b).group_by(*keys)
    for version_id, judge, ta, tb, winner, bias, is_failed, count in session.execute(stmt):
        if order.get(ta, ta) > order.get(tb, tb):
            ta, tb = tb, ta
            winner = {"a": "b", "b": "a"}.get(winner, winner)
        yield _Tally(version_id, judge, ta, tb, winner, bool(bias), bool(is_failed), count)


def summary(session: Session, run: Run, filters: ComparisonFilters,
            confidence: float = 0.95, base: Run | None = None) -> ComparisonSummary:
    """`base` is the run of `filters.base_run_id`, when given."""
    names, order = _labels(session, run, base)
    tallies = list(_tallies(session, run, filters, order))
    groups: dict[tuple[int, str, int, int], Counter[str]] = {}
    for t in tallies:
        counts = groups.setdefault((t.version_id, t.judge, t.target_a, t.target_b), Counter())
        outcome = "errors" if t.failed else "disagreements" if t.position_bias \
            else {"a": "a_wins", "b": "b_wins", "tie": "ties"}.get(t.winner or "", "errors")
        counts[outcome] += t.count
    versions = {v.id: (v, c) for v, c in session.execute(
        select(ScorerVersion, ScorerConfig).join(ScorerConfig).where(
            ScorerVersion.id.in_({key[0] for key in groups})))}
    pairs = []
    for (version_id, judge, ta, tb), counts in sorted(groups.items(), key=lambda item: (
            item[0][0], item[0][1], order.get(item[0][2], 0), order.get(item[0][3], 0))):
        version, config = versions[version_id]
        agreed = counts["a_wins"] + counts["b_wins"] + counts["ties"]
        bias = position_bias_rate([True] * counts["disagreements"] + [False] * agreed,
                                  confidence)
        pairs.append(PairSummary(
            config.id, config.name, version_id, version.number, judge, ta, names[ta], tb,
            names[tb], sum(counts.values()), counts["a_wins"], counts["b_wins"],
            counts["ties"], counts["disagreements"], counts["errors"], bias))
    if filters.base_run_id not in (None, run.id):  # rate only targets the two runs pitted
        played = {t for tally in tallies for t in (tally.target_a, tally.target_b)}
        names = {i: name for i, name in names.items() if i in played}
    return ComparisonSummary(run.id, filters.base_run_id, tuple(pairs),
                             _ratings(tallies, names, confidence))


def _ratings(tallies: list[_Tally], names: dict[int, str], confidence: float) -> Ratings:
    games = [(names[t.target_a], names[t.target_b], t.winner or "tie")
             for t in tallies if not t.failed for _ in range(t.count)]
    if not games:
        return Ratings(False, "No judged comparisons yet: compare two targets to rate them.",
                       0, confidence, ())
    try:
        result = bradley_terry(games, items=list(names.values()), confidence=confidence)
    except ValueError as exc:  # the comparisons form separate groups
        return Ratings(False, f"No ratings across all targets: {exc}.", len(games),
                       confidence, ())
    ids = {name: target_id for target_id, name in names.items()}
    return Ratings(True, None, result.n_comparisons, result.confidence, tuple(
        TargetRating(ids[r.item], r.item, r.rating, r.low, r.high, r.games, r.wins, r.ties,
                     r.losses, r.flags) for r in result.ratings))
