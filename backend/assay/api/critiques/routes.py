"""The meta-judge: a model of the project critiques a judge rubric against an agent's
contract, while the caller waits."""

from __future__ import annotations

from typing import Any

from assay.api.base import Blueprint, project_access, runtime, session
from assay.api.critiques.schemas import CritiqueRequestSchema, CritiqueSchema
from assay.api.slow_lane import slow_work
from assay.core.projects.models import Role
from assay.core.scoring.critiques import critique

blp = Blueprint("critiques", __name__, url_prefix="/api/projects/<int:project_id>/critiques",
                description="Rubric critiques by a meta-judge")


@blp.post("")
@blp.arguments(CritiqueRequestSchema)
@blp.response(200, CritiqueSchema)
@slow_work
def critique_rubric(data: dict[str, Any], project_id: int) -> Any:
    """Critique a rubric against a contract

    One call to the judge model (it is billed by its provider), answered within 90 s.
    Whether the rubric covers the contract, defines evidence, avoids vague language, and
    would make judges disagree. 422 for an empty rubric or a judge that is no model of the
    project (or has no API key); 502 JUDGE_FAILED when the judge fails or answers with
    something else than the critique, JUDGE_TIMEOUT when it takes too long."""
    project, _ = project_access(project_id, Role.editor)
    settings = runtime().settings
    return critique(session(), project, data["rubric_text"], data["contract"],
                    data["judge"], settings.secret_key, settings.url_policy)
