"""Pairwise comparisons of a run's targets over HTTP: editors start them (202, a job on
the queue), viewers read the list and the summary; every reason a comparison cannot start
is a 422 naming its field; pairs already judged are not judged again; the summary's counts,
position-bias interval and Bradley-Terry ratings match SciPy and core/stats."""

from __future__ import annotations

from typing import Any

import pytest
from rq import Queue
from scipy.stats import binomtest
from sqlalchemy import select, update

from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project, Role
from assay.core.runs.models import CellStatus, Output, RunTarget
from assay.core.scoring.models import Comparison, ScorerConfig
from assay.core.scoring.service import create_scorer, latest_versions
from assay.core.stats import bradley_terry
from assay.extensions import db
from assay.settings import Settings
from tests.factories import Factory, PlannedRun, Session

RUNS = "/api/projects/{project_id}/runs/{run_id}"


def succeed_outputs(run_id: int) -> None:
    """Every output of the run succeeded, as if the run had executed."""
    with db.factory() as session:
        session.execute(update(Output).where(Output.run_id == run_id).values(
            status=CellStatus.succeeded, text="An answer", finished_at=utcnow(), attempts=1))
        session.commit()


def pairwise_scorer(project_id: int, judges: list[str] | None = None,
                    name: str = "Pairwise") -> int:
    """A pairwise_judge scorer of the project (judging with its first model unless told),
    created once per name."""
    with db.factory() as session:
        found = session.scalar(select(ScorerConfig.id).where(
            ScorerConfig.project_id == project_id, ScorerConfig.name == name))
        if found is not None:
            return int(found)
        if judges is None:
            first = session.scalars(select(ModelConfig.name).where(
                ModelConfig.project_id == project_id).order_by(ModelConfig.id)).first()
            assert first is not None
            judges = [first]
        project = session.get(Project, project_id)
        assert project is not None
        scorer, _ = create_scorer(session, None, project, {
            "name": name, "kind": "pairwise_judge", "params": {"judges": judges}})
        session.commit()
        return scorer.id


def comparison_body(project_id: int, run_id: int) -> dict[str, Any]:
    """A valid body for POST .../comparisons: the run's outputs succeed, its first two
    targets are compared by a pairwise scorer of the project."""
    succeed_outputs(run_id)
    with db.factory() as session:
        targets = list(session.scalars(select(RunTarget.id).where(
            RunTarget.run_id == run_id).order_by(RunTarget.position)))
    return {"scorer_id": pairwise_scorer(project_id), "target_a_id": targets[0],
            "target_b_id": targets[1]}


def _version(scorer_id: int) -> int:
    with db.factory() as session:
        return latest_versions(session, [scorer_id])[scorer_id].id


def _outputs(run_id: int) -> dict[tuple[int, int], int]:
    """(case, target) -> output id."""
    with db.factory() as session:
        return {(c, t): o for o, c, t in session.execute(select(
            Output.id, Output.case_id, Output.target_id).where(Output.run_id == run_id))}


def _compare(planned: PlannedRun, version_id: int, case: int, a: int, b: int,
             winner: str | None, judge: str = "Fake Fast", bias: bool = False,
             error: str | None = None) -> None:
    """A comparison row of the case's outputs of targets `a` and `b` (indexes)."""
    outputs = _outputs(planned.run_id)
    case_id, ta, tb = planned.case_ids[case], planned.target_ids[a], planned.target_ids[b]
    with db.factory() as session:
        session.add(Comparison(
            run_id=planned.run_id, case_id=case_id, scorer_version_id=version_id,
            judge_model=judge, output_a_id=outputs[(case_id, ta)],
            output_b_id=outputs[(case_id, tb)], winner=winner, position_bias=bias,
            orders=["a", "b"] if bias else [winner, winner], rationale="Because.",
            error=error))
        session.commit()


class World:
    def __init__(self, factory: Factory, targets: int = 3, cases: int = 3) -> None:
        self.owner: User = factory.user()
        self.project = factory.project(self.owner, "Pairs")
        self.run = factory.planned_run(self.owner, self.project, cases=cases, targets=targets)
        succeed_outputs(self.run.run_id)
        self.scorer_id = pairwise_scorer(self.project.id)
        self.version_id = _version(self.scorer_id)
        self.browser: Session = factory.login(self.owner)
        self.url = RUNS.format(project_id=self.project.id, run_id=self.run.run_id) + \
            "/comparisons"

    def body(self, a: int = 0, b: int = 1, **changes: Any) -> dict[str, Any]:
        return {"scorer_id": self.scorer_id, "target_a_id": self.run.target_ids[a],
                "target_b_id": self.run.target_ids[b], **changes}


@pytest.fixture
def world(factory: Factory) -> World:
    return World(factory)


def _queued(settings: Settings, redis_conn: Any) -> list[tuple[str, tuple[Any, ...]]]:
    jobs = Queue(settings.runs_queue, connection=redis_conn).get_jobs()
    return [(job.func_name, tuple(job.args)) for job in jobs]


def test_an_editor_starts_comparisons_and_a_viewer_reads_them(
        world: World, factory: Factory, settings: Settings, redis_conn: Any) -> None:
    editor = factory.login(factory.member(world.project, Role.editor))
    reply = editor.post(world.url, json=world.body())
    assert reply.status_code == 202, reply.json
    a, b = world.run.target_ids[:2]
    assert reply.json == {"run_id": world.run.run_id, "scorer_id": world.scorer_id,
                          "scorer_version_id": world.version_id, "target_a_id": a,
                          "target_b_id": b, "base_run_id": None, "judges": ["Fake Fast"],
                          "pairs": 3,
                          "already_compared": 0, "enqueued": True}
    assert _queued(settings, redis_conn) == [
        ("assay.jobs.comparisons.compare_targets",
         (world.run.run_id, world.version_id, a, b, None))]

    viewer = factory.login(factory.member(world.project, Role.viewer))
    refused = viewer.post(world.url, json=world.body())
    assert refused.status_code == 403 and refused.json["code"] == "FORBIDDEN"
    assert len(_queued(settings, redis_conn)) == 1
    listed = viewer.get(world.url)
    assert listed.status_code == 200
    assert listed.json == {"items": [], "total": 0, "page": 1, "page_size": 20}
    summary = viewer.get(world.url + "/summary")
    assert summary.status_code == 200 and summary.json["pairs"] == []
    assert summary.json["ratings"]["available"] is False
    assert "No judged comparisons yet" in summary.json["ratings"]["message"]


def _field(reply: Any, field: str) -> str:
    assert reply.status_code == 422, reply.json
    assert reply.json["code"] == "VALIDATION_ERROR"
    return " ".join(reply.json["errors"]["json"][field])


def test_every_reason_a_comparison_cannot_start_is_a_422(
        world: World, factory: Factory, settings: Settings, redis_conn: Any) -> None:
    with db.factory() as session:
        project = session.get(Project, world.project.id)
        assert project is not None
        pointwise, _ = create_scorer(session, None, project, {
            "name": "Says", "kind": "icontains", "params": {"value": "answer"}})
        archived, _ = create_scorer(session, None, project, {
            "name": "Old", "kind": "pairwise_judge", "params": {"judges": ["Fake Fast"]}})
        archived.archived_at = utcnow()
        ghost, _ = create_scorer(session, None, project, {
            "name": "Ghost", "kind": "pairwise_judge", "params": {"judges": ["Nobody"]}})
        session.commit()
        pointwise_id, archived_id, ghost_id = pointwise.id, archived.id, ghost.id
    other = factory.project(world.owner, "Other")
    foreign_scorer = pairwise_scorer(other.id, judges=["Fake Fast"])
    elsewhere = factory.planned_run(world.owner, world.project, cases=1, targets=2)

    post = world.browser.post
    assert "pairwise_judge" in _field(post(world.url, json=world.body(
        scorer_id=pointwise_id)), "scorer_id")
    assert "archived" in _field(post(world.url, json=world.body(scorer_id=archived_id)),
                                "scorer_id")
    assert "'Nobody', which is no model" in _field(post(world.url, json=world.body(
        scorer_id=ghost_id)), "scorer_id")
    for missing in (foreign_scorer, 2**31 - 1):
        assert "No scorer" in _field(post(world.url, json=world.body(scorer_id=missing)),
                                     "scorer_id")
    assert "No target" in _field(post(world.url, json={
        **world.body(), "target_b_id": elsewhere.target_ids[0]}), "target_b_id")
    assert "No target" in _field(post(world.url, json={
        **world.body(), "target_a_id": elsewhere.target_ids[1]}), "target_a_id")
    assert "two different targets" in _field(post(world.url, json=world.body(1, 1)),
                                             "target_b_id")
    with db.factory() as session:  # no case where both outputs succeeded
        session.execute(update(Output).where(
            Output.target_id == world.run.target_ids[1],
            Output.case_id != world.run.case_ids[0]).values(status=CellStatus.failed))
        session.execute(update(Output).where(
            Output.target_id == world.run.target_ids[0],
            Output.case_id == world.run.case_ids[0]).values(status=CellStatus.pending))
        session.commit()
    assert "no case" in _field(post(world.url, json=world.body()), "_schema")
    foreign_run = RUNS.format(project_id=other.id, run_id=world.run.run_id) + "/comparisons"
    assert post(foreign_run, json=world.body()).status_code == 404
    assert _queued(settings, redis_conn) == []


def test_pairs_already_judged_are_not_judged_again(
        world: World, settings: Settings, redis_conn: Any) -> None:
    _compare(world.run, world.version_id, 0, 0, 1, "a")
    _compare(world.run, world.version_id, 1, 1, 0, "tie")  # the other direction counts too
    _compare(world.run, world.version_id, 2, 0, 1, None, error="Judge call failed")
    _compare(world.run, world.version_id, 2, 0, 2, "b")  # another target pair
    reply = world.browser.post(world.url, json=world.body())
    assert reply.status_code == 202
    assert (reply.json["pairs"], reply.json["already_compared"]) == (1, 2)
    assert reply.json["enqueued"] is True
    _compare(world.run, world.version_id, 2, 1, 0, "a")
    Queue(settings.runs_queue, connection=redis_conn).empty()
    done = world.browser.post(world.url, json=world.body())
    assert done.status_code == 202
    assert (done.json["pairs"], done.json["already_compared"], done.json["enqueued"]) == \
        (0, 3, False)
    assert _queued(settings, redis_conn) == []


def test_the_list_is_filtered_and_paginated(world: World) -> None:
    v = world.version_id
    _compare(world.run, v, 0, 0, 1, "a")
    _compare(world.run, v, 1, 0, 1, None, bias=True)
    _compare(world.run, v, 2, 0, 1, None, error="Judge 'Fake Fast' call failed")
    _compare(world.run, v, 0, 1, 2, "tie", judge="Fake Smart")
    t0, t1, t2 = world.run.target_ids
    outputs = _outputs(world.run.run_id)

    def ids(**query: Any) -> list[tuple[int, str | None]]:
        reply = world.browser.get(world.url, query_string=query)
        assert reply.status_code == 200, reply.json
        return [(world.run.case_ids.index(i["case_id"]), i["winner"])
                for i in reply.json["items"]]

    first = world.browser.get(world.url).json["items"][0]
    case = world.run.case_ids[0]
    assert first == {**first, "case_id": case, "scorer_version_id": v, "judge": "Fake Fast",
                     "output_a_id": outputs[(case, t0)], "output_b_id": outputs[(case, t1)],
                     "target_a_id": t0, "target_b_id": t1, "winner": "a",
                     "position_bias": False, "orders": ["a", "a"], "rationale": "Because.",
                     "error": None}
    assert ids() == [(0, "a"), (0, "tie"), (1, None), (2, None)]
    assert ids(winner="none") == [(1, None), (2, None)]
    assert ids(winner="tie") == [(0, "tie")]
    assert ids(position_bias="true") == [(1, None)]
    assert ids(failed="true") == [(2, None)]
    assert ids(failed="false", position_bias="false") == [(0, "a"), (0, "tie")]
    assert ids(judge="Fake Smart") == [(0, "tie")]
    assert ids(target_id=t2) == [(0, "tie")]
    assert ids(target_id=t0, case_id=world.run.case_ids[1]) == [(1, None)]
    assert ids(scorer_version_id=v, scorer_id=world.scorer_id) == ids()
    assert ids(scorer_version_id=v + 1000) == []
    page = world.browser.get(world.url, query_string={"page": 2, "page_size": 3}).json
    assert (page["total"], len(page["items"]), page["page"]) == (4, 1, 2)


def test_the_summary_counts_each_pair_and_rates_the_targets(world: World) -> None:
    v = world.version_id
    run = world.run
    _compare(run, v, 0, 1, 0, "b")  # target 0 beats target 1, stored either way round
    _compare(run, v, 1, 0, 1, "a")
    _compare(run, v, 2, 0, 1, "a")
    _compare(run, v, 0, 1, 2, "a")
    _compare(run, v, 1, 1, 2, None, bias=True)
    _compare(run, v, 2, 2, 1, "tie")
    _compare(run, v, 0, 0, 2, None, error="Judge 'Fake Fast' call failed")
    _compare(run, v, 1, 0, 2, "a", judge="Fake Smart")
    summary = world.browser.get(world.url + "/summary").json
    t0, t1, t2 = run.target_ids
    pairs = {(p["target_a_id"], p["target_b_id"], p["judge"]): p for p in summary["pairs"]}
    counts = {key: (p["a_wins"], p["b_wins"], p["ties"], p["disagreements"], p["errors"])
              for key, p in pairs.items()}
    assert counts == {(t0, t1, "Fake Fast"): (3, 0, 0, 0, 0),
                      (t1, t2, "Fake Fast"): (1, 0, 1, 1, 0),
                      (t0, t2, "Fake Fast"): (0, 0, 0, 0, 1),
                      (t0, t2, "Fake Smart"): (1, 0, 0, 0, 0)}
    bias = pairs[(t1, t2, "Fake Fast")]["position_bias"]
    reference = binomtest(1, 3).proportion_ci(0.95, method="wilson")
    assert (bias["k"], bias["n"]) == (1, 3)
    assert abs(bias["low"] - reference.low) < 1e-12
    assert abs(bias["high"] - reference.high) < 1e-12
    failed_only = pairs[(t0, t2, "Fake Fast")]["position_bias"]
    assert (failed_only["n"], failed_only["estimate"], failed_only["low"]) == (0, None, None)
    assert pairs[(t0, t1, "Fake Fast")]["target_a_label"] == "Target 0"
    assert pairs[(t0, t1, "Fake Fast")]["scorer_name"] == "Pairwise"

    ratings = summary["ratings"]
    names = ["Target 0", "Target 1", "Target 2"]
    expected = bradley_terry([
        *[("Target 0", "Target 1", "a")] * 3, ("Target 1", "Target 2", "a"),
        ("Target 1", "Target 2", "tie"), ("Target 1", "Target 2", "tie"),
        ("Target 0", "Target 2", "a")], items=names)
    assert ratings["available"] and ratings["n_comparisons"] == 7
    assert [(r["target_id"], r["label"]) for r in ratings["items"]] == \
        [(t0, "Target 0"), (t1, "Target 1"), (t2, "Target 2")]
    for got, want in zip(ratings["items"], expected.ratings, strict=True):
        assert got["label"] == want.item
        assert abs(got["rating"] - want.rating) < 1e-9
        assert (got["low"], got["high"], got["wins"], got["ties"], got["losses"]) == \
            (want.low, want.high, want.wins, want.ties, want.losses)

    by_judge = world.browser.get(world.url + "/summary",
                                 query_string={"judge": "Fake Smart"}).json
    assert [(p["target_a_id"], p["target_b_id"]) for p in by_judge["pairs"]] == [(t0, t2)]
    assert [r["flags"] for r in by_judge["ratings"]["items"]] == \
        [["undefeated"], ["winless"], ["no_games"]]


def test_comparisons_in_separate_groups_have_no_common_ratings(factory: Factory) -> None:
    world = World(factory, targets=4, cases=1)
    _compare(world.run, world.version_id, 0, 0, 1, "a")
    _compare(world.run, world.version_id, 0, 2, 3, "b")
    summary = world.browser.get(world.url + "/summary").json
    assert len(summary["pairs"]) == 2
    ratings = summary["ratings"]
    assert ratings["available"] is False and ratings["items"] == []
    assert "separate groups" in ratings["message"]
    assert "{Target 0, Target 1} and {Target 2, Target 3}" in ratings["message"]
