from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from assay.api.credentials.schemas import KIND_NAMES, Validators, not_blank
from assay.api.fields import Count, Id, version_field
from assay.api.patch import PatchSchema
from assay.core.llm.params import MAX_TOKENS_CAP, SEED_MAX, SEED_MIN, STOP_LENGTH, STOP_MAX

PRICE_MAX = 10**12  # a million dollars per million tokens
CONTEXT_MAX = 100_000_000
NAME: Validators = [validate.Length(min=1, max=100), not_blank]
MODEL_ID: Validators = [validate.Length(min=1, max=200), not_blank]
PRICE_DOC = ("Integer micro-dollars per million {} tokens ($2.50 = 2500000). Null means no "
             "price is set: the model is flagged unpriced and its calls are never counted "
             "as free.")


class StrictNumber(fields.Float):
    """A JSON number: "0.5" or true are refused, not coerced; NaN and infinity too."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class ModelParamsSchema(Schema):
    """Default call parameters. Ranges narrow per provider: Anthropic takes temperature 0..1
    and no penalties or seed; max_tokens is at most the context window when one is set."""

    temperature = StrictNumber(allow_none=True, validate=validate.Range(0, 2))
    max_tokens = Count(1, MAX_TOKENS_CAP, allow_none=True)
    top_p = StrictNumber(allow_none=True, validate=validate.Range(0, 1))
    frequency_penalty = StrictNumber(allow_none=True, validate=validate.Range(-2, 2))
    presence_penalty = StrictNumber(allow_none=True, validate=validate.Range(-2, 2))
    seed = Count(SEED_MIN, SEED_MAX, allow_none=True)
    stop = fields.List(fields.String(validate=validate.Length(min=1, max=STOP_LENGTH)),
                       allow_none=True, validate=validate.Length(max=STOP_MAX))


def _price(direction: str, **kwargs: Any) -> fields.Integer:
    return Count(0, PRICE_MAX, allow_none=True,
                 metadata={"description": PRICE_DOC.format(direction)}, **kwargs)


class ModelSchema(Schema):
    id = fields.Integer(required=True)
    row_version = version_field()
    name = fields.String(required=True)
    credential_id = fields.Integer(required=True)
    credential_label = fields.String(required=True)
    provider = fields.String(required=True, validate=validate.OneOf(KIND_NAMES),
                             metadata={"description": "The credential's kind"})
    model = fields.String(required=True, metadata={"description": "The provider's model id"})
    input_price_per_mtok_micros = _price("input", required=True)
    output_price_per_mtok_micros = _price("output", required=True)
    priced = fields.Boolean(required=True, metadata={
        "description": "Both prices are set. An unpriced model's cost is unknown, not zero."})
    context_window = fields.Integer(required=True, allow_none=True)
    params = fields.Nested(ModelParamsSchema, required=True)
    archived_at = fields.DateTime(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


class ModelCreateSchema(Schema):
    name = fields.String(required=True, validate=NAME)
    credential_id = Id(required=True)
    model = fields.String(required=True, validate=MODEL_ID,
                          metadata={"description": "The provider's model id (Azure: the "
                                                   "deployment name)"})
    input_price_per_mtok_micros = _price("input", load_default=None)
    output_price_per_mtok_micros = _price("output", load_default=None)
    context_window = Count(1, CONTEXT_MAX, allow_none=True, load_default=None,
                           metadata={"description": "Tokens; bounds max_tokens"})
    params = fields.Nested(ModelParamsSchema, load_default=dict)


class ModelUpdateSchema(PatchSchema):
    name = fields.String(validate=NAME)
    credential_id = Id()
    model = fields.String(validate=MODEL_ID)
    input_price_per_mtok_micros = _price("input")
    output_price_per_mtok_micros = _price("output")
    context_window = Count(1, CONTEXT_MAX, allow_none=True)
    params = fields.Nested(ModelParamsSchema)  # replaces all default parameters


class ModelListArgs(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100_000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
    include_archived = fields.Boolean(load_default=False, metadata={
        "description": "Also list archived models"})
