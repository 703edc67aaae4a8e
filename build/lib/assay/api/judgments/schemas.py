from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import Id
from assay.scorers.judging import MAX_JUDGES
from assay.scorers.question_quality import CRITERIA, MAX_INSTRUCTION

RATING_STATUSES = ("pending", "scored", "failed")


class JudgmentCreateSchema(Schema):
    judges = fields.List(Id(), required=True, validate=validate.Length(min=1, max=MAX_JUDGES),
                         metadata={"description": f"1 to {MAX_JUDGES} distinct model ids of "
                                                  "the project"})
    criteria = fields.List(fields.String(validate=validate.OneOf(list(CRITERIA))),
                           load_default=list, validate=validate.Length(max=len(CRITERIA)),
                           metadata={"description": "Predefined criteria, each rated 1-10; "
                                                    "at least one, or an instruction"})
    instruction = fields.String(load_default=None, allow_none=True,
                                validate=validate.Length(max=MAX_INSTRUCTION), metadata={
                                    "description": "Free-form instructions for the judges; "
                                                   "alone, the judges give one overall "
                                                   "rating as it asks"})
    dataset_version_id = Id(load_default=None, allow_none=True, metadata={
        "description": "A version (row id) of the dataset; the latest if omitted"})


class RatingSchema(Schema):
    """One judge's rating of one question."""

    judge = fields.String(required=True, metadata={"description": "The judge's ref"})
    status = fields.String(required=True, validate=validate.OneOf(RATING_STATUSES))
    scores = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                         metadata={"description": "Criterion -> rating, 1-10"})
    overall = fields.Float(required=True, allow_none=True, metadata={
        "description": "The overall rating, else the mean of the ratings (1-10)"})
    justification = fields.String(required=True)
    rationales = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    error = fields.String(required=True, allow_none=True)


class JudgedQuestionSchema(Schema):
    output_id = fields.Integer(required=True)
    case_id = fields.Integer(required=True)
    number = fields.Integer(required=True, metadata={"description": "1-based, in order"})
    question = fields.String(required=True)
    ratings = fields.List(fields.Nested(RatingSchema), required=True,
                          metadata={"description": "One per judge, in the judges' order"})


class MeanRatingSchema(Schema):
    mean = fields.Float(required=True, allow_none=True)
    low = fields.Float(required=True, allow_none=True, metadata={"description": "95% CI"})
    high = fields.Float(required=True, allow_none=True)
    n = fields.Integer(required=True, metadata={"description": "Questions rated"})


class JudgeSummarySchema(Schema):
    ref = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True,
                              metadata={"description": "null: the model was deleted"})
    name = fields.String(required=True)
    scored = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    pending = fields.Integer(required=True)
    cost_micros = fields.Integer(required=True)
    means = fields.Dict(keys=fields.String(), values=fields.Nested(MeanRatingSchema),
                        required=True, metadata={"description": "Criterion -> mean rating"})
    overall = fields.Nested(MeanRatingSchema, required=True)


class AgreementSchema(Schema):
    criterion = fields.String(required=True)
    alpha = fields.Float(required=True, allow_none=True, metadata={
        "description": "Krippendorff's alpha (interval); null: fewer than two judges, or "
                       "no question rated by two"})
    n_units = fields.Integer(required=True, metadata={
        "description": "Questions rated by at least two judges"})
    n_values = fields.Integer(required=True)


class JudgingProgressSchema(Schema):
    questions = fields.Integer(required=True)
    expected = fields.Integer(required=True, metadata={"description": "questions x judges"})
    scored = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    done = fields.Boolean(required=True)


class JudgmentsSchema(Schema):
    run_id = fields.Integer(required=True)
    run_status = fields.String(required=True)
    dataset_version_id = fields.Integer(required=True)
    scorer_version_id = fields.Integer(required=True)
    criteria = fields.List(fields.String(), required=True)
    instruction = fields.String(required=True, allow_none=True)
    judges = fields.List(fields.Nested(JudgeSummarySchema), required=True)
    agreement = fields.List(fields.Nested(AgreementSchema), required=True,
                            metadata={"description": "One per criterion"})
    overall_agreement = fields.Nested(AgreementSchema, required=True)
    progress = fields.Nested(JudgingProgressSchema, required=True)
    items = fields.List(fields.Nested(JudgedQuestionSchema), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    page_size = fields.Integer(required=True)


class GeneratorQualitySchema(Schema):
    model_id = fields.Integer(required=True, allow_none=True,
                              metadata={"description": "null: written or imported questions"})
    name = fields.String(required=True)
    mean = fields.Float(required=True, allow_none=True, metadata={
        "description": "Mean overall rating, 1-10"})
    low = fields.Float(required=True, allow_none=True)
    high = fields.Float(required=True, allow_none=True)
    questions = fields.Integer(required=True)
    ratings = fields.Integer(required=True)
    datasets = fields.Integer(required=True)


class QuestionQualityReportSchema(Schema):
    items = fields.List(fields.Nested(GeneratorQualitySchema), required=True)
