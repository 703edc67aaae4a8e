"""Retention in two steps: `plan` lists what the policy says must go (the dry-run report),
`apply` removes exactly what a plan listed, so what a dry run reports is what a real run
deletes. Progress streams live in Redis; the job (jobs/retention.py) removes those."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, delete, func, null, or_, select, update
from sqlalchemy.orm import Session

from assay.core.projects.models import AuditEvent, Project
from assay.core.projects.service import purge_project
from assay.core.retention.policy import RetentionPolicy
from assay.core.runs.models import TERMINAL, Output, Run

FINISHED = [status.value for status in TERMINAL]


@dataclass
class RetentionReport:
    generated_at: str
    policy: dict[str, Any]
    projects: list[dict[str, Any]] = field(default_factory=list)  # purged after their grace
    runs: list[int] = field(default_factory=list)  # finished runs deleted whole
    runs_outputs: int = 0  # the outputs inside those runs
    raw_runs: list[int] = field(default_factory=list)  # runs whose raw payloads are cleared
    raw_outputs: int = 0
    raw_max_output_id: int = 0  # outputs written after the plan are not touched
    audit_events: int = 0
    audit_max_id: int = 0
    event_streams: list[int] = field(default_factory=list)  # runs whose Redis stream goes

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetentionReport:
        return cls(**data)


def _before(now: datetime, days: int) -> datetime | None:
    return now - timedelta(days=days) if days > 0 else None


def plan(session: Session, policy: RetentionPolicy, now: datetime) -> RetentionReport:
    report = RetentionReport(generated_at=now.isoformat(), policy=policy.as_dict())
    grace_end = now - timedelta(days=policy.project_grace_days)
    purged = session.execute(select(Project.id, Project.name, Project.deleted_at).where(
        Project.deleted_at.is_not(None), Project.deleted_at <= grace_end)
        .order_by(Project.id)).all()
    report.projects = [{"id": pid, "name": name, "deleted_at": str(at)} for pid, name, at in purged]
    gone_projects = [p["id"] for p in report.projects]
    if (cutoff := _before(now, policy.runs_days)) is not None:
        report.runs = list(session.scalars(select(Run.id).where(
            Run.status.in_(FINISHED), Run.finished_at < cutoff,
            Run.project_id.not_in(gone_projects)).order_by(Run.id)))
        report.runs_outputs = _count_outputs(session, report.runs)
    if (cutoff := _before(now, policy.raw_days)) is not None:
        raw = (select(Output.run_id, func.count(), func.max(Output.id))
               .join(Run, Run.id == Output.run_id)
               .where(Run.status.in_(FINISHED), Run.finished_at < cutoff,
                      Run.project_id.not_in(gone_projects), Run.id.not_in(report.runs),
                      or_(Output.raw_request.is_not(None), Output.raw_response.is_not(None)))
               .group_by(Output.run_id).order_by(Output.run_id))
        for run_id, count, max_id in session.execute(raw):
            report.raw_runs.append(run_id)
            report.raw_outputs += count
            report.raw_max_output_id = max(report.raw_max_output_id, max_id)
    if (cutoff := _before(now, policy.audit_days)) is not None:
        count, max_id = session.execute(select(func.count(), func.max(AuditEvent.id))
                                        .where(AuditEvent.created_at < cutoff)).one()
        report.audit_events, report.audit_max_id = count, max_id or 0
    return report


def stale_streams(session: Session, policy: RetentionPolicy, now: datetime,
                  stream_runs: list[int], going: set[int]) -> list[int]:
    """Of the runs that have a progress stream, those whose stream must go: finished before
    the events cutoff, or whose run no longer exists or is about to be deleted."""
    if not stream_runs:
        return []
    cutoff = _before(now, policy.events_days)
    live = dict(session.execute(select(Run.id, Run.finished_at).where(
        Run.id.in_(stream_runs), Run.status.in_(FINISHED))).all())
    running = set(session.scalars(select(Run.id).where(Run.id.in_(stream_runs),
                                                       Run.status.not_in(FINISHED))))
    stale = []
    for run_id in sorted(stream_runs):
        if run_id in running:
            continue
        finished = live.get(run_id)
        if (finished is None or run_id in going
                or (cutoff is not None and finished < cutoff)):
            stale.append(run_id)
    return stale


def runs_of_projects(session: Session, project_ids: list[int]) -> set[int]:
    if not project_ids:
        return set()
    return set(session.scalars(select(Run.id).where(Run.project_id.in_(project_ids))))


def apply(session: Session, report: RetentionReport) -> dict[str, int]:
    """Remove what `report` lists and nothing else; return what was removed."""
    done = {"projects": 0, "runs": 0, "raw_outputs": 0, "audit_events": 0}
    for entry in report.projects:
        project = session.get(Project, entry["id"])
        if project is not None and project.deleted_at is not None:  # not restored meanwhile
            purge_project(session, project)
            done["projects"] += 1
    if report.runs:
        done["runs"] = _rows(session.execute(delete(Run).where(
            Run.id.in_(report.runs), Run.status.in_(FINISHED))))
    if report.raw_runs:
        done["raw_outputs"] = _rows(session.execute(
            update(Output).where(Output.run_id.in_(report.raw_runs),
                                 Output.id <= report.raw_max_output_id,
                                 or_(Output.raw_request.is_not(None),
                                     Output.raw_response.is_not(None)))
            .values(raw_request=null(), raw_response=null())  # SQL NULL, not JSON null
            .execution_options(synchronize_session=False)))
    if report.audit_max_id:
        done["audit_events"] = _rows(session.execute(delete(AuditEvent).where(
            AuditEvent.id <= report.audit_max_id,
            AuditEvent.created_at < datetime.fromisoformat(report.generated_at)
            - timedelta(days=report.policy["audit_days"]))))
    return done


def _rows(result: object) -> int:
    assert isinstance(result, CursorResult)  # DML statements answer with a cursor
    return int(result.rowcount)


def _count_outputs(session: Session, run_ids: list[int]) -> int:
    if not run_ids:
        return 0
    return int(session.scalar(select(func.count()).select_from(Output)
                              .where(Output.run_id.in_(run_ids))) or 0)
