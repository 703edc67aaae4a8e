from __future__ import annotations

from marshmallow import Schema, fields

from assay.api.fields import Email, version_field
from assay.api.projects.schemas import RoleField


class MemberSchema(Schema):
    user_id = fields.Integer(required=True)
    row_version = version_field()
    email = fields.String(required=True)
    name = fields.String(required=True, allow_none=True)
    role = RoleField(required=True)
    created_at = fields.DateTime(required=True)


class MemberAddSchema(Schema):
    email = Email(required=True)
    role = RoleField(required=True)


class MemberRoleSchema(Schema):
    role = RoleField(required=True)
