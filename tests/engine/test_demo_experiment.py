"""The demo tour's experiment: seeded by the real loop on the fake provider, finished by
the convergence rule, with an edited, a rejected and approved suggestions; what its
screens read over HTTP is what the engine stored."""

from __future__ import annotations

from sqlalchemy import select

from assay.core.experiments.models import Experiment, Iteration, Suggestion
from assay.core.prompts.models import PromptVersion
from assay.demo_experiment import EDIT_TAIL, NAME, REJECT_REASON
from assay.extensions import db
from assay.runtime import current
from assay.seeds import DEMO_PASSWORD, seed_demo
from tests.factories import Factory


def test_the_demo_project_has_a_finished_reviewed_experiment(factory: Factory) -> None:
    with db.factory() as session:
        demo, project = seed_demo(session, factory.settings, current())
        demo_id, project_id = demo.id, project.id
    with db.factory() as session:
        experiment = session.scalars(select(Experiment).where(
            Experiment.project_id == project_id, Experiment.name == NAME)).one()
        its = session.scalars(select(Iteration).where(
            Iteration.experiment_id == experiment.id).order_by(Iteration.number)).all()
        suggestions = session.scalars(select(Suggestion).where(
            Suggestion.iteration_id.in_([i.id for i in its])).order_by(Suggestion.id)).all()
        by_iteration = {i.id: i.number for i in its}
        experiment_id = experiment.id
        assert experiment.status == "completed" and experiment.stop_reason == "converged"
        assert 3 <= len(its) <= 6
        kinds = [(by_iteration[s.iteration_id], s.status, s.diff != s.original_diff)
                 for s in suggestions]
        assert kinds[:3] == [(1, "rejected", False), (1, "approved", True),
                             (2, "approved", False)], kinds
        assert suggestions[0].reject_reason == REJECT_REASON
        assert suggestions[1].original_diff != suggestions[0].diff  # it heard the reason
        v2 = session.get(PromptVersion, suggestions[1].prompt_version_id)
        assert v2 is not None and EDIT_TAIL.strip() in v2.template
        stored_composites = [i.composite for i in its]
    with db.factory() as session:
        demo = session.get(type(demo), demo_id)
        browser = factory.login(demo, DEMO_PASSWORD)
    base = f"/api/projects/{project_id}/experiments/{experiment_id}"
    listed = browser.get(f"{base}/iterations").json["items"]
    assert [i["composite"] for i in listed] == stored_composites
    report = browser.get(f"{base}/report").json
    table = report["iterations"]
    assert [row["all"]["mean"] for row in table] == stored_composites
    held = [row["holdout"]["mean"] for row in table]
    assert held[-1] > held[0], held  # better on cases the refiner never saw
    assert report["best"]["iteration"] > 1
    assert report["cost"]["total_micros"] > 0

    with db.factory() as session:
        seed_demo(session, factory.settings, current())
        again = session.scalars(select(Experiment).where(Experiment.name == NAME)).all()
    assert len(again) == 1  # idempotent
