"""What the OpenAPI document says beyond the marshmallow schemas: a scorer's params per kind
and a case's input per dataset kind, each a component, and nullable references written as
one type.

The server validates params with each kind's own declarations; GET /api/scorer-kinds serves
them as JSON Schema, and `register` puts those very dicts into the document as
<Kind>Params, so the two never drift. Bodies that carry `kind` next to `params` become a
`oneOf` over per-kind variants with a `discriminator` on `kind`.
"""

from __future__ import annotations

import copy
from typing import Any

from apispec.ext.marshmallow.field_converter import FieldConverterMixin
from flask_smorest import Api
from marshmallow import fields

from assay.core.datasets.case_schemas import INPUT_SCHEMAS
from assay.core.scoring.kinds import known_kinds

REF = "#/components/schemas/"
# Bodies with `kind` and `params` side by side: one variant per kind, discriminated by kind.
KIND_BODIES = ("ScorerCreate", "PreviewRequest", "TryRequest")
# Bodies with `params` but no `kind` (the scorer's kind is on the stored scorer, named by
# the path): no property to discriminate on, so `anyOf` (kinds' params overlap, e.g.
# contains and icontains take the same {value}, so `oneOf` would refuse valid bodies).
KINDLESS = ("ScorerVersionWrite", "ScorerVersion")
# A case's input depends on its dataset's kind, which is on the dataset (the path), not on
# the case: `anyOf` without a discriminator, for the same reason.
CASE_BODIES = ("Case", "NewCase", "CaseWrite", "CaseEdit")
NULL_OBJECT = {"type": "object", "nullable": True}


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def params_name(kind: str) -> str:
    return f"{camel(kind)}Params"


def case_input_name(dataset_kind: str) -> str:
    return f"{camel(dataset_kind)}CaseInput"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF + name}


def _add(schemas: dict[str, Any], name: str, schema: dict[str, Any]) -> None:
    if name in schemas:  # a kind's name would shadow a marshmallow schema's component
        raise RuntimeError(f"OpenAPI component {name} is defined twice")
    schemas[name] = schema


def _by_kind(schemas: dict[str, Any], name: str, kinds: list[str], typed: Any) -> None:
    """Replace component `name` by a oneOf of <Kind><name> variants discriminated by kind;
    `typed(variant_properties, kind)` points the variant's kind-dependent parts at the
    kind's components."""
    base = schemas[name]
    mapping = {}
    for kind in kinds:
        variant = copy.deepcopy(base)
        props = variant["properties"]
        props["kind"] = {"type": "string", "enum": [kind]}
        typed(props, kind)
        variant_name = camel(kind) + name
        _add(schemas, variant_name, variant)
        mapping[kind] = REF + variant_name
    schemas[name] = {"oneOf": [{"$ref": ref} for ref in mapping.values()],
                     "discriminator": {"propertyName": "kind", "mapping": mapping}}
    if "description" in base:
        schemas[name]["description"] = base["description"]


def _any_params(props: dict[str, Any], kinds: list[str]) -> None:
    props["params"] = {"description": "The scorer's kind's params (<Kind>Params)",
                       "anyOf": [_ref(params_name(kind)) for kind in kinds]}


def _register(schemas: dict[str, Any]) -> None:
    found = known_kinds()
    kinds = [info.kind for info in found]
    for info in found:  # the same dict GET /api/scorer-kinds serves
        _add(schemas, params_name(info.kind), copy.deepcopy(info.params_schema))

    def params(props: dict[str, Any], kind: str) -> None:
        props["params"] = _ref(params_name(kind))

    def scorer(props: dict[str, Any], kind: str) -> None:
        props["latest"] = {**props["latest"], "allOf": [_ref(camel(kind) + "ScorerVersion")]}
        if "versions" in props:
            props["versions"]["items"] = _ref(camel(kind) + "ScorerVersion")

    for name in KIND_BODIES:
        _by_kind(schemas, name, kinds, params)
    for kind in kinds:  # a version names no kind (its scorer does): a plain object
        variant = copy.deepcopy(schemas["ScorerVersion"])
        params(variant["properties"], kind)
        _add(schemas, camel(kind) + "ScorerVersion", variant)
    for name in ("Scorer", "ScorerDetail"):
        _by_kind(schemas, name, kinds, scorer)
    for name in KINDLESS:
        _any_params(schemas[name]["properties"], kinds)

    for dataset_kind, schema in INPUT_SCHEMAS.items():
        _add(schemas, case_input_name(dataset_kind), copy.deepcopy(schema))
    for name in CASE_BODIES:
        schemas[name]["properties"]["input"] = {
            "description": "Its shape depends on the dataset's kind (<Kind>CaseInput)",
            "anyOf": [_ref(case_input_name(kind)) for kind in INPUT_SCHEMAS]}


def nullable_as_one_type(self: FieldConverterMixin, field: fields.Field,
                         ret: dict[str, Any], **_: Any) -> dict[str, Any]:
    """Nullable values as one type plus null, in the OpenAPI 3.0 forms generators read so.
    apispec writes a nullable reference as anyOf [ref, {type: object, nullable}] (the
    model, any object and null) and a nullable enum as {type, enum: [..., null], nullable},
    which openapi-python-client turns into three enum classes. Both become allOf [the one
    type] + nullable: `Model | None`, `Enum | None`."""
    if not field.allow_none:
        return {}
    pieces = ret.get("anyOf")
    if pieces and NULL_OBJECT in pieces:
        del ret["anyOf"]
        return {"allOf": [p for p in pieces if p != NULL_OBJECT], "nullable": True}
    if "enum" in ret and "type" in ret:
        values = [value for value in ret.pop("enum") if value is not None]
        ret.pop("nullable", None)
        return {"allOf": [{"type": ret.pop("type"), "enum": values}], "nullable": True}
    return {}


def register_typed_schemas(api: Api) -> None:
    """After blueprints register: the typed components, replacing the loose ones."""
    _register(api.spec.components.schemas)
