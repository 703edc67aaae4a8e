"""The Server-Sent Events streams in the OpenAPI document: each stream's event types and
their `data` as components, and the `text/event-stream` response the views declare.

Each stream's media type has an `itemSchema` (OpenAPI 3.2's keyword) pointing at the event
component, one frame as it is on the wire: {id, event, data}, `data` the frame's data line,
a string whose JSON `contentSchema` describes (JSON Schema's keywords for encoded content)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from assay.api.iterations.schemas import ExperimentProgressSchema
from assay.api.runs.results_schemas import ProgressSchema
from assay.events import experiments as experiment_events
from assay.events.publish import BUDGET_ALERT, FINISHED, PROGRESS, SCORING_FINISHED, STARTED, STATUS
from assay.jobs.comparisons import COMPARED
from assay.jobs.generation import FINISHED as GENERATION_FINISHED
from assay.jobs.generation import PROGRESS as GENERATION_PROGRESS
from assay.jobs.generation import STARTED as GENERATION_STARTED
from assay.jobs.scoring import SCORED

RUN_EVENTS = [STARTED, PROGRESS, STATUS, BUDGET_ALERT, FINISHED]
SCORING_EVENTS = [SCORED, SCORING_FINISHED]
EXPERIMENT_EVENTS = [experiment_events.PROGRESS, experiment_events.FINISHED]
GENERATION_EVENTS = [GENERATION_STARTED, GENERATION_PROGRESS, GENERATION_FINISHED]
_AT = {"description": "When it was published; absent on a finish the server stood in for "
                      "(the stream lost the real one)"}


class RunEventDataSchema(ProgressSchema):
    """The run's progress, as GET .../progress answers, when the event was published."""

    type = fields.String(required=True, validate=validate.OneOf(RUN_EVENTS))
    at = fields.DateTime(metadata=_AT)


class ScoringEventDataSchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf(SCORING_EVENTS))
    run_id = fields.Integer(required=True)
    scores = fields.Integer(metadata={"description": "Scores written so far by this job"})
    stopped = fields.String(validate=validate.OneOf(["budget_exceeded"]))
    idle = fields.Boolean(metadata={"description": "true: no scoring job is queued or running "
                                                   "(the stream ends at once)"})
    at = fields.DateTime(metadata=_AT)


class ComparisonEventDataSchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf([COMPARED]))
    run_id = fields.Integer(required=True)
    scorer_version_id = fields.Integer(required=True)
    target_a_id = fields.Integer(required=True)
    target_b_id = fields.Integer(required=True, allow_none=True)
    base_run_id = fields.Integer(required=True, allow_none=True)
    pairs = fields.Integer(required=True)
    compared = fields.Integer(required=True)
    comparisons = fields.Integer(required=True)
    at = fields.DateTime(metadata=_AT)


class GenerationEventDataSchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf(GENERATION_EVENTS))
    job_id = fields.Integer(required=True)
    status = fields.String(required=True)
    batches = fields.Integer()
    batches_done = fields.Integer()
    requested = fields.Integer()
    received = fields.Integer()
    cost_micros = fields.Integer()
    at = fields.DateTime(metadata=_AT)


class ExperimentEventDataSchema(ExperimentProgressSchema):
    """The experiment's progress, as GET .../experiments/{id}/progress answers."""

    type = fields.String(required=True, validate=validate.OneOf(EXPERIMENT_EVENTS))
    at = fields.DateTime(metadata=_AT)


def _envelope(types: list[str], data: list[str]) -> dict[str, Any]:
    refs = [{"$ref": f"#/components/schemas/{name}"} for name in data]
    return {"type": "object", "required": ["event", "data"], "properties": {
        "id": {"type": "string", "description": "The Redis stream id: send it as "
                                                "Last-Event-ID (or last_event_id) to resume"},
        "event": {"type": "string", "enum": types},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": refs[0] if len(refs) == 1 else {"oneOf": refs},
                 "description": "The data line: JSON, as contentSchema says"},
    }}


DATA_SCHEMAS: dict[str, type[Schema]] = {
    "RunEventData": RunEventDataSchema, "ScoringEventData": ScoringEventDataSchema,
    "ComparisonEventData": ComparisonEventDataSchema,
    "GenerationEventData": GenerationEventDataSchema,
    "ExperimentEventData": ExperimentEventDataSchema,
}


def event_schemas() -> dict[str, dict[str, Any]]:
    """The stream envelopes, by component name (the data schemas are DATA_SCHEMAS)."""
    return {
        "RunEvent": _envelope(RUN_EVENTS + SCORING_EVENTS + [COMPARED],
                              ["RunEventData", "ScoringEventData", "ComparisonEventData"]),
        "GenerationEvent": _envelope(GENERATION_EVENTS, ["GenerationEventData"]),
        "ExperimentEvent": _envelope(EXPERIMENT_EVENTS, ["ExperimentEventData"]),
    }
