"""One case of a run with every target's outputs and their scores (the side-by-side
viewer), and its neighbours for previous/next navigation."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields

from assay.api.base import project_access, session
from assay.api.runs.blueprint import blp
from assay.api.runs.results import _output
from assay.api.runs.results_schemas import OutputSchema
from assay.api.runs.scores import score_view
from assay.api.runs.scores_schemas import ScoreSchema
from assay.core.projects.models import Role
from assay.core.runs import case_view
from assay.core.runs import service as runs


class CaseOfRunSchema(Schema):
    id = fields.Integer(required=True)
    input = fields.Dict(required=True)
    expected = fields.Dict(required=True, allow_none=True)
    trace = fields.Dict(required=True, allow_none=True, metadata={
        "description": "A trace dataset's recorded trace: {messages: [{role, content, "
                       "tool_calls?, tool_call_id?, name?}]}"})
    tags = fields.List(fields.String(), required=True)
    difficulty = fields.String(required=True, allow_none=True)
    metadata = fields.Dict(required=True)


class CaseOutputSchema(OutputSchema):
    scores = fields.List(fields.Nested(ScoreSchema), required=True)
    conversation = fields.List(fields.Dict(), required=True, allow_none=True, metadata={
        "description": "When a score points at messages (evidence message_index): the "
                       "messages it indexes, as sent followed by the reply; null otherwise "
                       "and for trace cases (whose trace is the case's)"})


class CaseTargetSchema(Schema):
    target_id = fields.Integer(required=True)
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)
    outputs = fields.List(fields.Nested(CaseOutputSchema), required=True, metadata={
        "description": "Every repeat and conversation turn, by repeat then turn"})


class CaseViewSchema(Schema):
    run_id = fields.Integer(required=True)
    run_name = fields.String(required=True)
    dataset_kind = fields.String(required=True, metadata={
        "description": "questions, cases, conversations or traces"})
    position = fields.Integer(required=True, metadata={
        "description": "1-based, in the run's dataset version"})
    total = fields.Integer(required=True, metadata={"description": "Cases in the run"})
    previous_case_id = fields.Integer(required=True, allow_none=True)
    next_case_id = fields.Integer(required=True, allow_none=True)
    case = fields.Nested(CaseOfRunSchema, required=True)
    targets = fields.List(fields.Nested(CaseTargetSchema), required=True, metadata={
        "description": "In the run's target order"})


@blp.get("/<int:run_id>/cases/<int:case_id>")
@blp.response(200, CaseViewSchema)
def get_case(project_id: int, run_id: int, case_id: int) -> Any:
    """One case of the run: its input, expected output and trace, every target's outputs
    (each repeat and turn) with their scores, and the previous and next case ids. 404 when
    the case is not in the run."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    view = case_view.case_view(session(), run, case_id)
    numbers = {case_id: view.position}  # the case's number in its dataset version
    return case_view.as_dict(view, lambda o, t: _output(o, t, numbers), score_view)
