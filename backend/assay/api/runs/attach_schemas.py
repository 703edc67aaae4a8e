"""Schemas of scoring a finished run after the fact: the scorer versions to add, and what
scoring with them may cost."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import Id
from assay.api.runs.schemas import MAX_SCORERS, RunSchema, RunScorerSchema


class AttachScorersSchema(Schema):
    scorer_version_ids = fields.List(Id(), required=True, validate=validate.Length(
        min=1, max=MAX_SCORERS), metadata={
            "description": f"1 to {MAX_SCORERS} versions of the project's scorers, each once, "
                           "not archived, not pairwise judges, not pinned by the run yet (a "
                           "newer version of a pinned scorer is fine: both keep their scores)"})


class AttachEstimateSchema(Schema):
    outputs = fields.Integer(required=True, metadata={
        "description": "The run's succeeded outputs: each is scored by each new version"})
    scores = fields.Integer(required=True, metadata={
        "description": "Scores the job will write (manual scorers excluded: people score)"})
    judge_calls = fields.Integer(required=True, metadata={
        "description": "LLM judge calls: one per judge of each judge scorer per output"})
    low_micros = fields.Integer(required=True, metadata={
        "description": "Judge cost if verdicts use a quarter of their max_tokens"})
    high_micros = fields.Integer(required=True, metadata={
        "description": "Judge cost if every verdict uses its max_tokens: the most the job "
                       "reserves"})
    complete = fields.Boolean(required=True, metadata={
        "description": "false: some judges have no price and are left out of the totals"})
    unpriced_judges = fields.List(fields.String(), required=True)
    run_budget_left_micros = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The run's cap less what it spent and holds (null: no cap); the job "
                       "stops when the judges of the next outputs no longer fit"})
    project_budget_left_micros = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The project's cap less what it spent and holds (null: no cap)"})
    scorers = fields.List(fields.Nested(RunScorerSchema), required=True)


class ScoringStartedSchema(Schema):
    run = fields.Nested(RunSchema, required=True, metadata={
        "description": "The run, its new scorers pinned after the ones it had"})
    events_after = fields.String(required=True, metadata={
        "description": "The run's newest event id before the job was enqueued: follow the "
                       "job on /scorers/events?last_event_id=<this>"})


class JobsStoppingSchema(Schema):
    run_id = fields.Integer(required=True)
    stopping = fields.Boolean(required=True, metadata={
        "description": "true: the jobs of the run queued or running close their calls in "
                       "flight and end (stopped: cancelled); what was judged is kept"})
