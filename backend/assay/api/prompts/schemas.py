from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.credentials.schemas import Validators, not_blank
from assay.core.prompts.service import MAX_FEW_SHOTS, MAX_SHOT, MAX_SYSTEM, MAX_TEMPLATE

NAME: Validators = [validate.Length(min=1, max=100), not_blank]
TEMPLATE_DOC = ("The user message, with {{variables}} (names like identifiers; spaces inside "
                "the braces allowed) filled from each case's input")


class PageQuery(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100_000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class PromptListArgs(PageQuery):
    include_archived = fields.Boolean(load_default=False)


class FewShotSchema(Schema):
    input = fields.String(required=True, validate=[validate.Length(min=1, max=MAX_SHOT),
                                                   not_blank])
    output = fields.String(required=True, validate=[validate.Length(min=1, max=MAX_SHOT),
                                                    not_blank])


class VersionWriteSchema(Schema):
    template = fields.String(required=True, validate=[
        validate.Length(min=1, max=MAX_TEMPLATE), not_blank],
        metadata={"description": TEMPLATE_DOC})
    system = fields.String(load_default=None, allow_none=True,
                           validate=validate.Length(max=MAX_SYSTEM),
                           metadata={"description": "System message, {{variables}} too"})
    few_shots = fields.List(fields.Nested(FewShotSchema), load_default=list,
                            validate=validate.Length(max=MAX_FEW_SHOTS), metadata={
                                "description": "Examples sent as user/assistant pairs "
                                               "before each case"})
    note = fields.String(load_default=None, allow_none=True,
                         validate=validate.Length(max=500))


class PromptCreateSchema(VersionWriteSchema):
    name = fields.String(required=True, validate=NAME)
    description = fields.String(load_default=None, allow_none=True,
                                validate=validate.Length(max=2000))


class PromptVersionSchema(Schema):
    id = fields.Integer(required=True)
    prompt_id = fields.Integer(required=True)
    number = fields.Integer(required=True)
    template = fields.String(required=True)
    system = fields.String(required=True, allow_none=True)
    few_shots = fields.List(fields.Nested(FewShotSchema), required=True)
    variables = fields.List(fields.String(), required=True)
    note = fields.String(required=True, allow_none=True)
    created_by = fields.Integer(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)


class PromptSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    archived_at = fields.DateTime(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    latest = fields.Nested(PromptVersionSchema, required=True,
                           metadata={"description": "The newest version"})


class PromptDetailSchema(PromptSchema):
    versions = fields.List(fields.Nested(PromptVersionSchema), required=True,
                           metadata={"description": "Newest first"})
