"""Operator secrets (issue 32 item 1): a credential may read its key from a server
environment variable only where the operator grants it (ASSAY_CREDENTIAL_ENV, per
project), the key goes only to its provider's fixed URL or one the operator adds
(ASSAY_CREDENTIAL_ENV_URLS), and a refused name answers the same whether it is set."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from assay.core.llm.models import Credential
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.factories import Factory

OPERATOR_KEY = "sk-operator-shared-0123456789abcdef"


class Catcher(BaseHTTPRequestHandler):
    """A project admin's own server: answers like an OpenAI server, keeps every header."""

    seen: list[str] = []  # the Authorization header of each request

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        Catcher.seen.append(self.headers.get("Authorization", ""))
        body = b'{"object": "list", "data": [{"id": "caught"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


@pytest.fixture
def catcher() -> Iterator[str]:
    Catcher.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Catcher)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def operator_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPERATOR_SHARED_API_KEY", OPERATOR_KEY)
    monkeypatch.delenv("ASSAY_CREDENTIAL_ENV", raising=False)
    monkeypatch.delenv("ASSAY_CREDENTIAL_ENV_URLS", raising=False)


def _never_got_the_key() -> None:
    assert not any(OPERATOR_KEY in seen for seen in Catcher.seen), Catcher.seen


def test_the_operators_key_never_reaches_a_project_admins_server(
        factory: Factory, catcher: str, operator_key: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    owner = factory.user()
    project = factory.project(owner, "Stranger")
    browser = factory.login(owner)
    creds = f"/api/projects/{project.id}/credentials"
    body = {"kind": "openai_compatible", "label": "Mine", "base_url": catcher,
            "secret_env": "OPERATOR_SHARED_API_KEY"}

    refused = browser.post(creds, json=body)  # the repro: no grant at all (the default)
    assert refused.status_code == 422, refused.json
    assert refused.json["code"] == "SECRET_ENV_UNAVAILABLE"
    assert "secret_env" in refused.json["errors"]["json"]

    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV", "OPERATOR_SHARED_API_KEY=*")
    elsewhere = browser.post(creds, json=body)  # granted, but not to be sent there
    assert elsewhere.status_code == 422, elsewhere.json
    assert elsewhere.json["code"] == "SECRET_ENV_URL"
    assert "base_url" in elsewhere.json["errors"]["json"]
    openai = browser.post(creds, json={**body, "kind": "openai"})
    assert openai.status_code == 422 and openai.json["code"] == "SECRET_ENV_URL"
    assert "api.openai.com" in openai.json["message"]

    # A credential saved before the grants existed (or written behind the API) is stopped
    # where its key is read: the connection test and discovery.
    with db.factory() as session:
        old = Credential(project_id=project.id, kind="openai_compatible", label="Old",
                         base_url=catcher.removesuffix("/v1"), config={},
                         secret_env="OPERATOR_SHARED_API_KEY", is_default=False)
        session.add(old)
        session.commit()
        old_id = old.id
    tested = browser.post(f"{creds}/{old_id}/test")
    assert tested.status_code == 200 and tested.json["ok"] is False, tested.json
    assert "is sent only to" in tested.json["error"]
    found = browser.get(f"{creds}/{old_id}/discover")
    assert found.status_code == 409 and found.json["code"] == "SECRET_ENV_URL", found.json
    monkeypatch.delenv("ASSAY_CREDENTIAL_ENV")
    found = browser.get(f"{creds}/{old_id}/discover")
    assert found.status_code == 409 and found.json["code"] == "SECRET_ENV_UNAVAILABLE"
    _never_got_the_key()


def test_a_grant_is_per_project_by_slug_or_id(factory: Factory, operator_key: None,
                                              fake_provider: FakeProviderThread,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    owner = factory.user()
    team, other, by_id = (factory.project(owner, name) for name in ("Team", "Other", "ById"))
    browser = factory.login(owner)
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV",
                       f"OPERATOR_SHARED_API_KEY={team.slug}, OPERATOR_SHARED_API_KEY={by_id.id}")
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV_URLS",
                       f"OPERATOR_SHARED_API_KEY={fake_provider.url}")
    body = {"kind": "openai", "label": "Team key", "base_url": fake_provider.url,
            "secret_env": "OPERATOR_SHARED_API_KEY"}

    made = {}
    for granted in (team, by_id):
        reply = browser.post(f"/api/projects/{granted.id}/credentials", json=body)
        assert reply.status_code == 201, reply.json
        assert (reply.json["key_source"], reply.json["last_test_ok"]) == ("env", True)
        made[granted.id] = reply.json["id"]
    refused = browser.post(f"/api/projects/{other.id}/credentials", json=body)
    assert refused.status_code == 422 and refused.json["code"] == "SECRET_ENV_UNAVAILABLE"

    # the granted credential cannot be moved to another URL afterwards
    url = f"/api/projects/{team.id}/credentials/{made[team.id]}"
    moved = browser.patch(url, json={"base_url": "http://127.0.0.1:9/v1"})
    assert moved.status_code == 422 and moved.json["code"] == "SECRET_ENV_URL", moved.json
    assert browser.get(url).json["base_url"] == fake_provider.url  # nothing changed


def test_a_refused_name_answers_the_same_whether_it_is_set(
        factory: Factory, operator_key: None, fake_provider: FakeProviderThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SURELY_UNSET_API_KEY", raising=False)
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV", "SOMETHING_ELSE_API_KEY=*")
    owner = factory.user()
    project = factory.project(owner, "Prober")
    browser = factory.login(owner)
    answers = []
    for name in ("OPERATOR_SHARED_API_KEY", "SURELY_UNSET_API_KEY"):
        reply = browser.post(f"/api/projects/{project.id}/credentials", json={
            "kind": "fake", "label": name, "base_url": fake_provider.url, "secret_env": name})
        assert reply.status_code == 422
        body = reply.get_data(as_text=True).replace(name, "NAME")
        answers.append(body)
    assert answers[0] == answers[1]
    assert "not set" not in answers[0]


def test_a_malformed_grant_fails_at_start(test_env: dict[str, str]) -> None:
    from assay.settings import Settings

    for bad in ("OPENAI_API_KEY", "=*", "SECRET_KEY=*", "ASSAY_X=*"):
        with pytest.raises(ValueError, match="ASSAY_CREDENTIAL_ENV"):
            Settings.from_env({**test_env, "ASSAY_CREDENTIAL_ENV": bad})
    with pytest.raises(ValueError, match="ASSAY_CREDENTIAL_ENV_URLS"):
        Settings.from_env({**test_env, "ASSAY_CREDENTIAL_ENV_URLS": "X_API_KEY=ftp://x"})
