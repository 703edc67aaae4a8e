"""PATCH bodies: any subset of the writable fields, but at least one. No body, or an empty
object, is a 422 (a client that lost its fields must not get a 200 and a silent no-op, nor,
on a case, a new version); the document says so with minProperties: 1."""

from __future__ import annotations

from typing import Any

from apispec import BasePlugin
from marshmallow import Schema, ValidationError, validates_schema

EMPTY = "Send at least one field to change; an empty PATCH changes nothing."


class PatchSchema(Schema):
    @validates_schema
    def _not_empty(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError(EMPTY, "_schema")


class PatchPlugin(BasePlugin):
    """Writes minProperties: 1 on every PatchSchema component."""

    def schema_helper(self, name: str, definition: dict[str, Any], **kwargs: Any
                      ) -> dict[str, Any] | None:
        schema = kwargs.get("schema")
        cls = schema if isinstance(schema, type) else type(schema)
        return {"minProperties": 1} if issubclass(cls, PatchSchema) else None
