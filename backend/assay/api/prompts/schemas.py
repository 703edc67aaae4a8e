from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.credentials.schemas import Validators, not_blank
from assay.api.fields import MAX_ID, Id, version_field
from assay.core.prompts.service import (
    CHANGELOG_MAX,
    CHANGELOG_MIN,
    MAX_FEW_SHOTS,
    MAX_SHOT,
    MAX_SYSTEM,
    MAX_TEMPLATE,
)
from assay.core.prompts.tools import MAX_TOOLS

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
    tools = fields.List(fields.Dict(), load_default=list,
                        validate=validate.Length(max=MAX_TOOLS), metadata={
                            "description": "Function tools: {name, description?, parameters?: "
                                           "JSON Schema with type object}"})
    note = fields.String(load_default=None, allow_none=True,
                         validate=validate.Length(max=CHANGELOG_MAX),
                         metadata={"description": "Changelog of the first version (optional)"})


class VersionAddSchema(VersionWriteSchema):
    note = fields.String(required=True, validate=validate.Length(
        min=CHANGELOG_MIN, max=CHANGELOG_MAX), metadata={
            "description": f"Changelog: why this version exists, {CHANGELOG_MIN}-"
                           f"{CHANGELOG_MAX} characters"})
    parent_id = Id(load_default=None, allow_none=True, metadata={
        "description": "The version this one was edited from; the latest when omitted"})


class ProductionSchema(Schema):
    version_id = Id(required=True, metadata={
        "description": "The version to mark for production (exactly one per prompt)"})


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
    tools = fields.List(fields.Dict(), required=True)
    variables = fields.List(fields.String(), required=True)
    note = fields.String(required=True, allow_none=True, metadata={"description": "Changelog"})
    parent_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The version this one was edited from"})
    created_by = fields.Integer(required=True, allow_none=True)
    author = fields.String(required=True, allow_none=True, metadata={
        "description": "Name (or email) of the user who saved it"})
    created_at = fields.DateTime(required=True)


class PromptSchema(Schema):
    id = fields.Integer(required=True)
    row_version = version_field()
    name = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    archived_at = fields.DateTime(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    latest = fields.Nested(PromptVersionSchema, required=True,
                           metadata={"description": "The newest version"})
    production_version_id = fields.Integer(required=True, allow_none=True)
    production_number = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Number of the version marked for production"})


class PromptDetailSchema(PromptSchema):
    versions = fields.List(fields.Nested(PromptVersionSchema), required=True,
                           metadata={"description": "Newest first"})


class DiffArgs(Schema):
    from_id = fields.Integer(load_default=None, validate=validate.Range(1, MAX_ID), metadata={
        "description": "The older side (a version id); the newer side's parent by default"})
    to_id = fields.Integer(load_default=None, validate=validate.Range(1, MAX_ID), metadata={
        "description": "The newer side (a version id); the latest version by default"})


class DiffPreviewSchema(Schema):
    template = fields.String(required=True, validate=validate.Length(min=1, max=MAX_TEMPLATE))
    system = fields.String(load_default=None, allow_none=True,
                           validate=validate.Length(max=MAX_SYSTEM))
    parent_id = Id(load_default=None, allow_none=True, metadata={
        "description": "The version edited; the latest when omitted"})


class PromptDiffSchema(Schema):
    from_id = fields.Integer(required=True)
    to_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Null for a preview of an unsaved edit"})
    from_number = fields.Integer(required=True)
    to_number = fields.Integer(required=True, allow_none=True)
    diff = fields.String(required=True, metadata={"description": "Unified diff"})
    added = fields.Integer(required=True)
    removed = fields.Integer(required=True)
    identical = fields.Boolean(required=True)


class TreeNodeSchema(PromptVersionSchema):
    children = fields.List(fields.Integer(), required=True, metadata={
        "description": "Ids of the versions edited from this one"})
    is_production = fields.Boolean(required=True)
