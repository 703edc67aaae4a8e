"""Cost and token reports of a project: spend, outputs and tokens by model, by run and by
UTC day, and token usage per day and model, over the finished outputs in scope
(scope.py: date range and dataset; scorers play no part in cost).

One GROUP BY (target, day) over the outputs does the work for all of them: a project has
few targets and a target runs over few days, so the rows that come back are few, and they
roll up here by model, by run, by day and by (day, model). No outputs: every list is empty."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.reports.scope import ReportFilter, Scope, resolve
from assay.core.reports.sql import as_int, day_text, for_aggregates
from assay.core.runs.models import Run, RunTarget


@dataclass
class _Sums:
    spent_micros: int = 0
    outputs: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, other: _Sums) -> None:
        self.spent_micros += other.spent_micros
        self.outputs += other.outputs
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out

    def view(self) -> dict[str, int]:
        return {"spent_micros": self.spent_micros, "outputs": self.outputs,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out}


@dataclass(frozen=True)
class _Target:
    run_id: int
    model_id: int | None


def _sums(n: Any, spent: Any, tokens_in: Any, tokens_out: Any) -> _Sums:
    return _Sums(as_int(spent), as_int(n), as_int(tokens_in), as_int(tokens_out))


def _cells(session: Session, scope: Scope) -> list[tuple[int, str, _Sums]]:
    """(target id, UTC day, sums) of the finished outputs in scope, from the rollup."""
    return [(target, day_text(day), _sums(n, spent, tokens_in, tokens_out))
            for target, day, n, _, spent, tokens_in, tokens_out
            in rollups.target_days(session, scope)]


def _targets(session: Session, ids: set[int]) -> dict[int, _Target]:
    if not ids:
        return {}
    return {t: _Target(run, model) for t, run, model in session.execute(
        select(RunTarget.id, RunTarget.run_id, RunTarget.model_id)
        .where(RunTarget.id.in_(ids)))}


def _roll_up(cells: list[tuple[Hashable, _Sums]]) -> dict[Any, _Sums]:
    out: dict[Any, _Sums] = {}
    for key, sums in cells:
        out.setdefault(key, _Sums()).add(sums)
    return out


class _Names:
    def __init__(self, session: Session, model_ids: set[int | None], run_ids: set[int]):
        ids = [m for m in model_ids if m is not None]
        self.models: dict[int, str] = dict(session.execute(
            select(ModelConfig.id, ModelConfig.name).where(ModelConfig.id.in_(ids))).all()) \
            if ids else {}
        self.runs: dict[int, tuple[str, str, datetime]] = {
            r.id: (r.name, r.status, r.created_at) for r in session.execute(
                select(Run.id, Run.name, Run.status, Run.created_at)
                .where(Run.id.in_(run_ids)))} if run_ids else {}

    def model(self, model_id: int | None) -> str | None:
        return self.models.get(model_id) if model_id is not None else None


def _data(session: Session, project: Project, filters: ReportFilter
          ) -> tuple[list[tuple[_Target, str, _Sums]], _Names]:
    scope = resolve(session, project, filters)
    for_aggregates(session)
    cells = _cells(session, scope)
    targets = _targets(session, {target for target, _, _ in cells})
    rows = [(targets[target], day, sums) for target, day, sums in cells]
    names = _Names(session, {t.model_id for t, _, _ in rows}, {t.run_id for t, _, _ in rows})
    return rows, names


def _sorted(rolled: dict[Any, _Sums], view: Callable[[Any, _Sums], dict[str, Any]],
            key: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    return sorted((view(k, sums) for k, sums in rolled.items()), key=key)


def cost_report(session: Session, project: Project, filters: ReportFilter) -> dict[str, Any]:
    """Totals, then by model (most spent first), by run (newest first) and by day (oldest
    first); money in micro-dollars."""
    rows, names = _data(session, project, filters)
    total = _Sums()
    for _, _, sums in rows:
        total.add(sums)
    by_model = _roll_up([(t.model_id, sums) for t, _, sums in rows])
    by_run = _roll_up([(t.run_id, sums) for t, _, sums in rows])
    by_day = _roll_up([(day, sums) for _, day, sums in rows])
    return {
        "total": total.view(),
        "by_model": _sorted(by_model, lambda m, s: {
            "model_id": m, "model_name": names.model(m), **s.view()},
            lambda r: (-r["spent_micros"], r["model_name"] is None, r["model_name"] or "")),
        "by_run": _sorted(by_run, lambda r, s: {
            "run_id": r, "run_name": names.runs[r][0], "status": names.runs[r][1],
            "created_at": names.runs[r][2], **s.view()}, lambda r: -r["run_id"]),
        "by_day": _sorted(by_day, lambda d, s: {"day": d, **s.view()}, lambda r: r["day"]),
    }


def token_usage(session: Session, project: Project, filters: ReportFilter) -> dict[str, Any]:
    """Tokens in and out per UTC day and model (oldest day first, then by model name)."""
    rows, names = _data(session, project, filters)
    per_day_model = _roll_up([((day, t.model_id), sums) for t, day, sums in rows])
    items = _sorted(per_day_model, lambda k, s: {
        "day": k[0], "model_id": k[1], "model_name": names.model(k[1]),
        "tokens_in": s.tokens_in, "tokens_out": s.tokens_out, "outputs": s.outputs},
        lambda r: (r["day"], r["model_name"] is None, r["model_name"] or "",
                   r["model_id"] or 0))
    return {"items": items}
