from __future__ import annotations

from marshmallow import Schema, fields


class DatasetSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    case_count = fields.Integer(required=True)
    version = fields.Integer(required=True)
