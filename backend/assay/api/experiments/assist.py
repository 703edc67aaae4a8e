"""AI assist for the experiment wizard: one call to a model of the project the user picks,
answered while they wait, its cost returned and charged to the project (and to the
experiment's assist phase when `experiment_id` is given). Editors and up."""

from __future__ import annotations

from typing import Any

from assay.api.base import Blueprint, project_access, runtime, session
from assay.api.experiments.schemas import (
    AssistImproveSchema,
    AssistObjectiveSchema,
    AssistObjectivesSchema,
    AssistPromptsSchema,
    AssistReplySchema,
    AssistRubricSchema,
)
from assay.api.slow_lane import slow_work
from assay.core.experiments import assist as assist_
from assay.core.experiments import service
from assay.core.projects.models import Role

blp = Blueprint("assist", __name__, url_prefix="/api/projects/<int:project_id>/assist",
                description="AI assist in the experiment wizard")


def _ask(kind: str, data: dict[str, Any], project_id: int) -> dict[str, Any]:
    project, _ = project_access(project_id, Role.editor)
    experiment = service.get(session(), project, data["experiment_id"]) \
        if data.get("experiment_id") else None
    settings = runtime().settings
    reply = assist_.assist(session(), project, kind, data, settings.secret_key,
                           settings.url_policy, experiment)
    return {"result": reply.result, "model": reply.model, "cost_micros": reply.cost_micros,
            "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out}


DOC = ("422 for a model that is not the project's; 409 BUDGET_EXCEEDED when the "
       "project's or the experiment's budget cannot cover the call's maximum cost (it is "
       "held before the call, settled to the actual cost after it); 502 ASSIST_BAD_REPLY "
       "when the model's answer is not the JSON asked for (the call is still charged).")



def documented(view: Any) -> Any:
    """DOC after the view's own docstring, before the route reads it (a loop after the
    routes came too late: the document lacked the 502)."""
    view.__doc__ = f"{view.__doc__}\n\n{DOC}"
    return view


@blp.post("/objectives")
@blp.arguments(AssistObjectivesSchema)
@blp.response(200, AssistReplySchema)
@slow_work
@documented
def draft_objectives(data: dict[str, Any], project_id: int) -> Any:
    """Draft objectives from hints (clarity-, creativity- and efficiency-focused)."""
    return _ask("objectives", data, project_id)


@blp.post("/objective")
@blp.arguments(AssistObjectiveSchema)
@blp.response(200, AssistReplySchema)
@slow_work
@documented
def improve_objective(data: dict[str, Any], project_id: int) -> Any:
    """Improve an objective, or add the details it lacks."""
    return _ask("objective", data, project_id)


@blp.post("/rubric")
@blp.arguments(AssistRubricSchema)
@blp.response(200, AssistReplySchema)
@slow_work
@documented
def draft_rubric(data: dict[str, Any], project_id: int) -> Any:
    """Draft a rubric of 4-6 criteria from the objective (weights normalised to 1)."""
    return _ask("rubric", data, project_id)


@blp.post("/prompts")
@blp.arguments(AssistPromptsSchema)
@blp.response(200, AssistReplySchema)
@slow_work
@documented
def draft_prompts(data: dict[str, Any], project_id: int) -> Any:
    """Draft seed prompts (structured, conversational, minimal)."""
    return _ask("prompts", data, project_id)


@blp.post("/prompt")
@blp.arguments(AssistImproveSchema)
@blp.response(200, AssistReplySchema)
@slow_work
@documented
def improve_prompt(data: dict[str, Any], project_id: int) -> Any:
    """Improve a prompt for the objective, keeping its variables."""
    return _ask("prompt", data, project_id)
