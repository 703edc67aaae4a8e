"""The credential cache (core/auth/cache.py) through HTTP: a process trusts a token or a
session it checked for a few seconds, and revocation still takes effect within that time in
a process that did not hear of it (at once in the process that revoked, and in those that
hear: test_kept_reads.py). Two cache objects stand for two gunicorn
workers: the app looks its cache up per request, so swapping it switches "process"."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from flask.testing import FlaskClient

from assay.api.security import CREDENTIALS
from assay.core.auth.cache import CredentialCache
from assay.core.auth.service import token_digest
from assay.core.projects.models import Role
from tests.factories import Factory

TTL_S = 1.5
KEY = CREDENTIALS


@contextmanager
def process(app: Flask, cache: CredentialCache) -> Iterator[CredentialCache]:
    """Requests inside are served as by the worker owning `cache`."""
    previous = app.extensions[KEY]
    app.extensions[KEY] = cache
    try:
        yield cache
    finally:
        app.extensions[KEY] = previous


def _refused_within(app: Flask, cache: CredentialCache, read: object, seconds: float) -> float:
    """Seconds until `read()` (run as the worker owning `cache`) answers 401."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        with process(app, cache):
            status = read()  # type: ignore[operator]
        if status == 401:
            return time.monotonic() - started
        assert status == 200, status
        time.sleep(0.05)
    raise AssertionError(f"still accepted {seconds} s after the revocation")


def test_the_app_caches_credentials_for_the_configured_time(app: Flask) -> None:
    assert app.extensions[KEY].ttl_s == 5.0  # ASSAY_AUTH_CACHE_S's default


def test_a_deleted_token_is_refused_here_at_once_and_elsewhere_within_the_ttl(
        app: Flask, factory: Factory) -> None:
    user = factory.user()
    token = factory.api_token(user)
    auth = {"Authorization": f"Bearer {token}"}
    client = app.test_client()
    here, there = CredentialCache(TTL_S), CredentialCache(TTL_S)
    with process(app, there):  # the other worker has checked the token: it is cached there
        assert client.get("/api/auth/me", headers=auth).status_code == 200
    assert there.get("token:" + token_digest(token)) is not None
    with process(app, here):
        token_id = client.get("/api/auth/tokens", headers=auth).json["items"][0]["id"]
        assert here.get("token:" + token_digest(token)) is not None
        assert client.delete(f"/api/auth/tokens/{token_id}", headers=auth).status_code == 204
        assert client.get("/api/auth/me", headers=auth).status_code == 401  # at once, here
    waited = _refused_within(app, there, lambda: client.get(
        "/api/auth/me", headers=auth).status_code, TTL_S + 1.0)
    assert waited <= TTL_S + 0.5


def test_a_signed_out_session_is_refused_elsewhere_within_the_ttl(
        app: Flask, factory: Factory) -> None:
    browser = factory.signed_in()
    here, there = CredentialCache(TTL_S), CredentialCache(TTL_S)
    with process(app, there):
        assert browser.get("/api/auth/me").status_code == 200
    cookie = browser.client.get_cookie("assay_session")
    assert cookie is not None
    replay: FlaskClient = app.test_client()  # the stolen or other-tab copy of the cookie
    replay.set_cookie("assay_session", cookie.value)
    with process(app, here):
        assert browser.post("/api/auth/logout").status_code == 204
        assert replay.get("/api/auth/me").status_code == 401
    waited = _refused_within(app, there, lambda: replay.get("/api/auth/me").status_code,
                             TTL_S + 1.0)
    assert waited <= TTL_S + 0.5


def test_a_removed_member_is_refused_on_the_next_request_despite_the_cache(
        app: Flask, factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Shared")
    member = factory.member(project, Role.viewer)
    token = factory.api_token(member)
    auth = {"Authorization": f"Bearer {token}"}
    client = app.test_client()
    there = CredentialCache(60.0)  # a long TTL: access must not depend on it
    with process(app, there):
        assert client.get(f"/api/projects/{project.id}/runs", headers=auth).status_code == 200
    assert factory.login(owner).delete(
        f"/api/projects/{project.id}/members/{member.id}").status_code == 204
    with process(app, there):
        assert there.get("token:" + token_digest(token)) is not None  # still trusted ...
        reply = client.get(f"/api/projects/{project.id}/runs", headers=auth)
        assert reply.status_code == 404  # ... but no longer a member: refused at once


def test_a_cache_of_zero_seconds_checks_every_request(app: Flask, factory: Factory) -> None:
    token = factory.api_token(factory.user())
    never = CredentialCache(0)
    with process(app, never):
        assert app.test_client().get("/api/auth/me", headers={
            "Authorization": f"Bearer {token}"}).status_code == 200
    assert never.get("token:" + token_digest(token)) is None
