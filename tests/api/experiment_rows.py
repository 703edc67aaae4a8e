"""An experiment whose iteration 1 sits in a given state, written row by row (no run is
executed): what the API tests of the loop's routes act on."""

from __future__ import annotations

import difflib
from typing import Any

from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.experiments.models import (
    Experiment,
    ExperimentStatus,
    Iteration,
    Suggestion,
)
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Project
from assay.core.prompts.service import create_prompt
from assay.extensions import db

LINES = ["You answer questions about routers.", "The question: {{question}}", "Be brief."] + [
    f"Rule {i}: stay on the topic of the customer's router." for i in range(10)]
PROMPT = "\n".join(LINES) + "\n"
_n = iter(range(1, 10**9))


def diff_for(line: str = "Be brief, and warm.") -> str:
    new = PROMPT.replace("Be brief.", line)
    return "".join(difflib.unified_diff(PROMPT.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        "a/prompt.txt", "b/prompt.txt"))


def experiment_in_state(project_id: int, fake_url: str, state: str = "awaiting_review",
                        paused: bool = False) -> dict[str, Any]:
    """{experiment_id, number}: iteration 1 in `state` ("ended": the experiment is over)."""
    n = next(_n)
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        models = ensure_demo_models(session, None, project, fake_url)
        dataset = create_dataset(session, None, project, f"Loop data {n}", "questions",
                                 [{"input": {"question": f"Q{i}?"}} for i in range(4)])
        version = latest_version(session, dataset.id)
        ids = [c.id for c in version_cases(session, version.id)]
        prompt, seed = create_prompt(session, None, project, {
            "name": f"Loop prompt {n}", "template": PROMPT})
        ended = state == "ended"
        experiment = Experiment(
            project_id=project.id, name=f"Loop {n}",
            status=ExperimentStatus.completed if ended else (
                ExperimentStatus.paused if paused else ExperimentStatus.running),
            stop_reason="max_iterations" if ended else None,
            config={"objective": {"goal": "Answer router questions well, kindly."},
                    "rubric": {"criteria": [
                        {"name": "Helpfulness", "description": "Solves it", "weight": 1.0,
                         "scale": {"min": 1, "max": 5}}]},
                    "models": {"targets": [{"model_id": models[0].id, "params": {}}]},
                    "judges": {"pointwise": [models[0].name]},
                    "stop": {"max_iterations": 5}},
            config_version=1, frozen_at=utcnow(), dataset_version_id=version.id,
            refinement_case_ids=ids[:3], holdout_case_ids=ids[3:], prompt_id=prompt.id,
            seed_prompt_version_id=seed.id, current_prompt_version_id=seed.id,
            scorer_ids=[], started_at=utcnow(), finished_at=utcnow() if ended else None)
        session.add(experiment)
        session.flush()
        iteration = Iteration(experiment_id=experiment.id, number=1,
                              status="completed" if ended else state, paused=paused,
                              prompt_version_id=seed.id, dataset_version_id=version.id,
                              aggregate={"models": {}}, weakest_criteria=["Helpfulness"],
                              phase_started_at=utcnow())
        session.add(iteration)
        session.flush()
        if state in ("awaiting_review", "ended"):
            session.add(Suggestion(iteration_id=iteration.id,
                                   status="pending" if not ended else "approved",
                                   diff=diff_for(), original_diff=diff_for(),
                                   note="Warmer answers.", exemplars=[]))
        session.commit()
        return {"experiment_id": experiment.id, "number": 1}
