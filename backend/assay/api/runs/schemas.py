from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import Count, Id
from assay.core.runs.models import CellStatus, RunStatus


class RunSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf([s.value for s in RunStatus]))
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    dataset_version_id = fields.Integer(required=True)
    model_ids = fields.List(fields.Integer(), required=True)
    created_at = fields.DateTime(required=True)
    started_at = fields.DateTime(required=True, allow_none=True)
    finished_at = fields.DateTime(required=True, allow_none=True)


class RunCreateSchema(Schema):
    dataset_id = Id(required=True)
    model_ids = fields.List(Id(), required=True, validate=validate.Length(min=1, max=20))
    name = fields.String(load_default=None, allow_none=True,
                         validate=validate.Length(min=1, max=200))
    repeats = Count(1, 10, load_default=1)
    concurrency = Count(1, 1000, load_default=None, allow_none=True,
                        metadata={"description": "Calls in flight at once, per worker"})


class OutputSchema(Schema):
    id = fields.Integer(required=True)
    case_id = fields.Integer(required=True)
    model_id = fields.Integer(required=True)
    model_name = fields.String(required=True)
    repeat = fields.Integer(required=True)
    status = fields.String(required=True,
                           validate=validate.OneOf([s.value for s in CellStatus]))
    text = fields.String(required=True, allow_none=True)
    error_class = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    latency_ms = fields.Integer(required=True, allow_none=True)
    tokens_in = fields.Integer(required=True, allow_none=True)
    tokens_out = fields.Integer(required=True, allow_none=True)
    cost_micros = fields.Integer(required=True, allow_none=True)
