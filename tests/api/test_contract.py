"""What the OpenAPI document promises a generated client (api/contract.py): one `Role` enum,
declared errors with the Error schema, a `resource_verb` operationId on every operation,
the SSE streams' events, the CSRF scheme; and a wrong method is 405 with Allow, before 401.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from assay.api import contract, security
from assay.core.projects.models import Role
from assay.events import publish
from assay.jobs.comparisons import COMPARED
from assay.jobs.scoring import SCORED
from tests.factories import Factory

METHODS = ("get", "post", "put", "patch", "delete")
OPERATION_ID = re.compile(r"^[a-z]+(_[a-z]+)+$")


@pytest.fixture(scope="module")
def document(app: Flask) -> dict[str, Any]:
    found: dict[str, Any] = app.test_client().get("/api/openapi.json").get_json()
    return found


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document["paths"].items()
            for method, op in item.items() if method in METHODS]


def walk(node: Any) -> Any:
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def test_every_operation_has_a_unique_resource_verb_operation_id(
        document: dict[str, Any], app: Flask) -> None:
    ids = [op.get("operationId", "") for _, _, op in operations(document)]
    assert all(OPERATION_ID.match(i) for i in ids), [i for i in ids if not OPERATION_ID.match(i)]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert {"runs_list", "runs_get", "runs_create", "datasets_import",
            "members_update"} <= set(ids)
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    assert set(contract.OPERATION_IDS) <= endpoints  # no override left for a renamed view
    assert set(contract.RAISES) <= endpoints


def test_roles_are_one_enum_component(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert schemas["Role"] == {"type": "string", "enum": [r.value for r in Role]}
    for name in ("Member", "MemberRole", "MemberAdd", "Project", "Invite", "InviteCreate"):
        role = schemas[name]["properties"]["role"]
        assert role == {"$ref": "#/components/schemas/Role"}, name
    roles = sorted(r.value for r in Role)
    inline = [node for node in walk(document) if isinstance(node, dict)
              and sorted(v for v in node.get("enum", []) if v is not None) == roles]
    assert inline == [schemas["Role"]]  # no other copy a generator could name apart


def _declared(op: dict[str, Any]) -> dict[int, str]:
    return {int(status): response.get("$ref", "") for status, response in op["responses"].items()
            if status.isdigit()}


def test_errors_are_declared_with_the_error_schema(document: dict[str, Any]) -> None:
    for path, method, op in operations(document):
        declared = _declared(op)
        label = f"{method.upper()} {path}"
        if op.get("security") != []:
            assert {401, 403} <= set(declared), label
        if "{" in path:
            assert 404 in declared, label
        if method != "get" and op.get("security") != []:
            assert 409 in declared, label
    responses = document["components"]["responses"]
    for name in ("UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "ACCOUNT_LOCKED",
                 "RATE_LIMITED", "BAD_GATEWAY"):
        assert responses[name]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"}, name
    for name in ("ACCOUNT_LOCKED", "RATE_LIMITED"):
        assert "Retry-After" in responses[name]["headers"]
    paths = document["paths"]
    login = _declared(paths["/api/auth/login"]["post"])
    assert login[423].endswith("/ACCOUNT_LOCKED") and login[429].endswith("/RATE_LIMITED")
    assert 429 in _declared(paths["/api/auth/register"]["post"])
    assert 401 not in login  # public
    for path, method in (("/api/projects/{project_id}/credentials/{credential_id}/discover",
                          "get"), ("/api/projects/{project_id}/critiques", "post"),
                         *((f"/api/projects/{{project_id}}/assist/{kind}", "post")
                            for kind in ("objectives", "objective", "rubric", "prompts",
                                         "prompt"))):
        assert _declared(paths[path][method])[502].endswith("/BAD_GATEWAY")


def test_error_errors_is_typed(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert schemas["Error"]["properties"]["errors"]["additionalProperties"] == {
        "$ref": "#/components/schemas/ErrorMessages"}
    assert {"ErrorMessages", "FieldErrors", "NestedErrors", "ErrorItem"} <= set(schemas)


def test_the_error_schema_holds_the_errors_the_api_sends(client: FlaskClient,
                                                         factory: Factory) -> None:
    import jsonschema_rs

    document = client.get("/api/openapi.json").get_json()
    schema = _inline_refs(document["components"]["schemas"]["Error"], document)
    validator = jsonschema_rs.Draft4Validator(schema)
    browser = factory.signed_in()
    project = browser.post("/api/projects", json={"name": "Errors"}).get_json()
    bodies = [
        browser.post(f"/api/projects/{project['id']}/datasets",
                     json={"name": "x", "kind": "questions", "cases": [{"input": {}}]}),
        browser.post(f"/api/projects/{project['id']}/runs", json={"dataset_id": 1}),
        browser.post("/api/projects", json={"name": ""}),
        client.get("/api/projects"),
    ]
    for response in bodies:
        assert response.status_code >= 400
        errors = list(validator.iter_errors(response.get_json()))
        assert not errors, (response.get_json(), errors)


def _inline_refs(node: Any, document: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            return _inline_refs(document["components"]["schemas"][name], document)
        return {k: _inline_refs(v, document) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(v, document) for v in node]
    return node


def test_cookie_clients_are_told_to_send_the_csrf_header(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert schemes["csrf"] == {**schemes["csrf"], "type": "apiKey", "in": "header",
                               "name": security.CSRF_HEADER}
    assert schemes["cookie"]["name"] == security.SESSION_COOKIE
    for path, method, op in operations(document):
        if op.get("security") == []:
            continue
        expected = [{"bearer": []}, {"cookie": [], "csrf": []}] if method != "get" else [
            {"bearer": []}, {"cookie": []}]
        assert op["security"] == expected, f"{method} {path}"


def test_the_streams_document_their_events(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    streams = {}
    for path, _, op in operations(document):
        content = op["responses"].get("200", {}).get("content", {})
        if "text/event-stream" in content:
            ref = content["text/event-stream"]["itemSchema"]["$ref"]
            streams[path.rsplit("/", 2)[-2]] = schemas[ref.rsplit("/", 1)[1]]
    assert len(streams) == 4, streams  # runs, scorers, generation, experiments
    run_events = set(next(s for s in streams.values()
                          if "run.started" in s["properties"]["event"]["enum"])
                     ["properties"]["event"]["enum"])
    assert {publish.STARTED, publish.PROGRESS, publish.STATUS, publish.BUDGET_ALERT,
            publish.FINISHED, publish.SCORING_FINISHED, SCORED, COMPARED} <= run_events
    for stream in streams.values():
        data = stream["properties"]["data"]  # the data line: JSON text, as contentSchema says
        assert data["type"] == "string" and data["contentMediaType"] == "application/json"
        content = data["contentSchema"]
        refs = [d["$ref"] for d in content.get("oneOf", [content])]
        for ref in refs:
            assert ref.rsplit("/", 1)[1] in schemas
    assert "run_id" in schemas["RunEventData"]["properties"]
    assert "job_id" in schemas["GenerationEventData"]["properties"]
    assert {"experiment_id", "iteration", "spent_micros"} <= set(
        schemas["ExperimentEventData"]["properties"])


def test_a_wrong_method_is_405_with_allow_before_401(document: dict[str, Any],
                                                     client: FlaskClient) -> None:
    """Unauthenticated, with ids that exist or not: the method is checked first."""
    for path, item in document["paths"].items():
        documented = {m.upper() for m in item if m in METHODS}
        wrong = next(m for m in ("PUT", "PATCH", "DELETE", "POST", "GET")
                     if m not in documented)
        url = re.sub(r"\{[^}]+\}", "1", path)
        response = client.open(url, method=wrong)
        assert response.status_code == 405, (wrong, path, response.status_code)
        assert response.get_json()["code"] == "METHOD_NOT_ALLOWED"
        allowed = {m.strip() for m in response.headers["Allow"].split(",")}
        assert allowed - {"HEAD", "OPTIONS"} == documented, (path, allowed)
    assert client.get("/api/projects").status_code == 401  # the right method still needs auth
