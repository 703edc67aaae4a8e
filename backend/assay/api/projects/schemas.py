from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from assay.api.fields import NamedEnum, version_field
from assay.api.patch import PatchSchema
from assay.core.projects.models import Role

ROLES = [r.value for r in Role]
NAME = [validate.Length(min=1, max=100),
        validate.Regexp(r"^[a-zA-Z0-9 \-_]*[a-zA-Z0-9][a-zA-Z0-9 \-_]*$",
                        error="Only letters, digits, spaces, hyphens and underscores")]


def RoleField(**kwargs: Any) -> fields.String:
    """A project role: the one shared `Role` enum of the document."""
    return NamedEnum("Role", ROLES, **kwargs)


class ProjectSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    role = RoleField(required=True)
    member_count = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    row_version = version_field()


class ProjectCreateSchema(Schema):
    name = fields.String(required=True, validate=NAME)
    description = fields.String(load_default=None, allow_none=True,
                                validate=validate.Length(max=1000))


class ProjectUpdateSchema(PatchSchema):
    name = fields.String(validate=NAME)
    description = fields.String(allow_none=True, validate=validate.Length(max=1000))


class ProjectListArgs(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100_000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
    q = fields.String(load_default=None, validate=validate.Length(max=100))
    role = RoleField(load_default=None)


class AuditEventSchema(Schema):
    id = fields.Integer(required=True)
    action = fields.String(required=True)
    actor_email = fields.String(required=True, allow_none=True)
    target_type = fields.String(required=True)
    target_id = fields.String(required=True, allow_none=True)
    data = fields.Dict(required=True)
    description = fields.String(required=True, metadata={
        "description": "One readable sentence, e.g. “Ana set the project budget to $10.00”"})
    created_at = fields.DateTime(required=True)
