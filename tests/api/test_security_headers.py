"""Security headers on every API answer and on the /api/docs page, through HTTP; cookies
Secure when the browser came over HTTPS, directly or through the trusted proxy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.test import TestResponse

from tests.factories import PASSWORD, Factory

COOKIES = ("assay_session", "assay_csrf")
DEVICE = "assay_device"  # set at sign-in (the per-account back-off's device), kept at sign-out


def _csp(reply: TestResponse) -> dict[str, list[str]]:
    header = reply.headers.get("Content-Security-Policy")
    assert header, reply.headers
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: values for name, *values in directives}


def _assert_hardened(reply: TestResponse) -> None:
    assert reply.headers.get("X-Frame-Options") == "DENY"
    assert reply.headers.get("X-Content-Type-Options") == "nosniff"
    assert reply.headers.get("Referrer-Policy") == "no-referrer"
    csp = _csp(reply)
    assert csp["frame-ancestors"] == ["'none'"]
    assert csp["base-uri"] == ["'none'"]


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/health"), ("GET", "/api/openapi.json"), ("GET", "/api/projects"),
    ("POST", "/api/auth/login"), ("GET", "/api/no-such-route"),
])
def test_every_api_answer_carries_the_headers(client: FlaskClient, method: str,
                                              path: str) -> None:
    """Successes and errors (401, 404, 422) alike: JSON needs nothing, so the policy is
    default-src 'none'."""
    reply = client.open(path, method=method, json={} if method == "POST" else None)
    _assert_hardened(reply)
    assert _csp(reply)["default-src"] == ["'none'"]


def test_the_docs_page_runs_no_inline_script_and_loads_only_from_this_origin(
        client: FlaskClient) -> None:
    reply = client.get("/api/docs")
    assert reply.status_code == 200 and reply.mimetype == "text/html"
    _assert_hardened(reply)
    csp = _csp(reply)
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == ["'self'"]  # no 'unsafe-inline', no 'unsafe-eval', no CDN
    assert csp["style-src"] == ["'self'"]
    assert csp["connect-src"] == ["'self'"]  # fetches the document, and "Try it out"
    assert set(csp["img-src"]) == {"'self'", "data:"}  # Swagger UI's icons are data: URIs
    html = reply.get_data(as_text=True)
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "style=" not in html and "<style" not in html
    for url in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert url.startswith("/api/docs/"), url  # same origin, nothing from a CDN
        asset = client.get(url)
        assert asset.status_code == 200, url  # public, like the page: no session needed
        assert asset.headers.get("X-Content-Type-Options") == "nosniff"
    init = client.get("/api/docs/init.js").get_data(as_text=True)
    assert '"/api/openapi.json"' in init and "validatorUrl: null" in init


def _cookie_flags(reply: TestResponse) -> dict[str, set[str]]:
    found = {}
    for header in reply.headers.getlist("Set-Cookie"):
        name, _, rest = header.partition("=")
        found[name] = {part.strip().lower() for part in rest.split(";")[1:]}
    assert set(found) - {DEVICE} == set(COOKIES), reply.headers
    return found


def _login(client: FlaskClient, email: str, **kwargs: object) -> TestResponse:
    reply = client.post("/api/auth/login", json={"email": email, "password": PASSWORD},
                        **kwargs)  # type: ignore[arg-type]
    assert reply.status_code == 200, reply.json
    return reply


def test_cookies_are_not_secure_over_plain_http(client: FlaskClient,
                                                factory: Factory) -> None:
    user = factory.user()
    flags = _cookie_flags(_login(client, user.email))
    assert all("secure" not in flags[name] for name in flags)


def test_cookies_are_secure_over_https(client: FlaskClient, factory: Factory) -> None:
    user = factory.user()
    flags = _cookie_flags(_login(client, user.email, base_url="https://localhost"))
    assert all("secure" in flags[name] for name in flags)
    logout = factory.login(user).post("/api/auth/logout", base_url="https://localhost")
    assert logout.status_code == 204
    cleared = _cookie_flags(logout)  # the clearing cookies match the ones they replace
    assert all("secure" in cleared[name] for name in cleared)
    assert "httponly" in cleared["assay_session"] and "httponly" not in cleared["assay_csrf"]


def test_behind_the_trusted_proxy_https_comes_from_x_forwarded_proto(
        app: Flask, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """What create_app wires when ASSAY_TRUSTED_PROXIES is set (test_settings checks that
    it does): the proxy terminating TLS says so, and the cookies follow."""
    user = factory.user()
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
    client = app.test_client()
    untrusted = _cookie_flags(_login(client, user.email, headers=forwarded))
    assert all("secure" not in untrusted[name] for name in untrusted)  # anyone can send it
    monkeypatch.setattr(app, "wsgi_app", ProxyFix(app.wsgi_app, x_for=1, x_proto=1))
    trusted = _cookie_flags(_login(client, user.email, headers=forwarded))
    assert all("secure" in trusted[name] for name in trusted)


def test_create_app_trusts_the_proxy_for_the_scheme(tmp_path: Path) -> None:
    """Only with ASSAY_TRUSTED_PROXIES: otherwise any client could claim HTTPS."""
    from flask import request

    from assay import runtime
    from assay.app import create_app
    from assay.settings import Settings

    previous = runtime._current  # create_app rewires the process: put it back afterwards
    try:
        for proxies, expected in ((0, "http"), (1, "https")):
            settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path),
                                          "ASSAY_TRUSTED_PROXIES": str(proxies)})
            probe = create_app(settings)
            probe.add_url_rule("/probe", "probe", lambda: request.scheme)
            reply = probe.test_client().get("/probe", headers={"X-Forwarded-Proto": "https"})
            assert reply.text == expected
    finally:
        if previous is not None:
            runtime.configure(previous.settings)
