"""Schemas of a run's progress (SSE event data and the polling fallback) and results."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.base import PageArgs
from assay.api.fields import MAX_ID
from assay.api.runs.scores_schemas import ScoreSchema
from assay.core.runs.models import CellStatus, RunStatus

ERROR_CLASS = r"^[a-z][a-z0-9_]{0,31}$"
ERRORS_DOC = "Cells by error class, over failed and skipped cells (skipped: cancelled, " \
             "budget_exceeded)"


def _errors() -> fields.Dict:
    return fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                       metadata={"description": ERRORS_DOC})


def _timestamp() -> fields.String:
    return fields.String(required=True, allow_none=True, metadata={"format": "date-time"})


class TargetProgressSchema(Schema):
    target_id = fields.Integer(required=True)
    label = fields.String(required=True)
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    spent_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    errors = _errors()


class ProgressSchema(Schema):
    """The data of every run event (run.started, run.progress, run.status, run.budget_alert,
    run.finished) and of GET .../progress."""

    run_id = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf([s.value for s in RunStatus]))
    total = fields.Integer(required=True)
    done = fields.Integer(required=True, metadata={
        "description": "succeeded + failed: the cells sent; skipped cells (never sent) are "
                       "not done"})
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    spent_micros = fields.Integer(required=True, metadata={
        "description": "Model calls and their judges"})
    judge_spent_micros = fields.Integer(required=True, metadata={
        "description": "The LLM judges' share of spent_micros"})
    reserved_micros = fields.Integer(required=True, metadata={
        "description": "Held by cells in flight: their calls and judges at most"})
    budget_micros = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The run's cap; null: none"})
    project_budget_micros = fields.Integer(required=True, allow_none=True)
    project_spent_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    elapsed_s = fields.Float(required=True, metadata={
        "description": "From the start to the finish (or now); 0 before the start"})
    eta_s = fields.Float(required=True, allow_none=True, metadata={
        "description": "Remaining cells at the pace so far; null unless running with "
                       "some cells done"})
    started_at = _timestamp()
    finished_at = _timestamp()
    error = fields.String(required=True, allow_none=True, metadata={
        "description": "Why the run stopped, when it did"})
    errors = _errors()
    targets = fields.List(fields.Nested(TargetProgressSchema), required=True)


# --- results ----------------------------------------------------------------------------------


class OutputListArgs(PageArgs):
    target_id = fields.Integer(load_default=None, validate=validate.Range(min=1, max=MAX_ID),
                               metadata={"description": "A target of this run (else 422)"})
    status = fields.String(load_default=None,
                           validate=validate.OneOf([s.value for s in CellStatus]))
    error_class = fields.String(load_default=None, validate=[
        validate.Length(max=32), validate.Regexp(
            ERROR_CLASS, error="An error class: lowercase letters, digits and _")],
                                metadata={"description": "e.g. timeout, rate_limited, "
                                                         "cancelled, budget_exceeded"})


class RetrievedChunkSchema(Schema):
    chunk_id = fields.Integer(required=True)
    document_id = fields.Integer(required=True)
    position = fields.Integer(required=True, metadata={"description": "In its document"})
    text = fields.String(required=True)
    score = fields.Float(required=True, metadata={"description": "BM25, higher is better"})


class OutputSchema(Schema):
    id = fields.Integer(required=True)
    case_id = fields.Integer(required=True)
    case_number = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The case's place (1-based) in the run's dataset version: the number "
                       "shown for it everywhere"})
    target_id = fields.Integer(required=True)
    model_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "null: a trace dataset's target (the recorded trace is the output)"})
    label = fields.String(required=True, metadata={"description": "The target's label"})
    repeat = fields.Integer(required=True)
    turn = fields.Integer(required=True, metadata={
        "description": "User turn of a conversation case; 0 otherwise"})
    status = fields.String(required=True,
                           validate=validate.OneOf([s.value for s in CellStatus]))
    text = fields.String(required=True, allow_none=True)
    error_class = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    latency_ms = fields.Integer(required=True, allow_none=True)
    ttft_ms = fields.Integer(required=True, allow_none=True)
    tokens_in = fields.Integer(required=True, allow_none=True)
    tokens_out = fields.Integer(required=True, allow_none=True)
    cost_micros = fields.Integer(required=True, allow_none=True)
    cached = fields.Boolean(required=True)
    attempts = fields.Integer(required=True)
    retrieved = fields.List(fields.Nested(RetrievedChunkSchema), required=True,
                            allow_none=True, metadata={
        "description": "A run answering from documents: the chunks retrieved for this "
                       "cell and put in its prompt, best first; null otherwise"})


class OutputDetailSchema(OutputSchema):
    raw_request = fields.Dict(required=True, allow_none=True, metadata={
        "description": "As sent (headers, and so keys, are never kept)"})
    raw_response = fields.Raw(required=True, allow_none=True, metadata={
        "description": "The provider's reply as received"})
    case_input = fields.Dict(required=True)
    case_expected = fields.Dict(required=True, allow_none=True)
    finished_at = _timestamp()
    scores = fields.List(fields.Nested(ScoreSchema), required=True)


class TargetSummarySchema(Schema):
    target_id = fields.Integer(required=True)
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    pending = fields.Integer(required=True, metadata={"description": "Not finished yet "
                                                                     "(pending or running)"})
    success_rate = fields.Float(required=True, allow_none=True, metadata={
        "description": "succeeded / calls sent (succeeded + failed); skipped cells were "
                       "never sent and are counted apart; null before a call ended"})
    spent_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    cached = fields.Integer(required=True, metadata={"description": "Served by the cache"})
    latency_p50_ms = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Nearest-rank, over succeeded uncached cells"})
    latency_p95_ms = fields.Integer(required=True, allow_none=True)
    ttft_p50_ms = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Time to first token (streamed calls), nearest-rank"})
    ttft_p95_ms = fields.Integer(required=True, allow_none=True)
    errors = _errors()


class ScorerOutcomeSchema(Schema):
    scorer_id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    scores = fields.Integer(required=True, metadata={
        "description": "Score rows (one per judge model or reviewer per output)"})
    passed = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    errored = fields.Integer(required=True, metadata={
        "description": "Scoring failed (no value): a failure, never a pass"})
    errors = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                         metadata={"description": "Errored scores by class"})


class RunSummarySchema(Schema):
    run_id = fields.Integer(required=True)
    success_rate = fields.Float(required=True, allow_none=True, metadata={
        "description": "Over every target: succeeded / calls sent (succeeded + failed)"})
    targets = fields.List(fields.Nested(TargetSummarySchema), required=True)
    scoring = fields.List(fields.Nested(ScorerOutcomeSchema), required=True, metadata={
        "description": "Per scorer with scores on the run: passed, failed, errored"})
