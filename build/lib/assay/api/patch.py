"""PATCH bodies: any subset of the writable fields, but at least one. No body, or an empty
object, is a 422 (a client that lost its fields must not get a 200 and a silent no-op, nor,
on a case, a new version); api/contract.py writes minProperties: 1 in the document."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, validates_schema

EMPTY = "Send at least one field to change; an empty PATCH changes nothing."


class PatchSchema(Schema):
    @validates_schema
    def _not_empty(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError(EMPTY, "_schema")
