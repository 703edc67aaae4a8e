"""Schemas of an output's scores, and of a score a reviewer gives by hand."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from assay.api.fields import Count, Id, StrictBoolean
from assay.scorers.manual import MAX_CRITERIA

SCALE_DOC = "Which fields a scorer takes follows its scale (params.scale)"


def _few_criteria(value: dict[str, Any]) -> None:
    if len(value) > MAX_CRITERIA:
        raise ValidationError(f"At most {MAX_CRITERIA} criteria.")


class EvidenceSchema(Schema):
    message_index = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The message of the conversation or trace it points at"})
    start = fields.Integer(required=True, allow_none=True)
    end = fields.Integer(required=True, allow_none=True)
    text = fields.String(required=True)
    label = fields.String(required=True, metadata={
        "description": "The rule or criterion it supports"})


class ScoreSchema(Schema):
    id = fields.Integer(required=True)
    scorer_id = fields.Integer(required=True)
    scorer_name = fields.String(required=True)
    scorer_version_id = fields.Integer(required=True)
    version = fields.Integer(required=True, metadata={"description": "The version's number"})
    kind = fields.String(required=True)
    source = fields.String(required=True, metadata={
        "description": "\"\" for deterministic kinds, the judge model for judges, "
                       "\"user:<id>\" for a reviewer"})
    value = fields.Float(required=True, allow_none=True, metadata={
        "description": "0..1; null: scoring failed (see error)"})
    passed = fields.Boolean(required=True, allow_none=True)
    criteria = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                           metadata={"description": "Per-criterion values, 0..1 each"})
    rationale = fields.String(required=True)
    evidence = fields.List(fields.Nested(EvidenceSchema), required=True)
    severity = fields.String(required=True, allow_none=True)
    flags = fields.List(fields.String(), required=True)
    details = fields.Dict(required=True, metadata={
        "description": "Kind-specific; manual scores keep what was entered under entered"})
    error = fields.String(required=True, allow_none=True)
    author_id = fields.Integer(required=True, allow_none=True)
    author_name = fields.String(required=True, allow_none=True)
    comment = fields.String(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    row_version = fields.Integer(required=True, metadata={
        "description": "For If-Match when a reviewer saves this score again"})


class ManualScoreSchema(Schema):
    rating = Count(1, 5, load_default=None, allow_none=True, metadata={
        "description": f"Scale 1-5: required. {SCALE_DOC}"})
    passed = StrictBoolean(load_default=None, allow_none=True, metadata={
        "description": "Scale pass_fail: required; optional with the other scales"})
    criteria = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=100)),
                           values=Count(1, 5), load_default=dict, validate=_few_criteria,
                           metadata={"maxProperties": MAX_CRITERIA,
                                     "description": "Scale criteria: a rating 1-5 for each "
                                                    "of the scorer's criteria"})
    comment = fields.String(load_default=None, allow_none=True,
                            validate=validate.Length(max=2000))


class ManualScoreManySchema(ManualScoreSchema):
    """One score given to several outputs at once: every repeat of a cell."""

    output_ids = fields.List(Id(), required=True,
                             validate=validate.Length(min=1, max=100), metadata={
                                 "description": "Outputs of this run, e.g. a cell's repeats"})
    row_versions = fields.List(fields.Integer(strict=True,
                                              validate=validate.Range(min=0, max=10**18)),
                               load_default=None, validate=validate.Length(max=100),
                               metadata={"description": (
                                   "The `row_version` of your score of each output, in the "
                                   "order of output_ids (0: none yet): a save from a stale "
                                   "tab is refused with 412 and your current scores. "
                                   "Without it the save applies to what is stored.")})

    @validates_schema
    def _one_version_per_output(self, data: dict[str, Any], **_: Any) -> None:
        versions = data.get("row_versions")
        if versions is not None and len(versions) != len(data.get("output_ids") or []):
            raise ValidationError("One version per output, in the order of output_ids",
                                  "row_versions")


class ScoreListSchema(Schema):
    items = fields.List(fields.Nested(ScoreSchema), required=True)
