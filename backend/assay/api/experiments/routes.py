"""Experiments of a project (edison): wizard drafts saved step by step, checked per step,
started (frozen), duplicated. Viewers read; editors write."""

from __future__ import annotations

from typing import Any

from assay.api import preconditions
from assay.api.base import Blueprint, commit, page_dict, page_of, project_access, session, user
from assay.api.experiments.schemas import (
    ConfigVersionSchema,
    ExperimentCreateSchema,
    ExperimentDetailSchema,
    ExperimentEstimateSchema,
    ExperimentListArgs,
    ExperimentPatchSchema,
    ExperimentSchema,
    ValidateSchema,
    ValidOkSchema,
)
from assay.api.prompts.schemas import PageQuery
from assay.core.experiments import service
from assay.core.experiments.estimate import estimate
from assay.core.experiments.models import Experiment
from assay.core.projects.models import Role

blp = Blueprint("experiments", __name__,
                url_prefix="/api/projects/<int:project_id>/experiments",
                description="Experiments: the prompt-refinement loop's configuration")
ONE = "/<int:experiment_id>"
SPEND = ("execution_micros", "judging_micros", "refinement_micros", "assist_micros",
         "reserved_micros", "tokens_in", "tokens_out")


def view(experiment: Experiment, iterations: int) -> dict[str, Any]:
    return {**{k: getattr(experiment, k) for k in (
        "id", "name", "description", "status", "stop_reason", "stop_detail", "template",
        "config_version", "best_prompt_version_id", "spent_micros", "budget_micros",
        "created_at", "updated_at", "started_at", "finished_at")}, "iterations": iterations,
        "row_version": experiment.row_version}


def detail(experiment: Experiment) -> dict[str, Any]:
    project, _ = project_access(experiment.project_id, Role.viewer)
    counts = service.iteration_counts(session(), [experiment.id])
    fields = {k: getattr(experiment, k) for k in (
        "config", "frozen_at", "dataset_version_id", "prompt_id", "seed_prompt_version_id",
        "current_prompt_version_id", "scorer_ids", "split_seed", "created_by")}
    return {**view(experiment, counts.get(experiment.id, 0)), **fields,
            "problems": service.problems(session(), project, experiment),
            "refinement_cases": len(experiment.refinement_case_ids or []),
            "holdout_cases": len(experiment.holdout_case_ids or []),
            "spend": {k: getattr(experiment, k) for k in SPEND}}


@blp.get("")
@blp.arguments(ExperimentListArgs, location="query")
@blp.response(200, page_of(ExperimentSchema))
def list_experiments(args: dict[str, Any], project_id: int) -> Any:
    """Newest activity first; `status` and `q` (in the name) filter."""
    project, _ = project_access(project_id, Role.viewer)
    page = service.list_experiments(session(), project, args["page"], args["page_size"],
                                    args["status"], args["q"])
    counts = service.iteration_counts(session(), [e.id for e in page.items])
    return page_dict(page, [view(e, counts.get(e.id, 0)) for e in page.items])


@blp.post("")
@blp.arguments(ExperimentCreateSchema)
@blp.response(201, ExperimentDetailSchema)
def create_experiment(data: dict[str, Any], project_id: int) -> Any:
    """A draft: the steps sent over the defaults; unfinished steps are allowed (see
    `problems`)."""
    project, _ = project_access(project_id, Role.editor)
    steps = {k: v for k, v in data.items() if k not in ("name", "description")}
    experiment = service.create(session(), user(), project, data["name"],
                                data["description"], steps)
    commit()
    return detail(experiment)


@blp.get(ONE)
@blp.response(200, ExperimentDetailSchema)
@preconditions.read()
def get_experiment(project_id: int, experiment_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    experiment = service.get(session(), project, experiment_id)
    return preconditions.tagged(detail(experiment), experiment)


@blp.patch(ONE)
@blp.arguments(ExperimentPatchSchema)
@blp.response(200, ExperimentDetailSchema)
@preconditions.write()
def update_experiment(data: dict[str, Any], project_id: int, experiment_id: int) -> Any:
    """Auto-save of a draft: each step sent is merged field by field. 409 EXPERIMENT_FROZEN
    once started."""
    project, _ = project_access(project_id, Role.editor)
    experiment = service.get(session(), project, experiment_id, lock=True)
    preconditions.guard(experiment, lambda: detail(experiment))
    service.update(session(), user(), project, experiment, data)
    commit()
    return preconditions.tagged(detail(experiment), experiment)


@blp.post(ONE + "/validate")
@blp.arguments(ValidateSchema)
@blp.response(200, ValidOkSchema)
def validate_steps(data: dict[str, Any], project_id: int, experiment_id: int) -> Any:
    """Checks the steps named (the wizard's Continue): 422 VALIDATION_ERROR with field
    errors by path ("rubric.criteria[1].weight") when one is not valid."""
    project, _ = project_access(project_id, Role.viewer)
    experiment = service.get(session(), project, experiment_id)
    steps = tuple(dict.fromkeys(data["steps"]))
    service.validate(session(), project, experiment, steps)
    return {"valid": True, "steps": list(steps)}


@blp.post(ONE + "/start")
@blp.response(200, ExperimentDetailSchema)
def start_experiment(project_id: int, experiment_id: int) -> Any:
    """Checks every step (422 VALIDATION_ERROR), freezes the configuration, creates the
    prompt's seed version and the judges' scorers, pins the dataset version, splits the
    cases, and starts iteration 1. 409 EXPERIMENT_FROZEN when already started."""
    project, _ = project_access(project_id, Role.editor)
    experiment = service.get(session(), project, experiment_id, lock=True)
    try:
        service.start(session(), user(), project, experiment)
    except Exception:
        session().rollback()
        raise
    commit()
    return detail(experiment)


@blp.post(ONE + "/duplicate")
@blp.response(201, ExperimentDetailSchema)
def duplicate_experiment(project_id: int, experiment_id: int) -> Any:
    """A new draft with the same configuration."""
    project, _ = project_access(project_id, Role.editor)
    source = service.get(session(), project, experiment_id)
    copy = service.duplicate(session(), user(), project, source)
    commit()
    return detail(copy)


@blp.get(ONE + "/config-versions")
@blp.arguments(PageQuery, location="query")
@blp.response(200, page_of(ConfigVersionSchema))
def list_config_versions(args: dict[str, Any], project_id: int, experiment_id: int) -> Any:
    """The frozen configurations, oldest first."""
    project, _ = project_access(project_id, Role.viewer)
    experiment = service.get(session(), project, experiment_id)
    page = service.config_versions(session(), experiment, args["page"], args["page_size"])
    return page_dict(page, page.items)


@blp.get(ONE + "/estimate")
@blp.response(200, ExperimentEstimateSchema)
def estimate_experiment(project_id: int, experiment_id: int) -> Any:
    """The cost range of the whole experiment (every iteration's execution, judging and
    refinement) from its current configuration; `problems` says what keeps it from one."""
    project, _ = project_access(project_id, Role.viewer)
    experiment = service.get(session(), project, experiment_id)
    return estimate(session(), project.id, experiment.config)
