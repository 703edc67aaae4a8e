from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import NamedEnum
from assay.core.experiments.models import IterationStatus, SuggestionStatus
from assay.core.experiments.review import COMMENT_MAX, REASON_MAX, REASON_MIN

DIFF_MAX = 100_000
MAX_COUNTEREXAMPLES = 50


class IterationSchema(Schema):
    id = fields.Integer(required=True)
    experiment_id = fields.Integer(required=True)
    number = fields.Integer(required=True)
    status = NamedEnum("IterationStatus", [s.value for s in IterationStatus], required=True)
    paused = fields.Boolean(required=True)
    prompt_version_id = fields.Integer(required=True)
    dataset_version_id = fields.Integer(required=True, allow_none=True)
    run_id = fields.Integer(required=True, allow_none=True)
    composite = fields.Float(required=True, allow_none=True, metadata={
        "description": "The best model's composite (0..1) on all cases"})
    refinement_composite = fields.Float(required=True, allow_none=True)
    holdout_composite = fields.Float(required=True, allow_none=True, metadata={
        "description": "On the held-out cases the refiner never sees"})
    weakest_criteria = fields.List(fields.String(), required=True)
    error = fields.String(required=True, allow_none=True)
    execution_micros = fields.Integer(required=True)
    judging_micros = fields.Integer(required=True)
    refinement_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)
    phase_started_at = fields.DateTime(required=True, allow_none=True)
    finished_at = fields.DateTime(required=True, allow_none=True)


class IterationDetailSchema(IterationSchema):
    aggregate = fields.Dict(required=True, allow_none=True, metadata={
        "description": "Per model (run target label), on all / refinement / holdout cases: "
                       "composite {mean, low, high, n} and criteria {name: {mean, low, high, "
                       "n}}; delta vs the previous iteration per model and set (mean "
                       "difference, interval, p-value, verdict); weakest; best_model"})


class CommentSchema(Schema):
    id = fields.Integer(required=True)
    author_id = fields.Integer(required=True, allow_none=True)
    kind = fields.String(required=True)
    body = fields.String(required=True)
    created_at = fields.DateTime(required=True)


class AttemptFailureSchema(Schema):
    attempt = fields.Integer(required=True)
    kind = fields.String(required=True, metadata={
        "description": "call (the model failed), format (no <diff>/<note>) or guardrail"})
    rule = fields.String(required=True, allow_none=True, metadata={
        "description": "The guardrail broken (one_patch, applies_cleanly, length_change, "
                       "lines_changed, consecutive_removal, variables_unchanged, no_change), "
                       "reply_format, or the failed call's error class"})
    message = fields.String(required=True)


class SuggestionSchema(Schema):
    id = fields.Integer(required=True)
    iteration_id = fields.Integer(required=True)
    status = NamedEnum("SuggestionStatus", [s.value for s in SuggestionStatus], required=True)
    diff = fields.String(required=True, allow_none=True)
    original_diff = fields.String(required=True, allow_none=True)
    note = fields.String(required=True, allow_none=True)
    no_suggestion_reason = fields.String(required=True, allow_none=True)
    attempts = fields.Integer(required=True)
    validation_errors = fields.List(fields.String(), required=True)
    attempt_failures = fields.List(fields.Nested(AttemptFailureSchema), required=True, metadata={
        "description": "Why each refused refiner attempt was refused, in order"})
    exemplars = fields.List(fields.Dict(), required=True, metadata={
        "description": "The failing refinement-set outputs the refiner saw: case_id, input, "
                       "output, model, scores, rationales"})
    cost_micros = fields.Integer(required=True)
    reviewed_by = fields.Integer(required=True, allow_none=True)
    reviewed_at = fields.DateTime(required=True, allow_none=True)
    reject_reason = fields.String(required=True, allow_none=True)
    prompt_version_id = fields.Integer(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    comments = fields.List(fields.Nested(CommentSchema), required=True)


class ApproveSchema(Schema):
    comment = fields.String(load_default=None, allow_none=True,
                            validate=validate.Length(max=COMMENT_MAX))


class RejectSchema(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=REASON_MIN,
                                                                    max=REASON_MAX))


class EditSchema(Schema):
    diff = fields.String(required=True, validate=validate.Length(min=1, max=DIFF_MAX),
                         metadata={"description": "A unified diff against the iteration's "
                                                  "prompt; checked by the guardrails"})
    comment = fields.String(load_default=None, allow_none=True,
                            validate=validate.Length(max=COMMENT_MAX))


class CommentCreateSchema(Schema):
    body = fields.String(required=True, validate=validate.Length(min=1, max=COMMENT_MAX))


class CounterexamplesSchema(Schema):
    cases = fields.List(fields.Dict(), required=True,
                        validate=validate.Length(min=1, max=MAX_COUNTEREXAMPLES), metadata={
                            "description": "Cases as the dataset takes them ({input, "
                                           "expected?, tags?}); they join a new dataset "
                                           "version used from the next iteration"})


class ApprovedSchema(Schema):
    prompt_version_id = fields.Integer(required=True)
    next_iteration = fields.Integer(required=True, allow_none=True)
    experiment_status = fields.String(required=True)


class CounterexamplesAddedSchema(Schema):
    dataset_version_id = fields.Integer(required=True)
    dataset_version = fields.Integer(required=True)
    cases = fields.Integer(required=True)


class PairedDeltaSchema(Schema):
    n = fields.Integer(required=True)
    mean_difference = fields.Float(required=True, allow_none=True)
    low = fields.Float(required=True, allow_none=True)
    high = fields.Float(required=True, allow_none=True)
    verdict = fields.String(required=True)


class ProgressDeltaSchema(Schema):
    model = fields.String(required=True)
    all = fields.Nested(PairedDeltaSchema, required=True, allow_none=True)
    holdout = fields.Nested(PairedDeltaSchema, required=True, allow_none=True, metadata={
        "description": "On the held-out cases (null when none is held out)"})


class ExperimentProgressIterationSchema(Schema):
    id = fields.Integer(required=True)
    number = fields.Integer(required=True)
    phase = fields.String(required=True)
    paused = fields.Boolean(required=True)
    run_id = fields.Integer(required=True, allow_none=True)
    run_status = fields.String(required=True, allow_none=True)
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    run_spent_micros = fields.Integer(required=True)
    composite = fields.Float(required=True, allow_none=True)
    holdout_composite = fields.Float(required=True, allow_none=True)
    suggestion_ready = fields.Boolean(required=True)
    delta = fields.Nested(ProgressDeltaSchema, required=True, allow_none=True, metadata={
        "description": "The best model's change vs the previous iteration, once this one is "
                       "aggregated (null: iteration 1, or not aggregated yet)"})


class ExperimentProgressSchema(Schema):
    experiment_id = fields.Integer(required=True)
    status = fields.String(required=True)
    stop_reason = fields.String(required=True, allow_none=True)
    stop_detail = fields.String(required=True, allow_none=True)
    spent_micros = fields.Integer(required=True)
    budget_micros = fields.Integer(required=True, allow_none=True)
    tokens = fields.Integer(required=True)
    ended = fields.Boolean(required=True)
    iteration = fields.Nested(ExperimentProgressIterationSchema, required=True, allow_none=True)
