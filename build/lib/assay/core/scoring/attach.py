"""Scoring a finished run after the fact: pin more scorer versions on it (a new scorer, or a
new version of one it already pins; the old version's scores are kept) and say beforehand
what their judges may cost. The scoring job (jobs/scoring.py) then scores every recorded
output the new versions have not scored, within the run's and project's caps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.errors import Conflict, Invalid
from assay.core.projects.models import Project
from assay.core.runs import judge_budget
from assay.core.runs.models import TERMINAL, CellStatus, Output, Run, RunStatus
from assay.core.scoring import backfill
from assay.core.scoring.apply import HUMAN_KINDS, PAIR_KINDS, Applied
from assay.core.scoring.judge_calls import JudgeModel, find_judges
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion
from assay.providers.base import Endpoint
from assay.providers.pricing import is_priced
from assay.scorers import registry

FIELD = "scorer_version_ids"
SAMPLE = 200  # outputs whose judge prompts are rendered and counted; the rest at their mean
LOW_VERDICT_SHARE = 0.25  # as the run estimate: verdicts use about a quarter of max_tokens


def _finished(run: Run) -> None:
    if RunStatus(run.status) not in TERMINAL:
        raise Conflict("The run has not finished: add scorers once it has (scorers picked "
                       "when a run starts score each reply as it lands)", code="RUN_NOT_FINISHED")


def _versions(session: Session, project: Project, run: Run,
              version_ids: Sequence[int]) -> list[tuple[ScorerConfig, ScorerVersion]]:
    """The versions asked for, in order; an Invalid naming every bad entry otherwise."""
    rows = {v.id: (c, v) for c, v in session.execute(
        select(ScorerConfig, ScorerVersion)
        .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .where(ScorerVersion.id.in_(version_ids), ScorerConfig.project_id == project.id))}
    pinned = set(session.scalars(select(RunScorer.scorer_version_id)
                                 .where(RunScorer.run_id == run.id)))
    problems: dict[str, list[str]] = {}
    if not version_ids:
        problems["_schema"] = ["Pick at least one scorer version"]
    if len(set(version_ids)) != len(version_ids):
        problems["_schema"] = ["Each scorer version at most once"]
    for index, version_id in enumerate(version_ids):
        found = rows.get(version_id)
        if found is None:
            problems[str(index)] = [f"No scorer version {version_id} in this project"]
            continue
        config, version = found
        label = f"{config.name!r} v{version.number}"
        if config.archived_at is not None:
            problems[str(index)] = [f"The scorer {config.name!r} is archived"]
        elif config.kind in PAIR_KINDS:
            problems[str(index)] = [f"{config.name!r} is a pairwise judge: it compares two "
                                    f"targets or runs (Pairwise judging), it scores no output"]
        elif version_id in pinned:
            problems[str(index)] = [f"The run already has {label}"]
    if not problems:
        refs = {str(r): c.name for c, v in rows.values()
                for r in (v.params or {}).get("judges") or []}
        known = find_judges(session, project.id, refs)
        for ref, name in sorted(refs.items()):
            if ref not in known:
                problems.setdefault("_schema", []).append(
                    f"The scorer {name!r} judges with {ref!r}, which is no model of this "
                    f"project")
    if problems:
        raise Invalid("Some scorer versions cannot be added", {"json": {FIELD: problems}})
    return [rows[v] for v in version_ids]


def attach_scorers(session: Session, actor: User | None, project: Project, run: Run,
                   version_ids: Sequence[int]) -> list[ScorerVersion]:
    """Pin `version_ids` on the finished `run`, after its current scorers. The caller
    commits, then enqueues the scoring job."""
    _finished(run)
    chosen = _versions(session, project, run, version_ids)
    start = session.scalar(select(func.max(RunScorer.position))
                           .where(RunScorer.run_id == run.id))
    first = 0 if start is None else start + 1
    session.add_all(RunScorer(run_id=run.id, scorer_version_id=v.id, position=first + i)
                    for i, (_, v) in enumerate(chosen))
    session.flush()
    audit.record(session, actor, "run.scorers_added", "run", run.id, project.id, {
        FIELD: [v.id for _, v in chosen],
        "scorers": [{"name": c.name, "version": v.number} for c, v in chosen]})
    return [v for _, v in chosen]


def _judges(session: Session, project_id: int, refs: set[str]) -> dict[str, JudgeModel]:
    """The project's judge models by ref, priced, without keys (nothing is called)."""
    return {ref: JudgeModel(m.name, m.model, Endpoint(
        m.credential.kind, m.credential.base_url, None, {}, m.credential.id),
        dict(m.params or {}), m.input_price_per_mtok_micros, m.output_price_per_mtok_micros)
        for ref, m in find_judges(session, project_id, refs).items()}


def _left(cap: int | None, spent: int, reserved: int) -> int | None:
    return None if cap is None else max(cap - spent - reserved, 0)


def estimate_attach(session: Session, project: Project, run: Run,
                    version_ids: Sequence[int]) -> dict[str, Any]:
    """What scoring the run's recorded outputs with `version_ids` may cost, and what its
    caps leave. Judge prompts are counted on the real replies of up to SAMPLE outputs (all
    of them when there are fewer), the others priced at their mean. Writes nothing."""
    _finished(run)
    chosen = _versions(session, project, run, version_ids)
    applied = [Applied(v.id, c.kind, registry.build(c.kind, v.params)) for c, v in chosen
               if c.kind not in HUMAN_KINDS]
    outputs = int(session.scalar(select(func.count()).select_from(Output).where(
        Output.run_id == run.id, Output.status == CellStatus.succeeded)) or 0)
    judged = judge_budget.judged_by(applied)
    refs = {str(r) for _, refs_ in judged for r in refs_}
    judges = _judges(session, project.id, refs)
    calls = low = high = sampled = 0
    if judged and outputs:
        pending, _ = backfill.unscored(session, run.id, applied, 0, SAMPLE)
        for p in pending:
            sampled += 1
            for call in judge_budget.judge_calls(judged, judges, p.subject):
                verdict = call.max_verdict_tokens
                calls += 1
                low += call.cost(0, math.ceil(verdict * LOW_VERDICT_SHARE)) or 0
                high += call.cost(0, verdict) or 0
    scale = outputs / sampled if sampled else 0
    unpriced = sorted({j.name for j in judges.values()
                       if not is_priced(j.price_in, j.price_out)})
    return {
        "outputs": outputs,
        "scores": outputs * len([c for c, _ in chosen if c.kind not in HUMAN_KINDS]),
        "judge_calls": round(calls * scale), "low_micros": round(low * scale),
        "high_micros": round(high * scale), "complete": not unpriced,
        "unpriced_judges": unpriced,
        "run_budget_left_micros": _left(run.budget_micros, run.spent_micros,
                                        run.reserved_micros),
        "project_budget_left_micros": _left(project.budget_micros, project.spent_micros,
                                            project.reserved_micros),
        "scorers": [{"scorer_version_id": v.id, "scorer_id": c.id, "name": c.name,
                     "kind": c.kind, "version": v.number} for c, v in chosen],
    }
