"""The cancel endpoints of the jobs beside a run (scoring, comparisons, generation): who may
cancel, what is not found, and a job that has ended. The stopping itself, with calls in
flight on real workers, is tests/engine/test_cancel_jobs.py."""

from __future__ import annotations

from assay.core.projects.models import Role
from assay.jobs import stops
from assay.runtime import current
from tests.factories import Factory

RUNS = "/api/projects/{project_id}/runs/{run_id}"


def test_a_viewer_cannot_cancel_and_a_foreign_run_is_not_found(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Jobs")
    run = factory.planned_run(owner, project)
    base = RUNS.format(project_id=project.id, run_id=run.run_id)
    viewer = factory.login(factory.member(project, Role.viewer))
    for tail in ("/scorers/cancel", "/comparisons/cancel"):
        assert viewer.post(base + tail).status_code == 403
    other = factory.project(factory.user(), "Other")
    foreign = factory.login(owner)
    for tail in ("/scorers/cancel", "/comparisons/cancel"):
        assert foreign.post(RUNS.format(project_id=other.id, run_id=run.run_id)
                            + tail).status_code == 404
    assert foreign.post(f"/api/projects/{project.id}/generation/987654/cancel"
                        ).status_code == 404


def test_cancelling_with_no_scoring_job_stops_nothing(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Idle")
    run = factory.planned_run(owner, project)
    me = factory.login(owner)
    idle = me.post(RUNS.format(project_id=project.id, run_id=run.run_id) + "/scorers/cancel")
    assert idle.status_code == 202 and idle.json == {"run_id": run.run_id, "stopping": False}
    rt = current()
    assert rt.redis.get(stops.key(rt.settings.redis_prefix, stops.SCORING, run.run_id)) is None
    pairs = me.post(RUNS.format(project_id=project.id, run_id=run.run_id)
                    + "/comparisons/cancel")
    assert pairs.status_code == 202 and pairs.json["stopping"] is True
    assert rt.redis.get(stops.key(rt.settings.redis_prefix, stops.COMPARISONS,
                                  run.run_id)) is not None
