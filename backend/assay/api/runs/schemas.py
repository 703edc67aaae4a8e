from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.base import PageArgs
from assay.api.fields import Count, Id, StrictBoolean, version_field
from assay.api.models.schemas import ModelParamsSchema, StrictNumber
from assay.core.llm.params import MAX_TOKENS_CAP, SEED_MAX, SEED_MIN, STOP_LENGTH, STOP_MAX
from assay.core.runs.models import RunStatus
from assay.core.runs.planning import MAX_GRID_VALUES, MAX_TARGETS
from assay.core.runs.validation import MAX_CASE_IDS, REASON_CODES

MAX_MICROS = 10**15  # a billion dollars
MAX_SCORERS = 20
GRID_VALUES = validate.Length(min=1, max=MAX_GRID_VALUES)


def _grid_values(item: fields.Field) -> fields.List:
    return fields.List(item, validate=GRID_VALUES)


class GridSchema(Schema):
    """Values to try per parameter: one target per combination (cartesian product)."""

    temperature = _grid_values(StrictNumber(validate=validate.Range(0, 2)))
    max_tokens = _grid_values(Count(1, MAX_TOKENS_CAP))
    top_p = _grid_values(StrictNumber(validate=validate.Range(0, 1)))
    frequency_penalty = _grid_values(StrictNumber(validate=validate.Range(-2, 2)))
    presence_penalty = _grid_values(StrictNumber(validate=validate.Range(-2, 2)))
    seed = _grid_values(Count(SEED_MIN, SEED_MAX))
    stop = _grid_values(fields.List(fields.String(validate=validate.Length(
        min=1, max=STOP_LENGTH)), validate=validate.Length(max=STOP_MAX)))


class TargetCreateSchema(Schema):
    model_id = Id(required=True)
    params = fields.Nested(ModelParamsSchema, load_default=dict, metadata={
        "description": "Overrides of the model's default parameters"})
    prompt_version_id = Id(load_default=None, allow_none=True, metadata={
        "description": "A prompt version of this project; required for template cases"})
    grid = fields.Nested(GridSchema, load_default=None, allow_none=True, metadata={
        "description": f"Expanded into one target per combination; at most {MAX_TARGETS} "
                       "targets in all"})


class RagSettingsSchema(Schema):
    document_ids = fields.List(Id(), required=True, validate=validate.Length(min=1, max=20),
                               metadata={"description": "Documents of this project to "
                                                        "retrieve from"})
    top_k = Count(1, 20, load_default=4, metadata={
        "description": "Chunks retrieved per question (BM25, best first)"})
    template = fields.String(load_default=None, allow_none=True,
                             validate=validate.Length(min=1, max=8000), metadata={
        "description": "Replaces each question's user message; must hold {{context}} (the "
                       "retrieved chunks, numbered) and {{question}}. Default: answer using "
                       "only the context"})


class RunCreateSchema(Schema):
    name = fields.String(load_default=None, allow_none=True,
                         validate=validate.Length(min=1, max=200))
    dataset_id = Id(required=True)
    dataset_version_id = Id(load_default=None, allow_none=True, metadata={
        "description": "A version (row id) of the dataset; the latest if omitted"})
    targets = fields.List(fields.Nested(TargetCreateSchema), required=True,
                          validate=validate.Length(max=20), metadata={
                              "description": "1 to 20 entries; [] for a trace dataset (the "
                                             "recorded trace is the output)"})
    repeats = Count(1, 10, load_default=1, metadata={"description": "Samples per cell"})
    concurrency = Count(1, 1000, load_default=None, allow_none=True, metadata={
        "description": "Calls in flight at once over the whole run (all its shards and "
                       "workers together)"})
    cache = StrictBoolean(load_default=True, metadata={
        "description": "Reuse cached replies of deterministic calls (temperature 0 or a "
                       "seed), and cache new ones; cached outputs are free and marked"})
    stream = StrictBoolean(load_default=False, metadata={
        "description": "Stream replies, so each output records its time to first token"})
    timeout_s = Count(1, 3600, load_default=None, allow_none=True, metadata={
        "description": "Wall-clock seconds one attempt of a call may take (default 120)"})
    max_retries = Count(0, 10, load_default=None, allow_none=True, metadata={
        "description": "Retries of a transient call failure (rate limit, timeout, 5xx); "
                       "default: the project's"})
    max_history_pairs = Count(1, 50, load_default=10, metadata={
        "description": "Conversations: user/assistant exchanges sent before each turn"})
    budget_micros = Count(1, MAX_MICROS, load_default=None, allow_none=True, metadata={
        "description": "The run's spending cap in micro-dollars (null: none)"})
    alert_threshold = StrictNumber(load_default=0.8, validate=validate.Range(0.05, 1),
                                   metadata={"description": "Share of the budget that "
                                                            "raises an alert"})
    shards = Count(1, 16, load_default=None, allow_none=True, metadata={
        "description": "Shard runners to start (default: chosen by the server)"})
    scorer_ids = fields.List(Id(), load_default=list, validate=validate.Length(
        max=MAX_SCORERS), metadata={
            "description": f"Up to {MAX_SCORERS} scorers of this project, each once, not "
                           "archived; the run pins their latest versions and scores every "
                           "output as it lands (manual ones: reviewers score by hand)"})
    scorer_version_ids = fields.List(Id(), load_default=list, validate=validate.Length(
        max=MAX_SCORERS), metadata={
            "description": "Scorers pinned at a chosen version instead of their latest, "
                           "after scorer_ids; each scorer at most once across both lists"})
    rag = fields.Nested(RagSettingsSchema, load_default=None, allow_none=True, metadata={
        "description": "Answer from documents: each question retrieves the top-k chunks of "
                       "these documents, rendered into the prompt through the template; "
                       "the chunks are stored with the output"})


class RunSettingsSchema(Schema):
    repeats = fields.Integer(required=True)
    concurrency = fields.Integer(required=True, allow_none=True)
    cache = fields.Boolean(required=True)
    stream = fields.Boolean(required=True)
    timeout_s = fields.Integer(required=True, allow_none=True)
    max_retries = fields.Integer(required=True)
    max_history_pairs = fields.Integer(required=True)
    shards = fields.Integer(required=True, allow_none=True)
    rag = fields.Nested(RagSettingsSchema, required=True, allow_none=True, metadata={
        "description": "Answer from documents: its documents, top-k and template; null "
                       "when the run sends the cases as they are"})


class RunTargetSchema(Schema):
    id = fields.Integer(required=True)
    model_id = fields.Integer(required=True, allow_none=True,
                              metadata={"description": "null: a recorded trace"})
    model_name = fields.String(required=True, allow_none=True)
    label = fields.String(required=True)
    params = fields.Dict(required=True, metadata={"description": "Overrides of the model's"})
    prompt_version_id = fields.Integer(required=True, allow_none=True)
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    spent_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)


class RunScorerSchema(Schema):
    scorer_version_id = fields.Integer(required=True)
    scorer_id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "The version's number"})


class RunSchema(Schema):
    id = fields.Integer(required=True)
    row_version = version_field()
    name = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf([s.value for s in RunStatus]))
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    dataset_id = fields.Integer(required=True)
    dataset_version_id = fields.Integer(required=True)
    settings = fields.Nested(RunSettingsSchema, required=True)
    budget_micros = fields.Integer(required=True, allow_none=True)
    alert_threshold = fields.Float(required=True)
    spent_micros = fields.Integer(required=True, metadata={
        "description": "Model calls and their judges"})
    judge_spent_micros = fields.Integer(required=True, metadata={
        "description": "The LLM judges' share of spent_micros"})
    reserved_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    error = fields.String(required=True, allow_none=True,
                          metadata={"description": "Why the run stopped, when it did"})
    targets = fields.List(fields.Nested(RunTargetSchema), required=True)
    scorers = fields.List(fields.Nested(RunScorerSchema), required=True, metadata={
        "description": "The scorer versions the run pinned, in order"})
    headline_scorer_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The scorer a user pinned as the run's headline; null: the default "
                       "(a rubric judge's composite, else a scorer whose scores discriminate)"})
    created_at = fields.DateTime(required=True)
    started_at = fields.DateTime(required=True, allow_none=True)
    finished_at = fields.DateTime(required=True, allow_none=True)


class RunHeadlineSchema(Schema):
    scorer_id = Id(required=True, allow_none=True, metadata={
        "description": "One of the run's pointwise scorers; null: back to the default"})


class RunListArgs(PageArgs):
    status = fields.String(load_default=None,
                           validate=validate.OneOf([s.value for s in RunStatus]))


class ReasonSchema(Schema):
    """Why a run cannot start."""

    code = fields.String(required=True, validate=validate.OneOf(REASON_CODES))
    message = fields.String(required=True)
    model_id = fields.Integer()
    target = fields.Integer(metadata={"description": "Index of the request's targets entry"})
    label = fields.String()
    prompt_version_id = fields.Integer()
    case_ids = fields.List(fields.Integer(), metadata={
        "description": f"Cases missing a variable (at most {MAX_CASE_IDS})"})
    variables = fields.List(fields.String())


class TargetEstimateSchema(Schema):
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)
    calls = fields.Integer(required=True)
    input_tokens = fields.Integer(required=True)
    output_tokens_low = fields.Integer(required=True)
    output_tokens_high = fields.Integer(required=True)
    low_micros = fields.Integer(required=True, allow_none=True,
                                metadata={"description": "null: the model has no price"})
    high_micros = fields.Integer(required=True, allow_none=True)
    priced = fields.Boolean(required=True)


class EstimateAssumptionsSchema(Schema):
    low_output_share = fields.Float(required=True)
    default_max_tokens = fields.Integer(required=True)
    tokens_per_message = fields.Integer(required=True)


class RunEstimateResultSchema(Schema):
    dataset_version_id = fields.Integer(required=True)
    cases = fields.Integer(required=True)
    repeats = fields.Integer(required=True)
    calls = fields.Integer(required=True)
    low_micros = fields.Integer(required=True, metadata={
        "description": "Micro-dollars, priced models only (see complete)"})
    high_micros = fields.Integer(required=True, metadata={
        "description": "Model calls and LLM judges together"})
    judge_calls = fields.Integer(required=True, metadata={
        "description": "LLM judge calls: one per judge of each judge scorer per reply"})
    judge_low_micros = fields.Integer(required=True, metadata={
        "description": "The judges' share of low_micros"})
    judge_high_micros = fields.Integer(required=True, metadata={
        "description": "The judges' share of high_micros"})
    complete = fields.Boolean(required=True, metadata={
        "description": "false: some models are unpriced and not in the totals"})
    per_target = fields.List(fields.Nested(TargetEstimateSchema), required=True)
    unpriced_models = fields.List(fields.Integer(), required=True)
    assumptions = fields.Nested(EstimateAssumptionsSchema, required=True)
    problems = fields.List(fields.Nested(ReasonSchema), required=True, metadata={
        "description": "Every reason the run could not start (as the 422 RUN_NOT_READY)"})


class RunBudgetSchema(Schema):
    budget_micros = Count(1, MAX_MICROS, required=True, allow_none=True, metadata={
        "description": "The run's new spending cap in micro-dollars (null: none); not below "
                       "what it has spent and holds"})
    alert_threshold = StrictNumber(load_default=None, allow_none=True,
                                   validate=validate.Range(0.05, 1))
