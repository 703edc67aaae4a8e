"""The run dashboard's schema (edison FR-RV-001)."""

from __future__ import annotations

from marshmallow import Schema, fields

from assay.api.reports.schemas import MeanSchema, RateSchema, ScorerRefSchema


def _float() -> fields.Float:
    return fields.Float(required=True, allow_none=True)


class CountsSchema(Schema):
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    pending = fields.Integer(required=True)
    scored = fields.Integer(required=True, metadata={"description": "Outputs with a score"})


class DeltaSchema(Schema):
    previous_run_id = fields.Integer(required=True)
    previous = fields.Float(required=True, metadata={"description": "Its mean score"})
    absolute = fields.Float(required=True)
    percentage = fields.Float(required=True, allow_none=True, metadata={
        "description": "The change in percent of the previous score (16.9 is +16.9%); "
                       "null when the previous score was 0"})


class WinsSchema(Schema):
    wins = fields.Integer(required=True)
    losses = fields.Integer(required=True)
    ties = fields.Integer(required=True)
    win_rate = fields.Float(required=True, metadata={"description": "A tie counts half"})


class CriterionSchema(Schema):
    n = fields.Integer(required=True)
    avg = fields.Float(required=True)
    min = fields.Float(required=True)
    max = fields.Float(required=True)
    std = fields.Float(required=True, metadata={"description": "Population"})


class FacetGroupSchema(Schema):
    key = fields.String(required=True)
    n_outputs = fields.Integer(required=True)
    n_cases = fields.Integer(required=True)
    score = fields.Nested(MeanSchema, required=True)
    pass_rate = fields.Nested(RateSchema, required=True)


class FacetsSchema(Schema):
    by_tag = fields.List(fields.Nested(FacetGroupSchema), required=True)
    by_length = fields.List(fields.Nested(FacetGroupSchema), required=True, metadata={
        "description": "Input characters: XS < 50 <= S < 200 <= M < 1,000 <= L < 5,000 <= XL"})
    by_difficulty = fields.List(fields.Nested(FacetGroupSchema), required=True)
    length_of = fields.String(required=True)


class TrendPointSchema(Schema):
    run_id = fields.Integer(required=True)
    name = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    score = fields.Nested(MeanSchema, required=True)


class DashboardTargetSchema(Schema):
    target_id = fields.Integer(required=True)
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    pending = fields.Integer(required=True)
    success_rate = fields.Nested(RateSchema, required=True)
    scored = fields.Integer(required=True)
    score = fields.Nested(MeanSchema, required=True, allow_none=True)
    pass_rate = fields.Nested(RateSchema, required=True, allow_none=True)
    criteria = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                           metadata={"description": "Mean of each rubric criterion"})
    pairwise = fields.Nested(WinsSchema, required=True, allow_none=True)
    spent_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    latency_p50_ms = fields.Integer(required=True, allow_none=True)
    latency_p95_ms = fields.Integer(required=True, allow_none=True)


class DashboardSchema(Schema):
    run_id = fields.Integer(required=True)
    name = fields.String(required=True)
    status = fields.String(required=True)
    dataset_id = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)
    finished_at = fields.DateTime(required=True, allow_none=True)
    confidence = fields.Float(required=True)
    scorer = fields.Nested(ScorerRefSchema, required=True, allow_none=True, metadata={
        "description": "The scorer behind the scores; null when the run has none"})
    counts = fields.Nested(CountsSchema, required=True)
    success_rate = fields.Nested(RateSchema, required=True, metadata={
        "description": "succeeded / (succeeded + failed)"})
    score = fields.Nested(MeanSchema, required=True, allow_none=True, metadata={
        "description": "Composite score: the mean of case means"})
    pass_rate = fields.Nested(RateSchema, required=True, allow_none=True)
    delta_vs_previous = fields.Nested(DeltaSchema, required=True, allow_none=True, metadata={
        "description": "Against the latest earlier run on the dataset with a score"})
    pairwise_win_rate = fields.Float(required=True, allow_none=True, metadata={
        "description": "The best target's; null without pairwise judgements"})
    spent_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    tokens = fields.Integer(required=True)
    latency_p50_ms = fields.Integer(required=True, allow_none=True)
    latency_p95_ms = fields.Integer(required=True, allow_none=True)
    criteria = fields.Dict(keys=fields.String(), values=fields.Nested(CriterionSchema),
                           required=True)
    facets = fields.Nested(FacetsSchema, required=True, allow_none=True)
    trend = fields.List(fields.Nested(TrendPointSchema), required=True, metadata={
        "description": "The dataset's last runs up to this one, oldest first"})
    best_target_id = fields.Integer(required=True, allow_none=True)
    worst_target_id = fields.Integer(required=True, allow_none=True)
    targets = fields.List(fields.Nested(DashboardTargetSchema), required=True)
