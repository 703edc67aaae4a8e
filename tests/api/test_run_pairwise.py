"""Pairwise judging of two runs over HTTP: a target of the run is judged against a target
of a base run on the cases both ran (by the real job on the fake provider's judge); the
summary with base_run_id reads only those comparisons, and the run's own summary none of
them; a base run of another project is a 404, runs without a shared case a 422, and bad
input writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, insert, select

from assay.core.projects.models import AuditEvent
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.scoring.models import Comparison
from assay.extensions import db
from assay.jobs.comparisons import compare_targets
from assay.settings import Settings
from tests.api.test_comparisons import World, _queued, succeed_outputs
from tests.factories import Factory, PlannedRun


def rerun(planned: PlannedRun, name: str = "Rerun", case_ids: list[int] | None = None,
          targets: int = 2) -> PlannedRun:
    """Another run of the same project and cases (or of `case_ids`), its outputs
    succeeded with a different text."""
    with db.factory() as session:
        first = session.get(Run, planned.run_id)
        assert first is not None
        models = list(session.scalars(select(RunTarget.model_id).where(
            RunTarget.run_id == planned.run_id).order_by(RunTarget.position)))
        cases = case_ids if case_ids is not None else planned.case_ids
        run = Run(project_id=first.project_id, name=name, status=RunStatus.completed,
                  dataset_version_id=first.dataset_version_id, total=len(cases) * targets,
                  settings={"repeats": 1})
        session.add(run)
        session.flush()
        rows = [RunTarget(run_id=run.id, model_id=models[i % len(models)], label=f"Target {i}",
                          position=i, total=len(cases)) for i in range(targets)]
        session.add_all(rows)
        session.flush()
        session.execute(insert(Output), [
            {"run_id": run.id, "case_id": case_id, "target_id": t.id, "repeat": 0, "turn": 0,
             "status": CellStatus.succeeded, "text": f"A longer answer about case {case_id}",
             "attempts": 1} for case_id in cases for t in rows])
        session.commit()
        return PlannedRun(run.id, [t.id for t in rows], list(cases))


@pytest.fixture
def world(factory: Factory) -> World:
    return World(factory, targets=2, cases=3)


def _comparisons() -> int:
    with db.factory() as session:
        return int(session.scalar(select(func.count(Comparison.id))) or 0)


def _audits() -> int:
    with db.factory() as session:
        return int(session.scalar(select(func.count(AuditEvent.id)).where(
            AuditEvent.action == "run.comparisons_started")) or 0)


def test_a_run_is_judged_against_a_base_run_on_their_cases(
        world: World, settings: Settings, redis_conn: Any) -> None:
    base = rerun(world.run, "Base run")
    a, b = world.run.target_ids[0], base.target_ids[1]
    body = {"scorer_id": world.scorer_id, "target_a_id": a, "base_run_id": base.run_id,
            "base_target_id": b}
    reply = world.browser.post(world.url, json=body)
    assert reply.status_code == 202, reply.json
    assert reply.json == {"run_id": world.run.run_id, "scorer_id": world.scorer_id,
                          "scorer_version_id": world.version_id, "target_a_id": a,
                          "target_b_id": b, "base_run_id": base.run_id,
                          "judges": ["Fake Fast"], "pairs": 3, "already_compared": 0,
                          "enqueued": True}
    assert _queued(settings, redis_conn) == [("assay.jobs.comparisons.compare_targets", (
        world.run.run_id, world.version_id, a, b, base.run_id))]
    with db.factory() as session:
        event = session.scalars(select(AuditEvent).where(
            AuditEvent.action == "run.comparisons_started")).one()
        assert event.data["base_run_id"] == base.run_id and event.data["pairs"] == 3

    assert compare_targets(world.run.run_id, world.version_id, a, b, base.run_id) == 3
    with db.factory() as session:
        rows = list(session.execute(
            select(Comparison.run_id, Comparison.case_id, Comparison.error, Output.run_id)
            .join(Output, Output.id == Comparison.output_b_id)))
    assert sorted(r[1] for r in rows) == sorted(world.run.case_ids)
    assert {(r.run_id, r[3], r.error) for r in rows} == {(world.run.run_id, base.run_id, None)}

    summary = world.browser.get(world.url + "/summary",
                                query_string={"base_run_id": base.run_id}).json
    assert summary["base_run_id"] == base.run_id
    [pair] = summary["pairs"]
    assert (pair["target_a_id"], pair["target_b_id"]) == (a, b)
    assert (pair["target_a_label"], pair["target_b_label"]) == ("Planned · Target 0",
                                                                "Base run · Target 1")
    assert pair["comparisons"] == 3
    assert pair["a_wins"] + pair["b_wins"] + pair["ties"] + pair["disagreements"] == 3
    assert pair["position_bias"]["n"] == 3 and pair["position_bias"]["k"] == \
        pair["disagreements"]
    ratings = summary["ratings"]
    assert ratings["available"] is True and ratings["n_comparisons"] == 3
    assert {r["target_id"] for r in ratings["items"]} == {a, b}  # only the two judged
    listed = world.browser.get(world.url, query_string={"base_run_id": base.run_id}).json
    assert listed["total"] == 3 and {c["target_b_id"] for c in listed["items"]} == {b}

    own = world.browser.get(world.url + "/summary").json  # the run's own targets only
    assert own["pairs"] == [] and own["base_run_id"] is None
    assert world.browser.get(world.url).json["total"] == 0

    again = world.browser.post(world.url, json=body).json  # nothing judged twice
    assert (again["pairs"], again["already_compared"], again["enqueued"]) == (0, 3, False)


def test_only_the_shared_cases_are_judged_and_alike_runs_are_told_apart(world: World) -> None:
    base = rerun(world.run, name="Planned", case_ids=world.run.case_ids[:2])
    a, b = world.run.target_ids[1], base.target_ids[0]
    reply = world.browser.post(world.url, json={
        "scorer_id": world.scorer_id, "target_a_id": a, "base_run_id": base.run_id,
        "base_target_id": b})
    assert reply.status_code == 202 and reply.json["pairs"] == 2
    assert compare_targets(world.run.run_id, world.version_id, a, b, base.run_id) == 2
    [pair] = world.browser.get(world.url + "/summary",
                               query_string={"base_run_id": base.run_id}).json["pairs"]
    assert (pair["target_a_label"], pair["target_b_label"]) == (
        f"Planned #{world.run.run_id} · Target 1", f"Planned #{base.run_id} · Target 0")
    assert pair["comparisons"] == 2


def _field(reply: Any, field: str) -> str:
    assert reply.status_code == 422, reply.json
    return " ".join(reply.json["errors"]["json"][field])


def test_bad_input_is_refused_and_writes_nothing(
        world: World, factory: Factory, settings: Settings, redis_conn: Any) -> None:
    base = rerun(world.run)
    other_project = factory.project(world.owner, "Elsewhere")
    foreign = factory.planned_run(world.owner, other_project, cases=3, targets=2)
    unrelated = factory.planned_run(world.owner, world.project, cases=3, targets=2)
    succeed_outputs(unrelated.run_id)
    good = {"scorer_id": world.scorer_id, "target_a_id": world.run.target_ids[0],
            "base_run_id": base.run_id, "base_target_id": base.target_ids[0]}
    post = world.browser.post

    reply = post(world.url, json={**good, "base_run_id": foreign.run_id,
                                  "base_target_id": foreign.target_ids[0]})
    assert reply.status_code == 404
    assert world.browser.get(world.url + "/summary", query_string={
        "base_run_id": foreign.run_id}).status_code == 404
    assert "share no cases" in _field(post(world.url, json={
        **good, "base_run_id": unrelated.run_id, "base_target_id": unrelated.target_ids[0]}),
        "base_run_id")
    assert "No target" in _field(post(world.url, json={
        **good, "base_target_id": world.run.target_ids[1]}), "base_target_id")
    assert "No target" in _field(post(world.url, json={
        **good, "target_a_id": base.target_ids[1]}), "target_a_id")
    assert "target of the base run" in _field(post(world.url, json={
        k: v for k, v in good.items() if k != "base_target_id"}), "base_target_id")
    assert "not both" in _field(post(world.url, json={
        **good, "target_b_id": world.run.target_ids[1]}), "target_b_id")
    assert "is this run" in _field(post(world.url, json={
        **good, "base_run_id": world.run.run_id, "base_target_id": world.run.target_ids[1]}),
        "base_run_id")
    assert "needs base_run_id" in _field(post(world.url, json={
        k: v for k, v in good.items() if k != "base_run_id"}), "base_target_id")
    assert _queued(settings, redis_conn) == []
    assert _comparisons() == 0 and _audits() == 0


def test_a_viewer_cannot_start_and_outsiders_see_nothing(
        world: World, factory: Factory) -> None:
    from assay.core.projects.models import Role

    base = rerun(world.run)
    body = {"scorer_id": world.scorer_id, "target_a_id": world.run.target_ids[0],
            "base_run_id": base.run_id, "base_target_id": base.target_ids[0]}
    viewer = factory.login(factory.member(world.project, Role.viewer))
    assert viewer.post(world.url, json=body).status_code == 403
    assert viewer.get(world.url + "/summary",
                      query_string={"base_run_id": base.run_id}).status_code == 200
    outsider = factory.login(factory.user())
    assert outsider.post(world.url, json=body).status_code == 404
    assert outsider.get(world.url + "/summary",
                        query_string={"base_run_id": base.run_id}).status_code == 404
    assert _comparisons() == 0
