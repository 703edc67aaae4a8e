from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.auth.schemas import EMAIL
from assay.api.projects.schemas import ROLES


class MemberSchema(Schema):
    user_id = fields.Integer(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True, allow_none=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    created_at = fields.DateTime(required=True)


class MemberAddSchema(Schema):
    email = fields.String(required=True, validate=EMAIL)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


class MemberRoleSchema(Schema):
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
