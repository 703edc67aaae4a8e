"""A project's settings: every member reads them, admins and owners change them."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from assay.api import preconditions
from assay.api.base import Blueprint, commit, project_access, session, user
from assay.api.fields import Count, StrictBoolean, version_field
from assay.api.models.schemas import StrictNumber
from assay.api.patch import PatchSchema
from assay.api.projects.schemas import NAME
from assay.api.runs.schemas import MAX_MICROS
from assay.core.projects import settings as project_settings
from assay.core.projects.models import Role

blp = Blueprint("project-settings", __name__,
                url_prefix="/api/projects/<int:project_id>/settings",
                description="Project settings (FR-PM-003)")

THRESHOLD = validate.Range(0, 1, min_inclusive=False,
                           error="Must be more than 0% and at most 100%")


class SettingsFields(PatchSchema):
    """The writable settings; PATCH takes any subset."""

    name = fields.String(validate=NAME)
    description = fields.String(allow_none=True, validate=validate.Length(max=1000))
    budget_micros = Count(0, MAX_MICROS, allow_none=True, metadata={
        "description": "The project's spending cap across all its runs (null: none)"})
    alert_threshold = StrictNumber(validate=THRESHOLD, metadata={
        "description": "Share of the project budget whose crossing raises the alert"})
    default_concurrency = Count(1, 1000, allow_none=True, metadata={
        "description": "New runs' calls in flight, each over the whole run (null: the "
                       "server's default)"})
    default_timeout_s = Count(1, 3600, allow_none=True, metadata={
        "description": "New runs' seconds per call attempt (null: the server's default)"})
    default_max_retries = Count(0, 10, allow_none=True, metadata={
        "description": "New runs' retries of a transient failure (null: "
                       f"{project_settings.DEFAULT_MAX_RETRIES})"})
    code_execution = StrictBoolean(metadata={
        "description": "Allow the sandboxed code_execution scorer in this project"})
    arena_allowance_micros = Count(0, MAX_MICROS, allow_none=True, metadata={
        "description": "EvalArena: what judge runs paid by this project may cost in all "
                       "for members below editor (null: editors and up only)"})


class SettingsSchema(Schema):
    name = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    budget_micros = fields.Integer(required=True, allow_none=True)
    alert_threshold = fields.Float(required=True)
    default_concurrency = fields.Integer(required=True, allow_none=True)
    default_timeout_s = fields.Integer(required=True, allow_none=True)
    default_max_retries = fields.Integer(required=True, allow_none=True)
    code_execution = fields.Boolean(required=True)
    arena_allowance_micros = fields.Integer(required=True, allow_none=True)
    spent_micros = fields.Integer(required=True, metadata={
        "description": "Spent so far by every run of the project"})
    reserved_micros = fields.Integer(required=True, metadata={
        "description": "Held by calls in flight"})
    can_edit = fields.Boolean(required=True, metadata={"description": "Admin or owner"})
    row_version = version_field()


def _view(project: Any, role: Role) -> dict[str, Any]:
    return {**project_settings.read(project), "can_edit": role.at_least(Role.admin),
            "row_version": project.row_version}


@blp.get("")
@blp.response(200, SettingsSchema)
@preconditions.read()
def get_settings(project_id: int) -> Any:
    """The project's name and description are part of them: one ETag for both."""
    project, role = project_access(project_id, Role.viewer)
    return preconditions.tagged(_view(project, role), project)


@blp.patch("")
@blp.arguments(SettingsFields)
@blp.response(200, SettingsSchema)
@preconditions.write()
def update_settings(data: dict[str, Any], project_id: int) -> Any:
    project, role = project_access(project_id, Role.admin)
    preconditions.guard(project, lambda: _view(project, role))
    project_settings.update(session(), user(), project, data)
    commit()
    return preconditions.tagged(_view(project, role), project)
