"""A demo experiment on the shipped fake provider alone, no scripts: the customer-support
template's prompt, rubric and cases, the fake provider as model under test, judge and
refiner. Each suggestion is approved over HTTP; the refiner's diffs pass the guardrails
(a broken first attempt is retried), the composite rises on the held-out cases, and the
convergence rule ends it."""

from __future__ import annotations

from sqlalchemy import select

from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.experiments import loop, templates
from assay.core.experiments.models import Experiment, ExperimentStatus, Suggestion
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.prompts.service import create_prompt
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import (  # noqa: F401
    PROMPT,
    build,
    diff_of,
    experiment,
    iterations,
    recorded,
    reply,
    verdict,
)
from tests.engine.test_experiment_loop import Calls, drive
from tests.engine.test_providers_engine import configure, fake  # noqa: F401
from tests.factories import Factory


def build_demo(factory: Factory, fake: FakeProviderThread  # noqa: F811
               ) -> tuple[Project, int, object]:
    configure(fake, latency_ms=0, scripts=[], seed=7)
    template = templates.get("customer-support")
    owner = factory.user()
    project = factory.project(owner, "Demo")
    with db.factory() as session:
        project = session.get(Project, project.id)
        assert project is not None
        credential = Credential(project_id=project.id, kind="fake", label="fake",
                                base_url=fake.url, config={})
        session.add(credential)
        session.flush()
        target = ModelConfig(project_id=project.id, credential_id=credential.id, name="M",
                             model="fake-smart", input_price_per_mtok_micros=150_000,
                             output_price_per_mtok_micros=600_000,
                             params={"temperature": 0, "max_tokens": 600})
        judge = ModelConfig(project_id=project.id, credential_id=credential.id, name="Judge",
                            model="fake-judge", input_price_per_mtok_micros=100_000,
                            output_price_per_mtok_micros=100_000, params={"max_tokens": 2000})
        session.add_all([target, judge])
        session.flush()
        dataset = create_dataset(session, None, project, "support", "cases",
                                 [{"input": c["input"]} for c in template.cases])
        prompt, seed = create_prompt(session, None, project, {
            "name": "Support", "template": template.prompt["template"],
            "system": template.prompt.get("system"), "note": "Seed prompt"})
        scorer, _ = create_scorer(session, None, project, {
            "name": "Rubric judge", "kind": "llm_judge",
            "params": {"rubric": {"criteria": template.rubric}, "judges": ["Judge"]}})
        ids = [c.id for c in version_cases(session, latest_version(session, dataset.id).id)]
        cut = int(len(ids) * 0.6)
        config = {
            "objective": {"goal": template.objective},
            "rubric": {"criteria": template.rubric},
            "models": {"targets": [{"model_id": target.id, "params": {}}]},
            "judges": {"pointwise": ["Judge"], "pairwise": False},
            "stop": {"max_iterations": 8, "min_delta": 0.02, "convergence_window": 2,
                     "stop_if_no_suggestion": True},
            "run": {"concurrency": 8}}
        exp = Experiment(
            project_id=project.id, name="Demo", status=ExperimentStatus.running,
            config=config, config_version=1, frozen_at=utcnow(), created_by=owner.id,
            dataset_version_id=latest_version(session, dataset.id).id,
            refinement_case_ids=ids[:cut], holdout_case_ids=ids[cut:], prompt_id=prompt.id,
            seed_prompt_version_id=seed.id, current_prompt_version_id=seed.id,
            scorer_ids=[scorer.id], started_at=utcnow())
        session.add(exp)
        session.flush()
        loop.begin(session, exp)
        session.commit()
        return project, exp.id, owner


def holdout(iteration_aggregate: dict) -> float:
    entry = next(iter(iteration_aggregate["models"].values()))
    return float(entry["holdout"]["composite"]["mean"])


def test_a_demo_experiment_improves_on_held_out_cases_and_converges(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    project, experiment_id, owner = build_demo(factory, fake)
    me = factory.login(owner)
    base = f"/api/projects/{project.id}/experiments/{experiment_id}/iterations"
    for number in range(1, 9):
        drive(recorded)
        done = experiment(experiment_id)
        if done.status != "running":
            break
        suggestion = me.get(f"{base}/{number}/suggestion").json
        assert suggestion["status"] == "pending", suggestion
        assert suggestion["diff"] and suggestion["note"]
        approved = me.post(f"{base}/{number}/approve", json={})
        assert approved.status_code == 200, approved.json
    done = experiment(experiment_id)
    assert done.status == "completed" and done.stop_reason == "converged", done.stop_detail
    its = iterations(experiment_id)
    assert 3 <= len(its) <= 6, [i.composite for i in its]
    held = [holdout(i.aggregate) for i in its]
    assert held[-1] > held[0] + 0.05, held  # better on cases the refiner never saw
    assert max(held) > held[0] + 0.05
    with db.factory() as session:
        mine = session.scalars(select(Suggestion).where(
            Suggestion.iteration_id.in_([i.id for i in its]))).all()
    assert len([s for s in mine if s.status == "approved"]) >= 2
    assert all(s.diff for s in mine if s.status == "approved")


def test_no_suggestion_names_each_refused_attempt(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    """Prose, then a diff that drops a variable, then one that does not apply: "no
    suggestion", and the suggestion says for each attempt which rule it broke."""
    b = build(factory, settings, fake)
    gone = diff_of(PROMPT, PROMPT.replace(": {{question}}", "."))
    stale = diff_of(PROMPT.replace("Be brief.", "Be short."), PROMPT.replace("Be brief.", "Ok."))
    configure(fake, scripts=[
        {"model": "fake-judge", "pattern": "could not be used: no <diff>", "reply": reply(gone)},
        {"model": "fake-judge", "pattern": "could not be used: The diff removes",
         "reply": reply(stale)},
        {"model": "fake-judge", "pattern": "Prompt Refinement Task",
         "reply": "I would not change a thing."},
        {"model": "fake-judge", "pattern": "", "reply": verdict(3, 2)}])
    me = factory.login(b.owner)
    drive(recorded)
    done = experiment(b.experiment_id)
    assert done.stop_reason == "no_suggestion"
    got = me.get(f"/api/projects/{b.project.id}/experiments/{b.experiment_id}"
                 "/iterations/1/suggestion")
    assert got.status_code == 200
    body = got.json
    assert body["status"] == "none" and body["attempts"] == 3
    assert "3 attempt(s)" in body["no_suggestion_reason"]
    failures = body["attempt_failures"]
    assert [(f["attempt"], f["kind"], f["rule"]) for f in failures] == [
        (1, "format", "reply_format"), (2, "guardrail", "variables_unchanged"),
        (3, "guardrail", "applies_cleanly")], failures
    assert "{{question}}" in failures[1]["message"]
    assert [f["message"] for f in failures] == body["validation_errors"]
