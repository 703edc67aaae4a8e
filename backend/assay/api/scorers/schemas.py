from __future__ import annotations

from marshmallow import Schema, fields, validate

from assay.api.base import PageArgs
from assay.api.credentials.schemas import Validators, not_blank
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
    description = fields.String(required=True)
    mode = fields.String(required=True, validate=validate.OneOf(MODES), metadata={
        "description": "automatic: Assay scores each output as it lands; manual: reviewers "
                       "score outputs by hand; pairwise: a judge compares two outputs of a "
                       "case"})
