"""Schemas of a run's pairwise comparisons: starting them, the list and the summary."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from assay.api.base import PageArgs
from assay.api.fields import MAX_ID, Id
from assay.core.scoring.comparisons import NO_WINNER

WINNERS = ["a", "b", "tie"]
JUDGE_REF = validate.Length(min=1, max=200)


def _id(description: str) -> fields.Integer:
    return fields.Integer(load_default=None, validate=validate.Range(min=1, max=MAX_ID),
                          metadata={"description": description})


class ComparisonCreateSchema(Schema):
    scorer_id = Id(required=True, metadata={
        "description": "A pairwise_judge scorer of the project; its latest version judges"})
    target_a_id = Id(required=True, metadata={"description": "A target of this run"})
    target_b_id = Id(load_default=None, allow_none=True, metadata={
        "description": "Another target of this run; required unless base_run_id is given"})
    base_run_id = Id(load_default=None, allow_none=True, metadata={
        "description": "Judge target_a_id against a target of this other run of the project, "
                       "on the cases both runs ran (same case, repeat and turn)"})
    base_target_id = Id(load_default=None, allow_none=True, metadata={
        "description": "A target of base_run_id; required with it"})

    @validates_schema
    def _one_opponent(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("base_run_id") is None:
            if data.get("base_target_id") is not None:
                raise ValidationError("base_target_id needs base_run_id", "base_target_id")
            if data.get("target_b_id") is None:
                raise ValidationError("Missing data for required field.", "target_b_id")
        elif data.get("base_target_id") is None:
            raise ValidationError("Choose a target of the base run", "base_target_id")
        elif data.get("target_b_id") is not None:
            raise ValidationError("Give either target_b_id (this run) or base_target_id "
                                  "(the base run), not both", "target_b_id")


class ComparisonStartedSchema(Schema):
    run_id = fields.Integer(required=True)
    scorer_id = fields.Integer(required=True)
    scorer_version_id = fields.Integer(required=True)
    target_a_id = fields.Integer(required=True)
    target_b_id = fields.Integer(required=True, metadata={
        "description": "Of base_run_id when given, else of this run"})
    base_run_id = fields.Integer(required=True, allow_none=True)
    judges = fields.List(fields.String(), required=True)
    pairs = fields.Integer(required=True, metadata={
        "description": "Pairs of outputs (same case, repeat and turn; both succeeded) to "
                       "compare now"})
    already_compared = fields.Integer(required=True, metadata={
        "description": "Pairs every judge of this version already judged without error: "
                       "not compared again"})
    enqueued = fields.Boolean(required=True, metadata={
        "description": "false when there was nothing left to compare"})


class ComparisonListArgs(PageArgs):
    scorer_id = _id("Comparisons by any version of this scorer")
    scorer_version_id = _id("Comparisons by this scorer version")
    judge = fields.String(load_default=None, validate=JUDGE_REF, metadata={
        "description": "The judge model, as the scorer names it"})
    target_id = _id("Comparisons with this target on either side")
    base_run_id = _id("Comparisons against targets of this base run (default: of this run)")
    case_id = _id("Comparisons of this case")
    winner = fields.String(load_default=None, validate=validate.OneOf([*WINNERS, NO_WINNER]),
                           metadata={"description": "none: no winner (orders disagreed, or "
                                                    "the judgement failed)"})
    position_bias = fields.Boolean(load_default=None, metadata={
        "description": "Only judgements whose two orders disagreed (true) or not (false)"})
    failed = fields.Boolean(load_default=None, metadata={
        "description": "Only failed judgements (true) or judged ones (false)"})


class ComparisonSchema(Schema):
    id = fields.Integer(required=True)
    case_id = fields.Integer(required=True)
    scorer_version_id = fields.Integer(required=True)
    judge = fields.String(required=True)
    output_a_id = fields.Integer(required=True)
    output_b_id = fields.Integer(required=True)
    target_a_id = fields.Integer(required=True)
    target_b_id = fields.Integer(required=True)
    winner = fields.String(required=True, allow_none=True, validate=validate.OneOf(WINNERS),
                           metadata={"description": "a, b or tie when both orders agree; "
                                                    "null when they disagree or failed"})
    position_bias = fields.Boolean(required=True, metadata={
        "description": "The two orders disagreed"})
    orders = fields.List(fields.String(allow_none=True), required=True, metadata={
        "description": "[with A shown first, with B shown first]: each answer, un-swapped"})
    rationale = fields.String(required=True)
    error = fields.String(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)


class ComparisonSummaryArgs(Schema):
    scorer_id = _id("Only comparisons by any version of this scorer")
    scorer_version_id = _id("Only comparisons by this scorer version")
    judge = fields.String(load_default=None, validate=JUDGE_REF, metadata={
        "description": "Only this judge's comparisons"})
    base_run_id = _id("Comparisons of this run's targets against this base run's targets "
                      "(default: between targets of this run)")


class ComparisonBiasSchema(Schema):
    k = fields.Integer(required=True)
    n = fields.Integer(required=True)
    estimate = fields.Float(required=True, allow_none=True, metadata={
        "description": "k / n; null when n = 0"})
    low = fields.Float(required=True, allow_none=True)
    high = fields.Float(required=True, allow_none=True)
    confidence = fields.Float(required=True)


class ComparisonPairSchema(Schema):
    scorer_id = fields.Integer(required=True)
    scorer_name = fields.String(required=True)
    scorer_version_id = fields.Integer(required=True)
    version = fields.Integer(required=True)
    judge = fields.String(required=True)
    target_a_id = fields.Integer(required=True, metadata={
        "description": "The earlier of the two targets in the run"})
    target_a_label = fields.String(required=True)
    target_b_id = fields.Integer(required=True)
    target_b_label = fields.String(required=True)
    comparisons = fields.Integer(required=True)
    a_wins = fields.Integer(required=True)
    b_wins = fields.Integer(required=True)
    ties = fields.Integer(required=True)
    disagreements = fields.Integer(required=True, metadata={
        "description": "The two orders disagreed: no winner"})
    errors = fields.Integer(required=True)
    position_bias = fields.Nested(ComparisonBiasSchema, required=True, metadata={
        "description": "Disagreements among judged comparisons, with a Wilson interval"})


class ComparisonRatingSchema(Schema):
    target_id = fields.Integer(required=True)
    label = fields.String(required=True)
    rating = fields.Float(required=True, allow_none=True, metadata={
        "description": "Bradley-Terry on an Elo-like scale (mean 1000; +400 = 10:1 odds); "
                       "null without games"})
    low = fields.Float(required=True, allow_none=True)
    high = fields.Float(required=True, allow_none=True)
    games = fields.Integer(required=True)
    wins = fields.Integer(required=True)
    ties = fields.Integer(required=True, metadata={
        "description": "Ties, and judgements whose orders disagreed"})
    losses = fields.Integer(required=True)
    flags = fields.List(fields.String(), required=True, metadata={
        "description": "no_games, undefeated, winless"})


class ComparisonRatingsSchema(Schema):
    available = fields.Boolean(required=True)
    message = fields.String(required=True, allow_none=True, metadata={
        "description": "Why there are no ratings, e.g. comparisons that form separate "
                       "groups of targets"})
    n_comparisons = fields.Integer(required=True)
    confidence = fields.Float(required=True)
    items = fields.List(fields.Nested(ComparisonRatingSchema), required=True, metadata={
        "description": "Best first"})


class ComparisonSummarySchema(Schema):
    run_id = fields.Integer(required=True)
    base_run_id = fields.Integer(required=True, allow_none=True)
    pairs = fields.List(fields.Nested(ComparisonPairSchema), required=True)
    ratings = fields.Nested(ComparisonRatingsSchema, required=True, metadata={
        "description": "Every judged comparison of the run (as filtered) is a game; a tie "
                       "or a disagreement of the orders counts half a win to each side"})
