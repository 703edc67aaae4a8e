"""Data retention (issue 19 item 7): a dry run reports, a real run removes exactly what it
reported; deleted projects are hidden at once and purged after their grace period; the job
is scheduled once per interval whatever the number of reapers, and runs on a real worker."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from rq import Queue, SimpleWorker
from sqlalchemy import func, select, update

from assay.core.base import utcnow
from assay.core.projects.models import AuditEvent, Project
from assay.core.retention.policy import RetentionPolicy
from assay.core.runs.models import Output, Run, RunStatus
from assay.extensions import db
from assay.jobs import retention
from assay.runtime import current
from tests.factories import Factory

POLICY = RetentionPolicy(raw_days=30, runs_days=180, events_days=7, audit_days=365,
                         project_grace_days=30)


def age_run(run_id: int, days: int) -> None:
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(
            finished_at=utcnow() - timedelta(days=days)))
        session.commit()


def snapshot() -> dict[str, Any]:
    """Everything retention may touch, to compare before and after."""
    with db.factory() as session:
        runs = set(session.scalars(select(Run.id)))
        raw = set(session.scalars(select(Output.id).where(Output.raw_response.is_not(None))))
        outputs = set(session.scalars(select(Output.id)))
        audit = session.scalar(select(func.count()).select_from(AuditEvent).where(
            AuditEvent.project_id.not_in(select(Project.id).where(Project.deleted_at.is_not(None)))))
        projects = set(session.scalars(select(Project.id)))
        gone_outputs = session.scalar(select(func.count()).select_from(Output).join(Run).join(
            Project).where(Project.deleted_at < utcnow() - timedelta(days=30)))
    streams = {run for run in runs if current().redis.exists(current().events_key(run))}
    return {"runs": runs, "raw": raw, "outputs": outputs, "audit": audit,
            "projects": projects, "streams": streams,
            "gone_outputs": gone_outputs}


@pytest.fixture
def world(factory: Factory) -> dict[str, Any]:
    owner = factory.user()
    project = factory.project(owner)
    ids = {name: factory.finished_run(owner, project, execute=True)
           for name in ("ancient", "old", "recent")}
    age_run(ids["ancient"], 200)  # past runs_days: deleted whole
    age_run(ids["old"], 40)  # past raw_days and events_days: raw payloads and stream go
    age_run(ids["recent"], 1)  # within every period: untouched
    with db.factory() as session:
        session.execute(update(AuditEvent).where(AuditEvent.project_id == project.id)
                        .values(created_at=utcnow() - timedelta(days=400)))
        session.commit()
    gone = factory.project(owner, "Deleted long ago")
    fresh = factory.project(owner, "Deleted yesterday")
    gone_run = factory.finished_run(owner, gone)
    with db.factory() as session:
        for pid, days in ((gone.id, 31), (fresh.id, 1)):
            session.execute(update(Project).where(Project.id == pid).values(
                deleted_at=utcnow() - timedelta(days=days)))
        session.commit()
    return {**ids, "project": project, "gone": gone.id, "fresh": fresh.id,
            "gone_run": gone_run}


def test_dry_run_reports_and_a_real_run_removes_exactly_that(world: dict[str, Any]) -> None:
    before = snapshot()
    assert world["old"] in before["streams"] and before["raw"]
    dry = retention.retention(current(), POLICY, dry_run=True)
    assert snapshot() == before  # a dry run removes nothing
    report = dry["report"]
    assert report["runs"] == [world["ancient"]]
    assert [p["id"] for p in report["projects"]] == [world["gone"]]
    assert report["raw_runs"] == [world["old"]]
    assert report["audit_events"] > 0
    assert set(report["event_streams"]) == {world["ancient"], world["old"], world["gone_run"]}

    real = retention.retention(current(), POLICY, dry_run=False)
    assert {k: v for k, v in real["report"].items() if k != "generated_at"} == \
        {k: v for k, v in report.items() if k != "generated_at"}
    after = snapshot()
    with db.factory() as session:
        old_outputs = set(session.scalars(select(Output.id).where(Output.run_id == world["old"])))
    assert before["runs"] - after["runs"] == {world["ancient"], world["gone_run"]}
    assert before["projects"] - after["projects"] == {world["gone"]}
    deleted_outputs = before["outputs"] - after["outputs"]
    assert len(deleted_outputs) == report["runs_outputs"] + before["gone_outputs"]
    assert before["raw"] - after["raw"] - deleted_outputs == old_outputs
    assert len(old_outputs) == report["raw_outputs"]
    assert real["applied"] == {"projects": 1, "runs": 1, "raw_outputs": report["raw_outputs"],
                               "audit_events": report["audit_events"], "event_streams": 3}
    # (a purged project's own audit trail goes with it)
    assert before["audit"] - after["audit"] == report["audit_events"]
    assert before["streams"] - after["streams"] == set(report["event_streams"])
    assert world["recent"] in after["streams"] and world["fresh"] in after["projects"]
    # nothing is left to do: a second pass finds nothing
    again = retention.retention(current(), POLICY, dry_run=True)["report"]
    assert (again["runs"], again["projects"], again["raw_runs"], again["event_streams"],
            again["audit_events"]) == ([], [], [], [], 0)


def test_zero_days_keeps_forever(world: dict[str, Any]) -> None:
    keep = RetentionPolicy(raw_days=0, runs_days=0, events_days=0, audit_days=0,
                           project_grace_days=10_000)
    before = snapshot()
    result = retention.retention(current(), keep, dry_run=False)
    assert snapshot() == before
    assert result["applied"] == {"projects": 0, "runs": 0, "raw_outputs": 0,
                                 "audit_events": 0, "event_streams": 0}


def test_a_deleted_project_is_hidden_at_once_and_its_runs_cancelled(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    planned = factory.planned_run(owner, project)
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == planned.run_id).values(
            status=RunStatus.running))
        session.commit()
    client = factory.login(owner)
    assert client.delete(f"/api/projects/{project.id}").status_code == 204
    assert client.get(f"/api/projects/{project.id}").status_code == 404
    assert project.id not in [p["id"] for p in client.get("/api/projects").json["items"]]
    assert client.get(f"/api/projects/{project.id}/runs").status_code == 404
    with db.factory() as session:
        kept = session.get(Project, project.id)
        assert kept is not None and kept.deleted_at is not None  # still there for the grace
        assert session.get(Run, planned.run_id).status == RunStatus.cancelled
    # a new project may take the same name at once
    assert client.post("/api/projects", json={"name": "Project"}).status_code == 201


def test_the_job_is_scheduled_once_per_interval_and_runs_on_a_worker(
        world: dict[str, Any]) -> None:
    rt = current()
    rt.redis.delete(f"{rt.settings.redis_prefix}:retention:scheduled")
    queue = Queue(rt.settings.runs_queue, connection=rt.redis)
    queue.empty()
    assert retention.schedule(rt) is True
    assert retention.schedule(rt) is False  # a second reaper in the same interval: nothing
    # a worker runs it: this one, or a live worker of another test that took it first
    SimpleWorker([queue], connection=rt.redis).work(burst=True)
    deadline = time.monotonic() + 30
    while True:
        with db.factory() as session:
            if session.get(Project, world["gone"]) is None:  # the default grace: 30 days
                assert session.get(Project, world["fresh"]) is not None
                break
        assert time.monotonic() < deadline, "the retention job did not run"
        time.sleep(0.2)


def test_bad_retention_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="ASSAY_RETAIN_RUNS_DAYS"):
        RetentionPolicy.from_env({"ASSAY_RETAIN_RUNS_DAYS": "ninety"})
    with pytest.raises(ValueError, match="negative"):
        RetentionPolicy.from_env({"ASSAY_RETAIN_RAW_DAYS": "-1"})
    assert RetentionPolicy.from_env({}).raw_days == 30
