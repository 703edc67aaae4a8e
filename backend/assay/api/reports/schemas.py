"""Schemas of the reports: leaderboard, cost and token reports, run dashboard, run diff,
and the arguments of the run exports."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.base import PageArgs
from assay.api.fields import MAX_ID
from assay.core.reports.costs import KINDS
from assay.core.reports.diff import OUTCOMES
from assay.core.reports.exports import FORMATS
from assay.core.reports.scope import VERSION_CHOICES
from assay.core.reports.trend import DEFAULT_RUNS, MAX_RUNS

ID_RANGE = validate.Range(min=1, max=MAX_ID)


def _id_arg(description: str) -> fields.Integer:
    return fields.Integer(load_default=None, validate=ID_RANGE,
                          metadata={"description": description})


def _day_arg(description: str) -> fields.Date:
    return fields.Date(load_default=None, metadata={"description": description,
                                                    "maxLength": 10})


def _float() -> fields.Float:
    return fields.Float(required=True, allow_none=True)


def _int() -> fields.Integer:
    return fields.Integer(required=True)


def _nested(schema: type[Schema], **kwargs: object) -> fields.Nested:
    return fields.Nested(schema, required=True, **kwargs)  # type: ignore[arg-type]


class ScopeArgs(Schema):
    date_from = _day_arg("First UTC day (YYYY-MM-DD) of the outputs counted, by when they "
                         "finished")
    date_to = _day_arg("Last UTC day, included; not before date_from (else 422)")
    dataset_id = _id_arg("Only runs on this dataset of the project (else 422)")


class LeaderboardArgs(ScopeArgs):
    scorer_id = _id_arg("The scorer whose scores rank the models (a scorer of this project, "
                        "else 422); without one, scores and pass rates are null")
    versions = fields.String(load_default="all", validate=validate.OneOf(VERSION_CHOICES),
                             metadata={"description": "all: pool every version of the "
                                       "scorer (default); latest: its newest version only"})


class TrendArgs(ScopeArgs):
    scorer_id = _id_arg("The scorer whose scores the trend follows (a scorer of this "
                        "project, else 422); default: the latest run's first pointwise "
                        "scorer")
    versions = fields.String(load_default="all", validate=validate.OneOf(VERSION_CHOICES),
                             metadata={"description": "all: pool every version of the "
                                       "scorer (default); latest: its newest version only"})
    limit = fields.Integer(load_default=DEFAULT_RUNS, validate=validate.Range(
        min=1, max=MAX_RUNS), metadata={"description": "How many of the most recent scored "
                                        "runs"})


class ScorerArgs(Schema):
    scorer_id = _id_arg("A scorer of this project (else 422); default: the run's first "
                        "pointwise scorer")
    scorer_version_id = _id_arg("The version of that scorer whose scores the run's numbers "
                                "use (else 422; it implies the scorer); default: the newest "
                                "version the run holds (a run scored again keeps both)")


class RunDiffArgs(PageArgs):
    scorer_id = _id_arg("Pass/fail from this scorer of the project (else 422); without "
                        "one, from the outputs' status")
    outcome = fields.String(load_default=None, validate=validate.OneOf(OUTCOMES),
                            metadata={"description": "List only the cases of one outcome"})


class ExportArgs(Schema):
    format = fields.String(load_default="json", validate=validate.OneOf(list(FORMATS)),
                           metadata={"description": "csv, json (default) or junit (XML)"})


class MeanSchema(Schema):
    mean = _float()
    low = fields.Float(required=True, allow_none=True, metadata={
        "description": "95% bootstrap interval, clustered by case; null below two cases"})
    high = _float()
    n_cases = _int()
    n_values = fields.Integer(required=True, metadata={"description": "Outputs behind it"})


class RateSchema(Schema):
    k = _int()
    n = _int()
    rate = fields.Float(required=True, allow_none=True, metadata={
        "description": "k / n; null when n is 0"})
    low = fields.Float(required=True, allow_none=True, metadata={
        "description": "95% Wilson interval"})
    high = _float()


class ScorerRefSchema(Schema):
    id = _int()
    name = fields.String(required=True)
    kind = fields.String(required=True)
    versions = fields.List(fields.Integer(), required=True, metadata={
        "description": "Version numbers whose scores are counted"})


class LeaderboardRowSchema(Schema):
    model_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "null: recorded traces (no model)"})
    model_name = fields.String(required=True, allow_none=True)
    runs = _int()
    outputs = fields.Integer(required=True, metadata={
        "description": "Finished outputs: succeeded + failed"})
    succeeded = _int()
    failed = _int()
    success_rate = _nested(RateSchema)
    scores = fields.Integer(required=True, metadata={
        "description": "Scores with a value: one per output, or one per judge of a panel"})
    score = _nested(MeanSchema, allow_none=True, metadata={
        "description": "Mean of case means over every score"})
    pass_rate = _nested(RateSchema, allow_none=True, metadata={
        "description": "Passing verdicts of all verdicts"})
    spent_micros = _int()
    cost_per_output_micros = _float()
    tokens_in = _int()
    tokens_out = _int()
    tokens_in_per_output = _float()
    tokens_out_per_output = _float()
    latency_p50_ms = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Nearest rank, over succeeded uncached outputs"})
    latency_p95_ms = fields.Integer(required=True, allow_none=True)


class LeaderboardSchema(Schema):
    scorer = _nested(ScorerRefSchema, allow_none=True)
    confidence = fields.Float(required=True)
    items = fields.List(fields.Nested(LeaderboardRowSchema), required=True, metadata={
        "description": "Best first: mean score, then pass rate, then success rate"})


class CostSumsSchema(Schema):
    spent_micros = fields.Integer(required=True, metadata={
        "description": "Every spend: the sum of by_kind (the ledger)"})
    calls_micros = fields.Integer(required=True, metadata={
        "description": "The models' own calls in runs"})
    judge_micros = fields.Integer(required=True, metadata={
        "description": "Judges of run outputs (judge-mode runs' included) and pairwise "
                       "comparisons of two targets or two runs, credited to the judge model"})
    generation_micros = fields.Integer(required=True, metadata={
        "description": "Generation jobs (none in a report on one dataset)"})
    outputs = _int()
    tokens_in = _int()
    tokens_out = _int()


class CostKindSchema(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    spent_micros = _int()
    calls = fields.Integer(required=True, metadata={
        "description": "Requests sent to providers (retries included); for model_calls, "
                       "the runs' finished outputs"})
    tokens_in = _int()
    tokens_out = _int()


class CostTotalSchema(CostSumsSchema):
    by_kind = fields.List(fields.Nested(CostKindSchema), required=True, metadata={
        "description": "Every kind of spend, in this order: " + ", ".join(KINDS)})


class CostByModelSchema(CostSumsSchema):
    model_id = fields.Integer(required=True, allow_none=True)
    model_name = fields.String(required=True, allow_none=True)


class CostByRunSchema(CostSumsSchema):
    run_id = _int()
    run_name = fields.String(required=True)
    status = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    judge_mode = fields.Boolean(required=True, metadata={
        "description": "A judge-mode run: judges rating a dataset's questions"})


class CostByDaySchema(CostSumsSchema):
    day = fields.String(required=True, metadata={"format": "date"})


class CostReportSchema(Schema):
    total = _nested(CostTotalSchema)
    by_model = fields.List(fields.Nested(CostByModelSchema), required=True)
    by_run = fields.List(fields.Nested(CostByRunSchema), required=True)
    by_day = fields.List(fields.Nested(CostByDaySchema), required=True)


class TokenUsageItemSchema(Schema):
    day = fields.String(required=True, metadata={"format": "date"})
    model_id = fields.Integer(required=True, allow_none=True)
    model_name = fields.String(required=True, allow_none=True)
    tokens_in = _int()
    tokens_out = _int()
    outputs = _int()


class TokenUsageSchema(Schema):
    items = fields.List(fields.Nested(TokenUsageItemSchema), required=True)
    by_kind = fields.List(fields.Nested(CostKindSchema), required=True, metadata={
        "description": "The tokens (and calls) of every purpose of the ledger, in this "
                       "order: " + ", ".join(KINDS)})


class PairedSchema(Schema):
    n = fields.Integer(required=True, metadata={"description": "Cases both sides have"})
    mean_base = _float()
    mean_head = _float()
    mean_difference = fields.Float(required=True, allow_none=True, metadata={
        "description": "head - base"})
    low = _float()
    high = _float()
    effect_size = fields.Float(required=True, allow_none=True, metadata={
        "description": "Cohen's d_z"})
    p_value = _float()
    test = fields.String(required=True, allow_none=True)
    binary = fields.Boolean(required=True)
    head_higher = _int()
    base_higher = _int()
    equal = _int()
    verdict = fields.String(required=True, validate=validate.OneOf(
        ["head better", "base better", "not distinguishable"]))


def _outcome_counts() -> type[Schema]:
    return Schema.from_dict({name: fields.Integer(required=True) for name in OUTCOMES},
                            name="RunDiffCounts")


RunDiffCountsSchema = _outcome_counts()


class RunDiffSideSchema(Schema):
    passed = fields.Boolean(required=True, allow_none=True, metadata={
        "description": "null: no verdict"})
    score = _float()
    output_id = fields.Integer(required=True, metadata={
        "description": "The cell's first output (repeat 0, turn 0 when present)"})


class _TargetPair(Schema):
    base_target_id = fields.Integer(required=True, allow_none=True)
    base_label = fields.String(required=True, allow_none=True)
    head_target_id = fields.Integer(required=True, allow_none=True)
    head_label = fields.String(required=True, allow_none=True)
    model_id = fields.Integer(required=True, allow_none=True)


class RunDiffCaseSchema(_TargetPair):
    case_id = _int()
    case_number = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The case's place (1-based) in the head run's dataset version: the "
                       "number shown for it"})
    input = fields.Dict(required=True, allow_none=True)
    outcome = fields.String(required=True, validate=validate.OneOf(OUTCOMES))
    base = _nested(RunDiffSideSchema, allow_none=True)
    head = _nested(RunDiffSideSchema, allow_none=True)


class RunDiffTargetSchema(_TargetPair):
    counts = _nested(RunDiffCountsSchema)
    comparison = _nested(PairedSchema, allow_none=True)


class RunDiffCasePageSchema(Schema):
    items = fields.List(fields.Nested(RunDiffCaseSchema), required=True)
    total = _int()
    page = _int()
    page_size = _int()


class RunDiffSchema(Schema):
    base_run_id = _int()
    head_run_id = _int()
    scorer = _nested(ScorerRefSchema, allow_none=True)
    verdicts_from = fields.String(required=True, validate=validate.OneOf(["scorer", "status"]))
    counts = _nested(RunDiffCountsSchema)
    comparison = _nested(PairedSchema)
    targets = fields.List(fields.Nested(RunDiffTargetSchema), required=True)
    cases = _nested(RunDiffCasePageSchema)


class TrendModelSchema(Schema):
    model_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "null: recorded traces (no model)"})
    model_name = fields.String(required=True, allow_none=True)


class TrendModelScoreSchema(TrendModelSchema):
    score = _nested(MeanSchema)


class TrendRunSchema(Schema):
    run_id = _int()
    name = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    dataset_id = _int()
    score = _nested(MeanSchema, metadata={"description": "Every target of the run"})
    models = fields.List(fields.Nested(TrendModelScoreSchema), required=True, metadata={
        "description": "Per model with a score in this run, in the order of `models`"})


class ScoreTrendSchema(Schema):
    scorer = _nested(ScorerRefSchema, allow_none=True, metadata={
        "description": "null: the project has no scorer to follow yet"})
    confidence = fields.Float(required=True)
    models = fields.List(fields.Nested(TrendModelSchema), required=True, metadata={
        "description": "Every model with a score in any of the runs, by name"})
    runs = fields.List(fields.Nested(TrendRunSchema), required=True, metadata={
        "description": "The most recent runs with a score of the scorer, oldest first"})


class ScorerCoverageSchema(Schema):
    scorer_id = _int()
    values = fields.Integer(required=True, metadata={"description": "Scores with a value"})
    verdicts = fields.Integer(required=True, metadata={"description": "Pass/fail verdicts"})
    models = fields.Integer(required=True, metadata={
        "description": "Models (recorded traces and judge mode's questions count as one)"})
    discriminates = fields.Boolean(required=True, metadata={
        "description": "Its case means differ: the reports open on such a scorer first"})


class ScorerCoverageListSchema(Schema):
    items = fields.List(fields.Nested(ScorerCoverageSchema), required=True, metadata={
        "description": "The project's scorers that have scores, by id; the others have none"})


class PairwiseArgs(ScopeArgs):
    scorer_id = _id_arg("A pairwise scorer of this project (else 422); default: every one")


class ModelRatingSchema(Schema):
    model_id = _int()
    model_name = fields.String(required=True, allow_none=True)
    rating = fields.Float(required=True, allow_none=True, metadata={
        "description": "Bradley-Terry on an Elo-like scale (mean 1000; +400 = 10:1 odds)"})
    low = fields.Float(required=True, allow_none=True, metadata={
        "description": "Percentile bootstrap interval over the comparisons"})
    high = _float()
    games = _int()
    wins = _int()
    ties = fields.Integer(required=True, metadata={
        "description": "Ties, and judgements whose orders disagreed"})
    losses = _int()
    flags = fields.List(fields.String(), required=True, metadata={
        "description": "no_games, undefeated, winless"})


class ProjectRatingsSchema(Schema):
    available = fields.Boolean(required=True)
    message = fields.String(required=True, allow_none=True, metadata={
        "description": "Why there are no ratings"})
    n_comparisons = fields.Integer(required=True, metadata={
        "description": "Judged comparisons between two different models (the games)"})
    same_model = fields.Integer(required=True, metadata={
        "description": "Comparisons of two outputs of the same model: left out"})
    without_model = fields.Integer(required=True, metadata={
        "description": "Comparisons involving a recorded trace: left out"})
    runs = fields.Integer(required=True, metadata={"description": "Runs they come from"})
    confidence = fields.Float(required=True)
    items = fields.List(fields.Nested(ModelRatingSchema), required=True, metadata={
        "description": "Best first"})


class RagArgs(ScopeArgs):
    scorer_id = _id_arg("A RAG metrics scorer of this project (else 422); default: the "
                        "first that has scores")
    versions = fields.String(load_default="all", validate=validate.OneOf(VERSION_CHOICES))
    run_id = _id_arg("One run of this project (else 422); default: every run in scope")


class RagMetricSchema(MeanSchema):
    name = fields.String(required=True)


class RagModelSchema(Schema):
    model_id = fields.Integer(required=True, allow_none=True)
    model_name = fields.String(required=True, allow_none=True)
    answers_from_documents = fields.Boolean(required=True, metadata={
        "description": "The row's runs answered from documents (groundedness judged against "
                       "the retrieved chunks); a model's other runs are another row"})
    judgements = fields.Integer(required=True, metadata={
        "description": "Scores of the scorer on the model's outputs (one per judge)"})
    outputs = fields.Integer(required=True, metadata={"description": "Outputs with metrics"})
    failed_calls = fields.Integer(required=True, metadata={
        "description": "Calls to the model that failed, so there was no answer to judge"})
    success_rate = fields.Nested(RateSchema, required=True, metadata={
        "description": "Judgements that produced metrics out of judgements + failed calls, "
                       "with a 95% Wilson interval"})
    metrics = fields.List(fields.Nested(RagMetricSchema), required=True, metadata={
        "description": "Each metric's mean (1-5) of case means, 95% bootstrap interval"})
    average = fields.Nested(MeanSchema, required=True, metadata={
        "description": "The judges' average of the four metrics (1-5)"})
    latency_p50_ms = fields.Integer(required=True, allow_none=True)
    latency_p95_ms = fields.Integer(required=True, allow_none=True)


class RagSummarySchema(Schema):
    scorer = fields.Nested(ScorerRefSchema, required=True, allow_none=True, metadata={
        "description": "null: the project has no RAG metrics scorer"})
    metrics = fields.List(fields.String(), required=True)
    confidence = fields.Float(required=True)
    items = fields.List(fields.Nested(RagModelSchema), required=True, metadata={
        "description": "Best average first"})
