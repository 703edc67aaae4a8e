"""Schemas of a run's statistics, facets and paired comparisons (core/scoring/statistics.py,
run_facets.py, paired_comparison.py). Every interval is 95%."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import MAX_ID


def _query_id(description: str) -> fields.Integer:
    return fields.Integer(load_default=None, validate=validate.Range(min=1, max=MAX_ID),
                          metadata={"description": description})


def _number(description: str | None = None) -> fields.Float:
    return fields.Float(required=True, allow_none=True,
                        metadata={"description": description} if description else {})


def _count(description: str | None = None) -> fields.Integer:
    return fields.Integer(required=True,
                          metadata={"description": description} if description else {})


SCORER_DOC = "A scorer version the run pins or holds scores of; the run's first if omitted"


class StatisticsArgs(Schema):
    scorer_version_id = _query_id("Only this scorer version (one of the run's, else 422)")


class StatsFacetArgs(Schema):
    scorer_version_id = _query_id(SCORER_DOC)
    target_id = _query_id("Only this target of the run (else 422); every target if omitted")
    length_of = fields.String(load_default="input", validate=validate.OneOf(
        ["input", "output"]), metadata={"description": "Length buckets count the characters "
                                                       "of the case's input or of the output"})


class CompareTargetsArgs(Schema):
    target_a = _query_id("A target of the run; the run's first if omitted")
    target_b = _query_id("Another target of the run; the run's second if omitted")
    scorer_version_id = _query_id(SCORER_DOC)


class CompareRunsArgs(Schema):
    scorer_version_id = _query_id(
        "A scorer version of this run; the base run is read with the same version, else "
        "with its own version of the same scorer. This run's first scorer if omitted")


class StatsScorerSchema(Schema):
    scorer_version_id = _count()
    scorer_id = _count()
    name = fields.String(required=True)
    kind = fields.String(required=True)
    version = _count("The version's number")
    pinned = fields.Boolean(required=True, metadata={
        "description": "The run applies it; false: the run only holds scores of it by hand"})


class StatsTargetSchema(Schema):
    target_id = _count()
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)


class StatsMeanSchema(Schema):
    mean = _number("Mean of case means; null without values")
    low = _number("Bootstrap interval clustered by case; null with fewer than two cases")
    high = _number()
    n_cases = _count("Cases with a value")
    n_values = _count("Outputs with a value")
    confidence = fields.Float(required=True)


class StatsRateSchema(Schema):
    k = _count()
    n = _count()
    estimate = _number("k / n; null when n is 0")
    low = _number("Wilson score interval")
    high = _number()
    confidence = fields.Float(required=True)


class StatsCriterionSchema(Schema):
    name = fields.String(required=True)
    n = _count("Outputs scored on the criterion")
    avg = fields.Float(required=True)
    min = fields.Float(required=True)
    max = fields.Float(required=True)
    std = fields.Float(required=True, metadata={"description": "Population standard deviation"})


class StatsFlakyCaseSchema(Schema):
    case_id = _count()
    case_number = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The case's place (1-based) in the run's dataset version"})
    repeats = _count()
    mean = fields.Float(required=True)
    std = fields.Float(required=True)
    spread = fields.Float(required=True, metadata={"description": "max - min over repeats"})
    passes = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Repeats that passed, for pass/fail values"})


class StatsFlakinessSchema(Schema):
    n_cases = _count("Cases with at least two repeats")
    n_flaky = _count("Cases whose repeats disagree")
    flaky_share = fields.Nested(StatsRateSchema, required=True)
    mean_std = _number("Mean within-case standard deviation")
    binary = fields.Boolean(required=True, metadata={"description": "Pass/fail values"})
    cases = fields.List(fields.Nested(StatsFlakyCaseSchema), required=True, metadata={
        "description": "Flaky cases, the widest spread first (at most 50)"})


class StatsAlphaSchema(Schema):
    alpha = _number("Krippendorff's alpha; null when undefined (no shared unit, no "
                    "variation)")
    level = fields.String(required=True)
    n_judges = _count("Raters")
    n_units = _count("Outputs rated at least twice")
    n_values = _count()
    observed_disagreement = _number()
    expected_disagreement = _number()


class StatsKappaSchema(Schema):
    kappa = _number("Cohen's kappa; null when undefined")
    n = _count("Items both rated")
    dropped = _count("Items one of them did not rate")
    observed_agreement = _number()
    expected_agreement = _number()
    weights = fields.String(required=True, allow_none=True)


class StatsRaterSchema(Schema):
    source = fields.String(required=True, metadata={
        "description": "A judge model, or user:<id> for a reviewer"})
    n = _count("Outputs it gave a value")
    mean = _number()


class StatsAgreementSchema(Schema):
    raters = fields.List(fields.Nested(StatsRaterSchema), required=True)
    alpha = fields.Nested(StatsAlphaSchema, required=True, metadata={
        "description": "Interval level, one unit per output"})
    kappa = fields.Nested(StatsKappaSchema, required=True, allow_none=True, metadata={
        "description": "On pass/fail verdicts, for exactly two raters who gave them"})


class StatsJudgeHumanSchema(Schema):
    judge = fields.String(required=True, allow_none=True, metadata={
        "description": "The judge model; null: the mean of the judges"})
    human_scorer_version_id = _count("The manual scorer people scored with")
    reviewers = _count()
    n = _count("Outputs both the judge and a person scored")
    judge_only = _count()
    human_only = _count()
    exact_agreement = _number()
    mean_abs_difference = _number()
    alpha = fields.Nested(StatsAlphaSchema, required=True)
    kappa = fields.Nested(StatsKappaSchema, required=True, metadata={
        "description": "Quadratic weights over the distinct values; read alpha for "
                       "continuous scores"})


class TargetStatisticsSchema(StatsTargetSchema):
    scorer_version_id = _count()
    n_outputs = _count("The target's succeeded outputs")
    n_scored = _count("Outputs with a value from the scorer")
    n_failed = _count("Scores that failed (no value, an error)")
    mean = fields.Nested(StatsMeanSchema, required=True)
    pass_rate = fields.Nested(StatsRateSchema, required=True, metadata={
        "description": "Outputs that passed (every verdict a pass) over outputs with one"})
    criteria = fields.List(fields.Nested(StatsCriterionSchema), required=True)
    flakiness = fields.Nested(StatsFlakinessSchema, required=True, allow_none=True, metadata={
        "description": "null unless some case ran more than once"})
    agreement = fields.Nested(StatsAgreementSchema, required=True, allow_none=True, metadata={
        "description": "Between the scorer's judges or reviewers; null with fewer than two"})
    judge_human = fields.List(fields.Nested(StatsJudgeHumanSchema), required=True)


class RunStatisticsSchema(Schema):
    run_id = _count()
    scorers = fields.List(fields.Nested(StatsScorerSchema), required=True)
    items = fields.List(fields.Nested(TargetStatisticsSchema), required=True, metadata={
        "description": "One per target and scorer, target by target"})


class StatsFacetGroupSchema(Schema):
    key = fields.String(required=True)
    n_outputs = _count()
    n_cases = _count()
    mean = fields.Nested(StatsMeanSchema, required=True)
    pass_rate = fields.Nested(StatsRateSchema, required=True)


class StatsTargetFacetsSchema(StatsTargetSchema):
    n_outputs = _count("Outputs the scorer scored")
    by_tag = fields.List(fields.Nested(StatsFacetGroupSchema), required=True)
    by_length = fields.List(fields.Nested(StatsFacetGroupSchema), required=True)
    by_difficulty = fields.List(fields.Nested(StatsFacetGroupSchema), required=True)


class RunFacetsSchema(Schema):
    run_id = _count()
    scorer = fields.Nested(StatsScorerSchema, required=True)
    length_of = fields.String(required=True, validate=validate.OneOf(["input", "output"]))
    targets = fields.List(fields.Nested(StatsTargetFacetsSchema), required=True)


class StatsPairedSchema(Schema):
    n = _count("Cases both sides scored")
    dropped_a = _count("Cases only A scored")
    dropped_b = _count("Cases only B scored")
    mean_a = _number()
    mean_b = _number()
    mean_difference = _number("B - A over the case means")
    low = _number("Paired bootstrap interval of the mean difference")
    high = _number()
    effect_size = _number("Cohen's d_z; null when the differences do not vary")
    pass_rate_difference = _number("B - A, for pass/fail values")
    b_higher = _count()
    a_higher = _count()
    equal = _count()
    p_value = _number()
    test = fields.String(required=True, allow_none=True, validate=validate.OneOf(
        ["mcnemar_exact", "wilcoxon_signed_rank"]))
    binary = fields.Boolean(required=True)
    verdict = fields.String(required=True, validate=validate.OneOf(
        ["B better", "A better", "not distinguishable"]))
    confidence = fields.Float(required=True)


class TargetComparisonSchema(Schema):
    run_id = _count()
    scorer = fields.Nested(StatsScorerSchema, required=True)
    target_a = fields.Nested(StatsTargetSchema, required=True)
    target_b = fields.Nested(StatsTargetSchema, required=True)
    comparison = fields.Nested(StatsPairedSchema, required=True)


class StatsTargetPairSchema(Schema):
    target_a = fields.Nested(StatsTargetSchema, required=True, metadata={
        "description": "Of the base run"})
    target_b = fields.Nested(StatsTargetSchema, required=True)
    comparison = fields.Nested(StatsPairedSchema, required=True)


class RunComparisonSchema(Schema):
    run_id = _count("B")
    base_run_id = _count("A")
    scorer = fields.Nested(StatsScorerSchema, required=True)
    base_scorer = fields.Nested(StatsScorerSchema, required=True, metadata={
        "description": "The same version, or the base run's version of the same scorer"})
    pairs = fields.List(fields.Nested(StatsTargetPairSchema), required=True)
    unmatched_a = fields.List(fields.Nested(StatsTargetSchema), required=True, metadata={
        "description": "Targets of the base run without a match"})
    unmatched_b = fields.List(fields.Nested(StatsTargetSchema), required=True)
