"""Experiment bodies. A draft's steps are typed here but checked against the spec's limits
by core/experiments/config.py, so an unfinished step still auto-saves; the limits below
only bound what can be stored."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.credentials.schemas import not_blank
from assay.api.fields import Count, Id, NamedEnum, StrictBoolean, version_field
from assay.api.files import FileField
from assay.api.patch import PatchSchema
from assay.api.prompts.schemas import FewShotSchema, PageQuery
from assay.core.experiments import config as cfg
from assay.core.experiments.models import ExperimentStatus, StopReason

STATUSES = [s.value for s in ExperimentStatus]
STEP_NAMES = list(cfg.STEPS)


class WizardScaleSchema(Schema):
    min = fields.Integer(required=True, strict=True, validate=validate.Range(0, 1))
    max = fields.Integer(required=True, strict=True, validate=validate.Range(1, 100))
    labels = fields.Dict(keys=fields.String(validate=validate.Length(max=3)),
                         values=fields.String(validate=validate.Length(max=200)),
                         load_default=None, allow_none=True)


class WizardCriterionSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(max=50))
    description = fields.String(required=True, validate=validate.Length(max=500))
    weight = fields.Float(required=True, allow_nan=False, validate=validate.Range(0, 1))
    scale = fields.Nested(WizardScaleSchema, required=True)


class ObjectiveStep(Schema):
    goal = fields.String(validate=validate.Length(max=cfg.GOAL_MAX), metadata={
        "description": f"What the prompt should achieve: {cfg.GOAL_MIN}-{cfg.GOAL_MAX} "
                       "characters to continue"})


class RubricStep(Schema):
    criteria = fields.List(fields.Nested(WizardCriterionSchema), validate=validate.Length(max=10),
                           metadata={"description": "2-10 criteria, weights summing to 1"})


class PromptStep(Schema):
    template = fields.String(validate=validate.Length(max=cfg.PROMPT_MAX), metadata={
        "description": f"The seed prompt with {{{{variables}}}}: {cfg.PROMPT_MIN}-"
                       f"{cfg.PROMPT_MAX} characters"})
    system = fields.String(allow_none=True, validate=validate.Length(max=cfg.SYSTEM_MAX))
    few_shots = fields.List(fields.Nested(FewShotSchema), validate=validate.Length(max=10))
    tools = fields.List(fields.Dict(), validate=validate.Length(max=64))


class DataStep(Schema):
    dataset_version_id = Id(allow_none=True, metadata={
        "description": "A version picked, imported or generated with the dataset endpoints"})
    holdout_fraction = fields.Float(allow_nan=False, validate=validate.Range(0, cfg.HOLDOUT_MAX),
                                    metadata={"description": "Share of cases held out from "
                                                             "the refiner (default 0.3)"})
    split_seed = Count(0, 2**31 - 1, allow_none=True, metadata={
        "description": "Seed of the stratified split; drawn at start when null"})


class TargetStep(Schema):
    model_id = Id(required=True)
    params = fields.Dict(load_default=dict, metadata={
        "description": "Overrides: temperature 0-2, max_tokens 1-100000, top_p 0-1, "
                       "frequency/presence_penalty -2..2, seed, stop (up to 4)"})
    grid = fields.Dict(keys=fields.String(), values=fields.List(fields.Raw()),
                       load_default=None, allow_none=True,
                       metadata={"description": "Parameter -> values: one configuration per "
                                                "combination"})


class ModelsStep(Schema):
    targets = fields.List(fields.Nested(TargetStep), validate=validate.Length(max=cfg.MODELS_MAX))


class SafetyStep(Schema):
    pii = StrictBoolean(required=True)
    jailbreak = StrictBoolean(required=True)
    action = NamedEnum("SafetyAction", ["flag", "block"], required=True)


class JudgesStep(Schema):
    pointwise = fields.List(Id(), validate=validate.Length(max=cfg.JUDGES_MAX),
                            metadata={"description": "1-5 judge model ids"})
    pairwise = StrictBoolean(metadata={"description": "Also compare with the previous "
                                                      "iteration's outputs"})
    pairwise_judge = Id(allow_none=True)
    refiner = Id(allow_none=True, metadata={
        "description": "The model that proposes refinements; the first judge when null"})
    safety = fields.Nested(SafetyStep)


class StopStep(Schema):
    max_iterations = Count(1, 100)
    min_delta = fields.Float(allow_nan=False, validate=validate.Range(0, 1))
    convergence_window = Count(1, 10)
    max_budget_micros = fields.Integer(strict=True, validate=validate.Range(
        0, cfg.BUDGET_MAX_MICROS), metadata={"description": "Hard cap over every phase"})
    budget_alert_threshold = fields.Float(allow_nan=False, validate=validate.Range(0.5, 1))
    max_total_tokens = fields.Integer(strict=True, allow_none=True,
                                      validate=validate.Range(0, cfg.TOKENS_MAX))
    stop_if_no_suggestion = StrictBoolean(
        validate=validate.Equal(True, error=cfg.NO_SUGGESTION_STOPS),
        metadata={"description": "Always true: without a suggestion there is no new prompt "
                                 "to run, so the loop stops"})
    max_rejections = fields.Integer(strict=True, allow_none=True, validate=validate.Range(
        1, cfg.MAX_REJECTIONS), metadata={
        "description": "Rejected suggestions in a row after which the experiment stops "
                       "(reason: rejected); default 3"})


class StepsMixin(Schema):
    objective = fields.Nested(ObjectiveStep)
    rubric = fields.Nested(RubricStep)
    prompt = fields.Nested(PromptStep)
    data = fields.Nested(DataStep)
    models = fields.Nested(ModelsStep)
    judges = fields.Nested(JudgesStep)
    stop = fields.Nested(StopStep)


class ExperimentCreateSchema(StepsMixin):
    name = fields.String(required=True, validate=[validate.Length(min=1, max=200), not_blank])
    description = fields.String(load_default=None, allow_none=True,
                                validate=validate.Length(max=1000))


class ExperimentPatchSchema(StepsMixin, PatchSchema):
    name = fields.String(validate=[validate.Length(min=1, max=200), not_blank])
    description = fields.String(allow_none=True, validate=validate.Length(max=1000))


class ValidateSchema(Schema):
    steps = fields.List(NamedEnum("WizardStep", STEP_NAMES), required=True,
                        validate=validate.Length(min=1, max=len(STEP_NAMES)))


class ExperimentListArgs(PageQuery):
    status = NamedEnum("ExperimentStatus", STATUSES, load_default=None)
    q = fields.String(load_default=None, validate=validate.Length(max=200))


class ConfigSchema(Schema):
    objective = fields.Dict(required=True)
    rubric = fields.Dict(required=True)
    prompt = fields.Dict(required=True)
    data = fields.Dict(required=True)
    models = fields.Dict(required=True)
    judges = fields.Dict(required=True)
    stop = fields.Dict(required=True)


class ExperimentSchema(Schema):
    id = fields.Integer(required=True)
    row_version = version_field()
    name = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    status = NamedEnum("ExperimentStatus", STATUSES, required=True)
    stop_reason = NamedEnum("StopReason", [r.value for r in StopReason], required=True,
                            allow_none=True)
    stop_detail = fields.String(required=True, allow_none=True)
    template = fields.String(required=True, allow_none=True)
    config_version = fields.Integer(required=True)
    iterations = fields.Integer(required=True)
    best_prompt_version_id = fields.Integer(required=True, allow_none=True)
    spent_micros = fields.Integer(required=True)
    budget_micros = fields.Integer(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    started_at = fields.DateTime(required=True, allow_none=True)
    finished_at = fields.DateTime(required=True, allow_none=True)


class SpendSchema(Schema):
    execution_micros = fields.Integer(required=True)
    judging_micros = fields.Integer(required=True)
    refinement_micros = fields.Integer(required=True)
    assist_micros = fields.Integer(required=True)
    reserved_micros = fields.Integer(required=True)
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)


class ExperimentDetailSchema(ExperimentSchema):
    config = fields.Nested(ConfigSchema, required=True, metadata={
        "description": "The seven steps (frozen once started)"})
    problems = fields.Dict(keys=fields.String(), values=fields.Dict(), required=True, metadata={
        "description": "Step -> {field path: reasons}; an empty object when the step is valid"})
    frozen_at = fields.DateTime(required=True, allow_none=True)
    dataset_version_id = fields.Integer(required=True, allow_none=True)
    prompt_id = fields.Integer(required=True, allow_none=True)
    seed_prompt_version_id = fields.Integer(required=True, allow_none=True)
    current_prompt_version_id = fields.Integer(required=True, allow_none=True)
    scorer_ids = fields.List(fields.Integer(), required=True)
    refinement_cases = fields.Integer(required=True)
    holdout_cases = fields.Integer(required=True)
    split_seed = fields.Integer(required=True, allow_none=True)
    spend = fields.Nested(SpendSchema, required=True)
    created_by = fields.Integer(required=True, allow_none=True)


class ValidOkSchema(Schema):
    valid = fields.Boolean(required=True)
    steps = fields.List(fields.String(), required=True)


class ConfigVersionSchema(Schema):
    number = fields.Integer(required=True)
    config = fields.Nested(ConfigSchema, required=True)
    created_by = fields.Integer(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)


class RangeSchema(Schema):
    low_micros = fields.Integer(required=True)
    high_micros = fields.Integer(required=True)


class PhaseRangeSchema(Schema):
    execution = fields.Nested(RangeSchema, required=True)
    judging = fields.Nested(RangeSchema, required=True)
    refinement = fields.Nested(RangeSchema, required=True)


class IterationRangeSchema(Schema):
    low = fields.Integer(required=True)
    high = fields.Integer(required=True)


class ExperimentEstimateSchema(RangeSchema):
    iterations = fields.Nested(IterationRangeSchema, required=True)
    per_iteration = fields.Nested(PhaseRangeSchema, required=True)
    cases = fields.Integer(required=True)
    calls_per_iteration = fields.Integer(required=True)
    complete = fields.Boolean(required=True, metadata={
        "description": "False when a model is unpriced (left out of the totals)"})
    unpriced_models = fields.List(fields.Integer(), required=True)
    problems = fields.Dict(keys=fields.String(), values=fields.List(fields.String()),
                           required=True, metadata={"description": "Why it could not be "
                                                                   "estimated (field errors)"})


class TemplateCaseSchema(Schema):
    input = fields.Dict(required=True)
    expected = fields.Dict(required=True, allow_none=True)
    tags = fields.List(fields.String(), required=True)


class ApplyTemplateSchema(Schema):
    experiment_id = Id(load_default=None, allow_none=True, metadata={
        "description": "A draft to fill (the one the wizard began); none: a new draft"})


class TemplateSchema(Schema):
    slug = fields.String(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True)
    objective = fields.String(required=True)
    rubric = fields.List(fields.Nested(WizardCriterionSchema), required=True)
    prompt = fields.Dict(required=True, metadata={"description": "{template, system}"})
    cases = fields.List(fields.Nested(TemplateCaseSchema), required=True)


class ReportSchema(Schema):
    experiment = fields.Dict(required=True, metadata={
        "description": "name, status, stop reason, objective, duration, split sizes"})
    iterations = fields.List(fields.Dict(), required=True, metadata={
        "description": "Per iteration: all / refinement / holdout {mean, low, high, n}, "
                       "spend, weakest criteria, likely_overfitting"})
    best = fields.Dict(required=True, allow_none=True, metadata={
        "description": "Chosen on held-out cases (all cases when none are held out)"})
    first_vs_last = fields.Dict(required=True, metadata={
        "description": "Paired comparison on all and on held-out cases"})
    cost = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    tokens = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    models = fields.List(fields.Dict(), required=True)
    recommended_model = fields.Dict(required=True, allow_none=True)
    weak_criteria = fields.List(fields.Dict(), required=True)
    next_steps = fields.List(fields.String(), required=True)
    best_prompt = fields.Dict(required=True, allow_none=True)


EXPORT_FORMATS = ["pdf", "md", "csv", "prompt-txt", "prompt-md", "bundle"]


class ExportArgs(Schema):
    format = NamedEnum("ExperimentExportFormat", EXPORT_FORMATS, load_default="md")


class BundleJsonSchema(Schema):
    content = fields.String(required=True, validate=validate.Length(min=1, max=13_400_000),
                            metadata={"description": "The bundle zip, base64"})


class BundleFormSchema(Schema):
    file = FileField(required=True, metadata={"description": "The bundle zip"})


class AssistBase(Schema):
    model_id = Id(required=True, metadata={"description": "The project's model to ask"})
    experiment_id = Id(load_default=None, allow_none=True, metadata={
        "description": "Charge the call to this experiment's assist phase (and its budget)"})


class AssistObjectivesSchema(AssistBase):
    hints = fields.String(required=True, validate=validate.Length(min=10, max=500))
    count = Count(1, 5, load_default=3)


class AssistObjectiveSchema(AssistBase):
    objective = fields.String(required=True, validate=validate.Length(min=1, max=cfg.GOAL_MAX))
    mode = NamedEnum("AssistObjectiveMode", ["improve", "details"], load_default="improve",
                     metadata={"description": "improve it, or add the details it lacks"})


class AssistRubricSchema(AssistBase):
    objective = fields.String(required=True, validate=validate.Length(min=1, max=cfg.GOAL_MAX))


class AssistPromptsSchema(AssistBase):
    objective = fields.String(required=True, validate=validate.Length(min=1, max=cfg.GOAL_MAX))
    rubric = fields.List(fields.Nested(WizardCriterionSchema), required=True,
                         validate=validate.Length(min=1, max=10))
    count = Count(1, 5, load_default=3)


class AssistImproveSchema(AssistBase):
    prompt = fields.String(required=True, validate=validate.Length(min=1, max=cfg.PROMPT_MAX))
    objective = fields.String(required=True, validate=validate.Length(min=1, max=cfg.GOAL_MAX))
    focus = fields.List(fields.String(validate=validate.Length(min=1, max=200)),
                        load_default=list, validate=validate.Length(max=10))


class AssistReplySchema(Schema):
    result = fields.Dict(required=True, metadata={
        "description": "objectives: {options: [{title, text}]}; objective: {text, changes}; "
                       "rubric: {criteria}; prompts: {prompts: [{name, text, systemText, "
                       "rationale}]}; prompt: {improved, changes}"})
    model = fields.String(required=True)
    cost_micros = fields.Integer(required=True, metadata={"description": "Charged to the "
                                                                         "project"})
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
