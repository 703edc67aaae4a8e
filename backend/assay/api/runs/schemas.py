from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import Count, Id, StrictBoolean
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
    cache = StrictBoolean(load_default=True, metadata={
        "description": "Reuse cached replies of deterministic calls (temperature 0 or a "
                       "seed), and cache new ones; cached outputs are free and marked"})
    stream = StrictBoolean(load_default=False, metadata={
        "description": "Stream replies, so each output records its time to first token"})
    timeout_s = Count(1, 3600, load_default=None, allow_none=True, metadata={
        "description": "Wall-clock seconds one attempt of a call may take (default 120)"})


class RunEstimateSchema(Schema):
    dataset_id = Id(required=True)
    model_ids = fields.List(Id(), required=True, validate=validate.Length(min=1, max=20))
    repeats = Count(1, 10, load_default=1)


class ModelEstimateSchema(Schema):
    model_id = fields.Integer(required=True)
    name = fields.String(required=True)
    calls = fields.Integer(required=True)
    input_tokens = fields.Integer(required=True)
    output_tokens_low = fields.Integer(required=True)
    output_tokens_high = fields.Integer(required=True)
    low_micros = fields.Integer(required=True, allow_none=True,
                                metadata={"description": "null: the model has no price"})
    high_micros = fields.Integer(required=True, allow_none=True)
    priced = fields.Boolean(required=True)


class EstimateAssumptionsSchema(Schema):
    low_output_share = fields.Float(required=True)
    default_max_tokens = fields.Integer(required=True)
    tokens_per_message = fields.Integer(required=True)


class RunEstimateResultSchema(Schema):
    dataset_version_id = fields.Integer(required=True)
    cases = fields.Integer(required=True)
    repeats = fields.Integer(required=True)
    calls = fields.Integer(required=True)
    low_micros = fields.Integer(required=True, metadata={
        "description": "Micro-dollars, priced models only (see complete)"})
    high_micros = fields.Integer(required=True)
    complete = fields.Boolean(required=True, metadata={
        "description": "false: some models are unpriced and not in the totals"})
    per_model = fields.List(fields.Nested(ModelEstimateSchema), required=True)
    unpriced_models = fields.List(fields.Integer(), required=True)
    assumptions = fields.Nested(EstimateAssumptionsSchema, required=True)


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
    ttft_ms = fields.Integer(required=True, allow_none=True)
    cached = fields.Boolean(required=True)
    attempts = fields.Integer(required=True)
