"""The project's Bradley-Terry leaderboard: every judged pairwise comparison across the
project's runs (two targets of a run, or two runs), each a game between the two outputs'
models. As in a run's summary (scoring/comparisons.py), a tie or a judgement whose two
orders disagreed counts half a win to each side, and failed judgements are left out.

Comparisons of two outputs of the same model (a run against a rerun of it) say nothing
about which model is better and are counted apart; so are outputs without a model
(recorded traces). Scope: the runs on the chosen dataset, the comparisons made within the
chosen days, one pairwise scorer (all its versions) when one is chosen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased

from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.scope import ReportFilter, resolve, run_conditions
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Comparison
from assay.core.stats.bradley_terry import bradley_terry


@dataclass(frozen=True)
class _Game:
    model_a: int | None
    model_b: int | None
    winner: str | None
    count: int


def _games(session: Session, project: Project, filters: ReportFilter) -> tuple[list[_Game],
                                                                              int]:
    """The judged comparisons in scope, grouped by (model A, model B, winner); and how many
    runs they come from."""
    scope = resolve(session, project, filters)
    a, b = aliased(Output), aliased(Output)
    ta, tb = aliased(RunTarget), aliased(RunTarget)
    conditions = [Comparison.run_id == Run.id, *run_conditions(scope),
                  Comparison.error.is_(None)]
    if scope.scorer is not None:
        conditions.append(Comparison.scorer_version_id.in_(scope.scorer.version_ids))
    if scope.start is not None:
        conditions.append(Comparison.created_at >= scope.start)
    if scope.end is not None:
        conditions.append(Comparison.created_at <= scope.end)
    base = (select(Comparison.id).join(a, a.id == Comparison.output_a_id)
            .join(b, b.id == Comparison.output_b_id)
            .join(ta, ta.id == a.target_id).join(tb, tb.id == b.target_id)
            .where(*conditions))
    keys = (ta.model_id, tb.model_id, Comparison.winner)
    rows = session.execute(base.with_only_columns(*keys, func.count()).group_by(*keys))
    runs = session.scalar(base.with_only_columns(func.count(func.distinct(Comparison.run_id))))
    return [_Game(ma, mb, w, int(n)) for ma, mb, w, n in rows], int(runs or 0)


def project_ratings(session: Session, project: Project, filters: ReportFilter,
                    confidence: float = 0.95) -> dict[str, Any]:
    games, runs = _games(session, project, filters)
    between = [g for g in games
               if g.model_a is not None and g.model_b is not None and g.model_a != g.model_b]
    same = sum(g.count for g in games if g.model_a is not None and g.model_a == g.model_b)
    untracked = sum(g.count for g in games if g.model_a is None or g.model_b is None)
    ids = sorted({m for g in between for m in (g.model_a, g.model_b) if m is not None})
    names = dict(session.execute(select(ModelConfig.id, ModelConfig.name)
                                 .where(ModelConfig.id.in_(ids))).all()) if ids else {}
    # a model's name, made unique (two configs may share a name)
    plain = {i: str(names.get(i, f"Model {i}")) for i in ids}
    label = {i: f"{name} (#{i})" if list(plain.values()).count(name) > 1 else name
             for i, name in plain.items()}
    found: dict[str, Any] = {
        "available": False, "message": None, "n_comparisons": sum(g.count for g in between),
        "same_model": same, "without_model": untracked, "runs": runs,
        "confidence": confidence, "items": []}
    records = [(label[g.model_a], label[g.model_b], g.winner or "tie")
               for g in between for _ in range(g.count)
               if g.model_a is not None and g.model_b is not None]
    if not records:
        found["message"] = ("No pairwise judgements between two models yet: compare two "
                            "targets of a run, or two runs of different models.")
        return found
    try:
        result = bradley_terry(records, items=list(label.values()), confidence=confidence)
    except ValueError as exc:  # the models form separate groups
        found["message"] = f"No ratings across all models: {exc}."
        return found
    by_label = {name: model for model, name in label.items()}
    found.update(available=True, items=[
        {"model_id": by_label[r.item], "model_name": names.get(by_label[r.item]),
         "rating": r.rating, "low": r.low, "high": r.high, "games": r.games, "wins": r.wins,
         "ties": r.ties, "losses": r.losses, "flags": list(r.flags)} for r in result.ratings])
    return found
