"""Declared scorer parameters. A kind lists its fields once; that list gives both the
validation (every field's problems reported together, unknown fields included) and the
JSON Schema the API shows for the kind."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.scorers.base import ParamsError

# string: a string (non-empty unless allow_empty); strings: a non-empty list of distinct
# non-empty strings; choice / choices: one / a non-empty list of distinct `choices`;
# schema: a JSON Schema (an object or a boolean).
TYPES = ("string", "boolean", "integer", "number", "strings", "choice", "choices", "schema")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    description: str
    default: Any = None
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    allow_empty: bool = False

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"field {self.name}: unknown type {self.type!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _range_problem(spec: Field, value: float) -> str | None:
    if spec.minimum is not None and value < spec.minimum:
        return f"must be at least {spec.minimum:g}"
    if spec.maximum is not None and value > spec.maximum:
        return f"must be at most {spec.maximum:g}"
    return None


def _list_problem(spec: Field, value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return "must be a non-empty list of strings"
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            return f"item {index} must be a non-empty string"
        if spec.type == "choices" and item not in spec.choices:
            return f"item {index} must be one of: {', '.join(spec.choices)}"
        if item in seen:
            return f"item {index} repeats {item!r}"
        seen.add(item)
    return None


def _problem(spec: Field, value: Any) -> str | None:
    """What is wrong with `value` for `spec`, or None."""
    kind = spec.type
    if kind == "string":
        if not isinstance(value, str):
            return "must be a string"
        return None if spec.allow_empty or value.strip() else "must not be empty"
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "integer":
        return _range_problem(spec, value) if _is_int(value) else "must be an integer"
    if kind == "number":
        return _range_problem(spec, value) if _is_number(value) else "must be a number"
    if kind == "choice":
        ok = isinstance(value, str) and value in spec.choices
        return None if ok else f"must be one of: {', '.join(spec.choices)}"
    if kind == "schema":
        ok = isinstance(value, Mapping | bool)
        return None if ok else "must be a JSON Schema (an object or true/false)"
    return _list_problem(spec, value)


def read_fields(fields: tuple[Field, ...], params: Any) -> dict[str, Any]:
    """Each field's value (its default when absent), or ParamsError naming every bad,
    missing or unknown field."""
    if not isinstance(params, Mapping):
        raise ParamsError({"params": ["must be an object"]})
    known = {spec.name: spec for spec in fields}
    errors: dict[str, list[str]] = {}
    for name in params:
        if name not in known:
            allowed = ", ".join(known) or "none"
            errors[str(name)] = [f"Unknown field; this kind takes: {allowed}"]
    values: dict[str, Any] = {}
    for spec in fields:
        if spec.name not in params or params[spec.name] is None:
            if spec.required:
                errors[spec.name] = ["Missing required field"]
            values[spec.name] = copy.deepcopy(spec.default)  # never share a mutable default
            continue
        problem = _problem(spec, params[spec.name])
        if problem:
            errors[spec.name] = [problem[0].upper() + problem[1:]]
        values[spec.name] = params[spec.name]
    if errors:
        raise ParamsError(errors)
    return values


def _field_schema(spec: Field) -> dict[str, Any]:
    non_empty = {"type": "string", "minLength": 1}
    schema: dict[str, Any]
    if spec.type == "string":
        schema = {"type": "string"} if spec.allow_empty else dict(non_empty)
    elif spec.type in ("boolean", "integer", "number"):
        schema = {"type": spec.type}
    elif spec.type == "choice":
        schema = {"type": "string", "enum": list(spec.choices)}
    elif spec.type == "schema":
        schema = {"anyOf": [{"type": "object"}, {"type": "boolean"}]}
    else:
        items = ({"type": "string", "enum": list(spec.choices)} if spec.type == "choices"
                 else non_empty)
        schema = {"type": "array", "items": items, "minItems": 1, "uniqueItems": True}
    if spec.minimum is not None:
        schema["minimum"] = spec.minimum
    if spec.maximum is not None:
        schema["maximum"] = spec.maximum
    if spec.default is not None:
        schema["default"] = spec.default
    schema["description"] = spec.description
    return schema


def params_schema(fields: tuple[Field, ...], description: str) -> dict[str, Any]:
    """The JSON Schema of a kind's parameters (what the API shows the scorer editor and the
    OpenAPI document names <Kind>Params): written in the part of JSON Schema that OpenAPI 3.0
    also reads, so one dict serves both (no type lists, const, if/then/else)."""
    schema: dict[str, Any] = {
        "type": "object",
        "description": description,
        "properties": {spec.name: _field_schema(spec) for spec in fields},
        "additionalProperties": False,
    }
    required = [spec.name for spec in fields if spec.required]
    if required:
        schema["required"] = required
    return schema
