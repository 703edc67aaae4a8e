"""Scoring a finished run after the fact: POST /runs/{id}/scorers pins scorer versions on
it (editors and above), answers 202 and enqueues the scoring job, which scores every
recorded output the new versions lack, within the caps; a newer version of a pinned scorer
keeps both versions' scores. The estimate counts the judges on the real replies. Bad input
is a 422 naming each entry, with nothing written and nothing enqueued."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rq import Queue
from sqlalchemy import func, select, update

from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.runs.models import Run, RunStatus
from assay.core.scoring.models import RunScorer, Score
from assay.core.scoring.service import get_scorer, set_archived
from assay.extensions import db
from assay.jobs.scoring import score_run
from assay.runtime import current
from tests.api.stats_data import make_scorer, new_version, pin
from tests.factories import Factory, PlannedRun, Session, succeed

TEXTS = ["An answer", "Nope", "Another answer"]


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner)


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


@pytest.fixture
def finished(factory: Factory, owner: Any, project: Project) -> PlannedRun:
    """Three cases on two targets, every output succeeded, the run completed."""
    planned = factory.planned_run(owner, project, cases=3, targets=2)
    with db.factory() as session:
        ids = session.scalars(select(Run.id).where(Run.id == planned.run_id)).all()
        assert ids
        from assay.core.runs.models import Output

        outputs = session.scalars(select(Output.id).where(Output.run_id == planned.run_id)
                                  .order_by(Output.id)).all()
    for i, output_id in enumerate(outputs):
        succeed(output_id, TEXTS[i % len(TEXTS)])
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == planned.run_id).values(
            status=RunStatus.completed, succeeded=len(outputs)))
        session.commit()
    return planned


def url(project: Project, planned: PlannedRun, tail: str = "") -> str:
    return f"/api/projects/{project.id}/runs/{planned.run_id}/scorers{tail}"


def jobs(settings: Any, redis_conn: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [(j.func_name, j.args) for j in
            Queue(settings.runs_queue, connection=redis_conn).jobs]


def scores_by_version(run_id: int) -> dict[int, list[bool | None]]:
    with db.factory() as session:
        rows = session.execute(select(Score.scorer_version_id, Score.passed)
                               .where(Score.run_id == run_id).order_by(Score.output_id)).all()
    out: dict[int, list[bool | None]] = {}
    for version_id, passed in rows:
        out.setdefault(version_id, []).append(passed)
    return out


def pinned(run_id: int) -> list[int]:
    with db.factory() as session:
        return list(session.scalars(select(RunScorer.scorer_version_id)
                                    .where(RunScorer.run_id == run_id)
                                    .order_by(RunScorer.position)))


def test_adding_a_scorer_pins_it_and_the_job_scores_every_output(
        browser: Session, project: Project, finished: PlannedRun, settings: Any,
        redis_conn: Any) -> None:
    v1 = make_scorer(project.id, "icontains", name="Says answer")
    reply = browser.post(url(project, finished), json={"scorer_version_ids": [v1]})
    assert reply.status_code == 202, reply.json
    scorers = reply.json["run"]["scorers"]
    assert [(s["scorer_version_id"], s["version"]) for s in scorers] == [(v1, 1)]
    assert pinned(finished.run_id) == [v1]
    assert jobs(settings, redis_conn) == [("assay.jobs.scoring.score_run", (finished.run_id,))]
    with db.factory() as session:
        event = session.scalars(select(AuditEvent).where(
            AuditEvent.action == "run.scorers_added")).one()
        assert event.target_id == str(finished.run_id) or event.target_id == finished.run_id
        assert event.data["scorer_version_ids"] == [v1]

    assert score_run(finished.run_id) == 6
    stream = browser.get(url(project, finished, "/events"), query_string={
        "last_event_id": reply.json["events_after"]}).get_data(as_text=True)
    frames = [line.removeprefix("event: ") for line in stream.splitlines()
              if line.startswith("event: ")]
    assert frames == ["run.scored", "run.scoring_finished"]  # this job's, then its end
    assert '"scores": 6' in stream.split("event: run.scoring_finished")[1]
    texts = [TEXTS[i % 3] for i in range(6)]
    assert scores_by_version(finished.run_id) == {v1: ["answer" in t.lower() for t in texts]}
    assert score_run(finished.run_id) == 0  # nothing scored twice
    idle = browser.get(url(project, finished, "/events"), query_string={
        "last_event_id": "99999999999999-0"}).get_data(as_text=True)
    assert '"idle": true' in idle  # no job queued or running: the stream ends at once
    events = current().redis.xrange(current().events_key(finished.run_id))
    last = json.loads(events[-1][1][b"data"])
    assert (last["type"], last["scores"]) == ("run.scoring_finished", 0)


def test_a_new_version_of_a_pinned_scorer_keeps_both_versions_scores(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    v1 = make_scorer(project.id, "icontains", name="Says answer")
    pin(finished.run_id, v1)
    assert score_run(finished.run_id) == 6
    v2 = new_version(project.id, v1)
    estimate = browser.post(url(project, finished, "/estimate"),
                            json={"scorer_version_ids": [v2]})
    assert estimate.status_code == 200, estimate.json
    assert (estimate.json["outputs"], estimate.json["scores"], estimate.json["judge_calls"],
            estimate.json["high_micros"]) == (6, 6, 0, 0)
    reply = browser.post(url(project, finished), json={"scorer_version_ids": [v2]})
    assert reply.status_code == 202, reply.json
    assert [s["version"] for s in reply.json["run"]["scorers"]] == [1, 2]
    assert score_run(finished.run_id) == 6
    by_version = scores_by_version(finished.run_id)
    assert set(by_version) == {v1, v2} and by_version[v1] == by_version[v2]
    base = f"/api/projects/{project.id}/runs/{finished.run_id}/statistics"
    for version in (v1, v2):  # the statistics speak of the version asked for
        body = browser.get(f"{base}?scorer_version_id={version}")
        assert body.status_code == 200, body.json
        assert {i["scorer_version_id"] for i in body.json["items"]} == {version}


def test_the_estimate_counts_each_judge_on_each_reply_and_the_budget_left(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    judge = make_scorer(project.id, "llm_judge", name="Judge", judges=("Fake Fast",))
    check = make_scorer(project.id, "icontains", name="Check")
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == finished.run_id).values(
            budget_micros=5000, spent_micros=1200, reserved_micros=300))
        session.commit()
    reply = browser.post(url(project, finished, "/estimate"),
                         json={"scorer_version_ids": [judge, check]})
    assert reply.status_code == 200, reply.json
    body = reply.json
    assert (body["outputs"], body["scores"], body["judge_calls"]) == (6, 12, 6)
    assert 0 < body["low_micros"] < body["high_micros"]
    assert body["complete"] is True and body["unpriced_judges"] == []
    assert body["run_budget_left_micros"] == 3500
    assert body["project_budget_left_micros"] is None
    assert [s["name"] for s in body["scorers"]] == ["Judge", "Check"]
    assert pinned(finished.run_id) == []  # the estimate writes nothing


def test_the_job_respects_the_budget_and_says_it_stopped(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    judge = make_scorer(project.id, "llm_judge", name="Judge", judges=("Fake Fast",))
    with db.factory() as session:  # no room left for a single verdict
        session.execute(update(Run).where(Run.id == finished.run_id).values(
            budget_micros=10, spent_micros=10))
        session.commit()
    reply = browser.post(url(project, finished), json={"scorer_version_ids": [judge]})
    assert reply.status_code == 202, reply.json
    assert score_run(finished.run_id) == 0
    with db.factory() as session:
        run = session.get(Run, finished.run_id)
        assert run is not None and (run.spent_micros, run.reserved_micros) == (10, 0)
    events = current().redis.xrange(current().events_key(finished.run_id))
    last = json.loads(events[-1][1][b"data"])
    assert (last["type"], last["stopped"]) == ("run.scoring_finished", "budget_exceeded")


@pytest.mark.parametrize("role, attach, estimate", [
    (Role.viewer, 403, 200), (Role.reviewer, 403, 200), (Role.editor, 202, 200)])
def test_editors_and_above_add_scorers_viewers_may_estimate(
        factory: Factory, project: Project, finished: PlannedRun, role: Role, attach: int,
        estimate: int) -> None:
    version = make_scorer(project.id, "icontains")
    member = factory.login(factory.member(project, role))
    body = {"scorer_version_ids": [version]}
    assert member.post(url(project, finished, "/estimate"), json=body).status_code == estimate
    assert member.post(url(project, finished), json=body).status_code == attach
    assert pinned(finished.run_id) == ([version] if attach == 202 else [])
    stranger = factory.signed_in()
    assert stranger.post(url(project, finished), json=body).status_code == 404


def test_bad_input_is_a_422_naming_each_entry_and_changes_nothing(
        browser: Session, project: Project, finished: PlannedRun, factory: Factory,
        owner: Any, settings: Any, redis_conn: Any) -> None:
    kept = make_scorer(project.id, "icontains", name="Kept")
    pin(finished.run_id, kept)
    archived = make_scorer(project.id, "icontains", name="Old")
    with db.factory() as session:
        found = session.get(Project, project.id)
        assert found is not None
        from assay.core.scoring.models import ScorerVersion

        version = session.get(ScorerVersion, archived)
        assert version is not None
        set_archived(session, None, found, get_scorer(session, found, version.scorer_id), True)
        session.commit()
    pairwise = make_scorer(project.id, "pairwise_judge", name="Pairs")
    other = factory.project(owner, "Other")
    foreign = make_scorer(other.id, "icontains", name="Elsewhere")
    ghost_judge = make_scorer(project.id, "llm_judge", name="Ghost", judges=("nobody",))
    fine = make_scorer(project.id, "icontains", name="Fine")

    def refused(body: Any) -> Any:
        for tail in ("", "/estimate"):
            reply = browser.post(url(project, finished, tail), json=body)
            assert reply.status_code == 422, (body, reply.json)
        return reply.json["errors"]["json"]["scorer_version_ids"]

    errors = refused({"scorer_version_ids": [fine, kept, archived, pairwise, foreign, 999999]})
    assert set(errors) == {"1", "2", "3", "4", "5"}
    assert "already has" in errors["1"][0] and "archived" in errors["2"][0]
    assert "pairwise" in errors["3"][0] and "No scorer version" in errors["4"][0]
    assert "judges with 'nobody'" in refused({"scorer_version_ids": [ghost_judge]})[
        "_schema"][0]
    assert refused({"scorer_version_ids": [fine, fine]})["_schema"]
    assert refused({"scorer_version_ids": []})
    assert refused({"scorer_version_ids": ["7"]})
    assert refused({}) == ["Missing data for required field."]
    assert pinned(finished.run_id) == [kept]
    assert jobs(settings, redis_conn) == []
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(AuditEvent).where(
            AuditEvent.action == "run.scorers_added")) == 0


def test_a_run_still_going_is_a_409(browser: Session, project: Project,
                                    finished: PlannedRun, settings: Any,
                                    redis_conn: Any) -> None:
    version = make_scorer(project.id, "icontains")
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == finished.run_id).values(
            status=RunStatus.running))
        session.commit()
    reply = browser.post(url(project, finished), json={"scorer_version_ids": [version]})
    assert reply.status_code == 409 and reply.json["code"] == "RUN_NOT_FINISHED"
    assert pinned(finished.run_id) == [] and jobs(settings, redis_conn) == []


def test_the_run_dashboard_reads_one_version_the_newest_by_default(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    """Both versions' scores are kept; the dashboard does not average them together."""
    v1 = make_scorer(project.id, "icontains", name="Says answer")  # value "answer"
    pin(finished.run_id, v1)
    assert score_run(finished.run_id) == 6
    with db.factory() as session:
        found = session.get(Project, project.id)
        assert found is not None
        from assay.core.scoring.models import ScorerVersion
        from assay.core.scoring.service import add_version

        old = session.get(ScorerVersion, v1)
        assert old is not None
        v2 = add_version(session, None, found, get_scorer(session, found, old.scorer_id),
                         {"params": {"value": "nope"}}).id
        session.commit()
    assert browser.post(url(project, finished), json={"scorer_version_ids": [v2]}
                        ).status_code == 202
    assert score_run(finished.run_id) == 6
    dashboard = f"/api/projects/{project.id}/reports/runs/{finished.run_id}/dashboard"

    def read(**query: Any) -> dict[str, Any]:
        reply = browser.get(dashboard, query_string=query)
        assert reply.status_code == 200, reply.json
        return dict(reply.json)

    newest = read()  # 2 of 6 outputs say "Nope"; 4 of 6 say "answer"
    assert newest["scorer"]["versions"] == [2]
    assert newest["pass_rate"]["rate"] == pytest.approx(2 / 6)
    assert newest["trend"][-1]["score"] == newest["score"]
    first = read(scorer_version_id=v1)
    assert first["scorer"]["versions"] == [1]
    assert first["pass_rate"]["rate"] == pytest.approx(4 / 6)
    other = make_scorer(project.id, "icontains", name="Other")
    bad = browser.get(dashboard, query_string={"scorer_version_id": v1,
                                               "scorer_id": _scorer_of(other)})
    assert bad.status_code == 422 and "scorer_version_id" in bad.json["errors"]["query"]


def _scorer_of(version_id: int) -> int:
    with db.factory() as session:
        from assay.core.scoring.models import ScorerVersion

        found = session.get(ScorerVersion, version_id)
        assert found is not None
        return found.scorer_id
