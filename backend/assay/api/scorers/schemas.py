from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from assay.api.base import PageArgs
from assay.api.credentials.schemas import Validators, not_blank
from assay.api.fields import MAX_ID, Id, version_field
from assay.core.scoring.kinds import MODES

NAME: Validators = [validate.Length(min=1, max=100), not_blank]
KIND = validate.Length(min=1, max=32)
PARAMS_DOC = ("The kind's parameters, checked by the kind itself (422 with errors under "
              "params.<field>); GET /api/scorer-kinds lists the kinds")


class ScorerListArgs(PageArgs):
    include_archived = fields.Boolean(load_default=False)
    kind = fields.String(load_default=None, validate=KIND,
                         metadata={"description": "Only scorers of this kind"})


class ScorerVersionWriteSchema(Schema):
    params = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=64)),
                         values=fields.Raw(), required=True,
                         metadata={"description": PARAMS_DOC})
    note = fields.String(load_default=None, allow_none=True,
                         validate=validate.Length(max=500))


class ScorerCreateSchema(ScorerVersionWriteSchema):
    name = fields.String(required=True, validate=NAME)
    kind = fields.String(required=True, validate=KIND)
    description = fields.String(load_default=None, allow_none=True,
                                validate=validate.Length(max=2000))


class ScorerVersionSchema(Schema):
    id = fields.Integer(required=True)
    scorer_id = fields.Integer(required=True)
    number = fields.Integer(required=True)
    params = fields.Dict(required=True)
    note = fields.String(required=True, allow_none=True)
    created_by = fields.Integer(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)


class ScorerSchema(Schema):
    id = fields.Integer(required=True)
    row_version = version_field()
    name = fields.String(required=True)
    kind = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    archived_at = fields.DateTime(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    latest = fields.Nested(ScorerVersionSchema, required=True,
                           metadata={"description": "The newest version"})


class ScorerDetailSchema(ScorerSchema):
    versions = fields.List(fields.Nested(ScorerVersionSchema), required=True,
                           metadata={"description": "Newest first"})


class ScorerKindSchema(Schema):
    kind = fields.String(required=True)
    name = fields.String(required=True, metadata={"description": "What the product calls it"})
    description = fields.String(required=True, metadata={
        "description": "One line saying what it checks"})
    mode = fields.String(required=True, validate=validate.OneOf(MODES), metadata={
        "description": "automatic: Assay scores each output as it lands; manual: reviewers "
                       "score outputs by hand; pairwise: a judge compares two outputs of a "
                       "case"})
    params_schema = fields.Dict(required=True, metadata={
        "description": "JSON Schema of the kind's params, from the same declarations the "
                       "server validates them with"})
    calls_judges = fields.Boolean(required=True, metadata={
        "description": "Its params name judge models, whose calls cost money"})
    available = fields.Boolean(required=True, metadata={
        "description": "Whether the project asked about (project_id) may use it"})
    unavailable_reason = fields.String(required=True, allow_none=True)


class ScorerKindArgs(Schema):
    project_id = fields.Integer(load_default=None, validate=validate.Range(min=1, max=MAX_ID),
                                metadata={"description": (
                                    "Mark kinds this project may not use (e.g. code execution "
                                    "when the project has not opted in); needs membership")})


class SampleSchema(Schema):
    output = fields.String(required=True, validate=validate.Length(max=100_000))
    input = fields.Dict(load_default=None, allow_none=True,
                        metadata={"description": "The case's input object"})
    reference = fields.String(load_default=None, allow_none=True,
                              validate=validate.Length(max=100_000))
    context = fields.String(load_default=None, allow_none=True,
                            validate=validate.Length(max=100_000),
                            metadata={"description": "Grounding text (RAG metrics)"})


class ScorerDraftSchema(Schema):
    kind = fields.String(required=True, validate=KIND)
    params = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=64)),
                         values=fields.Raw(), required=True,
                         metadata={"description": PARAMS_DOC})


class PreviewRequestSchema(ScorerDraftSchema):
    sample = fields.Nested(SampleSchema, required=True)
    second = fields.Nested(SampleSchema, load_default=None, allow_none=True, metadata={
        "description": "Pairwise kinds: the output shown as Response 2"})


class JudgePromptSchema(Schema):
    judges = fields.List(fields.String(), required=True)
    messages = fields.List(fields.Dict(), required=True,
                           metadata={"description": "What each judge call sends"})


class TryRequestSchema(ScorerDraftSchema):
    output_id = Id(load_default=None, allow_none=True, metadata={
        "description": "A recorded output of one of the project's runs"})
    sample = fields.Nested(SampleSchema, load_default=None, allow_none=True,
                           metadata={"description": "Pasted text instead of an output"})

    @validates_schema
    def one_source(self, data: dict[str, Any], **_: Any) -> None:
        if (data.get("output_id") is None) == (data.get("sample") is None):
            raise ValidationError("Give either output_id or sample", "output_id")


class TrialEvidenceSchema(Schema):
    message_index = fields.Integer(required=True, allow_none=True)
    start = fields.Integer(required=True, allow_none=True)
    end = fields.Integer(required=True, allow_none=True)
    text = fields.String(required=True)
    label = fields.String(required=True)


class TrialResultSchema(Schema):
    value = fields.Float(required=True, allow_none=True)
    passed = fields.Boolean(required=True, allow_none=True)
    criteria = fields.Dict(keys=fields.String(), values=fields.Float(), required=True)
    rationale = fields.String(required=True)
    severity = fields.String(required=True, allow_none=True)
    flags = fields.List(fields.String(), required=True)
    error = fields.String(required=True, allow_none=True)
    judge_model = fields.String(required=True, allow_none=True)
    evidence = fields.List(fields.Nested(TrialEvidenceSchema), required=True)


class TrialSchema(Schema):
    results = fields.List(fields.Nested(TrialResultSchema), required=True)
    cost_micros = fields.Integer(required=True, metadata={
        "description": "What the judge calls cost; added to the project's spend"})
    judge_calls = fields.Integer(required=True)
