"""What gunicorn refuses before the app sees a request (a request line longer than 4094
bytes, headers too large) is answered, under `assay serve`, with the API's JSON Error body,
as the document declares (414 URI_TOO_LONG on every operation), not gunicorn's HTML page:
issue 32 item 7 found the HTML 414 undocumented."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema_rs
from flask import Flask

from tests.api.test_contract import _inline_refs
from tests.api.test_pool_served import served  # noqa: F401  (the fixture: assay serve)


def _error_validator(app: Flask) -> Any:
    document = app.test_client().get("/api/openapi.json").get_json()
    return jsonschema_rs.Draft4Validator(
        _inline_refs(document["components"]["schemas"]["Error"], document))


def test_a_long_url_and_large_headers_are_json_errors(served: str, app: Flask) -> None:  # noqa: F811
    validator = _error_validator(app)
    long_url = httpx.get(f"{served}/api/projects", params={"q": "x" * 5000}, timeout=10)
    big_headers = httpx.get(f"{served}/api/projects", headers={"X-Big": "y" * 9000},
                            timeout=10)
    for response, status, code in ((long_url, 414, "URI_TOO_LONG"),
                                   (big_headers, 431, "HEADERS_TOO_LARGE")):
        assert response.status_code == status, response.text[:200]
        assert response.headers["content-type"] == "application/json", response.text[:200]
        body = response.json()
        assert body["code"] == code and body["status"] == status, body
        assert not list(validator.iter_errors(body)), body
    assert httpx.get(f"{served}/api/health", timeout=10).status_code in (200, 503)


def test_every_operation_declares_414(app: Flask) -> None:
    document = app.test_client().get("/api/openapi.json").get_json()
    missing = [f"{method} {path}" for path, item in document["paths"].items()
               for method, op in item.items() if method in {"get", "post", "put", "patch",
                                                            "delete"}
               and op["responses"].get("414") != {"$ref": "#/components/responses/URI_TOO_LONG"}]
    assert not missing
    assert document["components"]["responses"]["URI_TOO_LONG"]["content"][
        "application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
