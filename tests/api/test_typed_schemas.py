"""The OpenAPI document types what the server checks: a scorer's params per kind (oneOf
with a discriminator on kind, each variant the very JSON Schema GET /api/scorer-kinds
serves), a case's input per dataset kind, the password policy, and nullable values as one
type (issue 15, item 10)."""

from __future__ import annotations

import re
from typing import Any

import jsonschema_rs
import pytest
from flask.testing import FlaskClient

from assay.core.auth.passwords import password_problems
from assay.core.datasets.case_schemas import INPUT_SCHEMAS
from tests.factories import Factory

REF = "#/components/schemas/"
# The Schema Object of OpenAPI 3.0.3: JSON Schema's keywords that it keeps, and its own.
OAS30_KEYWORDS = {
    "title", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "maxProperties", "minProperties", "required", "enum", "type", "allOf", "oneOf", "anyOf",
    "not", "items", "properties", "additionalProperties", "description", "format", "default",
    "nullable", "discriminator", "readOnly", "writeOnly", "xml", "externalDocs", "example",
    "deprecated", "$ref"}
NULL_OBJECT = {"type": "object", "nullable": True}


@pytest.fixture
def doc(client: FlaskClient) -> dict[str, Any]:
    found = client.get("/api/openapi.json").json
    assert found is not None
    return found


def served_kinds(client: FlaskClient, factory: Factory) -> dict[str, dict[str, Any]]:
    reply = factory.signed_in().get("/api/scorer-kinds")
    assert reply.status_code == 200
    return {kind["kind"]: kind["params_schema"] for kind in reply.json}


def schemas(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["components"]["schemas"]


def deref(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    return schemas(doc)[node["$ref"].removeprefix(REF)]


def variants(doc: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    """kind -> variant of a body discriminated by kind; checks the discriminator."""
    union = schemas(doc)[name]
    assert union["discriminator"]["propertyName"] == "kind"
    mapping = union["discriminator"]["mapping"]
    assert [item["$ref"] for item in union["oneOf"]] == list(mapping.values())
    out = {}
    for kind, ref in mapping.items():
        variant = deref(doc, {"$ref": ref})
        assert variant["properties"]["kind"] == {"type": "string", "enum": [kind]}
        assert "kind" in variant["required"]
        out[kind] = variant
    return out


def test_scorer_bodies_are_one_of_the_kinds_with_their_served_params(
        doc: dict[str, Any], client: FlaskClient, factory: Factory) -> None:
    served = served_kinds(client, factory)
    assert len(served) > 20
    for body in ("ScorerCreate", "PreviewRequest", "TryRequest"):
        found = variants(doc, body)
        assert set(found) == set(served), body
        for kind, variant in found.items():
            assert "params" in variant["required"]
            assert deref(doc, variant["properties"]["params"]) == served[kind], kind
    operation = doc["paths"]["/api/projects/{project_id}/scorers"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": REF + "ScorerCreate"}


def test_scorer_responses_pin_the_kind_to_its_params(
        doc: dict[str, Any], client: FlaskClient, factory: Factory) -> None:
    served = served_kinds(client, factory)
    for name in ("Scorer", "ScorerDetail"):
        for kind, variant in variants(doc, name).items():
            latest = deref(doc, variant["properties"]["latest"]["allOf"][0])
            assert "kind" not in latest["properties"]  # the scorer names it
            assert deref(doc, latest["properties"]["params"]) == served[kind]
            if name == "ScorerDetail":
                assert variant["properties"]["versions"]["items"] == \
                    variant["properties"]["latest"]["allOf"][0]
    page = schemas(doc)["ScorerPage"]["properties"]["items"]["items"]
    assert page == {"$ref": REF + "Scorer"}


def test_bodies_without_a_kind_take_any_kind_of_params(doc: dict[str, Any]) -> None:
    """A new version's body and a version alone name no kind (the scorer does): anyOf, as
    kinds' params overlap ({value} is contains, icontains, equals and starts_with)."""
    kinds = variants(doc, "ScorerCreate")
    for name in ("ScorerVersionWrite", "ScorerVersion"):
        params = schemas(doc)[name]["properties"]["params"]
        assert [item["$ref"] for item in params["anyOf"]] == [
            kinds[kind]["properties"]["params"]["$ref"] for kind in kinds]


def test_case_input_is_one_of_the_dataset_kinds(doc: dict[str, Any]) -> None:
    """The dataset kind is on the dataset (the path), not on the case: no property to
    discriminate on, so anyOf over the kinds' inputs."""
    for name in ("Case", "CaseWrite", "CaseEdit"):
        found = schemas(doc)[name]["properties"]["input"]
        assert "discriminator" not in found and "oneOf" not in found
        assert [deref(doc, ref) for ref in found["anyOf"]] == list(INPUT_SCHEMAS.values())


def _walk(node: Any, path: str = "") -> Any:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{path}[{index}]")


def test_typed_schemas_are_openapi_3_0_and_json_schema(
        doc: dict[str, Any], client: FlaskClient, factory: Factory) -> None:
    """One dict serves JSON Schema (/api/scorer-kinds, the SPA's form) and the OpenAPI 3.0
    document: no keyword outside their common part (no type lists, const, if/then/else)."""
    assert doc["openapi"].startswith("3.0")
    for name, schema in [*served_kinds(client, factory).items(), *INPUT_SCHEMAS.items()]:
        jsonschema_rs.validator_for(schema)  # a valid JSON Schema
        for path, node in _walk(schema):
            if path.endswith("/properties") or path.endswith("/mapping"):
                continue  # property names, not keywords
            unknown = {key for key in node if not key.startswith("x-")} - OAS30_KEYWORDS
            assert not unknown, f"{name}{path}: {unknown}"
            assert not isinstance(node.get("type"), list), f"{name}{path}"


def test_manual_params_schema_says_when_criteria_are_needed(
        client: FlaskClient, factory: Factory) -> None:
    check = jsonschema_rs.validator_for(served_kinds(client, factory)["manual"])
    assert check.is_valid({}) and check.is_valid({"scale": "pass_fail"})
    assert check.is_valid({"scale": "criteria", "criteria": ["tone"]})
    assert not check.is_valid({"scale": "criteria"})
    assert not check.is_valid({"criteria": ["tone"]})
    assert not check.is_valid({"scale": "1-5", "criteria": ["tone"]})


def test_the_password_policy_is_in_the_document(doc: dict[str, Any]) -> None:
    password = schemas(doc)["Register"]["properties"]["password"]
    assert password["minLength"] == 12
    pattern = re.compile(password["pattern"])
    for candidate in ("Sturdy-Pass-1!", "aA1!aaaaaaaa", "no upper 1!xx", "NO LOWER 1!XX",
                      "No digits!!xx", "No special 12", "Short1!a", "Multi\nLine1!aa"):
        documented = len(candidate) >= 12 and pattern.search(candidate) is not None
        assert documented == (password_problems(candidate) == []), candidate
    login = schemas(doc)["Login"]["properties"]["password"]
    assert "pattern" not in login  # an old password still signs in


def test_no_nullable_value_is_three_types(doc: dict[str, Any]) -> None:
    """A nullable reference or enum is allOf [the one type] + nullable (openapi-python-client:
    `Model | None`, `Enum | None`), never anyOf with an untyped object beside it nor an enum
    listing null (three enum classes)."""
    nullable_enums = 0
    for path, node in _walk(doc):
        for key in ("anyOf", "allOf", "oneOf"):
            assert NULL_OBJECT not in node.get(key, []), path
        if "enum" in node:
            assert None not in node["enum"] and not node.get("nullable"), path
        if node.get("nullable") and "allOf" in node:
            assert len(node["allOf"]) == 1 and "type" not in node, path
            nullable_enums += "enum" in node["allOf"][0]
    assert nullable_enums >= 5
    split = schemas(doc)["Dataset"]["properties"]["split"]
    assert split == {"allOf": [{"type": "string", "enum": ["dev", "test"]}], "nullable": True}
    nullable_ref = schemas(doc)["TargetStatistics"]["properties"]["flakiness"]
    assert nullable_ref["nullable"] is True
    assert nullable_ref["allOf"] == [{"$ref": REF + "StatsFlakiness"}]
