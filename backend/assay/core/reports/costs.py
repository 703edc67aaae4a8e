"""Cost and token reports of a project: sums of the ledger (core/ledger/) by purpose (the
models' calls in runs, the judges of run outputs, judge-mode runs' judges, pairwise
comparisons of two targets and of two runs, generation jobs, scorer trials, rubric
critiques, experiments' assist, refinement and pairwise judges, EvalArena's judge runs,
connection tests), by the model that made each call, by run and by UTC day, and token usage
per day and model, over what is in scope (scope.py: date range and dataset; scorers play
no part in cost).

It reads the ledger's two tables: `target_days` (a run's own cells, per target and day:
outputs, the calls' cost and tokens) and `spend_days` (every other call, per purpose,
model and run). A project has few targets and a target runs over few days, so the rows
that come back are few, and they roll up here. The report's total is the project's spend:
every micro-dollar on the runs' and project's counters (tests/engine/test_cost_invariant.py
holds it to that)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.ledger import PURPOSES
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.reports.scope import ReportFilter, resolve
from assay.core.reports.sql import day_text, for_aggregates
from assay.core.runs.models import Run, RunTarget
from assay.core.scoring.judge_mode import MODE as JUDGE_MODE

# The kinds of spend (the ledger's purposes), in the order the report lists them, each
# always present.
KINDS = PURPOSES
_JUDGING = frozenset({"judges", "judge_mode", "pairwise_targets", "pairwise_runs"})


@dataclass
class _Sums:
    other: dict[str, list[int]] | None = None  # purpose -> [spent, calls, tokens in, out]
    outputs: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, o: _Sums) -> None:
        for kind, sums in (o.other or {}).items():
            self.put(kind, *sums)
        self.outputs += o.outputs
        self.tokens_in += o.tokens_in
        self.tokens_out += o.tokens_out

    def put(self, kind: str, spent: int, calls: int, tokens_in: int, tokens_out: int) -> None:
        self.other = self.other or {}
        found = self.other.setdefault(kind, [0, 0, 0, 0])
        for i, n in enumerate((spent, calls, tokens_in, tokens_out)):
            found[i] += n

    def kinds(self) -> dict[str, list[int]]:
        found = self.other or {}
        return {kind: list(found.get(kind, [0, 0, 0, 0])) for kind in KINDS}

    def view(self) -> dict[str, int]:
        kinds = {k: v[0] for k, v in self.kinds().items()}
        return {"spent_micros": sum(kinds.values()), "calls_micros": kinds["model_calls"],
                "judge_micros": sum(kinds[k] for k in _JUDGING),
                "generation_micros": kinds["generation"], "outputs": self.outputs,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out}


@dataclass(frozen=True)
class _Key:
    """Where a sum belongs: a run and model, or (run None) spend outside runs."""

    run_id: int | None
    model_id: int | None


def _targets(session: Session, ids: set[int]) -> dict[int, tuple[int, int | None]]:
    if not ids:
        return {}
    return {t: (run, model) for t, run, model in session.execute(
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
        self.runs: dict[int, tuple[str, str, datetime, bool]] = {
            r.id: (r.name, r.status, r.created_at, (r.settings or {}).get("mode") == JUDGE_MODE)
            for r in session.execute(
                select(Run.id, Run.name, Run.status, Run.created_at, Run.settings)
                .where(Run.id.in_(run_ids)))} if run_ids else {}

    def model(self, model_id: int | None) -> str | None:
        return self.models.get(model_id) if model_id is not None else None


def _data(session: Session, project: Project, filters: ReportFilter
          ) -> tuple[list[tuple[_Key, str, _Sums]], _Names]:
    scope = resolve(session, project, filters)
    for_aggregates(session)
    days = rollups.target_days(session, scope)
    targets = _targets(session, {row[0] for row in days})
    names = _Names(session, {model for _, model in targets.values()},
                   {run for run, _ in targets.values()})
    rows: list[tuple[_Key, str, _Sums]] = []
    for target, day, n, _, spent, tokens_in, tokens_out in days:
        run, model = targets[target]
        sums = _Sums(outputs=n, tokens_in=tokens_in, tokens_out=tokens_out)
        sums.put("model_calls", spent, n, tokens_in, tokens_out)  # calls: its outputs
        rows.append((_Key(run, model), day_text(day), sums))
    # every other call by the model that made it (a judge's, not the judged model's)
    outside = rollups.spend_days(session, scope)
    extra = {m or None for _, _, m, *_ in outside} - set(names.models)
    names.models.update(_Names(session, extra, set()).models)
    runs = {r for _, _, _, r, *_ in outside if r} - set(names.runs)
    names.runs.update(_Names(session, set(), runs).runs)
    for day, kind, model, run_key, calls, spent, tokens_in, tokens_out in outside:
        sums = _Sums(tokens_in=tokens_in, tokens_out=tokens_out)
        sums.put(kind, spent, calls, tokens_in, tokens_out)
        run_id = run_key if run_key in names.runs else None  # a deleted run's: the project's
        rows.append((_Key(run_id, model or None), day_text(day), sums))
    return rows, names


def _sorted(rolled: dict[Any, _Sums], view: Callable[[Any, _Sums], dict[str, Any]],
            key: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    return sorted((view(k, sums) for k, sums in rolled.items()), key=key)


def _newest_first(row: dict[str, Any]) -> tuple[float, int]:
    return -row["created_at"].timestamp(), -row["run_id"]


def _by_kind(total: _Sums) -> list[dict[str, Any]]:
    """Every purpose of the ledger, in KINDS' order: its spend, calls and tokens."""
    return [{"kind": kind, "spent_micros": spent, "calls": calls, "tokens_in": tokens_in,
             "tokens_out": tokens_out}
            for kind, (spent, calls, tokens_in, tokens_out) in total.kinds().items()]


def cost_report(session: Session, project: Project, filters: ReportFilter) -> dict[str, Any]:
    """Totals (with the spend by kind), then by model (most spent first), by run (newest
    first: when it was created) and by day (oldest first); money in micro-dollars. A model's
    row holds its calls, the judges of its outputs and the generation jobs it ran."""
    rows, names = _data(session, project, filters)
    total = _Sums()
    for _, _, sums in rows:
        total.add(sums)
    by_model = _roll_up([(k.model_id, sums) for k, _, sums in rows])
    by_run = _roll_up([(k.run_id, sums) for k, _, sums in rows if k.run_id is not None])
    by_day = _roll_up([(day, sums) for _, day, sums in rows])
    return {
        "total": {**total.view(), "by_kind": _by_kind(total)},
        "by_model": _sorted(by_model, lambda m, s: {
            "model_id": m, "model_name": names.model(m), **s.view()},
            lambda r: (-r["spent_micros"], r["model_name"] is None, r["model_name"] or "")),
        "by_run": _sorted(by_run, lambda r, s: {
            "run_id": r, "run_name": names.runs[r][0], "status": names.runs[r][1],
            "created_at": names.runs[r][2], "judge_mode": names.runs[r][3], **s.view()},
            _newest_first),
        "by_day": _sorted(by_day, lambda d, s: {"day": d, **s.view()}, lambda r: r["day"]),
    }


def token_usage(session: Session, project: Project, filters: ReportFilter) -> dict[str, Any]:
    """Tokens in and out per UTC day and model (oldest day first, then by model name): of
    every call on the ledger, by the model that made it; and by purpose."""
    rows, names = _data(session, project, filters)
    total = _Sums()
    for _, _, sums in rows:
        total.add(sums)
    per_day_model = _roll_up([((day, k.model_id), sums) for k, day, sums in rows])
    items = _sorted(per_day_model, lambda k, s: {
        "day": k[0], "model_id": k[1], "model_name": names.model(k[1]),
        "tokens_in": s.tokens_in, "tokens_out": s.tokens_out, "outputs": s.outputs},
        lambda r: (r["day"], r["model_name"] is None, r["model_name"] or "",
                   r["model_id"] or 0))
    return {"items": items, "by_kind": _by_kind(total)}
