"""Response bodies without marshmallow's per-field machinery.

A page of 50 outputs or a run of 50 targets is thousands of field dumps, and marshmallow's
generic path (attribute lookup, missing checks, hooks) cost about a quarter of such a
request's CPU. `fast_dump` compiles a schema once into plain functions that give the same
JSON: each leaf field's own `_serialize` (or the identity for ints and strings), nested
schemas and lists recursively. A schema using anything this does not reproduce exactly
(hooks, dump defaults, dotted attributes, Method or Pluck fields, only/exclude) keeps
marshmallow's `dump`; tests compare both on every response schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields
from marshmallow.constants import missing
from marshmallow.decorators import POST_DUMP, PRE_DUMP

Dumper = Callable[[Any], Any]

_LEAVES = (fields.Integer, fields.Float, fields.String, fields.Boolean, fields.DateTime,
           fields.Date, fields.Raw, fields.Dict, fields.Email)
_compiled: dict[tuple[type[Schema], bool], Dumper | None] = {}


class Unsupported(Exception):
    pass


class Dumped(dict[str, Any]):
    """A body its schema's fast dumper already made (a kept view): dumped again as it is."""


def _get(obj: Any, key: str) -> Any:
    """marshmallow.utils.get_value for a plain key: item first, then attribute."""
    if type(obj) is dict:  # most views: a dict's own lookup, without hasattr and a try
        found = obj.get(key, missing)
        if found is not missing:
            return found
    elif hasattr(obj, "__getitem__"):
        try:
            return obj[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
    return getattr(obj, key, missing)


def _same(value: Any) -> Any:
    return value


def _leaf(field: fields.Field) -> Dumper:
    kind = type(field)
    if kind not in _LEAVES:
        raise Unsupported(kind.__name__)
    if kind is fields.Integer and not field.as_string:  # type: ignore[attr-defined]
        return lambda v: v if type(v) is int else int(v)
    if kind is fields.String:
        return lambda v: v if type(v) is str else field._serialize(v, None, None)
    if kind is fields.Raw:
        return lambda v: v
    if kind is fields.Dict:
        keys, values = field.key_field, field.value_field  # type: ignore[attr-defined]
        if keys is None and values is None:
            return dict
        key = _field(keys) if keys is not None else _same
        value = _field(values) if values is not None else _same
        return lambda v: {key(k): None if x is None else value(x) for k, x in v.items()}
    return lambda v: field._serialize(v, None, None)


def _field(field: fields.Field) -> Dumper:
    if isinstance(field, fields.Nested):
        if field.only or field.exclude or not isinstance(field.nested, type):
            raise Unsupported("Nested with only/exclude or by name")
        inner = _schema(field.nested, False)
        return (lambda v: [inner(x) for x in v]) if field.many else inner
    if type(field) is fields.List:
        inner = _field(field.inner)
        return lambda v: [None if x is None else inner(x) for x in v]
    return _leaf(field)


def _dump_hooks(cls: type[Schema]) -> bool:
    # `_hooks` is a defaultdict: a load through the schema adds empty entries to it, so
    # only dump hooks that hold functions count (a schema once loaded stays fast)
    return bool(cls._hooks.get(PRE_DUMP) or cls._hooks.get(POST_DUMP))


def _schema(cls: type[Schema], many: bool) -> Dumper:
    schema = cls()
    if _dump_hooks(cls) or schema.only or schema.exclude:
        raise Unsupported(f"{cls.__name__}: hooks or only/exclude")
    plan: list[tuple[str, str, Dumper]] = []
    for name, field in schema.dump_fields.items():
        attribute = field.attribute or name
        if field.dump_default is not missing or "." in attribute:
            raise Unsupported(f"{cls.__name__}.{name}: dump default or dotted attribute")
        plan.append((attribute, field.data_key or name, _field(field)))

    def dump(obj: Any) -> dict[str, Any]:
        if type(obj) is Dumped:
            return obj
        out: dict[str, Any] = {}
        for attribute, key, convert in plan:
            value = _get(obj, attribute)
            if value is missing:
                continue
            out[key] = None if value is None else convert(value)
        return out

    return (lambda items: [dump(x) for x in items]) if many else dump


def compiled(schema: Schema) -> Dumper | None:
    """The fast dumper of `schema`'s class (None: marshmallow must dump it)."""
    if schema.only or schema.exclude:
        return None  # an instance's options: not its class's dumper (nor kept as one)
    key = (type(schema), bool(schema.many))
    if key not in _compiled:
        try:
            _compiled[key] = _schema(type(schema), bool(schema.many))
        except Unsupported:
            _compiled[key] = None
    return _compiled[key]


ENABLED = True  # tests turn it off to compare with marshmallow's own dump


def dumped(schema: Schema, body: dict[str, Any]) -> dict[str, Any]:
    """`body` dumped once by `schema`'s fast dumper, to be kept and dumped again for free;
    as it is where marshmallow dumps that schema."""
    fast = compiled(schema)
    return Dumped(fast(body)) if ENABLED and fast is not None else body


def install(schema: Schema) -> Schema:
    """Make `schema.dump` the fast dumper, when there is one (flask-smorest calls it)."""
    fast = compiled(schema)
    if fast is None:
        return schema
    slow = schema.dump

    def dump(obj: Any, *, many: bool | None = None) -> Any:
        return fast(obj) if ENABLED and many is None else slow(obj, many=many)

    schema.dump = dump  # type: ignore[method-assign]
    return schema
