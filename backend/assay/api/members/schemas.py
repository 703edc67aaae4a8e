from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import Email
from assay.api.projects.schemas import ROLES


class MemberSchema(Schema):
    user_id = fields.Integer(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True, allow_none=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    created_at = fields.DateTime(required=True)


class MemberAddSchema(Schema):
    email = Email(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


class MemberRoleSchema(Schema):
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
