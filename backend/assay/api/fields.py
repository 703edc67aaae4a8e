"""Input fields stricter than marshmallow's defaults: JSON has types, ids have a range."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

MAX_ID = 2**31 - 1  # ids are 32-bit integers in every database we run on


class StrictBoolean(fields.Boolean):
    """true or false only: not "yes", "true", 1 or "on"."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


def Id(**kwargs: Any) -> fields.Integer:
    """A JSON integer that can be a row id: 1.5, "7" or 2**40 are refused, not coerced."""
    return fields.Integer(strict=True, validate=validate.Range(min=1, max=MAX_ID), **kwargs)


def Count(low: int, high: int, **kwargs: Any) -> fields.Integer:
    """A JSON integer within [low, high]."""
    return fields.Integer(strict=True, validate=validate.Range(min=low, max=high), **kwargs)


def Email(**kwargs: Any) -> fields.Email:
    """An email address (documented as `format: email`) that fits the users table."""
    return fields.Email(validate=validate.Length(max=255),
                        error_messages={"invalid": "Invalid email format"}, **kwargs)


ENUM_COMPONENT = "enum_component"  # metadata key read by api/contract.py


def NamedEnum(name: str, choices: list[str], **kwargs: Any) -> fields.String:
    """A string from `choices`, documented once as the enum component `name` and referenced
    wherever it is used, so a generated client has one type for it (inline enums are named
    after their property by generators, and two of them can collide)."""
    metadata = {**kwargs.pop("metadata", {}), ENUM_COMPONENT: name}
    return fields.String(validate=validate.OneOf(choices), metadata=metadata, **kwargs)


def version_field() -> fields.Integer:
    """A resource's `row_version`: its ETag without the quotes."""
    return fields.Integer(required=True, metadata={
        "description": 'Counts its edits: send it back as If-Match: "<row_version>" (its '
                       "ETag) so that a write based on an older version is refused"})
