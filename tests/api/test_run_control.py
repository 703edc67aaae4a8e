"""Run control over HTTP: pause, resume, cancel, retry-failed; every status x action, the
409s, what cancel keeps, what retry-failed resets, roles, and a concurrent double cancel."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from flask import Flask
from sqlalchemy import func, select, update

from assay.api.runs import control as control_api
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.runs import control
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.runs.service import CellResult, record_results
from assay.events.publish import stream_key
from assay.extensions import db
from assay.settings import Settings
from tests.factories import Factory, Session, race

S = RunStatus
ACTIONS = ["pause", "resume", "cancel", "retry-failed"]
# The contract's state machine, written out (not derived from the code under test).
ALLOWED: dict[str, dict[RunStatus, RunStatus]] = {
    "pause": {S.pending: S.paused, S.running: S.paused},
    "resume": {S.paused: S.running, S.budget_exceeded: S.running},
    "cancel": {S.pending: S.cancelled, S.running: S.cancelled, S.paused: S.cancelled},
    "retry-failed": {S.partial: S.running, S.failed: S.running, S.budget_exceeded: S.running},
}
AUDITED = {"pause": "run.paused", "resume": "run.resumed", "cancel": "run.cancelled",
           "retry-failed": "run.retried"}


@dataclass
class Ctx:
    factory: Factory
    owner: User
    project: Project
    run_id: int
    browser: Session
    enqueued: list[int] = field(default_factory=list)

    def url(self, action: str) -> str:
        return f"/api/projects/{self.project.id}/runs/{self.run_id}/{action}"


@pytest.fixture
def ctx(factory: Factory, monkeypatch: pytest.MonkeyPatch) -> Ctx:
    owner = factory.user()
    project = factory.project(owner, "Control")
    run_id = factory.finished_run(owner, project)  # 24 planned cells, all pending
    found = Ctx(factory, owner, project, run_id, factory.login(owner))

    def enqueue(_rt: Any, run_id: int, shards: int | None = None) -> int:
        found.enqueued.append(run_id)
        return 1

    monkeypatch.setattr(control_api, "enqueue_run", enqueue)
    return found


def set_run(run_id: int, status: RunStatus, **values: Any) -> None:
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(status=status, **values))
        session.commit()


def cells(run_id: int) -> list[Output]:
    with db.factory() as session:
        return list(session.scalars(select(Output).where(Output.run_id == run_id)
                                    .order_by(Output.id)))


def run_row(run_id: int) -> Run:
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run


def targets(run_id: int) -> list[RunTarget]:
    with db.factory() as session:
        return list(session.scalars(select(RunTarget).where(RunTarget.run_id == run_id)
                                    .order_by(RunTarget.id)))


def audits(run_id: int, action: str | None = None) -> list[AuditEvent]:
    with db.factory() as session:
        stmt = select(AuditEvent).where(AuditEvent.target_type == "run",
                                        AuditEvent.target_id == str(run_id))
        if action:
            stmt = stmt.where(AuditEvent.action == action)
        return list(session.scalars(stmt.order_by(AuditEvent.id)))


def last_event(redis_conn: redis.Redis, settings: Settings, run_id: int) -> dict[str, Any]:
    entries = redis_conn.xrevrange(stream_key(settings.redis_prefix, run_id), count=1)
    assert entries, "no event published"
    _, fields = entries[0]
    return {"type": fields[b"type"].decode(), **json.loads(fields[b"data"])}


def mark(run_id: int, count: int, status: CellStatus, offset: int = 0,
         **values: Any) -> list[int]:
    """Put `count` cells (from `offset`, in id order) in `status`; returns their ids."""
    ids = [c.id for c in cells(run_id)][offset:offset + count]
    with db.factory() as session:
        session.execute(update(Output).where(Output.id.in_(ids))
                        .values(status=status, **values))
        session.commit()
    return ids


def recount(run_id: int) -> None:
    """Set the run's and targets' counters from the cells, as the engine keeps them."""
    with db.factory() as session:
        for target in session.scalars(select(RunTarget).where(RunTarget.run_id == run_id)):
            counts = dict(session.execute(select(Output.status, func.count()).where(
                Output.target_id == target.id).group_by(Output.status)).all())
            target.succeeded = counts.get("succeeded", 0)
            target.failed = counts.get("failed", 0)
            target.skipped = counts.get("skipped", 0)
        counts = dict(session.execute(select(Output.status, func.count()).where(
            Output.run_id == run_id).group_by(Output.status)).all())
        session.execute(update(Run).where(Run.id == run_id).values(
            succeeded=counts.get("succeeded", 0), failed=counts.get("failed", 0),
            skipped=counts.get("skipped", 0)))
        session.commit()


def test_the_transition_table_is_the_contracts_state_machine() -> None:
    expected = {
        S.pending: {S.running, S.paused, S.cancelled},
        S.running: {S.paused, S.completed, S.partial, S.failed, S.cancelled,
                    S.budget_exceeded},
        S.paused: {S.running, S.cancelled},
        S.partial: {S.running}, S.failed: {S.running}, S.budget_exceeded: {S.running},
        S.completed: set(), S.cancelled: set(),
    }
    assert {k: set(v) for k, v in control.TRANSITIONS.items()} == expected
    for action, moves in ALLOWED.items():
        for source, to in moves.items():
            assert control.can_move(source, to), (action, source, to)


@pytest.mark.parametrize("action", ACTIONS)
def test_every_status_x_action(ctx: Ctx, action: str, redis_conn: redis.Redis,
                               settings: Settings) -> None:
    for status in RunStatus:
        set_run(ctx.run_id, status, finished_at=None, budget_micros=None)
        before_audits = len(audits(ctx.run_id))
        ctx.enqueued.clear()
        reply = ctx.browser.post(ctx.url(action))
        body = reply.json
        assert body is not None
        to = ALLOWED[action].get(status)
        where = f"{action} from {status}"
        if to is None:
            assert reply.status_code == 409, (where, body)
            assert body["code"] == "INVALID_TRANSITION" and body["status"] == 409, where
            target = "running" if action in ("resume", "retry-failed") else \
                "paused" if action == "pause" else "cancelled"
            assert status.value in body["message"] and target in body["message"], body
            assert body["errors"] == {"status": status.value, "to": target}
            assert run_row(ctx.run_id).status == status, where
            assert len(audits(ctx.run_id)) == before_audits, f"{where}: a refusal audited"
            assert ctx.enqueued == [], where
            continue
        assert reply.status_code == 200, (where, body)
        assert body["status"] == to and body["id"] == ctx.run_id, where
        assert run_row(ctx.run_id).status == to, where
        trail = audits(ctx.run_id)
        assert len(trail) == before_audits + 1, where
        assert trail[-1].action == AUDITED[action] and trail[-1].actor_id == ctx.owner.id
        assert trail[-1].data["from"] == status and trail[-1].data["to"] == to, where
        assert ctx.enqueued == ([ctx.run_id] if to == S.running else []), where
        event = last_event(redis_conn, settings, ctx.run_id)
        assert event["type"] == "run.status" and event["status"] == to, where
        assert event["run_id"] == ctx.run_id


def test_pause_then_resume_keeps_started_at_and_enqueues(ctx: Ctx) -> None:
    set_run(ctx.run_id, S.pending, started_at=None, finished_at=None)
    assert ctx.browser.post(ctx.url("pause")).status_code == 200
    resumed = ctx.browser.post(ctx.url("resume"))
    assert resumed.status_code == 200 and resumed.json is not None
    assert resumed.json["status"] == "running" and resumed.json["started_at"] is not None
    started = run_row(ctx.run_id).started_at
    assert ctx.browser.post(ctx.url("pause")).status_code == 200
    assert ctx.browser.post(ctx.url("resume")).status_code == 200
    assert run_row(ctx.run_id).started_at == started
    assert ctx.enqueued == [ctx.run_id, ctx.run_id]


def test_cancel_keeps_what_is_done_and_skips_the_rest(ctx: Ctx) -> None:
    set_run(ctx.run_id, S.running, finished_at=None)
    done = mark(ctx.run_id, 5, CellStatus.succeeded, text="kept", finished_at=utcnow())
    failed = mark(ctx.run_id, 2, CellStatus.failed, offset=5, error_class="server_error")
    in_flight = mark(ctx.run_id, 1, CellStatus.running, offset=7, lease_owner="shard-1",
                     lease_until=utcnow())
    recount(ctx.run_id)
    reply = ctx.browser.post(ctx.url("cancel"))
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["status"] == "cancelled" and reply.json["finished_at"] is not None

    after = {c.id: c for c in cells(ctx.run_id)}
    email = ctx.owner.email
    for oid in done:
        assert after[oid].status == "succeeded" and after[oid].text == "kept"
    for oid in failed:
        assert after[oid].status == "failed" and after[oid].error_class == "server_error"
    assert after[in_flight[0]].status == "running", "a cell in flight finishes on its own"
    skipped = [c for c in after.values() if c.status == "skipped"]
    assert len(skipped) == 24 - 8
    assert {(c.error_class, c.error_message) for c in skipped} == {
        ("cancelled", f"Cancelled by {email}")}
    run = run_row(ctx.run_id)
    assert (run.succeeded, run.failed, run.skipped) == (5, 2, 16)
    assert run.error == f"Cancelled by {email}"
    assert sum(t.skipped for t in targets(ctx.run_id)) == 16
    assert audits(ctx.run_id, "run.cancelled")[0].data["skipped"] == 16

    # The cell in flight is recorded as usual; the run stays cancelled.
    with db.factory() as session:
        record_results(session, ctx.run_id, "shard-1", [
            CellResult(output_id=in_flight[0], ok=True, text="late", calls=1)])
    assert {c.id: c for c in cells(ctx.run_id)}[in_flight[0]].status == "succeeded"
    assert run_row(ctx.run_id).status == "cancelled"
    again = ctx.browser.post(ctx.url("cancel"))
    assert again.status_code == 409 and again.json is not None
    assert again.json["code"] == "INVALID_TRANSITION"


def test_retry_failed_reopens_failed_and_skipped_cells_and_moves_counters(ctx: Ctx) -> None:
    now = utcnow()
    succeeded = mark(ctx.run_id, 17, CellStatus.succeeded, text="ok", finished_at=now)
    failed = mark(ctx.run_id, 4, CellStatus.failed, offset=17, error_class="server_error",
                  error_message="500", finished_at=now, attempts=3)
    skipped = mark(ctx.run_id, 3, CellStatus.skipped, offset=21,
                   error_class="budget_exceeded", error_message="Budget", finished_at=now)
    recount(ctx.run_id)
    set_run(ctx.run_id, S.partial, finished_at=now, error="Some cells failed")
    per_target_before = {t.id: (t.succeeded, t.failed, t.skipped) for t in targets(ctx.run_id)}
    assert sum(f for _, f, _ in per_target_before.values()) == 4

    reply = ctx.browser.post(ctx.url("retry-failed"))
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["status"] == "running" and reply.json["finished_at"] is None
    run = run_row(ctx.run_id)
    assert (run.succeeded, run.failed, run.skipped) == (17, 0, 0)
    assert run.error is None and run.finished_at is None
    for target in targets(ctx.run_id):
        assert (target.succeeded, target.failed, target.skipped) == \
            (per_target_before[target.id][0], 0, 0)
    after = {c.id: c for c in cells(ctx.run_id)}
    for oid in failed + skipped:
        cell = after[oid]
        assert cell.status == "pending", oid
        assert (cell.error_class, cell.error_message, cell.finished_at, cell.lease_owner) == \
            (None, None, None, None)
    assert all(after[oid].attempts == 3 for oid in failed), "attempts are history: kept"
    assert all(after[oid].status == "succeeded" and after[oid].text == "ok"
               for oid in succeeded)
    assert ctx.enqueued == [ctx.run_id]
    assert audits(ctx.run_id, "run.retried")[0].data == {
        "from": "partial", "to": "running", "reopened": 7}


def test_budget_exceeded_resumes_only_when_the_caps_leave_room(ctx: Ctx) -> None:
    cancelled = mark(ctx.run_id, 2, CellStatus.skipped, error_class="cancelled")
    budget = mark(ctx.run_id, 10, CellStatus.skipped, offset=2, error_class="budget_exceeded")
    mark(ctx.run_id, 12, CellStatus.succeeded, offset=12)
    recount(ctx.run_id)
    set_run(ctx.run_id, S.budget_exceeded, budget_micros=1000, spent_micros=900,
            reserved_micros=100, finished_at=utcnow())
    for action in ("resume", "retry-failed"):
        refused = ctx.browser.post(ctx.url(action))
        assert refused.status_code == 409 and refused.json is not None
        assert refused.json["code"] == "BUDGET_SPENT", refused.json
    assert run_row(ctx.run_id).status == "budget_exceeded" and not ctx.enqueued

    # The run's cap raised, but the project's is spent.
    set_run(ctx.run_id, S.budget_exceeded, budget_micros=5000)
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == ctx.project.id).values(
            budget_micros=10, spent_micros=10))
        session.commit()
    refused = ctx.browser.post(ctx.url("resume"))
    assert refused.status_code == 409 and refused.json is not None
    assert refused.json["code"] == "BUDGET_SPENT"
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == ctx.project.id).values(
            budget_micros=None))
        session.commit()

    reply = ctx.browser.post(ctx.url("resume"))
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["status"] == "running"
    after = {c.id: c for c in cells(ctx.run_id)}
    assert all(after[oid].status == "pending" for oid in budget)
    assert all(after[oid].status == "skipped" for oid in cancelled), \
        "resume reopens only what the budget skipped"
    run = run_row(ctx.run_id)
    assert (run.succeeded, run.skipped) == (12, 2)
    assert sum(t.skipped for t in targets(ctx.run_id)) == 2
    assert audits(ctx.run_id, "run.resumed")[0].data["reopened"] == 10
    assert ctx.enqueued == [ctx.run_id]


def test_roles(ctx: Ctx) -> None:
    outsider = ctx.factory.user()
    ctx.factory.project(outsider, "Theirs")
    for role, expected in ((Role.viewer, 403), (Role.reviewer, 403), (Role.editor, 200)):
        member = ctx.factory.login(ctx.factory.member(ctx.project, role))
        set_run(ctx.run_id, S.running)
        reply = member.post(ctx.url("pause"))
        assert reply.status_code == expected, (role, reply.json)
    set_run(ctx.run_id, S.running)
    reply = ctx.factory.login(outsider).post(ctx.url("cancel"))
    assert reply.status_code == 404
    assert run_row(ctx.run_id).status == "running"
    missing = ctx.browser.post(
        f"/api/projects/{ctx.project.id}/runs/{ctx.run_id + 1000}/pause")
    assert missing.status_code == 404


def test_a_concurrent_double_cancel_has_one_winner(ctx: Ctx, app: Flask,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    set_run(ctx.run_id, S.running, finished_at=None)
    token = ctx.factory.api_token(ctx.owner)
    replies = race(app, monkeypatch, "assay.core.runs.service.get_run",
                   [("POST", ctx.url("cancel"), None)] * 2,
                   headers={"Authorization": f"Bearer {token}"})
    assert sorted(r.status_code for r in replies) == [200, 409], [r.json for r in replies]
    loser = next(r for r in replies if r.status_code == 409)
    assert loser.json is not None and loser.json["code"] == "INVALID_TRANSITION"
    assert len(audits(ctx.run_id, "run.cancelled")) == 1
    run = run_row(ctx.run_id)
    assert run.status == "cancelled" and run.skipped == 24
    assert sum(t.skipped for t in targets(ctx.run_id)) == 24


def test_a_concurrent_pause_and_cancel_end_in_one_consistent_state(
        ctx: Ctx, app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    set_run(ctx.run_id, S.running, finished_at=None)
    token = ctx.factory.api_token(ctx.owner)
    replies = race(app, monkeypatch, "assay.core.runs.service.get_run",
                   [("POST", ctx.url("pause"), None), ("POST", ctx.url("cancel"), None)],
                   headers={"Authorization": f"Bearer {token}"})
    codes = [r.status_code for r in replies]
    # pause then cancel both succeed; cancel then pause refuses the pause.
    assert codes in ([200, 200], [409, 200]), [r.json for r in replies]
    assert run_row(ctx.run_id).status == "cancelled"
    assert len(audits(ctx.run_id, "run.cancelled")) == 1
    assert len(audits(ctx.run_id, "run.paused")) == (1 if codes[0] == 200 else 0)


def test_raising_the_budget_through_the_api_lets_a_budget_stop_resume(ctx: Ctx) -> None:
    mark(ctx.run_id, 10, CellStatus.skipped, error_class="budget_exceeded")
    recount(ctx.run_id)
    set_run(ctx.run_id, S.budget_exceeded, budget_micros=1000, spent_micros=900,
            reserved_micros=0, finished_at=utcnow(), alerted_at=utcnow())
    path = f"/api/projects/{ctx.project.id}/runs/{ctx.run_id}"
    below = ctx.browser.patch(path, json={"budget_micros": 899})
    assert below.status_code == 422 and below.json is not None
    assert "at least 900" in below.json["errors"]["json"]["budget_micros"][0]
    assert run_row(ctx.run_id).budget_micros == 1000, "a refused change writes nothing"
    for bad in ({"budget_micros": 0}, {"budget_micros": "lots"}, {},
                {"budget_micros": 5000, "alert_threshold": 2}):
        refused = ctx.browser.patch(path, json=bad)
        assert refused.status_code == 422, bad
    raised = ctx.browser.patch(path, json={"budget_micros": 50_000, "alert_threshold": 0.5})
    assert raised.status_code == 200 and raised.json is not None
    assert raised.json["budget_micros"] == 50_000 and raised.json["alert_threshold"] == 0.5
    run = run_row(ctx.run_id)
    assert run.alerted_at is None, "a new cap gets its own alert"
    assert audits(ctx.run_id, "run.budget_changed")[0].data["to"] == 50_000
    resumed = ctx.browser.post(ctx.url("resume"))
    assert resumed.status_code == 200 and resumed.json is not None
    assert resumed.json["status"] == "running" and ctx.enqueued == [ctx.run_id]
    viewer = ctx.factory.member(ctx.project, Role.viewer)
    assert ctx.factory.login(viewer).patch(path, json={"budget_micros": 1}).status_code == 403
