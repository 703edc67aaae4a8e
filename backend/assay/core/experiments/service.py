"""Experiments as data: drafts saved step by step, listed, duplicated, and started.

Starting checks every step, freezes the configuration as a numbered version, creates the
prompt and its seed version, the scorers the iterations' runs apply (the rubric judge, the
optional pairwise judge, the safety checks), pins the dataset version, splits its cases
into refinement and held-out sets, and hands the experiment to the loop
(`loop.begin`), all in the caller's transaction: a start that fails writes nothing."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.service import version_cases
from assay.core.errors import Conflict, NotFound
from assay.core.experiments import config as config_
from assay.core.experiments import loop
from assay.core.experiments.models import (
    Experiment,
    ExperimentConfigVersion,
    ExperimentStatus,
    Iteration,
)
from assay.core.experiments.split import split_cases
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.prompts.models import Prompt
from assay.core.prompts.service import create_prompt
from assay.core.scoring.service import create_scorer

NAME_MAX = 200


def get(session: Session, project: Project, experiment_id: int,
        lock: bool = False) -> Experiment:
    stmt = select(Experiment).where(Experiment.id == experiment_id)
    found = session.scalar(stmt.with_for_update() if lock else stmt)
    if found is None or found.project_id != project.id:
        raise NotFound("Experiment not found")
    return found


def list_experiments(session: Session, project: Project, page: int, page_size: int,
                     status: str | None = None, query: str | None = None) -> Page[Any]:
    stmt = select(Experiment).where(Experiment.project_id == project.id)
    if status:
        stmt = stmt.where(Experiment.status == status)
    if query:
        stmt = stmt.where(func.lower(Experiment.name).contains(query.lower(), autoescape=True))
    return paginate(session, stmt.order_by(Experiment.updated_at.desc(), Experiment.id.desc()),
                    page, page_size)


def iteration_counts(session: Session, ids: list[int]) -> dict[int, int]:
    if not ids:
        return {}
    return dict(session.execute(select(Iteration.experiment_id, func.count()).where(
        Iteration.experiment_id.in_(ids)).group_by(Iteration.experiment_id)).all())


def create(session: Session, actor: User | None, project: Project, name: str,
           description: str | None = None, steps: Mapping[str, Any] | None = None,
           template: str | None = None) -> Experiment:
    """A draft: the steps given over the defaults (the rest is filled in later)."""
    experiment = Experiment(
        project_id=project.id, name=name.strip()[:NAME_MAX], description=description,
        config=config_.merged(config_.defaults(), steps or {}), template=template,
        created_by=actor.id if actor else None, status=ExperimentStatus.draft)
    session.add(experiment)
    session.flush()
    audit.record(session, actor, "experiment.created", "experiment", experiment.id,
                 project.id, {"name": experiment.name, "template": template})
    return experiment


def _draft(experiment: Experiment) -> None:
    if experiment.status != ExperimentStatus.draft:
        raise Conflict("A started experiment's configuration is frozen; duplicate it to "
                       "change it", code="EXPERIMENT_FROZEN")


def update(session: Session, actor: User | None, project: Project, experiment: Experiment,
           data: Mapping[str, Any]) -> Experiment:
    """Auto-save: name, description and any steps (each merged field by field). A save
    that changes nothing writes nothing (no audit event, no new updated_at)."""
    _draft(experiment)
    name = str(data["name"]).strip()[:NAME_MAX] if "name" in data else experiment.name
    description = data.get("description", experiment.description)
    steps = {k: v for k, v in data.items() if k in config_.STEPS}
    config = config_.merged(experiment.config, steps) if steps else experiment.config
    if (name, description, config) == (experiment.name, experiment.description,
                                       experiment.config):
        return experiment
    experiment.name, experiment.description, experiment.config = name, description, config
    experiment.updated_at = utcnow()
    session.flush()
    audit.record(session, actor, "experiment.updated", "experiment", experiment.id,
                 project.id, {"fields": sorted(data)})
    return experiment


def refill(session: Session, actor: User | None, project: Project, experiment: Experiment,
           name: str, description: str | None, steps: Mapping[str, Any],
           template: str) -> Experiment:
    """A draft started over from a template: the steps it fills replace the draft's (the
    wizard's objective typed before choosing one included); the others are kept."""
    _draft(experiment)
    reset = {**experiment.config, **{step: config_.DEFAULTS[step] for step in steps}}
    experiment.config = config_.merged(reset, steps)
    experiment.name, experiment.description = name.strip()[:NAME_MAX], description
    experiment.template, experiment.updated_at = template, utcnow()
    session.flush()
    audit.record(session, actor, "experiment.template_applied", "experiment", experiment.id,
                 project.id, {"template": template})
    return experiment


def validate(session: Session, project: Project, experiment: Experiment,
             steps: tuple[str, ...]) -> None:
    config_.check(session, project.id, experiment.config, steps)


def problems(session: Session, project: Project, experiment: Experiment) -> dict[str, Any]:
    """Per step: its field errors (empty when it may continue)."""
    found = config_.step_errors(session, project.id, experiment.config)
    return {step: {k: v for k, v in found.items() if k.split(".")[0].split("[")[0] == step}
            for step in config_.STEPS}


def duplicate(session: Session, actor: User | None, project: Project,
              source: Experiment) -> Experiment:
    """A new draft with the source's configuration (the frozen one for a started one)."""
    copy = create(session, actor, project, f"{source.name} (copy)"[:NAME_MAX],
                  source.description, source.config, source.template)
    audit.record(session, actor, "experiment.duplicated", "experiment", copy.id, project.id,
                 {"from": source.id})
    return copy


def _unique_name(session: Session, model: Any, project: Project, base: str) -> str:
    name, n = base[:100], 1
    while session.scalar(select(model.id).where(model.project_id == project.id,
                                                model.name == name)) is not None:
        n += 1
        name = f"{base[:92]} #{n}"
    return name


def _scorers(session: Session, actor: User | None, project: Project,
             experiment: Experiment) -> list[int]:
    config = experiment.config
    rubric = {"criteria": config["rubric"]["criteria"], "goal": config["objective"]["goal"]}
    judges = config["judges"]
    label = f"Experiment {experiment.id}"
    from assay.core.scoring.models import ScorerConfig

    made = [create_scorer(session, actor, project, {
        "name": _unique_name(session, ScorerConfig, project, f"{label} rubric judge"),
        "kind": "llm_judge",
        "params": {"rubric": rubric, "judges": [str(j) for j in judges["pointwise"]]}})]
    if judges["pairwise"]:
        made.append(create_scorer(session, actor, project, {
            "name": _unique_name(session, ScorerConfig, project, f"{label} pairwise judge"),
            "kind": "pairwise_judge",
            "params": {"rubric": rubric, "judges": [str(judges["pairwise_judge"])]}}))
    safety = judges["safety"]
    checks = [name for name in ("pii", "jailbreak") if safety.get(name)]
    if checks:
        made.append(create_scorer(session, actor, project, {
            "name": _unique_name(session, ScorerConfig, project, f"{label} safety"),
            "kind": "safety", "params": {"checks": checks, "action": safety["action"]}}))
    return [scorer.id for scorer, _ in made]


def start(session: Session, actor: User | None, project: Project,
          experiment: Experiment) -> Experiment:
    """Freeze, prepare and hand over to the loop (see the module's docstring). 409 when it
    is not a draft; 422 with every step's field errors when a step is not valid."""
    _draft(experiment)
    config_.check(session, project.id, experiment.config)
    config = experiment.config
    number = experiment.config_version + 1
    session.add(ExperimentConfigVersion(experiment_id=experiment.id, number=number,
                                        config=config, created_by=actor.id if actor else None))
    experiment.config_version, experiment.frozen_at = number, utcnow()
    prompt_step = config["prompt"]
    prompt, seed = create_prompt(session, actor, project, {
        "name": _unique_name(session, Prompt, project, f"Experiment {experiment.id}: "
                                                       f"{experiment.name}"),
        "description": config["objective"]["goal"][:2000],
        "template": prompt_step["template"], "system": prompt_step.get("system"),
        "few_shots": prompt_step.get("few_shots") or [], "tools": prompt_step.get("tools") or [],
        "note": "Seed prompt"}, production=False)
    experiment.prompt_id = prompt.id
    experiment.seed_prompt_version_id = experiment.current_prompt_version_id = seed.id
    experiment.scorer_ids = _scorers(session, actor, project, experiment)
    data = config["data"]
    experiment.dataset_version_id = data["dataset_version_id"]
    seed_value = data.get("split_seed")
    experiment.split_seed = seed_value if seed_value is not None else secrets.randbelow(2**31)
    experiment.holdout_fraction = data["holdout_fraction"]
    cases = [(c.id, c.tags) for c in version_cases(session, data["dataset_version_id"])]
    experiment.refinement_case_ids, experiment.holdout_case_ids = split_cases(
        cases, experiment.holdout_fraction, experiment.split_seed)
    stop = config["stop"]
    experiment.budget_micros = stop["max_budget_micros"]
    experiment.alert_threshold = stop["budget_alert_threshold"]
    experiment.max_tokens = stop.get("max_total_tokens")
    experiment.status, experiment.started_at = ExperimentStatus.running, utcnow()
    session.flush()
    audit.record(session, actor, "experiment.started", "experiment", experiment.id, project.id,
                 {"config_version": number, "prompt_version": seed.id,
                  "dataset_version": experiment.dataset_version_id,
                  "refinement_cases": len(experiment.refinement_case_ids),
                  "holdout_cases": len(experiment.holdout_case_ids),
                  "split_seed": experiment.split_seed})
    loop.begin(session, experiment)
    return experiment


def config_versions(session: Session, experiment: Experiment, page: int,
                    page_size: int) -> Page[Any]:
    return paginate(session, select(ExperimentConfigVersion).where(
        ExperimentConfigVersion.experiment_id == experiment.id).order_by(
        ExperimentConfigVersion.number), page, page_size)
