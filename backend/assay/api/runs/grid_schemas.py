"""Schemas of a run's results grid: rows are cases, columns targets."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from assay.api.fields import MAX_ID
from assay.api.runs.results_schemas import ERROR_CLASS, RetrievedChunkSchema
from assay.core.runs.grid import MAX_LIMIT, SORTS, VERDICTS
from assay.core.runs.models import CellStatus

TARGET_LIST = r"^[1-9][0-9]{0,9}(,[1-9][0-9]{0,9}){0,49}$"


def _id(description: str) -> fields.Integer:
    return fields.Integer(load_default=None, validate=validate.Range(min=1, max=MAX_ID),
                          metadata={"description": description})


def _unit(description: str) -> fields.Float:
    return fields.Float(load_default=None, validate=validate.Range(min=0, max=1),
                        metadata={"description": description})


class ResultsGridArgs(Schema):
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10_000_000),
                            metadata={"description": "Rows to skip; 422 past the last row"})
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_LIMIT))
    sort = fields.String(load_default="position", validate=validate.OneOf(SORTS), metadata={
        "description": "position (dataset order), score (mean), latency (mean), cost, "
                       "tokens, errors (failed cells); over the visible targets or "
                       "sort_target_id"})
    order = fields.String(load_default="asc", validate=validate.OneOf(["asc", "desc"]))
    target_ids = fields.String(load_default=None, validate=[
        validate.Length(max=550), validate.Regexp(TARGET_LIST,
                                                  error="Comma-separated target ids")],
                               metadata={
        "description": "The targets shown as columns (targets of this run, else 422); "
                       "default: all"})
    sort_target_id = _id("Sort by this target's cells only (a target of this run)")
    scorer_id = _id("The scorer (any version) whose scores the score filters and sort use; "
                    "default: every score")
    score_min = _unit("Rows with a cell scored at least this (0..1)")
    score_max = _unit("Rows with a cell scored at most this (0..1), not below score_min")
    verdict = fields.String(load_default=None, validate=validate.OneOf(VERDICTS), metadata={
        "description": "Rows with a cell that passed, failed, or has no score"})
    status = fields.String(load_default=None,
                           validate=validate.OneOf([s.value for s in CellStatus]))
    error_class = fields.String(load_default=None, validate=[
        validate.Length(max=32), validate.Regexp(
            ERROR_CLASS, error="An error class: lowercase letters, digits and _")])
    tag = fields.String(load_default=None, validate=validate.Length(min=1, max=100),
                        metadata={"description": "Cases carrying this tag"})

    @validates_schema
    def range_in_order(self, data: dict[str, object], **_: object) -> None:
        low, high = data.get("score_min"), data.get("score_max")
        if isinstance(low, float) and isinstance(high, float) and low > high:
            raise ValidationError("Not above score_max", "score_min")


class ResultsGridScoreSchema(Schema):
    id = fields.Integer(required=True)
    scorer_version_id = fields.Integer(required=True)
    scorer_id = fields.Integer(required=True)
    scorer_name = fields.String(required=True)
    version = fields.Integer(required=True)
    kind = fields.String(required=True)
    source = fields.String(required=True)
    value = fields.Float(required=True, allow_none=True)
    passed = fields.Boolean(required=True, allow_none=True)
    rationale = fields.String(required=True, metadata={"description": "First 2,000 "
                                                                      "characters"})
    comment = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    author_id = fields.Integer(required=True, allow_none=True)
    rating = fields.Integer(required=True, allow_none=True, metadata={
        "description": "A manual score's 1-5 rating as entered"})
    row_version = fields.Integer(required=True, metadata={
        "description": 'For If-Match ("<row_version>") when its reviewer saves or removes it '
                       "again"})


class ResultsGridOutputSchema(Schema):
    id = fields.Integer(required=True)
    repeat = fields.Integer(required=True)
    turn = fields.Integer(required=True)
    prompt = fields.String(required=True, allow_none=True, metadata={
        "description": "The user message this turn answers (conversations; clipped), "
                       "else null"})
    status = fields.String(required=True,
                           validate=validate.OneOf([s.value for s in CellStatus]))
    text = fields.String(required=True, allow_none=True, metadata={
        "description": "The first 400 characters; the output detail has it all"})
    text_length = fields.Integer(required=True)
    error_class = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    tokens_in = fields.Integer(required=True, allow_none=True)
    tokens_out = fields.Integer(required=True, allow_none=True)
    cost_micros = fields.Integer(required=True, allow_none=True)
    latency_ms = fields.Integer(required=True, allow_none=True)
    cached = fields.Boolean(required=True)
    retrieved = fields.List(fields.Nested(RetrievedChunkSchema), required=True,
                            allow_none=True, metadata={
        "description": "Answering from documents: the context this answer was given (each "
                       "chunk's text clipped); null otherwise"})
    scores = fields.List(fields.Nested(ResultsGridScoreSchema), required=True)


class ResultsGridCellSchema(Schema):
    target_id = fields.Integer(required=True)
    outputs = fields.List(fields.Nested(ResultsGridOutputSchema), required=True, metadata={
        "description": "By repeat and turn (usually one)"})


class ResultsGridRowSchema(Schema):
    case_id = fields.Integer(required=True)
    position = fields.Integer(required=True, metadata={"description": "In the dataset "
                                                                      "version"})
    number = fields.Integer(required=True, metadata={
        "description": "The case's place (1-based) in the run's dataset version: the number "
                       "shown for it everywhere"})
    input = fields.String(required=True, metadata={
        "description": "A one-line preview (a conversation's first user message)"})
    turns = fields.Integer(required=True, metadata={
        "description": "User turns of the case (1 unless a conversation)"})
    tags = fields.List(fields.String(), required=True)
    cells = fields.List(fields.Nested(ResultsGridCellSchema), required=True, metadata={
        "description": "One per visible target, in the targets' order"})


class ResultsGridTargetSchema(Schema):
    target_id = fields.Integer(required=True)
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)


class ResultsGridSchema(Schema):
    total = fields.Integer(required=True, metadata={"description": "Rows matching"})
    offset = fields.Integer(required=True)
    limit = fields.Integer(required=True)
    targets = fields.List(fields.Nested(ResultsGridTargetSchema), required=True, metadata={
        "description": "The visible columns, in order"})
    rows = fields.List(fields.Nested(ResultsGridRowSchema), required=True)
