from __future__ import annotations

from marshmallow import Schema, fields


class ModelSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    provider = fields.String(required=True)
    model = fields.String(required=True)
    input_price_per_mtok_micros = fields.Integer(required=True)
    output_price_per_mtok_micros = fields.Integer(required=True)


class DatasetSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    case_count = fields.Integer(required=True)
    version = fields.Integer(required=True)
