from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.fields import Count, Id, StrictBoolean
from assay.core.generation.parsing import KINDS
from assay.core.generation.store import STATUSES

DIFFICULTIES = ("easy", "medium", "hard")
MAX_BUDGET = 10**12  # micro-dollars: a million dollars
_IDENTIFIER = validate.Regexp(r"^[A-Za-z_][A-Za-z0-9_]*$",
                              error="A variable name: letters, digits and _, not first a digit")


def _budget() -> fields.Integer:
    return Count(0, MAX_BUDGET, load_default=None, allow_none=True, metadata={
        "description": "Refuse to start when the estimated maximum cost (micro-dollars) is "
                       "higher; an unpriced model cannot be budgeted"})


class QuestionsRequestSchema(Schema):
    """myarena 3.2: questions on a topic, from a generator model."""

    model_id = Id(required=True, metadata={"description": "The generator model"})
    count = Count(1, 100, load_default=10)
    topic = fields.String(required=True, validate=validate.Length(min=1, max=500))
    instructions = fields.String(load_default=None, allow_none=True,
                                 validate=validate.Length(max=4000))
    type_tags = fields.List(fields.String(validate=validate.Length(min=1, max=50)),
                            load_default=list, validate=validate.Length(max=20),
                            metadata={"description": "Question types: logic, coding..."})
    difficulty = fields.String(load_default=None, allow_none=True,
                               validate=validate.OneOf(DIFFICULTIES))
    max_cost_micros = _budget()


class CasesRequestSchema(Schema):
    """edison FR-EC-004: synthetic test cases for a prompt's variables."""

    model_id = Id(required=True)
    count = Count(10, 500, load_default=50)
    diversity = Count(1, 10, load_default=5, metadata={
        "description": "1: typical inputs only ... 10: as varied as possible"})
    domain_hints = fields.String(load_default=None, allow_none=True,
                                 validate=validate.Length(max=2000))
    variables = fields.List(fields.String(validate=[validate.Length(min=1, max=64), _IDENTIFIER]),
                            load_default=list, validate=validate.Length(max=20), metadata={
                                "description": "Template variables; those of prompt_template "
                                               "are added"})
    prompt_template = fields.String(load_default=None, allow_none=True,
                                    validate=validate.Length(max=20_000), metadata={
                                        "description": "The prompt under test: its "
                                                       "{{variables}} are taken, and the "
                                                       "generator sees it"})
    include_edge_cases = StrictBoolean(load_default=True)
    max_cost_micros = _budget()


class ConversationsRequestSchema(Schema):
    """rag-eval: multi-turn conversations grounded in a document."""

    model_id = Id(required=True)
    document_id = Id(required=True)
    count = Count(1, 50, load_default=5)
    turns = Count(1, 10, load_default=3)
    max_cost_micros = _budget()


class AcceptSchema(Schema):
    dataset_name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    selected = fields.List(Count(0, 499), load_default=None, allow_none=True,
                           validate=validate.Length(min=1, max=500), metadata={
                               "description": "Indexes of the preview's items to keep, in "
                                              "order; null keeps them all"})


class EstimateSchema(Schema):
    model_id = fields.Integer(required=True)
    calls = fields.Integer(required=True)
    input_tokens = fields.Integer(required=True)
    output_tokens_low = fields.Integer(required=True)
    output_tokens_high = fields.Integer(required=True)
    low_micros = fields.Integer(required=True, allow_none=True,
                                metadata={"description": "null: the model has no price"})
    high_micros = fields.Integer(required=True, allow_none=True)
    priced = fields.Boolean(required=True)
    warnings = fields.List(fields.String(), required=True)


class JobEstimateSchema(Schema):
    calls = fields.Integer(required=True)
    low_micros = fields.Integer(required=True, allow_none=True)
    high_micros = fields.Integer(required=True, allow_none=True)
    priced = fields.Boolean(required=True)


class JobSummarySchema(Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    model_id = fields.Integer(required=True)
    requested = fields.Integer(required=True)
    received = fields.Integer(required=True)
    batches = fields.Integer(required=True)
    batches_done = fields.Integer(required=True)
    cost_micros = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Spent so far, from the provider's usage; null: unpriced model"})
    tokens_in = fields.Integer(required=True)
    tokens_out = fields.Integer(required=True)
    estimate = fields.Nested(JobEstimateSchema, required=True)
    error = fields.String(required=True, allow_none=True, metadata={
        "description": "Why the job failed, or why it is partial (fewer items than asked, "
                       "e.g. '4 of 6 questions: 2 item(s) without a question dropped')"})
    dataset_ids = fields.List(fields.Integer(), required=True)
    created_at = fields.DateTime(required=True)
    finished_at = fields.DateTime(required=True, allow_none=True)


class JobSchema(JobSummarySchema):
    spec = fields.Dict(required=True)
    items = fields.List(fields.Dict(), required=True, metadata={
        "description": "The preview: questions {question, answer}, cases {input, expected, "
                       "edge_case} or conversations {turns: [{turn_number, question, "
                       "ground_truth}]}"})
    warnings = fields.List(fields.String(), required=True, metadata={
        "description": "What parsing dropped or cut, batches that failed, 'asked for N, "
                       "got M'"})


class AcceptedSchema(Schema):
    dataset_id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    cases = fields.Integer(required=True)


class DocumentSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    mime = fields.String(required=True)
    size_bytes = fields.Integer(required=True)
    pages = fields.Integer(required=True, allow_none=True,
                           metadata={"description": "PDFs only"})
    characters = fields.Integer(required=True, metadata={"description": "Of extracted text"})
    chunks = fields.Integer(required=True, metadata={
        "description": "How many chunks it was split into for retrieval"})
    chunk_size = fields.Integer(required=True, allow_none=True,
                                metadata={"description": "Tokens per chunk, at most"})
    chunk_overlap = fields.Integer(required=True, allow_none=True,
                                   metadata={"description": "Tokens shared by neighbours"})
    created_by = fields.Integer(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)


class DocumentDetailSchema(DocumentSchema):
    text = fields.String(required=True, metadata={"description": "The extracted text"})


class ChunkSchema(Schema):
    chunk_id = fields.Integer(required=True)
    document_id = fields.Integer(required=True)
    position = fields.Integer(required=True, metadata={"description": "0-based, in order"})
    text = fields.String(required=True)
    start_char = fields.Integer(required=True)
    end_char = fields.Integer(required=True)
    tokens = fields.Integer(required=True)


class ChunkListSchema(Schema):
    items = fields.List(fields.Nested(ChunkSchema), required=True)


class RetrieveArgs(Schema):
    query = fields.String(required=True, validate=validate.Length(min=1, max=4000))
    top_k = fields.Integer(load_default=4, validate=validate.Range(min=1, max=20))


class RetrievedSchema(Schema):
    chunk_id = fields.Integer(required=True)
    document_id = fields.Integer(required=True)
    position = fields.Integer(required=True)
    text = fields.String(required=True)
    score = fields.Float(required=True, metadata={"description": "BM25, higher is better"})


class RetrievedListSchema(Schema):
    items = fields.List(fields.Nested(RetrievedSchema), required=True)
