"""EvalArena's schemas. No schema here has a field for a hidden test trace's content:
test runs answer with the summary, the diff (trace ids) and the redacted report."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.base import PageArgs
from assay.api.fields import Id, version_field
from assay.core.challenges.content import CATEGORIES, DIFFICULTIES, ROLES, SEVERITIES

TABS = ("rules", "judge")
SETS = ("dev", "test")
MAX_TEXT = 100_000


class ArenaProgressSchema(Schema):
    dev_ready = fields.Boolean(required=True, metadata={
        "description": "The latest dev run of a tab met the ship bar"})
    completed = fields.Boolean(required=True, metadata={
        "description": "A hidden test run was Prod ready"})


class ArenaChallengeCardSchema(Schema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    description = fields.String(required=True)
    category = fields.String(required=True, validate=validate.OneOf(CATEGORIES))
    difficulty = fields.String(required=True, validate=validate.OneOf(DIFFICULTIES))
    start_mode = fields.String(required=True, validate=validate.OneOf(("baseline", "scratch")))
    mode_label = fields.String(required=True, validate=validate.OneOf(
        ("Debug baseline", "From scratch")))
    pass_threshold = fields.Float(required=True)
    dev_count = fields.Integer(required=True)
    test_count = fields.Integer(required=True)
    progress = fields.Nested(ArenaProgressSchema, required=True)


class ArenaChallengeListSchema(Schema):
    items = fields.List(fields.Nested(ArenaChallengeCardSchema), required=True)


class ArenaLibraryArgs(Schema):
    q = fields.String(load_default=None, validate=validate.Length(max=200), metadata={
        "description": "Search in id, title, description, category, difficulty"})


class ArenaToolCallSchema(Schema):
    name = fields.String(required=True)
    arguments = fields.Dict(keys=fields.String(), metadata={"description": "Tool arguments"})


class ArenaMessageSchema(Schema):
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    content = fields.String(required=True)
    tool_calls = fields.List(fields.Nested(ArenaToolCallSchema))
    metadata = fields.Dict(keys=fields.String(), metadata={
        "description": "A tool message's tool_name, ids"})


class ArenaDevTraceSchema(Schema):
    id = fields.String(required=True)
    messages = fields.List(fields.Nested(ArenaMessageSchema), required=True)


class ArenaToolDefinitionSchema(Schema):
    name = fields.String(required=True)
    description = fields.String()
    input_schema = fields.Dict(keys=fields.String(), required=True)
    output_schema = fields.Dict(keys=fields.String())


class ArenaAgentContextSchema(Schema):
    system_prompt = fields.String(required=True)
    tools = fields.List(fields.Nested(ArenaToolDefinitionSchema), required=True)
    contract = fields.List(fields.String(), required=True, metadata={
        "description": "Must-dos and must-nots; labels name them by 0-based index"})


class ArenaTabStateSchema(Schema):
    baseline_text = fields.String(required=True, allow_none=True)
    default_text = fields.String(required=True)
    starting_text = fields.String(required=True, metadata={
        "description": "What the editor opens with when there is no draft"})
    draft = fields.String(required=True, allow_none=True)
    draft_saved_at = fields.DateTime(required=True, allow_none=True)
    draft_row_version = fields.Integer(required=True, metadata={
        "description": 'The draft\'s version, for If-Match: "<n>" when saving it (0: none)'})
    has_hint = fields.Boolean(required=True)
    hint = fields.String(required=True, allow_none=True, metadata={
        "description": "The hint once revealed, else null"})
    dev_ready = fields.Boolean(required=True)
    prod_ready = fields.Boolean(required=True)


class ArenaTabsSchema(Schema):
    rules = fields.Nested(ArenaTabStateSchema, required=True)
    judge = fields.Nested(ArenaTabStateSchema, required=True)


class ArenaShipJudgeSchema(Schema):
    id = fields.String(required=True, metadata={
        "description": "What Ship to Prod sends as `judge`, like fake:fake-judge"})
    kind = fields.String(required=True)
    model = fields.String(required=True)


class ArenaChallengeSchema(ArenaChallengeCardSchema):
    context = fields.Nested(ArenaAgentContextSchema, required=True)
    dev_traces = fields.List(fields.Nested(ArenaDevTraceSchema), required=True)
    tabs = fields.Nested(ArenaTabsSchema, required=True)
    ship_judges = fields.List(fields.Nested(ArenaShipJudgeSchema), required=True, metadata={
        "description": "The judges the operator approved for hidden sets: only these ship "
                       "a judge eval (ASSAY_ARENA_SHIP_JUDGES); a project's own models "
                       "judge dev traces only"})


class ArenaDraftBodySchema(Schema):
    text = fields.String(required=True, validate=validate.Length(max=MAX_TEXT))


class ArenaDraftSchema(Schema):
    tab = fields.String(required=True, validate=validate.OneOf(TABS))
    text = fields.String(required=True)
    saved_at = fields.DateTime(required=True, allow_none=True)
    row_version = version_field()


class ArenaHintSchema(Schema):
    tab = fields.String(required=True, validate=validate.OneOf(TABS))
    hint = fields.String(required=True)
    revealed_at = fields.DateTime(required=True)


class ArenaValidateBodySchema(Schema):
    tab = fields.String(required=True, validate=validate.OneOf(TABS))
    text = fields.String(required=True, validate=validate.Length(max=MAX_TEXT))


class ArenaProblemSchema(Schema):
    line = fields.Integer(required=True)
    column = fields.Integer(required=True)
    message = fields.String(required=True)
    level = fields.String(required=True, validate=validate.OneOf(("error", "warning")))


class ArenaValidationSchema(Schema):
    ok = fields.Boolean(required=True, metadata={"description": "No error (warnings allowed)"})
    problems = fields.List(fields.Nested(ArenaProblemSchema), required=True)


class ArenaAttemptBodySchema(Schema):
    tab = fields.String(required=True, validate=validate.OneOf(TABS))
    text = fields.String(required=True, validate=validate.Length(max=MAX_TEXT))
    set = fields.String(required=True, validate=validate.OneOf(SETS), metadata={
        "description": "dev: Run; test: Ship to Prod (hidden traces, redacted report)"})
    project_id = Id(load_default=None, allow_none=True, metadata={
        "description": "Judge tab: the project whose budget pays (you must be editor+)"})
    judge = fields.String(load_default=None, allow_none=True,
                          validate=validate.Length(min=1, max=200), metadata={
        "description": "Judge tab: a model config's id or name in that project"})


class ArenaSummarySchema(Schema):
    pass_rate = fields.Float(required=True, metadata={
        "description": "Share of traces where the eval agrees with the label"})
    critical_count = fields.Integer(required=True, metadata={
        "description": "Labelled critical failures the eval let through"})
    ready = fields.Boolean(required=True, metadata={
        "description": "pass_rate >= threshold and critical_count == 0 (Dev/Prod ready)"})
    passed = fields.Integer(required=True)
    total = fields.Integer(required=True)
    threshold = fields.Float(required=True)
    missed_failures = fields.Integer(required=True)
    false_alarms = fields.Integer(required=True)


class ArenaEvidenceSchema(Schema):
    message_index = fields.Integer(required=True, allow_none=True)
    start = fields.Integer(required=True, allow_none=True)
    end = fields.Integer(required=True, allow_none=True)
    label = fields.String(required=True)
    detail = fields.String(required=True)
    level = fields.String(required=True, validate=validate.OneOf(("warn", "bad")))


class ArenaTraceResultSchema(Schema):
    trace_id = fields.String(required=True)
    label = fields.String(required=True, validate=validate.OneOf(("pass", "fail")))
    verdict = fields.String(required=True, validate=validate.OneOf(("pass", "fail")))
    agreed = fields.Boolean(required=True)
    miss = fields.String(required=True, allow_none=True, validate=validate.OneOf(
        ("missed_failure", "false_alarm")))
    severity = fields.String(required=True, allow_none=True,
                             validate=validate.OneOf(SEVERITIES))
    cluster = fields.String(required=True)
    evidence = fields.List(fields.Nested(ArenaEvidenceSchema), required=True)
    reasoning = fields.String(required=True)
    error = fields.String(required=True, allow_none=True)
    label_severity = fields.String(required=True, allow_none=True,
                                   validate=validate.OneOf(SEVERITIES))
    violated_clause = fields.Integer(required=True, allow_none=True)


class ArenaExcerptSchema(Schema):
    message_index = fields.Integer(required=True)
    role = fields.String(required=True)
    text = fields.String(required=True, metadata={"description": "Masked: ■■■ hides words"})


class ArenaReportEntrySchema(Schema):
    trace_id = fields.String(required=True)
    miss = fields.String(required=True, validate=validate.OneOf(
        ("missed_failure", "false_alarm")))
    cluster = fields.String(required=True)
    contract_clause = fields.String(required=True, allow_none=True)
    severity = fields.String(required=True, allow_none=True,
                             validate=validate.OneOf(SEVERITIES))
    excerpts = fields.List(fields.Nested(ArenaExcerptSchema), required=True)


class ArenaDiffSchema(Schema):
    previous_attempt_id = fields.Integer(required=True, allow_none=True)
    fixed = fields.List(fields.String(), required=True)
    regressed = fields.List(fields.String(), required=True)
    new_fail = fields.List(fields.String(), required=True)


class ArenaCritiqueSchema(Schema):
    critique = fields.String(required=True)
    references_contract = fields.Boolean(required=True, allow_none=True)
    missing_clauses = fields.List(fields.String(), required=True)
    defines_evidence = fields.Boolean(required=True, allow_none=True)
    vague_phrases = fields.List(fields.String(), required=True)
    high_variance = fields.Boolean(required=True, allow_none=True)
    judge = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)


class ArenaAttemptSchema(Schema):
    id = fields.Integer(required=True)
    challenge_id = fields.String(required=True)
    tab = fields.String(required=True, validate=validate.OneOf(TABS))
    set = fields.String(required=True, validate=validate.OneOf(SETS))
    text = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    summary = fields.Nested(ArenaSummarySchema, required=True)
    diff = fields.Nested(ArenaDiffSchema, required=True)
    results = fields.List(fields.Nested(ArenaTraceResultSchema), required=True, metadata={
        "description": "Per dev trace; empty for the hidden test set"})
    report = fields.List(fields.Nested(ArenaReportEntrySchema), required=True, metadata={
        "description": "Redacted, per miss of the hidden test set; empty for dev"})
    critique = fields.Nested(ArenaCritiqueSchema, required=True, allow_none=True, metadata={
        "description": "The meta-judge's critique of the rubric (judge tab)"})
    project_id = fields.Integer(required=True, allow_none=True)
    judge = fields.String(required=True, allow_none=True)
    cost_micros = fields.Integer(required=True)
    duration_ms = fields.Integer(required=True)


class ArenaHistoryArgs(PageArgs):
    tab = fields.String(load_default=None, validate=validate.OneOf(TABS))
    set = fields.String(load_default=None, validate=validate.OneOf(SETS))
