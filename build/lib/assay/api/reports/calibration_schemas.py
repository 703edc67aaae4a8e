"""The judge calibration report's shape (reports/calibration.py); agreement numbers are
spelled as in a run's statistics."""

from __future__ import annotations

from marshmallow import Schema, fields

from assay.api.runs.statistics_schemas import (
    StatsAgreementSchema,
    StatsJudgeHumanSchema,
)


class CalibrationHumanSchema(StatsJudgeHumanSchema):
    human_name = fields.String(required=True, metadata={"description": "The manual scorer"})
    human_version = fields.Integer(required=True)


class CalibrationItemSchema(Schema):
    scorer_id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    scorer_version_id = fields.Integer(required=True)
    version = fields.Integer(required=True, metadata={"description": "The version's number"})
    runs = fields.Integer(required=True, metadata={"description": "Runs it scored"})
    outputs = fields.Integer(required=True, metadata={"description": "Outputs it valued"})
    judges = fields.List(fields.String(), required=True, metadata={
        "description": "Its judge models (by the source they score under)"})
    agreement = fields.Nested(StatsAgreementSchema, required=True, allow_none=True,
                              metadata={"description": "Between its judges, over every "
                                        "output; null with fewer than two judges"})
    judge_human = fields.List(fields.Nested(CalibrationHumanSchema), required=True, metadata={
        "description": "Each judge (and their mean, with several) against each manual "
                       "scorer's reviewers, on the outputs both scored"})


class CalibrationSchema(Schema):
    items = fields.List(fields.Nested(CalibrationItemSchema), required=True, metadata={
        "description": "Each judge scorer version with scores from a judge model, by "
                       "scorer then version"})
