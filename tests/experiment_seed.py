"""An experiment that already ran, written straight into the tables (no loop, no worker):
`iterations` iterations over `cases` cases, each a run with one target per model, every
output succeeded, scored by the rubric judge and aggregated as the loop does. Scores rise
with the iteration on every case, except that the held-out cases stop improving after
`peak` (so later versions look better on refinement cases only: the report must flag
them). Used by the report tests and the report bench."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.experiments.models import Experiment, ExperimentStatus, Iteration, StopReason
from assay.core.experiments.phases import store_aggregate
from assay.core.experiments.split import split_cases
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Project
from assay.core.prompts.service import add_version, create_prompt
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.scoring.models import Score, ScorerVersion
from assay.core.scoring.service import create_scorer

CRITERIA = [
    {"name": "Helpfulness", "description": "Gives an actionable answer", "weight": 0.6,
     "scale": {"min": 0, "max": 5}},
    {"name": "Tone", "description": "Polite and calm wording; 日本語 ok", "weight": 0.4,
     "scale": {"min": 0, "max": 5}},
]


@dataclass
class Seeded:
    experiment_id: int
    holdout: list[int]
    refinement: list[int]


def _value(iteration: int, case_id: int, held: bool, peak: int, model: int) -> float:
    step = min(iteration, peak) if held else iteration
    base = 0.3 + 0.05 * step + 0.02 * model
    return round(min(1.0, base + ((case_id * 37) % 11) / 100), 4)


def seed(session: Session, actor: User, project: Project, fake_url: str,
         iterations: int = 3, cases: int = 20, peak: int = 2) -> Seeded:
    models = ensure_demo_models(session, actor, project, fake_url)
    dataset = create_dataset(session, actor, project, f"Seeded {utcnow().timestamp()}",
                             "cases", [{"input": {"question": f"Question {i} — ünïcödé?"},
                                        "tags": [["a", "b"][i % 2]]} for i in range(cases)])
    version = latest_version(session, dataset.id)
    case_ids = [c.id for c in version_cases(session, version.id)]
    refine, held = split_cases([(c, ["x"]) for c in case_ids], 0.3, 5)
    scorer, scorer_version = create_scorer(session, actor, project, {
        "name": f"Seeded judge {utcnow().timestamp()}", "kind": "llm_judge",
        "params": {"rubric": {"criteria": CRITERIA}, "judges": [str(models[0].id)]}})
    prompt, first = create_prompt(session, actor, project, {
        "name": f"Seeded prompt {utcnow().timestamp()}",
        "template": "Answer the customer's question politely: {{question}}",
        "system": "You are Northwind's support agent — be kind. 日本語も可。"})
    started = utcnow()
    experiment = Experiment(
        project_id=project.id, name="Seeded — support answers ✓", status=ExperimentStatus.completed,
        stop_reason=StopReason.converged, stop_detail="Converged (improvement < 2.0% for 2 "
                                                      "iterations)",
        config={"objective": {"goal": "Answer support questions well — ünïcödé 日本語"},
                "rubric": {"criteria": CRITERIA}},
        created_by=actor.id, dataset_version_id=version.id, refinement_case_ids=refine,
        holdout_case_ids=held, split_seed=5, prompt_id=prompt.id,
        seed_prompt_version_id=first.id, scorer_ids=[scorer.id], budget_micros=10_000_000,
        execution_micros=1_200_000, judging_micros=800_000, refinement_micros=90_000,
        assist_micros=5_000, tokens_in=123_456, tokens_out=65_432, started_at=started,
        finished_at=utcnow())
    session.add(experiment)
    session.flush()
    held_set, current = set(held), first
    for number in range(1, iterations + 1):
        if number > 1:
            current = add_version(session, actor, project, prompt, {
                "template": current.template + f"\nStep {number}: be specific.",
                "system": current.system, "note": f"Refinement of iteration {number - 1}"})
        run = Run(project_id=project.id, name=f"Iteration {number}",
                  dataset_version_id=version.id, status=RunStatus.completed,
                  total=len(case_ids) * len(models), succeeded=len(case_ids) * len(models))
        session.add(run)
        session.flush()
        targets = [RunTarget(run_id=run.id, model_id=m.id, prompt_version_id=current.id,
                             label=m.name, position=i, spent_micros=1000 * (i + 1) * cases)
                   for i, m in enumerate(models)]
        session.add_all(targets)
        session.flush()
        session.execute(insert(Output), [
            {"run_id": run.id, "case_id": c, "target_id": t.id, "repeat": 0, "turn": 0,
             "status": CellStatus.succeeded, "text": f"Answer {c}", "tokens_in": 40,
             "tokens_out": 30, "cost_micros": 100, "attempts": 1, "reserved_micros": 0}
            for c in case_ids for t in targets])
        outputs = {(o.case_id, o.target_id): o.id for o in session.scalars(
            select(Output).where(Output.run_id == run.id))}
        rows = []
        for c in case_ids:
            for i, t in enumerate(targets):
                value = _value(number, c, c in held_set, peak, i)
                rows.append({
                    "run_id": run.id, "output_id": outputs[(c, t.id)], "target_id": t.id,
                    "case_id": c, "scorer_version_id": scorer_version.id, "kind": "llm_judge",
                    "source": models[0].name, "value": value, "passed": None,
                    "criteria": {"Helpfulness": min(1.0, value + 0.1),
                                 "Tone": max(0.0, value - 0.15)},
                    "rationale": "Seeded", "evidence": [], "flags": [], "details": {}})
        session.execute(insert(Score), rows)
        iteration = Iteration(experiment_id=experiment.id, number=number,
                              status="completed", prompt_version_id=current.id,
                              dataset_version_id=version.id, run_id=run.id,
                              execution_micros=400_000, judging_micros=260_000,
                              refinement_micros=30_000, weakest_criteria=["Tone"])
        session.add(iteration)
        session.flush()
        store_aggregate(session, experiment, iteration)  # as the loop does
    experiment.current_prompt_version_id = current.id
    assert session.scalar(select(ScorerVersion.id).where(
        ScorerVersion.id == scorer_version.id)) is not None
    session.flush()
    return Seeded(experiment.id, held, refine)
